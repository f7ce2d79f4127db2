/* Attach mode: what a call touches and what a policy says about it.
 *
 * At the entry stop the object is resolved the way the supervisor would see
 * it (SPEC §3): a path relative to the thread's cwd (/proc/TID/cwd) or to a
 * descriptor (/proc/TID/fd/N), made canonical by opening it O_PATH here and
 * reading the name back, /proc/self and /dev/fd rewritten to the thread's
 * own; a socket's domain, type and bound address through a duplicate
 * (pidfd_getfd); a signal's target placed inside or outside the traced tree.
 * Then each policy decides on that object with the supervisor's rules
 * (sb_policy_check_path/net/exec, api categories, the same errnos).
 *
 * Race tolerance: all of this reads the program's state while one thread is
 * stopped; another thread can change the path buffer, rename a directory or
 * dup2() a socket between this check and the kernel's own lookup.  For
 * --policy (reporting) that only makes a report wrong in a program racing
 * itself; for --enforce it is the ptrace TOCTOU doc/attach.md warns about:
 * enforcement through ptrace is best effort, the supervisor's is not.
 * The tracee runs with its own root in the tracer's view: a target in
 * another mount namespace or chroot is judged on the names as seen from
 * here (documented).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach_int.h"
#include "policy.h"

#define SB_CLONE_NS_FLAGS                                                                    \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
	 CLONE_NEWPID | CLONE_NEWNET)

/* ---- paths ---------------------------------------------------------------------------- */

static int read_link(const char *link, char *out, size_t cap)
{
	ssize_t n = readlink(link, out, cap - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= cap - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

/* The directory a relative path starts from: the thread's cwd or dirfd. */
static int base_of(pid_t tid, int dirfd, char *out, size_t cap)
{
	char link[64];

	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
	return read_link(link, out, cap);
}

/* The names that mean "the caller" must mean the traced thread, not us. */
static int rewrite_self(const char *in, pid_t tgid, pid_t tid, char *out, size_t cap)
{
	static const struct { const char *from; int kind; } maps[] = {
		{ "/proc/self", 0 }, { "/proc/thread-self", 1 }, { "/dev/fd", 2 },
		{ "/dev/stdin", 3 }, { "/dev/stdout", 4 }, { "/dev/stderr", 5 },
	};
	int n = -1;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		size_t l = strlen(maps[i].from);
		const char *rest = in + l;

		if (strncmp(in, maps[i].from, l) != 0 || (*rest && *rest != '/'))
			continue;
		switch (maps[i].kind) {
		case 0: n = snprintf(out, cap, "/proc/%d%s", (int)tgid, rest); break;
		case 1: n = snprintf(out, cap, "/proc/%d/task/%d%s", (int)tgid, (int)tid, rest); break;
		case 2: n = snprintf(out, cap, "/proc/%d/fd%s", (int)tid, rest); break;
		default: n = snprintf(out, cap, "/proc/%d/fd/%d%s", (int)tid, maps[i].kind - 3, rest); break;
		}
		return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
	}
	n = snprintf(out, cap, "%s", in);
	return (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The canonical name of an O_PATH descriptor of ours. */
static int fd_name(int fd, struct sb_apath *p)
{
	char link[64];
	struct stat st;
	int rc;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rc = read_link(link, p->canon, sizeof(p->canon));
	if (rc)
		return rc;
	p->fdobj = p->canon[0] != '/';
	p->isdir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	return 0;
}

static bool is_dot_name(const char *name)
{
	return !strcmp(name, "") || !strcmp(name, ".") || !strcmp(name, "..");
}

/* A name that does not exist yet: its parent, canonical, plus the name. */
static int resolve_new(const char *full, struct sb_apath *p)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(full, '/');
	char name[NAME_MAX + 1];
	size_t plen;
	int fd, rc;

	if (!slash || strlen(slash + 1) > NAME_MAX)
		return -ENAMETOOLONG;
	snprintf(name, sizeof(name), "%s", slash + 1);
	if (is_dot_name(name))
		return -ENOENT;
	plen = slash == full ? 1 : (size_t)(slash - full);
	memcpy(parent, full, plen);
	parent[plen] = '\0';
	fd = open(parent, O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	rc = fd_name(fd, p);
	close(fd);
	if (rc)
		return rc;
	if (p->fdobj)
		return -ENOENT;
	plen = strlen(p->canon);
	if (plen + 1 + strlen(name) + 1 > sizeof(p->canon))
		return -ENAMETOOLONG;
	snprintf(p->canon + plen, sizeof(p->canon) - plen, "%s%s", plen == 1 ? "" : "/", name);
	p->isdir = false;
	return 0;
}

static bool own_proc_path(pid_t tgid, const char *canon)
{
	char *end;
	long pid;

	if (strncmp(canon, "/proc/", 6) != 0)
		return false;
	pid = strtol(canon + 6, &end, 10);
	if (end == canon + 6 || (*end && *end != '/') || pid <= 0)
		return false;
	return pid == tgid || syscall(SYS_tgkill, tgid, (pid_t)pid, 0) == 0;
}

/* Resolve (dirfd, path) as thread t would: p->ok when p->canon names the
 * object or, with AR_CREATE, the new name.  A path that does not resolve
 * stays !ok: the kernel will fail the call itself. */
static void resolve(const struct sb_atracee *t, int dirfd, const char *path, unsigned res, struct sb_apath *p)
{
	char joined[2 * PATH_MAX + 2], full[PATH_MAX];
	int fd;

	p->canon[0] = '\0';
	p->ok = p->exists = p->isdir = p->fdobj = p->own_proc = false;
	if (path[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", path);
	} else {
		char base[PATH_MAX];

		if (base_of(t->tid, dirfd, base, sizeof(base)) != 0)
			return;
		if (base[0] != '/') {
			/* A pipe or socket descriptor: AT_EMPTY_PATH acts on it. */
			if (path[0] || !(res & AR_EMPTY))
				return;
			snprintf(p->canon, sizeof(p->canon), "%s", base);
			p->ok = p->exists = p->fdobj = true;
			return;
		}
		if (path[0])
			snprintf(joined, sizeof(joined), "%s/%s", base, path);
		else if (res & AR_EMPTY)
			snprintf(joined, sizeof(joined), "%s", base);
		else
			return;	/* "" without AT_EMPTY_PATH: ENOENT */
	}
	if (strlen(joined) >= sizeof(full) || rewrite_self(joined, t->tgid, t->tid, full, sizeof(full)) != 0)
		return;
	fd = open(full, O_PATH | O_CLOEXEC | (res & AR_FOLLOW ? 0 : O_NOFOLLOW));
	if (fd >= 0) {
		p->ok = fd_name(fd, p) == 0;
		p->exists = true;
		close(fd);
	} else if (errno == ENOENT && (res & AR_CREATE)) {
		p->ok = resolve_new(full, p) == 0;
	}
	if (p->ok && !p->fdobj)
		p->own_proc = own_proc_path(t->tgid, p->canon);
}

/* ---- sockets ---------------------------------------------------------------------------- */

struct sock_info {
	int fd;		/* our duplicate, -1 if none */
	int domain, type, protocol;
};

static int sock_get(pid_t tgid, int tfd, struct sock_info *s)
{
	socklen_t l = sizeof(int);
	int pidfd;

	s->fd = -1;
	pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return -errno;
	s->fd = (int)syscall(SYS_pidfd_getfd, pidfd, tfd, 0);
	close(pidfd);
	if (s->fd < 0)
		return -errno;
	if (getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &s->domain, &l) < 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_TYPE, &s->type, &l) < 0 ||
	    getsockopt(s->fd, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &l) < 0) {
		close(s->fd);
		s->fd = -1;
		return -ENOTSOCK;
	}
	return 0;
}

static bool inet_proto(const struct sock_info *s, unsigned *proto)
{
	if (s->type == SOCK_STREAM && s->protocol == IPPROTO_TCP)
		*proto = SB_PROTO_TCP;
	else if (s->type == SOCK_DGRAM && s->protocol == IPPROTO_UDP)
		*proto = SB_PROTO_UDP;
	else
		return false;
	return true;
}

static void net_refuse(struct sb_anet *n, const char *why)
{
	n->kind = AN_REFUSE;
	snprintf(n->why, sizeof(n->why), "%s", why);
}

/* The kernel sends to the unspecified address as to the local host: judge
 * where it really goes, as the supervisor does (notif_net.c). */
static void local_destination(const struct sock_info *s, struct sb_sa *a)
{
	struct sockaddr_storage me;
	socklen_t l = sizeof(me);
	struct sb_sa own;

	memset(&me, 0, sizeof(me));
	if (getsockname(s->fd, (struct sockaddr *)&me, &l) < 0)
		l = 0;
	sb_sa_decode(&me, l, &own);
	if (a->kind == SB_SA_INET && a->v4.s_addr == htonl(INADDR_ANY)) {
		bool bound = own.kind == SB_SA_INET && own.v4.s_addr != htonl(INADDR_ANY);
		a->v4.s_addr = bound ? own.v4.s_addr : htonl(INADDR_LOOPBACK);
	} else if (a->kind == SB_SA_INET6 && IN6_IS_ADDR_UNSPECIFIED(&a->v6)) {
		a->v6 = in6addr_loopback;
	}
}

static void resolve_inet(const struct sb_acall *call, const struct sock_info *s, const struct sockaddr_storage *raw,
			 socklen_t len, struct sb_anet *n)
{
	char why[SB_EV_NAME_MAX];

	sb_sa_decode(raw, len, &n->a);
	if (!inet_proto(s, &n->proto)) {
		snprintf(why, sizeof(why), s->type == SOCK_STREAM || s->type == SOCK_DGRAM
						   ? "socket protocol %d cannot be evaluated by a net= rule"
						   : "socket type %d cannot be evaluated by a net= rule",
			 s->type == SOCK_STREAM || s->type == SOCK_DGRAM ? s->protocol : s->type);
		net_refuse(n, why);
		return;
	}
	/* A connection-mode socket ignores a send's address (TCP Fast Open
	 * excepted); AF_UNSPEC on connect dissolves an association. */
	if (call->op == ANET_SEND && n->proto == SB_PROTO_TCP && !(call->msgflags & MSG_FASTOPEN))
		return;
	if (n->a.kind == SB_SA_UNSPEC && call->op == ANET_CONNECT)
		return;
	if (n->a.kind == SB_SA_UNSPEC && s->domain == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_storage as4 = *raw;

		as4.ss_family = AF_INET;	/* inet_bind and udp_sendmsg read it so */
		sb_sa_decode(&as4, len, &n->a);
	}
	if (n->a.kind != SB_SA_INET && n->a.kind != SB_SA_INET6) {
		net_refuse(n, "unsupported address format, no rule can be evaluated");
		return;
	}
	if (call->op != ANET_BIND)
		local_destination(s, &n->a);
	n->kind = AN_INET;
}

static void resolve_unix(const struct sb_atracee *t, const struct sb_acall *call, const struct sock_info *s,
			 const struct sockaddr_storage *raw, socklen_t len, struct sb_anet *n, struct sb_apath *p)
{
	sb_sa_decode(raw, len, &n->a);
	if (call->op == ANET_SEND && (s->type == SOCK_STREAM || s->type == SOCK_SEQPACKET))
		return;	/* the address is ignored or refused by the kernel */
	switch (n->a.kind) {
	case SB_SA_UNIX_PATH:
		resolve(t, AT_FDCWD, n->a.path, call->op == ANET_BIND ? AR_CREATE : AR_FOLLOW, p);
		if (p->ok)
			n->kind = AN_UNIX;
		return;
	case SB_SA_UNIX_ABSTRACT:
		net_refuse(n, "abstract AF_UNIX sockets are refused");
		return;
	case SB_SA_UNIX_UNNAMED:
		net_refuse(n, "an AF_UNIX autobind is refused");
		return;
	case SB_SA_UNSPEC:
		if (call->op != ANET_CONNECT)
			net_refuse(n, "unsupported address format, no rule can be evaluated");
		return;
	default:
		net_refuse(n, "unsupported address format, no rule can be evaluated");
	}
}

static void resolve_net(const struct sb_atracee *t, struct sb_acall *call)
{
	struct sock_info s;
	char why[SB_EV_NAME_MAX];

	call->obj.n_net = 0;
	if (sock_get(t->tgid, call->sockfd, &s) != 0)
		return;	/* EBADF/ENOTSOCK: the kernel answers that itself */
	for (size_t i = 0; i < call->n_addrs && i < SB_A_MAX_ADDRS; i++) {
		struct sb_anet *n = &call->obj.net[i];

		memset(n, 0, sizeof(*n));
		call->obj.n_net = i + 1;
		if (call->salen[i] == 0)
			continue;
		if (s.domain == AF_INET || s.domain == AF_INET6) {
			resolve_inet(call, &s, &call->sa[i], call->salen[i], n);
		} else if (s.domain == AF_UNIX) {
			/* One path per call is kept: sendmmsg to several socket
			 * files is judged on the first. */
			if (i == 0)
				resolve_unix(t, call, &s, &call->sa[i], call->salen[i], n, &call->obj.p);
		} else if (s.domain != AF_NETLINK) {
			const char *name = sb_sa_family_name(s.domain);

			sb_sa_decode(&call->sa[i], call->salen[i], &n->a);
			if (name)
				snprintf(why, sizeof(why), "address family %s cannot be evaluated by a rule", name);
			else
				snprintf(why, sizeof(why), "address family %d cannot be evaluated by a rule", s.domain);
			net_refuse(n, why);
		}
	}
	close(s.fd);
}

/* listen(): the bound address (0.0.0.0:0 when the kernel autobinds). */
static void resolve_listen(const struct sb_atracee *t, struct sb_acall *call)
{
	struct sockaddr_storage me;
	socklen_t l = sizeof(me);
	struct sock_info s;
	struct sb_anet *n = &call->obj.net[0];

	call->obj.n_net = 0;
	if (sock_get(t->tgid, call->sockfd, &s) != 0)
		return;
	memset(n, 0, sizeof(*n));
	memset(&me, 0, sizeof(me));
	if (getsockname(s.fd, (struct sockaddr *)&me, &l) < 0)
		l = 0;
	sb_sa_decode(&me, l, &n->a);
	call->obj.n_net = 1;
	if (s.domain == AF_INET || s.domain == AF_INET6) {
		if (!inet_proto(&s, &n->proto)) {
			if (s.type == SOCK_STREAM)
				net_refuse(n, "socket protocol cannot be evaluated by a net= rule");
		} else if (n->proto == SB_PROTO_TCP) {
			if (n->a.kind == SB_SA_INET || n->a.kind == SB_SA_INET6)
				n->kind = AN_INET;
			else
				net_refuse(n, "unsupported address format, no rule can be evaluated");
		}
	} else if (s.domain != AF_UNIX && s.domain != AF_NETLINK) {
		net_refuse(n, "address family cannot be evaluated by a rule");
	}
	close(s.fd);
}

/* ---- signals ---------------------------------------------------------------------------- */

bool sb_ajudge_inside(const struct sb_actx *c, pid_t pid)
{
	pid_t p = pid;

	for (int hops = 0; hops < 4096 && p > 1; hops++) {
		long pp;

		for (size_t i = 0; i < c->n_tgids; i++)
			if (c->tgids[i] == p)
				return true;
		if (sb_aproc_status_field(p, "PPid", &pp) != 0)
			return false;
		p = (pid_t)pp;
	}
	return false;
}

static void resolve_kill(const struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	pid_t pid = call->sig_pid;

	if (!pid && call->sig_tid) {
		long tg;

		/* tkill(tid): the thread's process. */
		if (syscall(SYS_tgkill, t->tgid, call->sig_tid, 0) == 0) {
			call->obj.kill_class = 0;
			return;
		}
		if (sb_aproc_status_field(call->sig_tid, "Tgid", &tg) != 0) {
			call->obj.kill_class = 0;	/* no such thread: the kernel says ESRCH */
			return;
		}
		pid = (pid_t)tg;
	}
	if (pid == t->tgid && !call->sig_group)
		call->obj.kill_class = 0;
	else if (pid == 0 || pid == -1 || (call->sig_group && pid == getpgrp()))
		call->obj.kill_class = 2;	/* the shared group, or everyone */
	else
		call->obj.kill_class = sb_ajudge_inside(c, pid) ? 1 : 2;
}

/* ---- deciding ---------------------------------------------------------------------------- */

struct decision {
	bool refused;
	int err;
	const struct sb_rule_ref *rule;
	char tip[SB_EV_NAME_MAX + PATH_MAX];	/* "" = none; computed = !tip_set */
	bool tip_set;
	char why[SB_EV_NAME_MAX];
	bool quiet;
	int second;		/* the event names path2 (1) or address slot `slot` */
	size_t slot;
};

static void refuse(struct decision *d, int err, const struct sb_rule_ref *rule, const char *tip)
{
	d->refused = true;
	d->err = err;
	d->rule = rule;
	if (tip) {
		snprintf(d->tip, sizeof(d->tip), "%s", tip);
		d->tip_set = true;
	}
}

/* Directories on the way to an exposure: "/home" when ~/proj is exposed. */
static bool leads_to_exposure(const struct sb_policy *pol, const char *canon, size_t len)
{
	const struct sb_expose *e;
	size_t n = sb_policy_exposures(pol, &e);

	if (len == 1 && canon[0] == '/')
		return true;
	for (size_t i = 0; i < n; i++)
		if (strncmp(e[i].path, canon, len) == 0 && e[i].path[len] == '/')
			return true;
	return false;
}

static bool decide_path(const struct sb_policy *pol, const struct sb_apath *p, unsigned access, bool meta,
			struct decision *d)
{
	const struct sb_rule_ref *hit = NULL;
	enum sb_path_verdict v;
	size_t len;

	if (!p->ok || p->fdobj)
		return false;
	/* The process reading about itself (status, maps, fd/); of its own
	 * /proc entries it may write only a thread's name, as under the
	 * supervisor. */
	if (p->own_proc && !(access & SB_ACC_EXEC) &&
	    (!(access & SB_ACC_WRITE) || strcmp(strrchr(p->canon, '/'), "/comm") == 0))
		return false;
	/* A path that does not exist, outside creation: the kernel says ENOENT
	 * whatever the policy says, as it does under the supervisor. */
	len = strlen(p->canon);
	v = sb_policy_check_path(pol, p->canon, len, access, &hit);
	d->rule = hit;
	if (v == SB_PATH_NOT_EXPOSED && meta && !(access & SB_ACC_WRITE) && p->exists && p->isdir &&
	    leads_to_exposure(pol, p->canon, len))
		return false;
	switch (v) {
	case SB_PATH_ALLOW:
		return false;
	case SB_PATH_NOT_EXPOSED:
	case SB_PATH_IGNORED:
		refuse(d, ENOENT, hit, NULL);
		return true;
	case SB_PATH_READ_ONLY:
	case SB_PATH_PROTECTED:
		refuse(d, EACCES, hit, NULL);
		return true;
	}
	refuse(d, EACCES, hit, NULL);
	return true;
}

static void decide_exec(const struct sb_policy *pol, const struct sb_apath *p, struct decision *d)
{
	const struct sb_rule_ref *hit = NULL, *eh = NULL;

	if (!p->ok || !p->exists || p->fdobj || p->isdir)
		return;
	if (!sb_policy_check_exec(pol, p->canon, &hit)) {
		refuse(d, EACCES, hit,
		       sb_policy_api_granted(pol, SB_API_PROCESS_EXEC) ? NULL : "python-api=ALLOW:process-exec");
		return;
	}
	d->rule = hit;
	if (!hit && sb_policy_check_path(pol, p->canon, strlen(p->canon), SB_ACC_READ, &eh) != SB_PATH_ALLOW)
		refuse(d, EACCES, eh, NULL);
}

static void unix_tip(const char *canon, char *tip, size_t cap)
{
	const char *slash = strrchr(canon, '/');
	int dirlen = slash && slash != canon ? (int)(slash - canon) : 1;

	snprintf(tip, cap, "expose-rw=%.*s", dirlen, canon);
}

static bool decide_one_net(const struct sb_policy *pol, const struct sb_acall *call, const struct sb_anet *n,
			   struct decision *d)
{
	int err = call->op == ANET_BIND ? EACCES : ECONNREFUSED;
	unsigned dir = call->op == ANET_BIND ? SB_DIR_IN : SB_DIR_OUT;

	switch (n->kind) {
	case AN_SKIP:
		return false;
	case AN_REFUSE:
		snprintf(d->why, sizeof(d->why), "%s", n->why);
		refuse(d, err, NULL, "");
		return true;
	case AN_UNIX: {
		const struct sb_rule_ref *hit = NULL;
		enum sb_path_verdict v = sb_policy_check_path(pol, call->obj.p.canon, strlen(call->obj.p.canon),
							       SB_ACC_WRITE, &hit);
		char tip[PATH_MAX + 16];

		d->rule = hit;
		if (v == SB_PATH_ALLOW)
			return false;
		tip[0] = '\0';
		if (v == SB_PATH_NOT_EXPOSED || v == SB_PATH_READ_ONLY)
			unix_tip(call->obj.p.canon, tip, sizeof(tip));
		refuse(d, err, hit, tip);
		return true;
	}
	case AN_INET: {
		const struct sb_rule_ref *hit = NULL;
		int fam = n->a.kind == SB_SA_INET ? AF_INET : AF_INET6;
		const void *ip = fam == AF_INET ? (const void *)&n->a.v4 : (const void *)&n->a.v6;
		enum sb_net_verdict v = sb_policy_check_net(pol, fam, ip, n->a.port, n->proto, dir, &hit);
		char tip[256];

		d->rule = hit;
		if (v == SB_NET_ALLOW)
			return false;
		/* glibc's getaddrinfo() connects a UDP socket to each address it
		 * found without sending anything: quiet, as in the supervisor. */
		if (call->op == ANET_CONNECT && n->proto == SB_PROTO_UDP && v == SB_NET_DENY_IMPLICIT &&
		    sb_policy_check_net(pol, fam, ip, n->a.port, SB_PROTO_TCP, dir, NULL) == SB_NET_ALLOW)
			d->quiet = true;
		tip[0] = '\0';
		if (v != SB_NET_DENY_RULE)
			sb_sa_net_rule(&n->a, n->proto, dir, tip, sizeof(tip));
		refuse(d, err, hit, tip);
		return true;
	}
	}
	return false;
}

static void decide_net(const struct sb_policy *pol, const struct sb_acall *call, struct decision *d)
{
	for (size_t i = 0; i < call->obj.n_net; i++) {
		if (decide_one_net(pol, call, &call->obj.net[i], d)) {
			d->slot = i;
			return;
		}
	}
}

static void decide(const struct sb_policy *pol, const struct sb_acall *call, struct decision *d)
{
	memset(d, 0, offsetof(struct decision, tip));
	d->tip[0] = d->why[0] = '\0';
	d->tip_set = d->quiet = false;
	d->second = 0;
	d->slot = 0;
	switch (call->judge) {
	case AJ_NONE:
		return;
	case AJ_OPEN:
	case AJ_WRITE:
		if (decide_path(pol, &call->obj.p, call->access, false, d))
			return;
		if (call->has_path2 && decide_path(pol, &call->obj.p2, SB_ACC_WRITE, false, d))
			d->second = 1;
		return;
	case AJ_META:
		decide_path(pol, &call->obj.p, call->access, true, d);
		return;
	case AJ_EXEC:
		decide_exec(pol, &call->obj.p, d);
		return;
	case AJ_NET:
	case AJ_LISTEN:
		decide_net(pol, call, d);
		return;
	case AJ_CLONE:
		if (call->clone_flags & SB_CLONE_NS_FLAGS)
			refuse(d, EPERM, NULL, "");
		else if (!sb_policy_api_granted(pol, call->clone_flags & CLONE_THREAD ? SB_API_THREADS
										     : SB_API_PROCESS_EXEC))
			refuse(d, EPERM, NULL, NULL);
		return;
	case AJ_KILL:
		if (call->obj.kill_class == 2)
			refuse(d, EPERM, NULL, "");
		else if (call->obj.kill_class == 1 && !sb_policy_api_granted(pol, SB_API_PROCESS_CONTROL))
			refuse(d, EPERM, NULL, NULL);
		return;
	}
}

/* ---- the event ------------------------------------------------------------------------------ */

static void ev_net(struct sb_event *ev, const struct sb_acall *call, size_t slot)
{
	const struct sb_anet *n = &call->obj.net[slot];

	if (n->kind == AN_UNIX || (n->kind == AN_REFUSE && n->a.kind >= SB_SA_UNIX_PATH &&
				   n->a.kind <= SB_SA_UNIX_UNNAMED)) {
		char shown[2 * SB_SUN_PATH_MAX + 16];

		ev->kind = SB_EV_UNIX;
		ev->access = SB_ACC_WRITE;
		if (n->kind == AN_UNIX) {
			snprintf(ev->path, sizeof(ev->path), "%s", call->obj.p.canon);
		} else {
			sb_sa_short_decoded(&n->a, shown, sizeof(shown));
			snprintf(ev->path, sizeof(ev->path), "%s", shown + (strncmp(shown, "unix:", 5) ? 0 : 5));
		}
		return;
	}
	ev->kind = SB_EV_NET;
	sb_sa_encode(&n->a, &ev->addr);
	ev->proto = n->proto;
	ev->dir = call->op == ANET_BIND ? SB_DIR_IN : SB_DIR_OUT;
}

/* Is there an access to report at all (the supervisor's n->log)? */
static bool has_object(const struct sb_acall *call)
{
	switch (call->judge) {
	case AJ_NONE:
		return false;
	case AJ_OPEN:
	case AJ_WRITE:
	case AJ_META:
	case AJ_EXEC:
		return call->obj.p.ok;
	case AJ_NET:
	case AJ_LISTEN:
		for (size_t i = 0; i < call->obj.n_net; i++)
			if (call->obj.net[i].kind != AN_SKIP)
				return true;
		return false;
	case AJ_CLONE:
		return true;
	case AJ_KILL:
		return call->obj.kill_class != 0;
	}
	return false;
}

static size_t first_net(const struct sb_acall *call)
{
	for (size_t i = 0; i < call->obj.n_net; i++)
		if (call->obj.net[i].kind != AN_SKIP)
			return i;
	return 0;
}

static void fill_event(const struct sb_atracee *t, struct sb_acall *call, const struct decision *d)
{
	struct sb_event *ev = &call->ev;

	ev->pid = t->tgid;
	ev->tid = t->tid;
	ev->nr = call->nr;
	snprintf(ev->syscall, sizeof(ev->syscall), "%s", sb_adecode_name(call));
	ev->verdict = SB_ALLOWED;
	ev->err = 0;
	ev->access = 0;
	ev->path[0] = '\0';
	memset(&ev->addr, 0, sizeof(ev->addr));
	ev->proto = ev->dir = 0;
	ev->category = -1;
	ev->name[0] = '\0';
	ev->rule = d->rule;
	ev->tip[0] = '\0';
	switch (call->judge) {
	case AJ_OPEN:
	case AJ_WRITE:
	case AJ_META:
	case AJ_EXEC: {
		const struct sb_apath *p = d->second ? &call->obj.p2 : &call->obj.p;

		ev->kind = call->judge == AJ_EXEC ? SB_EV_EXEC : SB_EV_PATH;
		snprintf(ev->path, sizeof(ev->path), "%s", p->canon);
		ev->access = d->second ? SB_ACC_WRITE : call->access;
		if (call->judge == AJ_EXEC && d->refused && d->tip_set && d->tip[0])
			ev->category = SB_API_PROCESS_EXEC;
		break;
	}
	case AJ_NET:
	case AJ_LISTEN:
		ev_net(ev, call, d->refused ? d->slot : first_net(call));
		break;
	case AJ_CLONE:
		ev->kind = SB_EV_PROC;
		if (!(call->clone_flags & SB_CLONE_NS_FLAGS))
			ev->category = call->clone_flags & CLONE_THREAD ? SB_API_THREADS : SB_API_PROCESS_EXEC;
		break;
	case AJ_KILL:
		ev->kind = SB_EV_PROC;
		ev->category = call->obj.kill_class == 1 ? SB_API_PROCESS_CONTROL : -1;
		break;
	case AJ_NONE:
		break;
	}
	if (d->why[0])
		snprintf(ev->name, sizeof(ev->name), "%s", d->why);
}

void sb_ajudge_entry(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	const struct sb_attach_opts *o = c->o;
	struct decision d;

	call->has_event = call->quiet = false;
	call->deny = 0;
	call->obj.p.ok = call->obj.p2.ok = false;
	call->obj.n_net = 0;
	call->obj.kill_class = 0;
	switch (call->judge) {
	case AJ_NONE:
		return;
	case AJ_OPEN:
	case AJ_WRITE:
	case AJ_META:
	case AJ_EXEC:
		if (!c->resolve)
			return;
		resolve(t, call->dirfd, call->path, call->res, &call->obj.p);
		if (call->has_path2)
			resolve(t, call->dirfd2, call->path2, call->res2, &call->obj.p2);
		break;
	case AJ_NET:
		if (!c->resolve)
			return;
		resolve_net(t, call);
		break;
	case AJ_LISTEN:
		if (!c->resolve)
			return;
		resolve_listen(t, call);
		break;
	case AJ_CLONE:
		break;
	case AJ_KILL:
		resolve_kill(c, t, call);
		break;
	}
	if (!has_object(call))
		return;
	call->has_event = true;
	if (c->judge_policy)
		decide(c->judge_policy, call, &d);
	else
		memset(&d, 0, sizeof(d));
	fill_event(t, call, &d);
	if (!d.refused)
		return;
	if (d.quiet) {
		/* Not shown, not logged; still refused when enforcing. */
		call->has_event = false;
		call->quiet = true;
	}
	call->ev.err = d.err;
	if (d.tip_set)
		snprintf(call->ev.tip, sizeof(call->ev.tip), "%s", d.tip);
	if (o->enforce) {
		call->ev.verdict = SB_DENIED;
		call->deny = d.err;
	} else {
		call->ev.verdict = SB_WOULD_DENY;
	}
}

enum sb_verdict sb_ajudge_again(const struct sb_acall *call, const struct sb_policy *pol)
{
	struct decision d;

	decide(pol, call, &d);
	return d.refused ? SB_WOULD_DENY : SB_ALLOWED;
}
