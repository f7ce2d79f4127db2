/* env= / unenv= (reference §2.3) and the child's environment.
 *
 * Values keep their ${} forms until the environment is built, so the same
 * policy gives each launch the host values of that launch.  Precedence does
 * not depend on line order: wildcard env= rules first, then wildcard unenv=,
 * then exact env= (an exact rule beats a wildcard one), then exact unenv=. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_int.h"

/* "${<glob>}" with at least one '*' and only name characters otherwise. */
static bool is_copy_glob(const char *v)
{
	size_t n = strlen(v);
	bool star = false;

	if (n < 4 || strncmp(v, "${", 2) || v[n - 1] != '}')
		return false;
	for (size_t i = 2; i < n - 1; i++) {
		if (v[i] == '*')
			star = true;
		else if (!isalnum((unsigned char)v[i]) && v[i] != '_')
			return false;
	}
	return star;
}

static int add_rule(struct sb_policy *p, enum pol_env_kind kind, const char *name, const char *value,
		    const struct sb_rule_ref *ref)
{
	struct pol_env_rule *r = pol_vec_push(&p->env);

	if (!r)
		return -ENOMEM;
	r->kind = kind;
	r->name = name;
	r->value = value;
	r->glob = strchr(name, '*') != NULL;
	r->copy_glob = value && is_copy_glob(value);
	r->ref = ref;
	return 0;
}

static void parse_env_line(struct pol_ctx *c, struct pol_line *l)
{
	const char *eq = strchr(l->value, '=');
	char *bad = NULL, *x;

	if (!eq) {
		pol_err(c, l, "Detect a missing '=' in rule: %s.", l->ref.text);
		return;
	}
	if (eq == l->value) {
		pol_err(c, l, "In '%s', the variable name is empty.", l->ref.text);
		return;
	}
	char *name = pol_strndup(&c->p->arena, l->value, (size_t)(eq - l->value));
	if (!name)
		return pol_oom(c);
	if (is_copy_glob(eq + 1)) {
		if (!strchr(name, '*'))
			pol_err(c, l, "In '%s', a pattern in the value needs a pattern in the name.", l->ref.text);
		else if (add_rule(c->p, POL_ENV_SET, name, eq + 1, &l->ref))
			pol_oom(c);
		return;
	}
	x = pol_expand(eq + 1, c->o->envp, &bad, NULL);
	if (!x) {
		if (!bad)
			return pol_oom(c);
		pol_err(c, l, "In '%s', invalid substitution '%s': use ${NAME} or ${NAME:-default}.", l->ref.text, bad);
		free(bad);
		return;
	}
	free(x);
	if (add_rule(c->p, POL_ENV_SET, name, eq + 1, &l->ref))
		pol_oom(c);
}

void pol_parse_env(struct pol_ctx *c)
{
	static const struct sb_rule_ref term = { "<implicit>", 0, "env=TERM=${TERM}" };

	/* python-sb always forwards TERM (an explicit unenv=TERM still removes it). */
	if (add_rule(c->p, POL_ENV_SET, "TERM", "${TERM}", &term))
		return pol_oom(c);
	const struct sb_rule_ref **imp = pol_vec_push(&c->p->implicit);
	if (!imp)
		return pol_oom(c);
	*imp = &term;

	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->claimed)
			continue;
		if (pol_key_is(l, "env")) {
			l->claimed = true;
			parse_env_line(c, l);
		} else if (pol_key_is(l, "unenv")) {
			l->claimed = true;
			if (!*l->value)
				pol_err(c, l, "In '%s', the variable name is empty.", l->ref.text);
			else if (add_rule(c->p, POL_ENV_UNSET, l->value, NULL, &l->ref))
				pol_oom(c);
		}
	}
}

/* ---- building ----------------------------------------------------------- */

struct envv {
	char **v;
	size_t n, cap;
};

static size_t name_len(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq ? (size_t)(eq - kv) : strlen(kv);
}

static ssize_t envv_find(const struct envv *e, const char *name, size_t n)
{
	for (size_t i = 0; i < e->n; i++)
		if (name_len(e->v[i]) == n && !strncmp(e->v[i], name, n))
			return (ssize_t)i;
	return -1;
}

static void envv_del(struct envv *e, size_t i)
{
	free(e->v[i]);
	/* Moves the NULL terminator too. */
	memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof(*e->v));
	e->n--;
}

static int envv_set(struct envv *e, const char *name, size_t n, const char *value)
{
	char *kv = malloc(n + strlen(value) + 2);
	ssize_t at;

	if (!kv)
		return -ENOMEM;
	memcpy(kv, name, n);
	kv[n] = '=';
	strcpy(kv + n + 1, value);
	at = envv_find(e, name, n);
	if (at >= 0) {
		free(e->v[at]);
		e->v[at] = kv;
		return 0;
	}
	if (e->n + 2 > e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 16;
		char **nv = realloc(e->v, ncap * sizeof(*nv));
		if (!nv) {
			free(kv);
			return -ENOMEM;
		}
		e->v = nv;
		e->cap = ncap;
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
	return 0;
}

/* Set (or, when an expansion comes out empty, remove) one variable. */
static int apply_set(struct envv *e, const struct pol_env_rule *r, const char *name, size_t n,
		     const char *own, char *const *host)
{
	char *bad = NULL, *x;
	bool any;
	int rc;

	if (r->copy_glob) {
		if (!own || !*own)
			return 0;
		return envv_set(e, name, n, own);
	}
	x = pol_expand(r->value, host, &bad, &any);
	if (!x) {
		free(bad);
		return bad ? 0 : -ENOMEM;	/* syntax was checked at load time */
	}
	if (any && !*x) {
		ssize_t at = envv_find(e, name, n);
		if (at >= 0)
			envv_del(e, (size_t)at);
		rc = 0;
	} else {
		rc = envv_set(e, name, n, x);
	}
	free(x);
	return rc;
}

static int apply_pass(const struct sb_policy *p, struct envv *e, char *const *host, bool glob,
		      enum pol_env_kind kind)
{
	for (size_t i = 0; i < p->env.n; i++) {
		const struct pol_env_rule *r = POL_VEC_AT(&p->env, struct pol_env_rule, i);
		int rc = 0;

		if (r->glob != glob || r->kind != kind)
			continue;
		if (kind == POL_ENV_UNSET) {
			for (size_t j = e->n; j-- > 0;)
				if (pol_star_match(r->name, e->v[j], name_len(e->v[j])))
					envv_del(e, j);
			continue;
		}
		if (!glob) {
			rc = apply_set(e, r, r->name, strlen(r->name), pol_getenv(host, r->name, strlen(r->name)), host);
		} else if (host) {
			for (char *const *h = host; *h && !rc; h++) {
				size_t n = name_len(*h);

				if ((*h)[n] == '=' && pol_star_match(r->name, *h, n))
					rc = apply_set(e, r, *h, n, *h + n + 1, host);
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

int sb_policy_build_env(const struct sb_policy *p, char *const *host, char ***out)
{
	struct envv e = { 0 };
	int rc;

	*out = NULL;
	if ((rc = apply_pass(p, &e, host, true, POL_ENV_SET)) || (rc = apply_pass(p, &e, host, true, POL_ENV_UNSET)) ||
	    (rc = apply_pass(p, &e, host, false, POL_ENV_SET)) || (rc = apply_pass(p, &e, host, false, POL_ENV_UNSET)))
		goto fail;
	if (!e.v) {
		e.v = calloc(1, sizeof(*e.v));
		if (!e.v) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	*out = e.v;
	return 0;
fail:
	for (size_t i = 0; i < e.n; i++)
		free(e.v[i]);
	free(e.v);
	return rc;
}

void sb_env_free(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}

bool sb_policy_env_covers(const struct sb_policy *p, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < p->env.n; i++) {
		const struct pol_env_rule *r = POL_VEC_AT(&p->env, struct pol_env_rule, i);

		if (r->glob ? pol_star_match(r->name, name, n) : !strcmp(r->name, name))
			return true;
	}
	return false;
}

/* The names the policy sets for the launching environment (agent JSON). */
void pol_env_record_names(struct pol_ctx *c)
{
	char **env = NULL;

	if (sb_policy_build_env(c->p, c->o->envp, &env))
		return pol_oom(c);
	for (char **e = env; *e; e++) {
		const char **slot = pol_vec_push(&c->p->env_names);

		if (!slot || !(*slot = pol_strndup(&c->p->arena, *e, name_len(*e)))) {
			pol_oom(c);
			break;
		}
	}
	sb_env_free(env);
}
