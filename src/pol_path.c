/* expose-ro= / expose-rw= / ignore= (reference §2.4) compiled into a prefix
 * tree keyed by canonical path components.
 *
 * A lookup walks the components of the canonical path once: the deepest node
 * carrying an exposure decides (longest prefix wins), ignore= globs are tried
 * first and beat exposures, and the policy files are write-protected even
 * inside an expose-rw directory.  Nothing allocates after load. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pol_int.h"

struct pol_pnode {
	const char *name;
	size_t len;
	struct pol_pnode **kids;	/* sorted by (len, bytes) */
	size_t nkids, cap;
	unsigned access;		/* 0, SB_ACC_READ or SB_ACC_READ|SB_ACC_WRITE */
	bool implicit;
	bool protect;			/* a policy file */
	bool protect_below;		/* an ancestor of a policy file */
	const struct sb_rule_ref *ref;
};

static int name_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

static struct pol_pnode *find_kid(const struct pol_pnode *n, const char *s, size_t len, size_t *pos)
{
	size_t lo = 0, hi = n->nkids;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = name_cmp(n->kids[mid]->name, n->kids[mid]->len, s, len);

		if (!c)
			return n->kids[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return NULL;
}

static struct pol_pnode *get_kid(struct sb_policy *p, struct pol_pnode *n, const char *s, size_t len)
{
	size_t pos = 0;
	struct pol_pnode *k = find_kid(n, s, len, &pos);

	if (k)
		return k;
	if (n->nkids == n->cap) {
		size_t ncap = n->cap ? n->cap * 2 : 4;
		struct pol_pnode **nk = realloc(n->kids, ncap * sizeof(*nk));
		if (!nk)
			return NULL;
		n->kids = nk;
		n->cap = ncap;
	}
	k = pol_alloc(&p->arena, sizeof(*k));
	if (!k || !(k->name = pol_strndup(&p->arena, s, len)))
		return NULL;
	k->len = len;
	memmove(&n->kids[pos + 1], &n->kids[pos], (n->nkids - pos) * sizeof(*n->kids));
	n->kids[pos] = k;
	n->nkids++;
	return k;
}

/* Next component of [*s, end): returns its start and length, or NULL. */
static const char *next_comp(const char **s, const char *end, size_t *len)
{
	const char *p = *s, *q;

	while (p < end && *p == '/')
		p++;
	if (p == end)
		return NULL;
	q = memchr(p, '/', (size_t)(end - p));
	if (!q)
		q = end;
	*len = (size_t)(q - p);
	*s = q;
	return p;
}

/* The node for a canonical path, created with its ancestors.  `mark_above`
 * flags every strict ancestor as protect_below. */
static struct pol_pnode *tree_node(struct sb_policy *p, const char *path, bool mark_above)
{
	const char *s = path, *end = path + strlen(path), *comp;
	struct pol_pnode *n;
	size_t len;

	if (!p->root && !(p->root = pol_alloc(&p->arena, sizeof(*p->root))))
		return NULL;
	n = p->root;
	while ((comp = next_comp(&s, end, &len))) {
		if (mark_above)
			n->protect_below = true;
		if (!(n = get_kid(p, n, comp, len)))
			return NULL;
	}
	return n;
}

static void free_node(struct pol_pnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		free_node(n->kids[i]);
	free(n->kids);
}

void pol_path_free(struct sb_policy *p)
{
	free_node(p->root);
	p->root = NULL;
}

static int add_exposure(struct sb_policy *p, const char *canon, bool write, bool implicit,
			const struct sb_rule_ref *ref)
{
	struct pol_pnode *n = tree_node(p, canon, false);
	struct sb_expose *e;

	if (!n)
		return -ENOMEM;
	/* An explicit rule keeps its decision; an implicit grant only widens
	 * a node no explicit rule holds. */
	if (n->access && !n->implicit && implicit)
		return 0;
	n->access = SB_ACC_READ | (write ? SB_ACC_WRITE : 0) | (implicit && n->implicit ? n->access : 0);
	n->implicit = implicit;
	n->ref = ref;
	e = pol_vec_push(&p->exposures);
	if (!e)
		return -ENOMEM;
	e->path = pol_strdup(&p->arena, canon);
	e->write = write;
	e->implicit = implicit;
	e->ref = ref;
	return e->path ? 0 : -ENOMEM;
}

int pol_protect_files(struct sb_policy *p)
{
	for (size_t i = 0; i < p->files.n; i++) {
		struct pol_pnode *n = tree_node(p, *POL_VEC_AT(&p->files, const char *, i), true);

		if (!n)
			return -ENOMEM;
		n->protect = true;
	}
	return 0;
}

int sb_policy_grant(struct sb_policy *p, const char *path, unsigned access, const char *why)
{
	bool write = access & SB_ACC_WRITE;
	struct sb_rule_ref *ref;
	const struct sb_rule_ref **imp;

	if (!path || path[0] != '/')
		return -EINVAL;
	ref = pol_alloc(&p->arena, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	ref->file = pol_printf(&p->arena, "<%s>", why ? why : "implicit");
	ref->text = pol_printf(&p->arena, "%s=%s", write ? "expose-rw" : "expose-ro", path);
	imp = pol_vec_push(&p->implicit);
	if (!ref->file || !ref->text || !imp)
		return -ENOMEM;
	*imp = ref;
	return add_exposure(p, path, write, true, ref);
}

size_t sb_policy_exposures(const struct sb_policy *p, const struct sb_expose **out)
{
	*out = p->exposures.v;
	return p->exposures.n;
}

/* ---- parsing ------------------------------------------------------------ */

static const struct sb_expose *find_exposure(struct sb_policy *p, const char *canon)
{
	for (size_t i = 0; i < p->exposures.n; i++) {
		const struct sb_expose *e = POL_VEC_AT(&p->exposures, struct sb_expose, i);

		if (!e->implicit && !strcmp(e->path, canon))
			return e;
	}
	return NULL;
}

static void parse_expose(struct pol_ctx *c, struct pol_line *l, bool write)
{
	char *v = NULL, *abs = NULL, *canon = NULL;
	const char *s = l->value;
	struct stat st;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!(v = strndup(s, n)))
		return pol_oom(c);
	if (strchr(v, ',')) {
		pol_err(c, l, "In '%s', expected a single path (no comma).", l->ref.text);
		goto out;
	}
	if (!*v) {
		pol_err(c, l, "In '%s', path must be set.", l->ref.text);
		goto out;
	}
	if (!(abs = pol_abspath(v, c->cwd, c->home))) {
		pol_oom(c);
		goto out;
	}
	canon = realpath(abs, NULL);
	if (!canon) {
		if (errno == ENOENT || errno == ENOTDIR) {
			size_t cl = strlen(c->cwd);
			const char *rel = abs;

			if (!strcmp(abs, c->cwd))
				rel = ".";
			else if (!strncmp(abs, c->cwd, cl) && (abs[cl] == '/' || cl == 1))
				rel = abs + (cl == 1 ? 1 : cl + 1);
			pol_err(c, l, "In '%s', path '%s' must exist.", l->ref.text, rel);
		} else {
			pol_err(c, l, "In '%s', path is invalid.", l->ref.text);
		}
		goto out;
	}
	if (stat(canon, &st) < 0 || !S_ISDIR(st.st_mode)) {
		pol_err(c, l, "In '%s', path must be a directory.", l->ref.text);
		goto out;
	}
	const struct sb_expose *other = find_exposure(c->p, canon);
	if (other) {
		if (other->write != write)
			pol_err(c, l, "In '%s', invalidate another rule from '%s'.", l->ref.text,
				pol_ruleref(c, other->ref));
		goto out;
	}
	if (add_exposure(c->p, canon, write, false, &l->ref))
		pol_oom(c);
out:
	free(v);
	free(abs);
	free(canon);
}

static void parse_ignore(struct pol_ctx *c, struct pol_line *l)
{
	struct pol_ignore *ig;
	const char *pat = l->value;

	if (!*pat) {
		pol_err(c, l, "In '%s', pattern must be set.", l->ref.text);
		return;
	}
	ig = pol_vec_push(&c->p->ignores);
	if (!ig)
		return pol_oom(c);
	ig->pattern = pat;
	ig->ref = &l->ref;
	ig->component = !strchr(pat, '/');
	if (ig->component || pat[0] == '/') {
		ig->match = pat;
		return;
	}
	/* A relative pattern with a '/' (data/x.csv) is anchored at the cwd. */
	char *abs = pol_abspath(pat, c->cwd, c->home);
	if (!abs || !(ig->match = pol_strdup(&c->p->arena, abs)))
		pol_oom(c);
	free(abs);
}

static const char *const ca_stores[] = {
	"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates", "/usr/share/pki",
};

void pol_parse_paths(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->claimed)
			continue;
		if (pol_key_is(l, "expose-ro") || pol_key_is(l, "expose-rw")) {
			l->claimed = true;
			parse_expose(c, l, pol_key_is(l, "expose-rw"));
		} else if (pol_key_is(l, "ignore")) {
			l->claimed = true;
			parse_ignore(c, l);
		}
	}
	/* OpenSSL reads the system CA store from C code: without it HTTPS fails. */
	for (size_t i = 0; i < sizeof(ca_stores) / sizeof(ca_stores[0]); i++) {
		char *canon = realpath(ca_stores[i], NULL);
		struct stat st;

		if (canon && !stat(canon, &st) && S_ISDIR(st.st_mode) &&
		    sb_policy_grant(c->p, canon, SB_ACC_READ, "ca-certificates"))
			pol_oom(c);
		free(canon);
	}
}

/* ---- lookups -------------------------------------------------------------- */

static const struct pol_ignore *ignored(const struct sb_policy *p, const char *canon, size_t len)
{
	const char *end = canon + len;

	for (size_t i = 0; i < p->ignores.n; i++) {
		const struct pol_ignore *ig = POL_VEC_AT(&p->ignores, struct pol_ignore, i);
		const char *s = canon, *comp;
		size_t cl;

		/* A basename pattern hides a matching file and everything under a
		 * matching directory; an absolute one a matching path and its subtree. */
		while ((comp = next_comp(&s, end, &cl)))
			if (ig->component ? pol_glob_match(ig->match, comp, cl)
					  : pol_glob_match(ig->match, canon, (size_t)(comp + cl - canon)))
				return ig;
	}
	return NULL;
}

enum sb_path_verdict sb_policy_check_path(const struct sb_policy *p, const char *canon, size_t len,
					  unsigned access, const struct sb_rule_ref **hit)
{
	const struct pol_pnode *n = p->root, *best = NULL, *exact = NULL;
	const char *s = canon, *end = canon + len, *comp;
	const struct pol_ignore *ig;
	size_t cl;

	if (hit)
		*hit = NULL;
	if (n) {
		exact = n;
		if (n->access)
			best = n;
		while ((comp = next_comp(&s, end, &cl))) {
			n = find_kid(n, comp, cl, NULL);
			if (!n) {
				exact = NULL;
				break;
			}
			exact = n;
			if (n->access)
				best = n;
		}
	}
	/* Implicit grants (the interpreter tree) are not subject to ignore=:
	 * hiding them would only stop the interpreter from starting. */
	if ((!best || !best->implicit) && (ig = ignored(p, canon, len))) {
		if (hit)
			*hit = ig->ref;
		return SB_PATH_IGNORED;
	}
	if (!best)
		return SB_PATH_NOT_EXPOSED;
	if (hit)
		*hit = best->ref;
	if (access & SB_ACC_WRITE) {
		if (exact && (exact->protect || exact->protect_below))
			return SB_PATH_PROTECTED;
		if (!(best->access & SB_ACC_WRITE))
			return SB_PATH_READ_ONLY;
	}
	return SB_PATH_ALLOW;
}
