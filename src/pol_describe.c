/* sb_policy_describe(): the effective policy as text, for --check-config. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "pol_int.h"

static const char *const os_names[] = {
	[SB_OS_AUTO] = "auto", [SB_OS_NONE] = "none", [SB_OS_SUBPROCESS] = "subprocess",
	[SB_OS_LANDLOCK] = "landlock", [SB_OS_UNSHARE] = "unshare", [SB_OS_BWRAP] = "bwrap",
	[SB_OS_FIREJAIL] = "firejail", [SB_OS_QEMU] = "qemu",
};

static const char *const limit_names[SB_LIMIT__COUNT] = {
	"limit-nproc", "limit-as", "limit-nofile", "limit-fsize", "limit-cpu",
};

static void put_ref(struct pol_buf *b, const struct sb_rule_ref *r)
{
	if (!r)
		pol_buf_puts(b, "implicit");
	else if (r->line)
		pol_buf_printf(b, "%s(%u)", r->file, r->line);
	else
		pol_buf_puts(b, strcmp(r->file, ".") ? r->file : "<arg>");
}

static void describe_settings(struct pol_buf *b, const struct sb_policy *p)
{
	const struct sb_settings *st = &p->st;

	pol_buf_printf(b, "Rule file: %s%s\n", st->config_path,
		       st->config_exists ? "" : " (missing: the template is the base and learning is on)");
	if (!st->config_exists && p->template_path)
		pol_buf_printf(b, "Template: %s\n", p->template_path);
	pol_buf_puts(b, "\nSettings:\n");
	pol_buf_printf(b, "  py-sandbox=%s\n", st->py_sandbox ? "true" : "false");
	pol_buf_printf(b, "  os-sandbox=%s%s\n", os_names[st->os_sandbox],
		       st->learn_file ? " (forced while learning)" : "");
	if (st->learn_file)
		pol_buf_printf(b, "  learn=%s (learning: accesses are recorded, not refused)\n", st->learn_file);
	else
		pol_buf_printf(b, "  learn: off%s%s%s\n", st->learn_locked ? " (locked by learn=false at " : "",
			       st->learn_locked && p->lock_ref_text ? p->lock_ref_text : "", st->learn_locked ? ")" : "");
	if (st->port >= 0)
		pol_buf_printf(b, "  port=%ld\n", st->port);
	else
		pol_buf_puts(b, "  port: any free port\n");
	pol_buf_printf(b, "  remote-result-guard=%s\n", st->remote_result_guard ? "true" : "false");
	pol_buf_printf(b, "  remote-result-mode=%s\n",
		       st->remote_result_mode == SB_RESULT_DATA_ONLY ? "data-only" : "objects");
	for (int k = 0; k < SB_LIMIT__COUNT; k++) {
		if (!st->limit_set[k])
			continue;
		if (st->limit[k] == (unsigned long long)RLIM_INFINITY)
			pol_buf_printf(b, "  %s=unlimited\n", limit_names[k]);
		else
			pol_buf_printf(b, "  %s=%llu\n", limit_names[k], st->limit[k]);
	}
}

static void describe_rules(struct pol_buf *b, const struct sb_policy *p)
{
	pol_buf_puts(b, "\nFiles (write-protected):\n");
	for (size_t i = 0; i < p->files.n; i++)
		pol_buf_printf(b, "  %s\n", *POL_VEC_AT(&p->files, const char *, i));
	pol_buf_puts(b, "\nRules (after includes and ${} substitution):\n");
	for (size_t i = 0; i < p->rules.n; i++) {
		const struct sb_rule_ref *r = *POL_VEC_AT(&p->rules, const struct sb_rule_ref *, i);

		pol_buf_puts(b, "  ");
		put_ref(b, r);
		pol_buf_printf(b, ": %s\n", r->text);
	}
	pol_buf_puts(b, "\nImplicit grants:\n");
	for (size_t i = 0; i < p->implicit.n; i++) {
		const struct sb_rule_ref *r = *POL_VEC_AT(&p->implicit, const struct sb_rule_ref *, i);
		pol_buf_printf(b, "  %s %s\n", r->file, r->text);
	}
}

static void describe_paths(struct pol_buf *b, const struct sb_policy *p)
{
	pol_buf_puts(b, "\nFile system (longest prefix wins, ignore= first, everything else hidden):\n");
	for (size_t i = 0; i < p->exposures.n; i++) {
		const struct sb_expose *e = POL_VEC_AT(&p->exposures, struct sb_expose, i);

		pol_buf_printf(b, "  %s %s  <- ", e->write ? "rw" : "ro", e->path);
		put_ref(b, e->ref);
		pol_buf_puts(b, "\n");
	}
	for (size_t i = 0; i < p->ignores.n; i++) {
		const struct pol_ignore *ig = POL_VEC_AT(&p->ignores, struct pol_ignore, i);

		pol_buf_printf(b, "  ignore %s%s%s  <- ", ig->pattern, ig->component ? " (any path component)" : "",
			       strcmp(ig->pattern, ig->match) && !ig->component ? " (anchored at the cwd)" : "");
		put_ref(b, ig->ref);
		pol_buf_puts(b, "\n");
	}
}

static void put_net(struct pol_buf *b, const struct sb_net_rule *r)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(r->family, r->addr, addr, sizeof(addr));
	pol_buf_printf(b, "  %-5s %s%s%s %s/%u", r->deny ? "DENY" : "ALLOW", r->protos & SB_PROTO_TCP ? "tcp" : "",
		       r->protos == (SB_PROTO_TCP | SB_PROTO_UDP) ? "," : "", r->protos & SB_PROTO_UDP ? "udp" : "",
		       addr, r->plen);
	if (r->host)
		pol_buf_printf(b, " (%s)", r->host);
	pol_buf_puts(b, " ports ");
	if (!r->n_ports)
		pol_buf_puts(b, "none");
	for (size_t k = 0; k < r->n_ports; k++) {
		if (k)
			pol_buf_puts(b, ",");
		if (r->ports[k].lo == r->ports[k].hi)
			pol_buf_printf(b, "%u", r->ports[k].lo);
		else
			pol_buf_printf(b, "%u-%u", r->ports[k].lo, r->ports[k].hi);
	}
	pol_buf_printf(b, " %s%s%s  <- ", r->dirs & SB_DIR_IN ? "IN" : "", r->dirs == (SB_DIR_IN | SB_DIR_OUT) ? "," : "",
		       r->dirs & SB_DIR_OUT ? "OUT" : "");
	put_ref(b, r->ref);
	pol_buf_puts(b, "\n");
}

static void describe_net(struct pol_buf *b, const struct sb_policy *p)
{
	pol_buf_puts(b, "\nNetwork (every DENY first, then the first ALLOW, else the implicit default policy denies):\n");
	for (size_t i = 0; i < p->net.n; i++)
		put_net(b, POL_VEC_AT(&p->net, struct sb_net_rule, i));
	if (!p->hosts.n)
		return;
	pol_buf_puts(b, "\nHost names resolved at load (pinned):\n");
	for (size_t i = 0; i < p->hosts.n; i++) {
		const struct sb_host *h = POL_VEC_AT(&p->hosts, struct sb_host, i);

		pol_buf_printf(b, "  %s (%s):", h->name, h->source);
		for (size_t k = 0; k < h->n_addrs; k++) {
			char addr[INET6_ADDRSTRLEN];

			inet_ntop(h->addrs[k].family, h->addrs[k].addr, addr, sizeof(addr));
			pol_buf_printf(b, "%s %s", k ? "," : "", addr);
		}
		pol_buf_puts(b, "\n");
	}
}

static void describe_python(struct pol_buf *b, const struct sb_policy *p)
{
	pol_buf_puts(b, "\nEnvironment rules:\n");
	for (size_t i = 0; i < p->env.n; i++) {
		const struct pol_env_rule *r = POL_VEC_AT(&p->env, struct pol_env_rule, i);

		pol_buf_printf(b, "  %s %s%s%s  <- ", r->kind == POL_ENV_SET ? "set" : "unset", r->name, r->value ? "=" : "",
			       r->value ? r->value : "");
		put_ref(b, r->ref);
		pol_buf_puts(b, "\n");
	}
	pol_buf_puts(b, "\npython-import: ");
	if (p->import_all)
		pol_buf_puts(b, "* (every module)");
	for (size_t i = 0; !p->import_all && i < p->imports.n; i++)
		pol_buf_printf(b, "%s%s", i ? ", " : "", *POL_VEC_AT(&p->imports, const char *, i));
	if (!p->import_all && !p->imports.n)
		pol_buf_puts(b, "(none)");
	pol_buf_puts(b, "\n\npython-api (allowed functions):\n");
	for (int c = 0; c < SB_API__COUNT; c++) {
		size_t n = 0, total = 0;

		for (size_t f = 0; f < pol_api_n_funcs; f++)
			if ((int)pol_api_funcs[f].cat == c) {
				total++;
				n += p->api_allow[f];
			}
		pol_buf_printf(b, "  %s%s: %zu/%zu%s\n", pol_api_cats[c].warned ? "⚠ " : "", pol_api_cats[c].name, n, total,
			       p->api_cat_granted[c] ? " (its system calls are open)" : "");
	}
	if (p->exec.n) {
		pol_buf_puts(b, "\nexec (executables that may start):\n");
		for (size_t i = 0; i < p->exec.n; i++) {
			const struct pol_exec_rule *r = POL_VEC_AT(&p->exec, struct pol_exec_rule, i);
			pol_buf_printf(b, "  %s%s  <- ", r->pattern, r->glob ? " (pattern)" : "");
			put_ref(b, r->ref);
			pol_buf_puts(b, "\n");
		}
	}
}

static void describe_misc(struct pol_buf *b, const struct sb_policy *p)
{
	if (p->eval.n)
		pol_buf_puts(b, "\nEval profiles:\n");
	for (size_t i = 0; i < p->eval.n; i++) {
		const struct pol_eval_profile *pr = POL_VEC_AT(&p->eval, struct pol_eval_profile, i);

		pol_buf_printf(b, "  %s: namespace=%s timeout=%lldms max-iterations=%lld max-call-depth=%lld max-depth=%lld"
			       " max-nodes=%lld max-alloc=%lld max-leaked-threads=%lld\n",
			       *pr->name ? pr->name : "(default)", pr->ns, pr->value[POL_EV_TIMEOUT],
			       pr->value[POL_EV_MAX_ITERATIONS], pr->value[POL_EV_MAX_CALL_DEPTH], pr->value[POL_EV_MAX_DEPTH],
			       pr->value[POL_EV_MAX_NODES], pr->value[POL_EV_MAX_ALLOC], pr->value[POL_EV_MAX_LEAKED_THREADS]);
		for (int k = 0; k < POL_EV__LISTS; k++) {
			if (!pr->list[k].n)
				continue;
			pol_buf_printf(b, "    %s=", pol_eval_list_keys[k]);
			for (size_t j = 0; j < pr->list[k].n; j++)
				pol_buf_printf(b, "%s%s", j ? ", " : "", *POL_VEC_AT(&pr->list[k], const char *, j));
			pol_buf_puts(b, "\n");
		}
	}
	if (p->providers.n)
		pol_buf_puts(b, "\nProvider parameters:\n");
	for (size_t i = 0; i < p->providers.n; i++) {
		const struct sb_provider_param *pp = POL_VEC_AT(&p->providers, struct sb_provider_param, i);

		pol_buf_printf(b, "  %s.%s=%s  <- ", pp->provider, pp->key, pp->value);
		put_ref(b, pp->ref);
		pol_buf_puts(b, "\n");
	}
}

int sb_policy_describe(const struct sb_policy *p, char **out)
{
	struct pol_buf b = { 0 };

	*out = NULL;
	describe_settings(&b, p);
	describe_rules(&b, p);
	describe_paths(&b, p);
	describe_net(&b, p);
	describe_python(&b, p);
	describe_misc(&b, p);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*out = b.s;
	return 0;
}
