/* Policy drift between two rule files (see drift.h).
 *
 * Each file becomes a set of normalised entries "key=item"; the report is the
 * two set differences grouped by family.  Whether a change widens the policy
 * depends on the rule's direction: adding an ALLOW widens, removing a DENY
 * widens; exec= is a narrowing list (its absence allows every program), and
 * a changed setting or include is counted as widening because its effect
 * cannot be judged from the text alone.  CI fails on widening only.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "learn_int.h"

/* ---- reading ---------------------------------------------------------- */

struct entry {
	char *key;	/* owned: "expose-ro", "net", ... */
	char *item;	/* owned: normalised value */
	bool restrictive;	/* a DENY-like entry: adding it narrows */
};

struct eset {
	struct entry *v;
	size_t n, cap;
	bool has_exec;
};

static void eset_free(struct eset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].item);
	}
	free(s->v);
}

static bool eset_has(const struct eset *s, const char *key, const char *item)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0 && strcmp(s->v[i].item, item) == 0)
			return true;
	return false;
}

static int eset_add(struct eset *s, const char *key, size_t klen, const char *item, bool restrictive)
{
	struct entry *e;
	char *k = strndup(key, klen);

	if (!k)
		return -ENOMEM;
	if (eset_has(s, k, item)) {
		free(k);
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct entry *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv) {
			free(k);
			return -ENOMEM;
		}
		s->v = nv;
		s->cap = cap;
	}
	e = &s->v[s->n];
	e->key = k;
	e->restrictive = restrictive;
	if (!(e->item = strdup(item))) {
		free(k);
		return -ENOMEM;
	}
	s->n++;
	if (strcmp(k, "exec") == 0)
		s->has_exec = true;
	return 0;
}

/* Cut a comment that starts outside quotes (reference §2.1) and trim. */
static char *strip_line(char *s)
{
	char quote = 0, *end;

	for (char *p = s; *p; p++) {
		if (quote) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == quote)
				quote = 0;
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (*p == '#') {
			*p = '\0';
			break;
		}
	}
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static void upcase(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

/* "a, b,c" -> each item through `add`; a DENY: prefix applies to the whole
 * line (python-api=DENY:a, b). */
static int add_list(struct eset *s, const char *key, size_t klen, char *value, bool api)
{
	const char *prefix = "";
	bool deny = false;
	char *save = NULL, *tok, item[1024];
	int rc = 0;

	if (strncmp(value, "ALLOW:", 6) == 0 && api) {
		prefix = "ALLOW:";
		value += 6;
	} else if (strncmp(value, "DENY:", 5) == 0) {
		prefix = "DENY:";
		value += 5;
		deny = true;
	}
	for (tok = strtok_r(value, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *t = trim(tok);

		if (!*t)
			continue;
		snprintf(item, sizeof(item), "%s%s", prefix, t);
		rc = eset_add(s, key, klen, item, deny);
	}
	return rc;
}

/* One entry per protocol, port field and direction of a net= rule, so that
 * "80,443" and "443,80" compare equal and adding one port shows as one. */
static int add_net(struct eset *s, char *value)
{
	char *f[5], *save = NULL, *p = value, item[1024];
	int n = 0, rc = 0;

	for (char *bar; n < 4 && (bar = strchr(p, '|')); p = bar + 1) {
		*bar = '\0';
		f[n++] = trim(p);
	}
	f[n++] = trim(p);
	if (n != 5 || strchr(f[4], '|'))
		return eset_add(s, "net", 3, value, false);	/* as written */
	upcase(f[0]);
	upcase(f[1]);
	upcase(f[4]);
	for (char *pr = strtok_r(f[1], ",", &save); pr && !rc; pr = strtok_r(NULL, ",", &save)) {
		char *save2 = NULL, ports[512];

		snprintf(ports, sizeof(ports), "%s", f[3]);
		for (char *po = strtok_r(ports, ",", &save2); po && !rc; po = strtok_r(NULL, ",", &save2)) {
			char dirs[32], *save3 = NULL;

			snprintf(dirs, sizeof(dirs), "%s", f[4]);
			for (char *d = strtok_r(dirs, ",", &save3); d && !rc; d = strtok_r(NULL, ",", &save3)) {
				snprintf(item, sizeof(item), "%s|%s|%s|%s|%s", f[0], trim(pr), f[2], trim(po), trim(d));
				rc = eset_add(s, "net", 3, item, strcmp(f[0], "DENY") == 0);
			}
		}
	}
	return rc;
}

static bool key_is(const char *key, size_t klen, const char *want)
{
	return strlen(want) == klen && strncmp(key, want, klen) == 0;
}

static int add_rule(struct eset *s, char *line)
{
	char *eq, *value;
	size_t klen;

	if (strncmp(line, "include", 7) == 0 && (isspace((unsigned char)line[7]) || line[7] == '"'))
		return eset_add(s, "include", 7, trim(line + 7), false);
	if (!(eq = strchr(line, '=')))
		return eset_add(s, "invalid", 7, line, false);
	klen = (size_t)(eq - line);
	while (klen && isspace((unsigned char)line[klen - 1]))
		klen--;
	value = trim(eq + 1);
	if (key_is(line, klen, "net"))
		return add_net(s, value);
	if (key_is(line, klen, "python-import"))
		return add_list(s, line, klen, value, false);
	if (key_is(line, klen, "python-api"))
		return add_list(s, line, klen, value, true);
	if (klen > 5 && strncmp(line, "eval-", 5) == 0 &&
	    (key_is(line, klen, "eval-syntax") || key_is(line, klen, "eval-call") ||
	     key_is(line, klen, "eval-attribute") || key_is(line, klen, "eval-import") ||
	     key_is(line, klen, "eval-magic")))
		return add_list(s, line, klen, value, false);
	if (key_is(line, klen, "ignore") || key_is(line, klen, "unenv"))
		return eset_add(s, line, klen, value, true);
	if (key_is(line, klen, "learn") && strcmp(value, "false") == 0)
		return eset_add(s, line, klen, value, true);
	return eset_add(s, line, klen, value, false);
}

static int read_rules(const char *path, struct eset *s, struct sb_diag *diag)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	if (!f) {
		rc = -errno;
		sb_diag_error(diag, path, 0, "cannot read the rule file: %s", strerror(errno));
		return rc;
	}
	while (getline(&line, &cap, f) > 0 && !rc) {
		char *t = strip_line(line);

		/* Empty, comment (the "# Add rules" headers) or template placeholder. */
		if (!*t || *t == '{')
			continue;
		rc = add_rule(s, t);
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- comparing -------------------------------------------------------- */

static const char *family_of(const char *key)
{
	if (!strncmp(key, "expose-", 7) || !strcmp(key, "ignore"))
		return "files";
	if (!strcmp(key, "net"))
		return "network";
	if (!strcmp(key, "env") || !strcmp(key, "unenv"))
		return "environment";
	if (!strcmp(key, "python-import"))
		return "imports";
	if (!strcmp(key, "python-api"))
		return "python-api";
	if (!strcmp(key, "exec"))
		return "exec";
	if (!strncmp(key, "eval-", 5))
		return "eval";
	if (!strcmp(key, "include"))
		return "includes";
	return "settings";
}

static const char *const families[] = {
	"files", "network", "environment", "imports", "python-api", "exec", "eval", "includes", "settings",
};

/* Settings are single values: a change is one line removed, one added. */
static bool is_setting(const char *key)
{
	return strcmp(family_of(key), "settings") == 0;
}

/* Does this change let NEW allow more? */
static bool widens(const struct entry *e, bool added, const struct eset *old, const struct eset *new)
{
	if (!strcmp(e->key, "exec")) {
		/* No exec= line allows every program: the first line narrows,
		 * more lines widen the list, removing the last one widens all. */
		return added ? old->has_exec : !new->has_exec;
	}
	if (!strcmp(e->key, "port"))
		return false;
	if (!strcmp(e->key, "learn"))
		return added ? strcmp(e->item, "false") != 0 : strcmp(e->item, "false") == 0;
	if (is_setting(e->key) || !strcmp(e->key, "include"))
		return true;
	return added ? !e->restrictive : e->restrictive;
}

static void report_family(struct sbuf *b, const char *fam, const struct eset *old, const struct eset *new,
			  struct sb_drift_result *res)
{
	bool header = false;

	for (int pass = 0; pass < 2; pass++) {
		const struct eset *from = pass ? new : old, *other = pass ? old : new;

		for (size_t i = 0; i < from->n; i++) {
			const struct entry *e = &from->v[i];
			bool w;

			if (strcmp(family_of(e->key), fam) != 0 || eset_has(other, e->key, e->item))
				continue;
			if (!header) {
				sbuf_printf(b, "%s:\n", fam);
				header = true;
			}
			w = widens(e, pass == 1, old, new);
			res->widens |= w;
			if (pass)
				res->added++;
			else
				res->removed++;
			if (!strcmp(e->key, "include"))
				sbuf_printf(b, "  %c include %s%s\n", pass ? '+' : '-', e->item, w ? "   (widens)" : "");
			else
				sbuf_printf(b, "  %c %s=%s%s\n", pass ? '+' : '-', e->key, e->item,
					    w ? "   (widens)" : "");
		}
	}
}

int sb_drift_compare(const char *old_path, const char *new_path, char **text,
		     struct sb_drift_result *res, struct sb_diag *diag)
{
	struct eset old = { 0 }, new = { 0 };
	struct sbuf b = { 0 };
	int rc;

	*text = NULL;
	memset(res, 0, sizeof(*res));
	if ((rc = read_rules(old_path, &old, diag)) || (rc = read_rules(new_path, &new, diag)))
		goto out;
	sbuf_printf(&b, "--- %s\n+++ %s\n", old_path, new_path);
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		report_family(&b, families[f], &old, &new, res);
	res->differ = res->added || res->removed;
	if (!res->differ)
		sbuf_add(&b, "No semantic difference.\n");
	else if (res->widens)
		sbuf_printf(&b, "NEW widens OLD: %u rule(s) added, %u removed; review the lines marked (widens).\n",
			    res->added, res->removed);
	else
		sbuf_printf(&b, "NEW only narrows OLD: %u rule(s) added, %u removed.\n", res->added, res->removed);
	rc = b.oom ? -ENOMEM : 0;
out:
	eset_free(&old);
	eset_free(&new);
	if (rc)
		free(b.s);
	else
		*text = b.s;
	return rc;
}

int sb_drift_diff(const char *old_path, const char *new_path, char *const *envp, const char *cwd,
		  char **text, bool *widens_out, struct sb_diag *diag)
{
	struct sb_drift_result res;
	int rc;

	(void)envp;
	(void)cwd;
	*widens_out = false;
	rc = sb_drift_compare(old_path, new_path, text, &res, diag);
	if (!rc)
		*widens_out = res.widens;
	return rc;
}
