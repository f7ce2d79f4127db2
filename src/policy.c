/* sb_policy_load(): the parse pipeline of reference §2.1, and the accessors.
 *
 * Order: includes, env/unenv, ${} substitution of the other lines, general
 * keys, provider parameters, limits, net, expose/ignore, python-api,
 * python-import, exec, eval-*, then every unclaimed line is an error.  All
 * errors are collected; the caller prints them sorted. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pol_int.h"

static struct sb_policy *policy_new(void)
{
	struct sb_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->files = (struct pol_vec)POL_VEC_INIT(const char *);
	p->rules = (struct pol_vec)POL_VEC_INIT(const struct sb_rule_ref *);
	p->env = (struct pol_vec)POL_VEC_INIT(struct pol_env_rule);
	p->env_names = (struct pol_vec)POL_VEC_INIT(const char *);
	p->ignores = (struct pol_vec)POL_VEC_INIT(struct pol_ignore);
	p->exposures = (struct pol_vec)POL_VEC_INIT(struct sb_expose);
	p->net = (struct pol_vec)POL_VEC_INIT(struct sb_net_rule);
	p->hosts = (struct pol_vec)POL_VEC_INIT(struct sb_host);
	p->imports = (struct pol_vec)POL_VEC_INIT(const char *);
	p->import_refs = (struct pol_vec)POL_VEC_INIT(const struct sb_rule_ref *);
	p->api_rules = (struct pol_vec)POL_VEC_INIT(struct pol_api_rule);
	p->exec = (struct pol_vec)POL_VEC_INIT(struct pol_exec_rule);
	p->eval = (struct pol_vec)POL_VEC_INIT(struct pol_eval_profile);
	p->providers = (struct pol_vec)POL_VEC_INIT(struct sb_provider_param);
	p->implicit = (struct pol_vec)POL_VEC_INIT(const struct sb_rule_ref *);
	p->st.py_sandbox = true;
	p->st.os_sandbox = SB_OS_AUTO;
	p->st.port = -1;
	p->st.remote_result_guard = true;
	p->st.remote_result_mode = SB_RESULT_DATA_ONLY;
	return p;
}

void sb_policy_free(struct sb_policy *p)
{
	if (!p)
		return;
	pol_path_free(p);
	for (size_t i = 0; i < p->eval.n; i++) {
		struct pol_eval_profile *pr = POL_VEC_AT(&p->eval, struct pol_eval_profile, i);
		for (int k = 0; k < POL_EV__LISTS; k++)
			pol_vec_free(&pr->list[k]);
	}
	struct pol_vec *vecs[] = {
		&p->files, &p->rules, &p->env, &p->env_names, &p->ignores, &p->exposures, &p->net, &p->hosts,
		&p->imports, &p->import_refs, &p->api_rules, &p->exec, &p->eval, &p->providers, &p->implicit,
	};
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
		pol_vec_free(vecs[i]);
	pol_arena_free(&p->arena);
	free(p);
}

static const char *home_dir(struct sb_policy *p, char *const *envp)
{
	const char *h = pol_getenv(envp, "HOME", 4);
	struct passwd *pw;

	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pol_strdup(&p->arena, pw->pw_dir) : NULL;
}

/* Canonical path of a file that may not exist: realpath of its directory. */
static char *canon_maybe_missing(const char *abs)
{
	char *r = realpath(abs, NULL), *dir, *slash, *out = NULL;

	if (r)
		return r;
	dir = strdup(abs);
	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		char *cdir = realpath(dir, NULL);
		if (cdir && asprintf(&out, "%s/%s", strcmp(cdir, "/") ? cdir : "", slash + 1) < 0)
			out = NULL;
		free(cdir);
	}
	free(dir);
	return out ? out : strdup(abs);
}

static const char *find_template(struct sb_policy *p, const struct sb_load_opts *o)
{
	static const char *const candidates[] = {
		SB_DATADIR "/rules/py-sandboxes.template",
		SB_SRCDIR "/rules/py-sandboxes.template",
	};

	if (o->template_path)
		return pol_strdup(&p->arena, o->template_path);
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (!access(candidates[i], R_OK))
			return candidates[i];
	return NULL;
}

static int setup(struct pol_ctx *c, const struct sb_load_opts *o)
{
	struct sb_policy *p = c->p;
	char *tmp = NULL, *abs;
	struct stat st;

	if (o->cwd) {
		tmp = realpath(o->cwd, NULL);
		c->cwd = pol_strdup(&p->arena, tmp ? tmp : o->cwd);
	} else {
		tmp = getcwd(NULL, 0);
		c->cwd = pol_strdup(&p->arena, tmp ? tmp : "/");
	}
	free(tmp);
	c->home = home_dir(p, o->envp);
	if (!c->cwd)
		return -ENOMEM;
	p->cwd = c->cwd;
	abs = pol_abspath(o->config_path, c->cwd, c->home);
	tmp = abs ? canon_maybe_missing(abs) : NULL;
	free(abs);
	if (!tmp)
		return -ENOMEM;
	p->st.config_path = pol_strdup(&p->arena, tmp);
	p->st.config_exists = stat(tmp, &st) == 0;
	free(tmp);
	p->template_path = find_template(p, o);
	return p->st.config_path ? 0 : -ENOMEM;
}

static void leftovers(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (!l->claimed)
			pol_err(c, l, "Invalid rule '%s'", l->ref.text);
	}
}

/* Granting dynamic-code turns the eval guard off: refuse it next to eval-*. */
static void check_dynamic_code(struct pol_ctx *c)
{
	const struct sb_policy *p = c->p;

	if (!p->eval.n || !p->api_cat_granted[SB_API_DYNAMIC_CODE])
		return;
	for (size_t f = 0; f < pol_api_n_funcs; f++) {
		const struct sb_rule_ref *r = p->api_ref[f];

		if (pol_api_funcs[f].cat != SB_API_DYNAMIC_CODE || !p->api_allow[f] || !r)
			continue;
		for (size_t i = 0; i < c->lines.n; i++)
			if (&pol_line_at(c, i)->ref == r) {
				pol_err(c, pol_line_at(c, i),
					"In '%s', granting dynamic-code turns the eval guard off: it cannot be combined with eval-* rules.",
					r->text);
				return;
			}
	}
}

static void parse_all(struct pol_ctx *c)
{
	pol_parse_env(c);
	pol_substitute_lines(c);
	pol_parse_settings(c);
	pol_parse_providers(c);
	pol_parse_limits(c);
	pol_parse_net(c);
	pol_parse_paths(c);
	pol_parse_api(c);
	pol_parse_import(c);
	pol_parse_exec(c);
	pol_parse_eval(c);
	leftovers(c);
	check_dynamic_code(c);
	/* Learning records everything with the supervisor alone, as upstream. */
	if (c->p->st.learn_file)
		c->p->st.os_sandbox = SB_OS_SUBPROCESS;
}

static int finish(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		const struct sb_rule_ref **slot = pol_vec_push(&c->p->rules);

		if (!slot)
			return -ENOMEM;
		*slot = &pol_line_at(c, i)->ref;
	}
	if (pol_protect_files(c->p))
		return -ENOMEM;
	pol_env_record_names(c);
	return c->sys_err;
}

int sb_policy_load(const struct sb_load_opts *opts, struct sb_policy **out, struct sb_diag *diag)
{
	struct pol_ctx c = { .o = opts, .d = diag };
	size_t errors_before;
	int rc;

	*out = NULL;
	if (!opts || !opts->config_path || !diag)
		return -EINVAL;
	errors_before = sb_diag_count(diag, SB_DIAG_ERROR);
	c.p = policy_new();
	if (!c.p)
		return -ENOMEM;
	c.lines = (struct pol_vec)POL_VEC_INIT(struct pol_line *);
	c.seen_files = (struct pol_vec)POL_VEC_INIT(char *);
	rc = setup(&c, opts);
	if (!rc)
		rc = pol_read_all(&c, c.p->st.config_path, c.p->st.config_exists, c.p->template_path);
	if (!rc) {
		parse_all(&c);
		rc = c.sys_err;
	}
	if (!rc)
		rc = finish(&c);
	if (!rc && (diag->lost_error || sb_diag_count(diag, SB_DIAG_ERROR) > errors_before))
		rc = -EINVAL;
	pol_vec_free(&c.lines);
	pol_vec_free(&c.seen_files);
	if (rc) {
		sb_policy_free(c.p);
		return rc;
	}
	*out = c.p;
	return 0;
}

const struct sb_settings *sb_policy_settings(const struct sb_policy *p)
{
	return &p->st;
}

size_t sb_policy_files(const struct sb_policy *p, const char *const **files)
{
	*files = p->files.v;
	return p->files.n;
}

size_t sb_policy_provider_params(const struct sb_policy *p, const struct sb_provider_param **out)
{
	*out = p->providers.v;
	return p->providers.n;
}

const char *sb_policy_template_path(const struct sb_policy *p)
{
	return p->template_path;
}
