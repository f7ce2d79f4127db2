/* The <learning_guard_eval> block: what evaluated code needed beyond its
 * eval-* profile (reference §3, eval part).
 *
 * The agent runs evaluations with the widened sub-language while learning and
 * reports each construct outside the profile once; the recorder keeps them as
 * "<profile>\t<key>\t<token>" items.  Here they become one line per key and
 * profile, in the order eval-syntax, eval-import, eval-call, eval-attribute,
 * eval-magic.  python/pysandboxes/evalguard/learn.py rule_lines() is the
 * reference spelling, and learning never grants more than it saw: a syntax
 * group replaces its nodes only when every node of it was seen, and a token
 * is never a pattern.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_groups.h"
#include "learn_int.h"

static const char *const key_names[SB_EVAL_CONTEXT_SITE] = {
	[SB_EVAL_SYNTAX] = "eval-syntax", [SB_EVAL_IMPORT] = "eval-import", [SB_EVAL_CALL] = "eval-call",
	[SB_EVAL_ATTRIBUTE] = "eval-attribute", [SB_EVAL_MAGIC] = "eval-magic",
};

struct group {
	const char *name;
	const char *nodes[SB_EVAL_GROUP_NODES_MAX + 1];
};

#define GROUP_ROW(n, ...) { n, { __VA_ARGS__, NULL } },
static const struct group groups[] = { SB_EVAL_GROUPS(GROUP_ROW) };
#undef GROUP_ROW

/* The spelling runtime-observed keys get, as learn.py writes it. */
#define RUNTIME_OBSERVED "                    # \u26a0 runtime-observed"

/* One item key split in place: "<profile>\t<k>\t<token>". */
struct ekey {
	char profile[SB_EV_NAME_MAX];
	int k;
	const char *token;	/* into the item key */
};

static bool split_key(const char *key, struct ekey *e)
{
	const char *t1 = strchr(key, '\t'), *t2;
	size_t pn;

	if (!t1 || !(t2 = strchr(t1 + 1, '\t')) || t2 != t1 + 2 || t1[1] < '0' ||
	    t1[1] >= '0' + SB_EVAL__COUNT || (pn = (size_t)(t1 - key)) >= sizeof(e->profile))
		return false;
	memcpy(e->profile, key, pn);
	e->profile[pn] = '\0';
	e->k = t1[1] - '0';
	e->token = t2 + 1;
	return *e->token != '\0';
}

/* The tokens of one key of one profile, sorted, with the first location. */
struct tokens {
	const char **v;		/* borrowed from the items */
	size_t n;
	const char *why;
	unsigned long why_seq;
};

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void collect(const struct sb_learn *l, const char *profile, int k, struct tokens *t)
{
	struct ekey e;

	t->n = 0;
	t->why = NULL;
	t->why_seq = 0;
	for (size_t i = 0; i < l->eval.n; i++) {
		const struct litem *it = &l->eval.items[i];

		if (!split_key(it->key, &e) || e.k != k || strcmp(e.profile, profile) != 0)
			continue;
		t->v[t->n++] = e.token;
		if (it->why && *it->why && (!t->why || it->why_seq < t->why_seq)) {
			t->why = it->why;
			t->why_seq = it->why_seq;
		}
	}
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), cmp_cstr);
}

static bool has_token(const struct tokens *t, const char *tok)
{
	return t->n && bsearch(&tok, t->v, t->n, sizeof(*t->v), cmp_cstr) != NULL;
}

/* Append ", x" (or "x" first) to a growing line. */
static int append(char **line, const char *tok)
{
	char *n;

	if (asprintf(&n, "%s%s%s", *line, (*line)[strlen(*line) - 1] == '=' ? "" : ", ", tok) < 0)
		return -ENOMEM;
	free(*line);
	*line = n;
	return 0;
}

/* Group names of the groups seen in full, sorted, then the other nodes. */
static int syntax_values(const struct tokens *t, char **line)
{
	const size_t ng = sizeof(groups) / sizeof(groups[0]);
	bool used[sizeof(groups) / sizeof(groups[0])] = { 0 };
	const char *names[sizeof(groups) / sizeof(groups[0])];
	size_t nn = 0;
	int rc = 0;

	for (size_t g = 0; g < ng; g++) {
		const char *const *m = groups[g].nodes;

		used[g] = true;
		for (; *m && used[g]; m++)
			used[g] = has_token(t, *m);
		if (used[g])
			names[nn++] = groups[g].name;
	}
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_cstr);
	for (size_t i = 0; i < nn && !rc; i++)
		rc = append(line, names[i]);
	for (size_t i = 0; i < t->n && !rc; i++) {
		bool grouped = false;

		for (size_t g = 0; g < ng && !grouped; g++)
			for (const char *const *m = groups[g].nodes; used[g] && *m && !grouped; m++)
				grouped = strcmp(*m, t->v[i]) == 0;
		if (!grouped)
			rc = append(line, t->v[i]);
	}
	return rc;
}

/* Two comment lines for the call sites whose namespace came from the caller
 * (adaptive): eval-call was not consulted there.  Upstream writes them in
 * place of the eval-call line; with bare evaluations elsewhere that line is
 * still needed (an enforced re-run would refuse their builtins), so here it
 * follows the comment. */
/* "a.py:1, b.py:2" (malloc'ed), or NULL. */
static char *site_list(const struct tokens *sites)
{
	char *line = strdup("");

	for (size_t i = 0; line && i < sites->n; i++) {
		char *n;

		if (asprintf(&n, "%s%s%s", line, i ? ", " : "", sites->v[i]) < 0)
			n = NULL;
		free(line);
		line = n;
	}
	return line;
}

static int context_note(struct lblockv *bv, const struct tokens *sites, bool calls)
{
	char *list = site_list(sites), *line = NULL;
	int rc = 0;

	if (!list || asprintf(&line, "#   (%s). Set eval-namespace=closed to declare it here.", list) < 0) {
		line = NULL;
		rc = -ENOMEM;
	}
	free(list);
	if (!rc)
		rc = sb_lblock_push(bv, LL_NOTE,
				    calls ? "# eval-call below is for the other evaluations: the namespace came from the call site"
					  : "# eval-call not emitted: the namespace came from the call site",
				    NULL);
	if (!rc)
		rc = sb_lblock_push(bv, LL_RULE, line, NULL);
	free(line);
	return rc;
}

static int gen_key(struct lblockv *bv, const char *profile, int k, const struct tokens *t)
{
	char *line;
	int rc;

	if (!t->n)
		return 0;
	if (asprintf(&line, "%s%s%s=", key_names[k], *profile ? ":" : "", profile) < 0)
		return -ENOMEM;
	if (k == SB_EVAL_SYNTAX) {
		rc = syntax_values(t, &line);
	} else {
		rc = 0;
		for (size_t i = 0; i < t->n && !rc; i++)
			rc = append(&line, t->v[i]);
	}
	if (!rc && (k == SB_EVAL_ATTRIBUTE || k == SB_EVAL_MAGIC)) {
		char *n;

		if (asprintf(&n, "%s%s", line, RUNTIME_OBSERVED) < 0)
			rc = -ENOMEM;
		else {
			free(line);
			line = n;
		}
	}
	if (!rc && k == SB_EVAL_ATTRIBUTE && (has_token(t, "format") || has_token(t, "format_map")))
		rc = sb_lblock_push(bv, LL_NOTE,
				    "# Prefer an f-string (f\"{x}\") to str.format(): its attribute reads are checked\n"
				    "#   statically, where a format template is only checked at run time.", NULL);
	if (!rc)
		rc = sb_lblock_push(bv, LL_RULE, line, t->why);
	free(line);
	return rc;
}

/* Bare evaluations that read or bound the caller's variables ran with the
 * builtin's scope while learning; guarded (adaptive, closed) they would not
 * see them, so the learned run needs eval-namespace=caller, unless the file
 * chose a namespace itself (a scalar is set once). */
static int caller_namespace(const struct sb_learn *l, struct lblockv *bv, const char *profile,
			    const struct tokens *callers)
{
	char *list = site_list(callers), *note = NULL, *line = NULL;
	bool chosen = sb_policy_eval_namespace_set(l->policy, profile);
	int rc = -ENOMEM;

	if (!list)
		return rc;
	if (chosen) {
		if (asprintf(&line, "# \u26a0 bare evaluations at (%s) need the caller's variables:\n"
			     "#   eval-namespace%s%s=caller, or pass them as globals (eval(src, {...})).",
			     list, *profile ? ":" : "", profile) >= 0)
			rc = sb_lblock_push(bv, LL_RULE, line, NULL);
		goto out;
	}
	if (asprintf(&note, "# \u26a0 bare evaluations at (%s) read or set the caller's variables,\n"
		     "#   which only caller mode honours, without run-time checks.  Passing them\n"
		     "#   as globals (eval(src, {...})) lets you remove this line.", list) < 0 ||
	    asprintf(&line, "eval-namespace%s%s=caller", *profile ? ":" : "", profile) < 0)
		goto out;
	if (!(rc = sb_lblock_push(bv, LL_NOTE, note, NULL)))
		rc = sb_lblock_push(bv, LL_RULE, line, callers->why);
out:
	free(list);
	free(note);
	free(line);
	return rc;
}

static int gen_profile(const struct sb_learn *l, struct lblockv *bv, const char *profile, const char **buf)
{
	struct tokens t = { .v = buf }, sites = { .v = buf + l->eval.n }, callers = { .v = buf + 3 * l->eval.n };
	int rc = 0;

	collect(l, profile, SB_EVAL_CONTEXT_SITE, &sites);
	for (int k = 0; k < SB_EVAL_CONTEXT_SITE && !rc; k++) {
		collect(l, profile, k, &t);
		if (k == SB_EVAL_CALL && sites.n && (rc = context_note(bv, &sites, t.n > 0)))
			break;
		rc = gen_key(bv, profile, k, &t);
	}
	collect(l, profile, SB_EVAL_CALLER_SITE, &callers);
	if (!rc && callers.n)
		rc = caller_namespace(l, bv, profile, &callers);
	return rc;
}

int sb_learn_gen_eval(const struct sb_learn *l, struct lblockv *bv)
{
	const char **buf, **profiles;
	size_t np = 0;
	struct ekey e;
	int rc = 0;

	if (!l->eval.n)
		return 0;
	/* Token arrays (a key's, the context sites', the profile list, the
	 * caller sites'), each as long as the whole set. */
	if (!(buf = calloc(4 * l->eval.n, sizeof(*buf))))
		return -ENOMEM;
	profiles = buf + 2 * l->eval.n;
	for (size_t i = 0; i < l->eval.n; i++) {
		const char *key = l->eval.items[i].key;
		bool seen = false;

		if (!split_key(key, &e))
			continue;
		/* The profile part of the key itself: "" sorts first. */
		for (size_t p = 0; p < np && !seen; p++)
			seen = strncmp(profiles[p], key, strlen(e.profile)) == 0 &&
			       profiles[p][strlen(e.profile)] == '\t';
		if (!seen)
			profiles[np++] = key;
	}
	if (np > 1)
		qsort(profiles, np, sizeof(*profiles), cmp_cstr);
	for (size_t p = 0; p < np && !rc; p++) {
		if (!split_key(profiles[p], &e))
			continue;
		rc = gen_profile(l, bv, e.profile, buf);
	}
	free(buf);
	return rc;
}
