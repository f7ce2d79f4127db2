/* The rules handed to the in-interpreter agent, as JSON (schema in
 * doc/agent-protocol.md, section "rules"). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "pol_int.h"

/* "<file>(<line>)", "<arg>" for the command line, or the bare origin. */
static cJSON *ref_json(const struct sb_rule_ref *r)
{
	char buf[PATH_MAX + 32];

	if (!r)
		return cJSON_CreateNull();
	if (r->line)
		snprintf(buf, sizeof(buf), "%s(%u)", r->file, r->line);
	else
		snprintf(buf, sizeof(buf), "%s", strcmp(r->file, ".") ? r->file : "<arg>");
	return cJSON_CreateString(buf);
}

/* Append a copy of str to the array arr. */
static bool push_string(cJSON *arr, const char *str)
{
	cJSON *s = cJSON_CreateString(str);

	if (!s || !cJSON_AddItemToArray(arr, s)) {
		cJSON_Delete(s);
		return false;
	}
	return true;
}

static bool add_strings(cJSON *obj, const char *name, const struct pol_vec *v)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, name);

	if (!arr)
		return false;
	for (size_t i = 0; i < v->n; i++)
		if (!push_string(arr, *POL_VEC_AT(v, const char *, i)))
			return false;
	return true;
}

/* Where the program may change a directory's entries: the agent keeps the
 * listing of every other module directory for the whole run
 * (python/pysandboxes/_importstat.py), as nothing in the sandbox can change
 * it.  Canonical paths, as the supervisor compares them. */
static bool add_writable(cJSON *root, const struct sb_policy *p)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "writable");

	if (!arr)
		return false;
	for (size_t i = 0; i < p->exposures.n; i++) {
		const struct sb_expose *e = POL_VEC_AT(&p->exposures, struct sb_expose, i);

		if (e->write && !push_string(arr, e->path))
			return false;
	}
	return true;
}

static bool add_api(cJSON *root, const struct sb_policy *p)
{
	cJSON *api = cJSON_AddObjectToObject(root, "api"), *cats = cJSON_AddObjectToObject(root, "categories");

	if (!api || !cats)
		return false;
	for (size_t f = 0; f < pol_api_n_funcs; f++) {
		cJSON *o = cJSON_AddObjectToObject(api, pol_api_funcs[f].qualname);
		cJSON *r = ref_json(p->api_ref[f]);

		if (!o || !r || !cJSON_AddStringToObject(o, "category", pol_api_cats[pol_api_funcs[f].cat].name) ||
		    !cJSON_AddBoolToObject(o, "allow", p->api_allow[f]) || !cJSON_AddItemToObject(o, "rule", r)) {
			cJSON_Delete(r);
			return false;
		}
	}
	for (int c = 0; c < SB_API__COUNT; c++) {
		cJSON *o = cJSON_AddObjectToObject(cats, pol_api_cats[c].name);

		if (!o || !cJSON_AddStringToObject(o, "help", pol_api_cats[c].help) ||
		    !cJSON_AddBoolToObject(o, "warned", pol_api_cats[c].warned) ||
		    !cJSON_AddBoolToObject(o, "granted", p->api_cat_granted[c]))
			return false;
	}
	return true;
}

static bool add_eval(cJSON *root, const struct sb_policy *p)
{
	static const char *const list_names[POL_EV__LISTS] = { "syntax", "call", "attribute", "import", "magic" };
	static const char *const scalar_names[POL_EV__SCALARS] = {
		"namespace", "timeout_ms", "max_iterations", "max_call_depth", "max_depth", "max_nodes", "max_alloc",
		"max_leaked_threads",
	};
	cJSON *ev = cJSON_AddObjectToObject(root, "eval"), *profs;

	if (!ev || !cJSON_AddBoolToObject(ev, "present", p->eval.n > 0) ||
	    !(profs = cJSON_AddObjectToObject(ev, "profiles")))
		return false;
	for (size_t i = 0; i < p->eval.n; i++) {
		const struct pol_eval_profile *pr = POL_VEC_AT(&p->eval, struct pol_eval_profile, i);
		cJSON *o = cJSON_AddObjectToObject(profs, pr->name);

		if (!o)
			return false;
		for (int k = 0; k < POL_EV__LISTS; k++)
			if (!add_strings(o, list_names[k], &pr->list[k]))
				return false;
		if (!cJSON_AddStringToObject(o, scalar_names[POL_EV_NAMESPACE], pr->ns))
			return false;
		for (int k = POL_EV_NAMESPACE + 1; k < POL_EV__SCALARS; k++)
			if (!cJSON_AddNumberToObject(o, scalar_names[k], (double)pr->value[k]))
				return false;
	}
	return true;
}

static bool add_hosts(cJSON *root, const struct sb_policy *p)
{
	cJSON *hosts = cJSON_AddObjectToObject(root, "hosts");

	if (!hosts)
		return false;
	for (size_t i = 0; i < p->hosts.n; i++) {
		const struct sb_host *h = POL_VEC_AT(&p->hosts, struct sb_host, i);
		cJSON *arr = cJSON_AddArrayToObject(hosts, h->name);

		if (!arr)
			return false;
		for (size_t k = 0; k < h->n_addrs; k++) {
			char buf[INET6_ADDRSTRLEN];

			inet_ntop(h->addrs[k].family, h->addrs[k].addr, buf, sizeof(buf));
			if (!push_string(arr, buf))
				return false;
		}
	}
	return true;
}

static bool add_imports(cJSON *root, const struct sb_policy *p)
{
	cJSON *imp = cJSON_AddObjectToObject(root, "import");

	return imp && cJSON_AddBoolToObject(imp, "all", p->import_all) && add_strings(imp, "names", &p->imports);
}

int sb_policy_agent_json(const struct sb_policy *p, char **out)
{
	cJSON *root = cJSON_CreateObject();
	int rc = -ENOMEM;

	*out = NULL;
	if (!root || !cJSON_AddNumberToObject(root, "version", 1) ||
	    !cJSON_AddStringToObject(root, "config", p->st.config_path) ||
	    !cJSON_AddBoolToObject(root, "py_sandbox", p->st.py_sandbox) ||
	    !cJSON_AddBoolToObject(root, "learn", p->st.learn_file != NULL))
		goto out;
	if (!add_imports(root, p) || !add_api(root, p) || !add_eval(root, p) || !add_hosts(root, p) ||
	    !add_strings(root, "env_set_by_policy", &p->env_names) || !add_writable(root, p))
		goto out;
	*out = cJSON_PrintUnformatted(root);
	if (*out)
		rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/* The part of the agent's document the supervisor's attribution reads
 * (src/sup_attr.c): without the registry of every API function, which
 * made each start build, print and parse the whole document a second
 * time. */
int sb_policy_attr_json(const struct sb_policy *p, char **out)
{
	cJSON *root = cJSON_CreateObject();
	int rc = -ENOMEM;

	*out = NULL;
	if (root && add_imports(root, p) && add_eval(root, p))
		*out = cJSON_PrintUnformatted(root);
	if (*out)
		rc = 0;
	cJSON_Delete(root);
	return rc;
}
