/* python-import= (reference §2.6), python-api= over the sensitive-function
 * registry (§2.7, rules/python-api.in) and our exec= extension. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pol_int.h"
#include "python_api_table.h"

_Static_assert(POL_API_N_CATS == SB_API__COUNT, "rules/python-api.in and enum sb_api_category disagree");

const size_t pol_api_n_funcs = POL_API_N_FUNCS;

int pol_api_find_func(const char *qualname)
{
	for (size_t i = 0; i < POL_API_N_FUNCS; i++)
		if (!strcmp(pol_api_funcs[i].qualname, qualname))
			return (int)i;
	return -1;
}

int pol_api_find_cat(const char *name)
{
	for (int i = 0; i < POL_API_N_CATS; i++)
		if (!strcmp(pol_api_cats[i].name, name))
			return i;
	return -1;
}

/* Trimmed copy of [s, s+n) in the arena. */
static char *trim_dup(struct pol_ctx *c, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *r = pol_strndup(&c->p->arena, s, n);
	if (!r)
		pol_oom(c);
	return r;
}

/* ---- python-import ---------------------------------------------------------- */

static void parse_import_line(struct pol_ctx *c, struct pol_line *l)
{
	const char *p = l->value;

	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *name = trim_dup(c, p, n);

		if (!name)
			return;
		if (!strcmp(name, "*")) {
			c->p->import_all = true;
		} else if (*name) {
			const char **slot = pol_vec_push(&c->p->imports);
			const struct sb_rule_ref **ref = pol_vec_push(&c->p->import_refs);

			if (!slot || !ref)
				return pol_oom(c);
			*slot = name;
			*ref = &l->ref;
			if (strchr(name, '.'))
				pol_warn(c, l,
					 "In '%s', '%s' is a dotted name: imports are judged on their top-level name, so it never matches.",
					 l->ref.text, name);
		}
		if (!e)
			return;
		p = e + 1;
	}
}

void pol_parse_import(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (!l->claimed && pol_key_is(l, "python-import")) {
			l->claimed = true;
			parse_import_line(c, l);
		}
	}
}

bool sb_policy_import_allowed(const struct sb_policy *p, const char *module)
{
	size_t n = strcspn(module, ".");

	if (p->import_all || (n == 11 && !strncmp(module, "pysandboxes", 11)))
		return true;
	for (size_t i = 0; i < p->imports.n; i++) {
		const char *m = *POL_VEC_AT(&p->imports, const char *, i);

		if (strlen(m) == n && !strncmp(m, module, n))
			return true;
	}
	return false;
}

/* ---- python-api --------------------------------------------------------------- */

static const char *sorted_categories(struct pol_ctx *c)
{
	const char *names[POL_API_N_CATS];
	struct pol_buf b = { 0 };
	const char *r;

	for (int i = 0; i < POL_API_N_CATS; i++)
		names[i] = pol_api_cats[i].name;
	for (int i = 1; i < POL_API_N_CATS; i++)
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	pol_buf_puts(&b, "[");
	for (int i = 0; i < POL_API_N_CATS; i++)
		pol_buf_printf(&b, "%s'%s'", i ? ", " : "", names[i]);
	pol_buf_puts(&b, "]");
	r = b.oom ? "[]" : pol_strdup(&c->p->arena, b.s);
	free(b.s);
	return r ? r : "[]";
}

/* Parses one line into `out` (max n targets); false after reporting an error. */
static bool parse_api_line(struct pol_ctx *c, struct pol_line *l, struct pol_vec *out)
{
	const char *colon = strchr(l->value, ':');
	size_t first = out->n;
	bool allow;

	char *action = trim_dup(c, l->value, colon ? (size_t)(colon - l->value) : strlen(l->value));
	if (!action)
		return false;
	if (!colon) {
		pol_err(c, l, "In '%s', expected the form 'ACTION:target', with ACTION in ['ALLOW', 'DENY'].", l->ref.text);
		return false;
	}
	if (strcmp(action, "ALLOW") && strcmp(action, "DENY")) {
		pol_err(c, l, "In '%s', unknown action '%s', expected one of ['ALLOW', 'DENY'].", l->ref.text, action);
		return false;
	}
	allow = !strcmp(action, "ALLOW");
	for (const char *p = colon + 1;;) {
		const char *e = strchr(p, ',');
		char *t = trim_dup(c, p, e ? (size_t)(e - p) : strlen(p));
		struct pol_api_rule r = { .allow = allow, .cat = -1, .func = -1, .ref = &l->ref };
		char up[8];
		size_t k;

		if (!t)
			return false;
		for (k = 0; t[k] && k < sizeof(up) - 1; k++)
			up[k] = (char)toupper((unsigned char)t[k]);
		up[k] = 0;
		if (!*t) {
			pol_err(c, l, "In '%s', empty target.", l->ref.text);
			goto fail;
		}
		if (((!strcmp(up, "ALLOW") || !strcmp(up, "DENY")) && !t[k]) || strchr(t, ':')) {
			pol_err(c, l, "In '%s', one action per line: do not mix ALLOW and DENY.", l->ref.text);
			goto fail;
		}
		r.target = t;
		if (strcmp(t, "*") && !strchr(t, '.') && (r.cat = pol_api_find_cat(t)) < 0) {
			pol_err(c, l, "In '%s', unknown category '%s', expected one of %s.", l->ref.text, t,
				sorted_categories(c));
			goto fail;
		}
		if (strchr(t, '.') && (r.func = pol_api_find_func(t)) < 0) {
			pol_err(c, l, "In '%s', '%s' is not a registered sensitive function.", l->ref.text, t);
			goto fail;
		}
		struct pol_api_rule *slot = pol_vec_push(out);
		if (!slot) {
			pol_oom(c);
			goto fail;
		}
		*slot = r;
		if (!e)
			return true;
		p = e + 1;
	}
fail:
	out->n = first;		/* a line with an error grants nothing */
	return false;
}

/* Combine rules of one specificity: DENY wins a tie; the deciding rule is
 * the first DENY, else the first ALLOW. */
static void decide(const struct pol_api_rule *r, bool *set, bool *allow, const struct sb_rule_ref **ref)
{
	if (!*set) {
		*set = true;
		*allow = r->allow;
		*ref = r->ref;
	} else if (*allow && !r->allow) {
		*allow = false;
		*ref = r->ref;
	}
}

static void resolve_api(struct sb_policy *p)
{
	bool star_set = false, star_allow = false;
	const struct sb_rule_ref *star_ref = NULL;
	bool cat_set[POL_API_N_CATS] = { 0 }, cat_allow[POL_API_N_CATS] = { 0 };
	const struct sb_rule_ref *cat_ref[POL_API_N_CATS] = { 0 };

	for (size_t i = 0; i < p->api_rules.n; i++) {
		const struct pol_api_rule *r = POL_VEC_AT(&p->api_rules, struct pol_api_rule, i);

		if (r->func < 0 && r->cat < 0)
			decide(r, &star_set, &star_allow, &star_ref);
		else if (r->cat >= 0)
			decide(r, &cat_set[r->cat], &cat_allow[r->cat], &cat_ref[r->cat]);
	}
	for (size_t f = 0; f < POL_API_N_FUNCS; f++) {
		int cat = pol_api_funcs[f].cat;
		bool set = false, allow = false;
		const struct sb_rule_ref *ref = NULL;

		for (size_t i = 0; i < p->api_rules.n; i++) {
			const struct pol_api_rule *r = POL_VEC_AT(&p->api_rules, struct pol_api_rule, i);
			if (r->func == (int)f)
				decide(r, &set, &allow, &ref);
		}
		if (!set && cat_set[cat]) {
			allow = cat_allow[cat];
			ref = cat_ref[cat];
		} else if (!set && star_set) {
			allow = star_allow;
			ref = star_ref;
		}
		p->api_allow[f] = allow;
		p->api_ref[f] = ref;
		if (allow)
			p->api_cat_granted[cat] = true;
	}
}

void pol_parse_api(struct pol_ctx *c)
{
	struct sb_policy *p = c->p;

	p->api_allow = pol_alloc(&p->arena, POL_API_N_FUNCS * sizeof(*p->api_allow));
	p->api_ref = pol_alloc(&p->arena, POL_API_N_FUNCS * sizeof(*p->api_ref));
	if (!p->api_allow || !p->api_ref)
		return pol_oom(c);
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (!l->claimed && pol_key_is(l, "python-api")) {
			l->claimed = true;
			parse_api_line(c, l, &p->api_rules);
		}
	}
	resolve_api(p);
}

bool sb_policy_api_granted(const struct sb_policy *p, enum sb_api_category cat)
{
	return (unsigned)cat < SB_API__COUNT && p->api_cat_granted[cat];
}

bool sb_policy_api_allowed(const struct sb_policy *p, const char *qualname, const struct sb_rule_ref **hit)
{
	int f = pol_api_find_func(qualname);

	if (hit)
		*hit = f >= 0 ? p->api_ref[f] : NULL;
	return f >= 0 && p->api_allow[f];
}

/* ---- exec= ---------------------------------------------------------------------- */

static char *which(const char *name, char *const *envp)
{
	const char *path = pol_getenv(envp, "PATH", 4);

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand = NULL;

		if (n && asprintf(&cand, "%.*s/%s", (int)n, p, name) >= 0) {
			char *canon = access(cand, X_OK) ? NULL : realpath(cand, NULL);
			free(cand);
			if (canon)
				return canon;
		}
		if (!e)
			return NULL;
		p = e + 1;
	}
}

static void parse_exec_line(struct pol_ctx *c, struct pol_line *l)
{
	char *v = trim_dup(c, l->value, strlen(l->value)), *canon = NULL, *abs = NULL;
	struct pol_exec_rule *r;

	if (!v)
		return;
	if (!*v) {
		pol_err(c, l, "In '%s', path must be set.", l->ref.text);
		return;
	}
	r = pol_vec_push(&c->p->exec);
	if (!r)
		return pol_oom(c);
	r->ref = &l->ref;
	r->glob = strpbrk(v, "*?[") != NULL;
	if (r->glob) {
		abs = pol_abspath(v, c->cwd, c->home);
		r->pattern = abs ? pol_strdup(&c->p->arena, abs) : NULL;
	} else if (!strchr(v, '/')) {
		canon = which(v, c->o->envp);
		if (!canon)
			pol_err(c, l, "In '%s', '%s' was not found in PATH.", l->ref.text, v);
		r->pattern = canon ? pol_strdup(&c->p->arena, canon) : "";
	} else {
		abs = pol_abspath(v, c->cwd, c->home);
		canon = abs ? realpath(abs, NULL) : NULL;
		if (!canon && abs)
			pol_err(c, l, "In '%s', path '%s' must exist.", l->ref.text, v);
		r->pattern = canon ? pol_strdup(&c->p->arena, canon) : "";
	}
	if (!r->pattern)
		pol_oom(c);
	free(abs);
	free(canon);
}

void pol_parse_exec(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (!l->claimed && pol_key_is(l, "exec")) {
			l->claimed = true;
			parse_exec_line(c, l);
		}
	}
}

bool sb_policy_check_exec(const struct sb_policy *p, const char *canon, const struct sb_rule_ref **hit)
{
	size_t n = strlen(canon);

	if (hit)
		*hit = NULL;
	if (!p->api_cat_granted[SB_API_PROCESS_EXEC])
		return false;
	if (!p->exec.n)
		return true;
	for (size_t i = 0; i < p->exec.n; i++) {
		const struct pol_exec_rule *r = POL_VEC_AT(&p->exec, struct pol_exec_rule, i);

		if (r->glob ? pol_glob_match(r->pattern, canon, n) : !strcmp(r->pattern, canon)) {
			if (hit)
				*hit = r->ref;
			return true;
		}
	}
	return false;
}
