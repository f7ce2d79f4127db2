/* --check-config text of the kernel layer: what it enforces, what it leaves
 * to the supervisor, and what the self-test proved. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osl_int.h"

static size_t count_paths(const struct sb_ll_plan *p, bool write)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_paths; i++)
		if (!!(p->paths[i].access & SB_LL_FS_WRITE_FILE) == write &&
		    (p->paths[i].access & (SB_LL_FS_READ_FILE | SB_LL_FS_WRITE_FILE)))
			n++;
	return n;
}

static size_t count_ports(const struct sb_ll_plan *p, uint64_t right)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_ports; i++)
		if (p->ports[i].access & right)
			n++;
	return n;
}

static void net_summary(const struct sb_ll_plan *p, struct osl_strv *on, struct osl_strv *off)
{
	static const struct { uint64_t right; const char *what; unsigned gap; } dirs[] = {
		{ SB_LL_NET_BIND_TCP, "bind", SB_LL_GAP_BIND_TOO_MANY },
		{ SB_LL_NET_CONNECT_TCP, "connect", SB_LL_GAP_CONNECT_TOO_MANY },
	};

	for (size_t i = 0; i < 2; i++) {
		if (p->handled_net & dirs[i].right)
			osl_strv_addf(on, "TCP %s ports (%zu allowed)", dirs[i].what, count_ports(p, dirs[i].right));
		else if (p->gaps & dirs[i].gap)
			osl_strv_addf(off, "TCP %s ports (the net= rules allow more than %d)", dirs[i].what,
				      SB_LL_MAX_PORTS);
		else
			osl_strv_addf(off, "TCP %s ports (Landlock ABI %d < 4)", dirs[i].what, p->abi);
	}
}

static void landlock_lists(const struct sb_oslayer *l, struct osl_strv *on, struct osl_strv *off)
{
	const struct sb_ll_plan *p = l->ll;
	const struct osl_input *in = &l->in;

	osl_strv_addf(on, "files: %zu read-only and %zu writable rules", count_paths(p, false),
		      count_paths(p, true));
	if (in->exec_anywhere)
		osl_strv_add(on, "exec: any exposed file (process-exec without exec= rules)");
	else
		osl_strv_addf(on, "exec: only %zu executable(s) and %zu director%s (the interpreter, its "
			      "loader, exec= rules)", in->exec_targets.n, in->exec_dirs.n,
			      in->exec_dirs.n == 1 ? "y" : "ies");
	if (!(p->handled_fs & SB_LL_FS_TRUNCATE))
		osl_strv_addf(off, "truncate of read-only files (Landlock ABI %d < 3)", p->abi);
	if (!(p->handled_fs & SB_LL_FS_IOCTL_DEV))
		osl_strv_addf(off, "device ioctls (Landlock ABI %d < 5)", p->abi);
	net_summary(p, on, off);
	if (p->scoped)
		osl_strv_add(on, "abstract unix sockets and signals scoped to the sandbox");
	else
		osl_strv_addf(off, "abstract unix sockets and signals (Landlock ABI %d < 6)", p->abi);
	osl_strv_add(off, "UDP");
	osl_strv_add(off, "AF_UNIX socket paths");
	osl_strv_add(off, "network addresses, DENY rules and host names");
	if (in->n_ignores)
		osl_strv_addf(off, "ignore= (%zu rule%s)", in->n_ignores, in->n_ignores == 1 ? "" : "s");
	for (size_t i = 0; i < in->protected_in_rw.n; i++)
		osl_strv_addf(off, "the write protection of the policy file %s (inside a writable exposure)",
			      in->protected_in_rw.v[i]);
	if (p->gaps & SB_LL_GAP_RO_IN_RW)
		osl_strv_addf(off, "read-only exposures inside writable ones (%s)", p->ro_in_rw);
	if (in->exec_dirs.n)
		osl_strv_addf(off, "exec= globs exactly (%s and %zu more director%s may execute anything)",
			      in->exec_dirs.v[0], in->exec_dirs.n - 1, in->exec_dirs.n == 2 ? "y" : "ies");
	osl_strv_add(off, "python-import= and python-api=");
	osl_strv_add(off, "metadata (stat, access, readlink, chdir)");
}

static void unshare_lists(const struct sb_oslayer *l, struct osl_strv *on, struct osl_strv *off)
{
	const struct osl_input *in = &l->in;

	osl_strv_add(on, "files: only the exposures, the interpreter and its loader are mounted "
		     "(read-only or writable), in a fresh root");
	osl_strv_add(on, "processes: own pid, ipc and uts namespaces");
	if (osl_ns_host_network(l->ns))
		osl_strv_addf(on, "network: own namespace; other hosts through slirp4netns "
			      "(10.0.2.100/24, gateway 10.0.2.2, DNS 10.0.2.3); the host's loopback %s",
			      osl_ns_host_loopback(l->ns) ? "at 10.0.2.2 (unshare.host-loopback=yes)"
							  : "out of reach");
	else
		osl_strv_add(on, "network: own namespace with loopback only");
	if (in->protected_in_rw.n)
		osl_strv_add(on, "the policy files: mounted read-only over themselves");
	osl_strv_add(off, osl_ns_host_network(l->ns) ? "net= rules per address and port"
					     : "net= rules per address and port (the namespace has no route out)");
	if (in->n_ignores)
		osl_strv_addf(off, "ignore= (%zu rule%s)", in->n_ignores, in->n_ignores == 1 ? "" : "s");
	osl_strv_add(off, "exec= (any mounted executable can run)");
	osl_strv_add(off, "python-import= and python-api=");
}

static void wrapper_lists(const struct sb_oslayer *l, struct osl_strv *on, struct osl_strv *off)
{
	osl_strv_addf(on, "files: a private mount view from the exposures (%s)", l->wrap_bin);
	osl_strv_add(on, "processes: own pid namespace");
	osl_strv_add(on, "network: own namespace unless a provider parameter shares the host's");
	if (l->in.n_ignores)
		osl_strv_add(off, "ignore=");
	osl_strv_add(off, "net= rules per address and port");
	osl_strv_add(off, "exec=");
	osl_strv_add(off, "python-import= and python-api=");
}

static void join(struct osl_strv *out, const char *head, const struct osl_strv *items)
{
	size_t len = strlen(head) + 1;
	char *s, *p;

	for (size_t i = 0; i < items->n; i++)
		len += strlen(items->v[i]) + 2;
	s = malloc(len);
	if (!s) {
		out->oom = true;
		return;
	}
	p = stpcpy(s, head);
	for (size_t i = 0; i < items->n; i++)
		p = stpcpy(stpcpy(p, i ? "; " : ""), items->v[i]);
	osl_strv_add(out, s);
	free(s);
}

int sb_oslayer_describe(const struct sb_oslayer *l, char **text)
{
	struct osl_strv lines = { 0 }, on = { 0 }, off = { 0 }, mounts = { 0 };
	size_t len = 1;
	int rc = 0;

	*text = NULL;
	switch (sb_oslayer_kind(l)) {
	case SB_OSL_NONE:
		osl_strv_addf(&lines, "os-sandbox: none (%s)", l && l->why_none ? l->why_none : "the supervisor alone");
		osl_strv_add(&lines, "  the supervisor enforces the whole policy; no kernel layer "
			     "backs its decisions");
		break;
	case SB_OSL_LANDLOCK:
		osl_strv_addf(&lines, "os-sandbox: landlock (Landlock ABI %d%s)", l->abi,
			      l->requested == SB_OS_AUTO ? ", selected by os-sandbox=auto" : "");
		landlock_lists(l, &on, &off);
		break;
	case SB_OSL_UNSHARE:
		osl_strv_add(&lines, "os-sandbox: unshare (user, mount, pid, net, ipc, uts namespaces)");
		unshare_lists(l, &on, &off);
		rc = osl_ns_describe(l->ns, &mounts);
		break;
	case SB_OSL_BWRAP:
	case SB_OSL_FIREJAIL:
		osl_strv_addf(&lines, "os-sandbox: %s", sb_oslayer_name(l));
		wrapper_lists(l, &on, &off);
		break;
	}
	if (on.n)
		join(&lines, "  enforces: ", &on);
	if (off.n)
		join(&lines, "  does not enforce (the supervisor does): ", &off);
	if (mounts.n)
		join(&lines, "  the new root: ", &mounts);
	for (size_t i = 0; l && i < l->selftest.n; i++)
		osl_strv_addf(&lines, "  %s", l->selftest.v[i]);
	if (rc || lines.oom || on.oom || off.oom || mounts.oom) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < lines.n; i++)
		len += strlen(lines.v[i]) + 1;
	*text = malloc(len);
	if (!*text) {
		rc = -ENOMEM;
		goto out;
	}
	char *p = *text;

	*p = 0;
	for (size_t i = 0; i < lines.n; i++)
		p = stpcpy(stpcpy(p, lines.v[i]), "\n");
out:
	osl_strv_free(&lines);
	osl_strv_free(&on);
	osl_strv_free(&off);
	osl_strv_free(&mounts);
	return rc ? rc : 0;
}
