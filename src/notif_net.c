/* The network handlers: connect, bind, listen, sendto, sendmsg, sendmmsg
 * (SPEC §3, reference §2.4 AF_UNIX, §2.5 net=, §4.2 messages).
 *
 * Every handler copies what the program passed (address, payload, control
 * data), takes its socket with pidfd_getfd, judges the copy and performs the
 * call itself on the duplicate.  It never answers CONTINUE: the kernel would
 * read the address again from memory another thread can rewrite after the
 * check, and look the descriptor up again in a table another thread can
 * dup2() a different socket into.
 *
 *   AF_INET/AF_INET6 TCP and UDP   net= rules (sb_policy_check_net)
 *   AF_UNIX path                   a path needing write access (expose-rw)
 *   AF_UNIX abstract, autobind     refused
 *   AF_NETLINK NETLINK_ROUTE       read-only requests to the kernel only
 *   anything else                  refused
 *
 * Refused connect/send: ECONNREFUSED; refused bind/listen: EACCES.
 */
#include "config.h"

#include "notif_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_emul.h"
#include "sockaddr.h"
#include "sup_priv.h"

#ifndef UIO_MAXIOV
# define UIO_MAXIOV 1024
#endif

enum net_op { OP_CONNECT, OP_BIND, OP_SEND };

/* A decision either lets the handler go on or has answered already. */
enum { GO = 0, STOP = 1 };

/* Where the supervisor sends or connects to: the program's own bytes (our
 * copy), nothing, or an AF_UNIX address rewritten to the socket file we
 * hold open. */
struct dest {
	const struct sockaddr *sa;
	socklen_t len;
	struct sockaddr_un fdaddr;
	struct sb_path path;
	bool has_path;
};

static void dest_init(struct dest *d, const struct sockaddr_storage *raw, socklen_t len)
{
	d->sa = len ? (const struct sockaddr *)raw : NULL;
	d->len = len;
	d->has_path = false;
}

static void dest_free(struct dest *d)
{
	if (d->has_path)
		sb_path_release(&d->path);
	d->has_path = false;
}

static int refusal_errno(enum net_op op)
{
	return op == OP_BIND ? EACCES : ECONNREFUSED;
}

static unsigned op_dir(enum net_op op)
{
	return op == OP_BIND ? SB_DIR_IN : SB_DIR_OUT;
}

/* ---- events ---------------------------------------------------------------- */

static void ev_net(struct sb_notif *n, const struct sb_sa *a, unsigned proto, unsigned dir)
{
	n->ev->kind = SB_EV_NET;
	sb_sa_encode(a, &n->ev->addr);
	n->ev->proto = proto;
	n->ev->dir = dir;
	n->log = true;
}

static void ev_unix(struct sb_notif *n, const char *path)
{
	n->ev->kind = SB_EV_UNIX;
	snprintf(n->ev->path, sizeof(n->ev->path), "%s", path);
	n->ev->access = SB_ACC_WRITE;
	n->log = true;
}

/* A refusal no rule can lift: the reason (upstream's wording) goes in
 * ev->name for the notice and the log.  GO in learn/audit mode. */
__attribute__((format(printf, 3, 4)))
static int refuse_why(struct sb_notif *n, enum net_op op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(n->ev->name, sizeof(n->ev->name), fmt, ap);
	va_end(ap);
	n->log = true;
	return sb_notif_refuse(n, refusal_errno(op), NULL, "") ? STOP : GO;
}

/* Not a policy question: the supervisor cannot perform this for the
 * program without lending it its own credentials.  Refused in every mode. */
static int cannot_emulate(struct sb_notif *n, int err, const char *why)
{
	snprintf(n->ev->name, sizeof(n->ev->name), "%s", why);
	n->ev->verdict = SB_DENIED;
	n->ev->err = err;
	n->log = true;
	sb_notif_fail(n, err);
	return STOP;
}

static int refuse_shape(struct sb_notif *n, enum net_op op, const struct sb_sa *a)
{
	ev_net(n, a, 0, op_dir(op));
	return refuse_why(n, op, "unsupported address format, no rule can be evaluated");
}

static int refuse_family(struct sb_notif *n, enum net_op op, const struct sb_net_sock *s,
			 const struct sb_sa *a)
{
	const char *name = sb_sa_family_name(s->domain);

	ev_net(n, a, 0, op_dir(op));
	if (name)
		return refuse_why(n, op, "address family %s cannot be evaluated by a rule", name);
	return refuse_why(n, op, "address family %d cannot be evaluated by a rule", s->domain);
}

/* ---- AF_INET, AF_INET6 ---------------------------------------------------------- */

static bool inet_proto(const struct sb_net_sock *s, unsigned *proto)
{
	if (s->type == SOCK_STREAM && s->protocol == IPPROTO_TCP)
		*proto = SB_PROTO_TCP;
	else if (s->type == SOCK_DGRAM && s->protocol == IPPROTO_UDP)
		*proto = SB_PROTO_UDP;
	else
		return false;
	return true;
}

static int refuse_type(struct sb_notif *n, enum net_op op, const struct sb_net_sock *s,
		       const struct sb_sa *a)
{
	ev_net(n, a, 0, op_dir(op));
	if (s->type == SOCK_STREAM || s->type == SOCK_DGRAM)
		return refuse_why(n, op, "socket protocol %d cannot be evaluated by a net= rule", s->protocol);
	return refuse_why(n, op, "socket type %d cannot be evaluated by a net= rule", s->type);
}

/* The kernel sends to the unspecified address as to the local host
 * (ip_route_output_key_hash: the socket's own address, else loopback;
 * tcp_v6_connect and udpv6_sendmsg: ::1, or ::ffff:127.0.0.1 on a socket
 * bound to an IPv4-mapped address): judge where it really goes, so that
 * 0.0.0.0 does not slip past a rule about 127.0.0.0/8. */
static void local_destination(const struct sb_net_sock *s, struct sb_sa *a)
{
	static const unsigned char mapped_lo[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 };
	bool any4 = a->kind == SB_SA_INET && a->v4.s_addr == htonl(INADDR_ANY);
	bool any6 = a->kind == SB_SA_INET6 && IN6_IS_ADDR_UNSPECIFIED(&a->v6);
	struct sockaddr_storage me;
	socklen_t l = sizeof(me);
	struct sb_sa own;
	struct in_addr v4;

	if (a->kind == SB_SA_INET6 && !any6 && sb_sa_v4mapped(a, &v4) && v4.s_addr == 0) {
		memcpy(&a->v6, mapped_lo, sizeof(mapped_lo));
		return;
	}
	/* Only the unspecified address depends on the socket's own: no
	 * getsockname() for the others (one system call less per connect). */
	if (!any4 && !any6)
		return;
	memset(&me, 0, sizeof(me));
	if (getsockname(s->fd, (struct sockaddr *)&me, &l) < 0)
		l = 0;
	sb_sa_decode(&me, l, &own);
	if (any4) {
		bool bound = own.kind == SB_SA_INET && own.v4.s_addr != htonl(INADDR_ANY);
		a->v4.s_addr = bound ? own.v4.s_addr : htonl(INADDR_LOOPBACK);
	} else if (!sb_sa_v4mapped(&own, NULL)) {
		a->v6 = in6addr_loopback;
	} else {
		memcpy(&a->v6, mapped_lo, sizeof(mapped_lo));
	}
}

static int judge_inet(struct sb_notif *n, enum net_op op, const struct sb_sa *a, unsigned proto)
{
	const struct sb_rule_ref *hit = NULL;
	unsigned dir = op_dir(op);
	int fam = a->kind == SB_SA_INET ? AF_INET : AF_INET6;
	const void *ip = fam == AF_INET ? (const void *)&a->v4 : (const void *)&a->v6;
	enum sb_net_verdict v = sb_policy_check_net(n->policy, fam, ip, a->port, proto, dir, &hit);
	char tip[sizeof(n->ev->tip)];

	ev_net(n, a, proto, dir);
	n->ev->rule = hit;
	if (v == SB_NET_ALLOW)
		return GO;
	/* glibc's getaddrinfo() connects a UDP socket to each address it found
	 * (RFC 3484 source address selection) without sending anything; for a
	 * host the policy lets the program reach over TCP, refusing that probe
	 * quietly spares a misleading notice.  Still refused: a connected UDP
	 * socket could send() there unseen. */
	if (op == OP_CONNECT && proto == SB_PROTO_UDP && v == SB_NET_DENY_IMPLICIT &&
	    sb_policy_check_net(n->policy, fam, ip, a->port, SB_PROTO_TCP, dir, NULL) == SB_NET_ALLOW) {
		n->log = false;
		if (n->mode != SB_MODE_ENFORCE)
			return GO;
		sb_notif_fail(n, ECONNREFUSED);
		return STOP;
	}
	tip[0] = '\0';
	if (v != SB_NET_DENY_RULE)
		sb_sa_net_rule(a, proto, dir, tip, sizeof(tip));
	return sb_notif_refuse(n, refusal_errno(op), hit, tip) ? STOP : GO;
}

/* Which address the kernel will use, for the socket's own family and the
 * call (inet_bind, udp_sendmsg and udpv6_sendmsg each read AF_UNSPEC their
 * own way); then judge it.  d->sa already points to the program's bytes. */
static int decide_inet(struct sb_notif *n, const struct sb_net_sock *s, enum net_op op,
		       const struct sockaddr_storage *raw, socklen_t len, int flags, struct dest *d)
{
	struct sb_sa a;
	unsigned proto;

	sb_sa_decode(raw, len, &a);
	if (!inet_proto(s, &proto))
		return refuse_type(n, op, s, &a);
	if (op == OP_SEND && proto == SB_PROTO_TCP && !(flags & MSG_FASTOPEN)) {
		/* A connection-mode socket ignores the address; only TCP Fast
		 * Open reads it, and then it is judged as a connect. */
		d->sa = NULL;
		d->len = 0;
		return GO;
	}
	if (a.kind == SB_SA_UNSPEC) {
		if (op == OP_CONNECT)
			return GO;	/* dissolves the association: no destination */
		if (op == OP_SEND && s->domain == AF_INET6) {
			d->sa = NULL;	/* udpv6_sendmsg: AF_UNSPEC means "no address" */
			d->len = 0;
			return GO;
		}
		if (s->domain == AF_INET && len >= sizeof(struct sockaddr_in)) {
			/* inet_bind and udp_sendmsg take it as AF_INET */
			struct sockaddr_storage as4 = *raw;
			as4.ss_family = AF_INET;
			sb_sa_decode(&as4, len, &a);
		}
	}
	if (a.kind != SB_SA_INET && a.kind != SB_SA_INET6)
		return refuse_shape(n, op, &a);
	if (op != OP_BIND)
		local_destination(s, &a);
	return judge_inet(n, op, &a, proto);
}

/* ---- AF_UNIX -------------------------------------------------------------- */

/* "/a/./b/../c" -> "/a/c"; relative paths start at the program's cwd.  Only
 * used to choose the errno of a path that did not resolve. */
static int lexical_abs(struct sb_notif *n, const char *path, char *out, size_t cap)
{
	char buf[2 * PATH_MAX + 2], cwd[PATH_MAX], link[64];
	size_t o = 0;
	char *save = NULL;

	if (path[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", path);
	} else {
		ssize_t l;
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)n->req->pid);
		l = readlink(link, cwd, sizeof(cwd) - 1);
		if (l < 0)
			return -errno;
		cwd[l] = '\0';
		snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	}
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (o > 0 && out[--o] != '/')
				;
			continue;
		}
		if (o + 1 + strlen(c) + 1 > cap)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, c, strlen(c));
		o += strlen(c);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static void unix_tip(const char *canon, char *tip, size_t cap)
{
	const char *slash = strrchr(canon, '/');
	int dirlen = slash && slash != canon ? (int)(slash - canon) : 1;

	snprintf(tip, cap, "expose-rw=%.*s", dirlen, canon);
}

static int judge_unix_canon(struct sb_notif *n, enum net_op op, const char *canon, size_t len)
{
	const struct sb_rule_ref *hit = NULL;
	enum sb_path_verdict v = sb_policy_check_path(n->policy, canon, len, SB_ACC_WRITE, &hit);
	char tip[sizeof(n->ev->tip)];

	ev_unix(n, canon);
	n->ev->rule = hit;
	if (v == SB_PATH_ALLOW)
		return GO;
	tip[0] = '\0';
	if (v == SB_PATH_NOT_EXPOSED || v == SB_PATH_READ_ONLY)
		unix_tip(canon, tip, sizeof(tip));
	return sb_notif_refuse(n, refusal_errno(op), hit, tip) ? STOP : GO;
}

/* The path did not resolve (a missing directory, a loop).  In an unexposed
 * place answer as for an existing socket there, so its layout stays hidden,
 * but quietly, like an open of a missing file: there is no socket to
 * reach, nothing to learn (glibc probes /var/run/nscd/socket this way).
 * Elsewhere, and when learning, the kernel's own answer. */
static int unresolved(struct sb_notif *n, enum net_op op, const struct sb_sa *a, int rc)
{
	char abs[PATH_MAX];

	if (rc != -ESRCH && n->mode == SB_MODE_ENFORCE && lexical_abs(n, a->path, abs, sizeof(abs)) == 0 &&
	    sb_policy_check_path(n->policy, abs, strlen(abs), SB_ACC_WRITE, NULL) != SB_PATH_ALLOW) {
		sb_notif_fail(n, refusal_errno(op));
		return STOP;
	}
	sb_notif_fail_resolve(n, rc);
	return STOP;
}

static int judge_unix_path(struct sb_notif *n, enum net_op op, const struct sb_sa *a, struct dest *d)
{
	struct stat st;
	int rc;

	sb_path_init(&d->path);
	d->has_path = true;
	/* connect() follows a symlink in the last component, bind() does not */
	rc = sb_path_resolve(n, AT_FDCWD, a->path, op == OP_BIND ? SB_RES_PARENT : SB_RES_FOLLOW, &d->path);
	if (rc < 0)
		return unresolved(n, op, a, rc);
	if (judge_unix_canon(n, op, d->path.canon, d->path.len) == STOP)
		return STOP;
	if (op == OP_BIND)
		return GO;	/* the handler binds beneath d->path.parentfd */
	if (d->path.objfd < 0) {
		sb_notif_fail(n, ENOENT);
		return STOP;
	}
	if (fstat(d->path.objfd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		sb_notif_fail(n, ECONNREFUSED);
		return STOP;
	}
	/* Reach the very file we judged, not whatever the path names by now. */
	d->len = sb_net_unix_fdaddr(d->path.objfd, &d->fdaddr);
	d->sa = (const struct sockaddr *)&d->fdaddr;
	return GO;
}

static int decide_unix(struct sb_notif *n, const struct sb_net_sock *s, enum net_op op,
		       const struct sockaddr_storage *raw, socklen_t len, struct dest *d)
{
	char shown[2 * SB_SUN_PATH_MAX + 16];
	struct sb_sa a;

	sb_sa_decode(raw, len, &a);
	if (op == OP_SEND && s->type == SOCK_STREAM)
		return GO;	/* unix_stream_sendmsg fails on any address */
	if (op == OP_SEND && s->type == SOCK_SEQPACKET) {
		d->sa = NULL;	/* unix_seqpacket_sendmsg drops it */
		d->len = 0;
		return GO;
	}
	switch (a.kind) {
	case SB_SA_UNIX_PATH:
		return judge_unix_path(n, op, &a, d);
	case SB_SA_UNSPEC:
		if (op == OP_CONNECT)
			return GO;	/* dissolves a datagram association */
		return refuse_shape(n, op, &a);
	case SB_SA_UNIX_ABSTRACT:
	case SB_SA_UNIX_UNNAMED:
		sb_sa_short_decoded(&a, shown, sizeof(shown));
		ev_unix(n, shown + strlen("unix:"));
		if (a.kind == SB_SA_UNIX_ABSTRACT)
			return refuse_why(n, op, "abstract AF_UNIX sockets are refused");
		return refuse_why(n, op, "an AF_UNIX autobind is refused");
	default:
		return refuse_shape(n, op, &a);
	}
}

/* ---- AF_NETLINK ------------------------------------------------------------- */

/* glibc's getaddrinfo(AI_ADDRCONFIG), getifaddrs() and if_nameindex() bind
 * a NETLINK_ROUTE socket and send dump requests to the kernel (nl_pid 0);
 * nothing else of netlink is reachable. */
static int decide_netlink(struct sb_notif *n, const struct sb_net_sock *s, enum net_op op,
			  const struct sockaddr_storage *raw, socklen_t len)
{
	struct sb_sa a;
	bool ok;

	sb_sa_decode(raw, len, &a);
	ev_net(n, &a, 0, op_dir(op));
	if (s->protocol != NETLINK_ROUTE)
		return refuse_why(n, op, "netlink protocol %d cannot be evaluated by a rule", s->protocol);
	if (op == OP_BIND)
		ok = a.kind == SB_SA_NETLINK && a.nl_groups == 0;
	else
		ok = (a.kind == SB_SA_NETLINK && a.nl_pid == 0 && a.nl_groups == 0) ||
		     (op == OP_CONNECT && a.kind == SB_SA_UNSPEC);
	if (!ok)
		return refuse_why(n, op, "only requests to the kernel over NETLINK_ROUTE are allowed");
	n->log = false;		/* routine, and no rule is involved */
	return GO;
}

/* ---- dispatch ---------------------------------------------------------------- */

/* Judge the address `raw` of `op` on socket s.  GO: d says what to pass to
 * the kernel; STOP: answered. */
static int decide(struct sb_notif *n, const struct sb_net_sock *s, enum net_op op,
		  const struct sockaddr_storage *raw, socklen_t len, int flags, struct dest *d)
{
	dest_init(d, raw, len);
	if (op == OP_SEND && len == 0)
		return GO;	/* the connected peer, judged at connect time */
	switch (s->domain) {
	case AF_INET:
	case AF_INET6:
		return decide_inet(n, s, op, raw, len, flags, d);
	case AF_UNIX:
		return decide_unix(n, s, op, raw, len, d);
	case AF_NETLINK:
		return decide_netlink(n, s, op, raw, len);
	default: {
		struct sb_sa a;
		sb_sa_decode(raw, len, &a);
		return refuse_family(n, op, s, &a);
	}
	}
}

static void answer(struct sb_notif *n, int64_t r)
{
	if (r >= 0)
		sb_notif_return(n, r);
	else
		sb_notif_fail(n, (int)-r);
}

/* ---- connect, bind, listen -------------------------------------------------- */

/* connect(fd, addr, len) and bind(fd, addr, len): copy the address once,
 * take the socket, decide.  True when the call is to be performed on `s`
 * and `d`; the caller then answers, and always releases both. */
static bool addr_call_go(struct sb_notif *n, int op, struct sockaddr_storage *raw, socklen_t *len,
			 struct sb_net_sock *s, struct dest *d)
{
	const __u64 *arg = n->req->data.args;
	int rc;

	n->log = false;
	rc = sb_net_addr_sock_get(n, arg[1], arg[2], (int)arg[0], raw, len, s);
	if (rc) {
		sb_notif_fail(n, -rc);
		return false;
	}
	return decide(n, s, op, raw, *len, 0, d) == GO;
}

int sb_handle_connect(struct sb_notif *n)
{
	struct sockaddr_storage raw;
	struct sb_net_sock s = { .fd = -1 };
	struct dest d = { .has_path = false };
	socklen_t len;

	if (addr_call_go(n, OP_CONNECT, &raw, &len, &s, &d))
		answer(n, sb_net_connect(n, &s, d.sa, d.len));
	dest_free(&d);
	sb_net_sock_put(&s);
	return 0;
}

int sb_handle_bind(struct sb_notif *n)
{
	struct sockaddr_storage raw;
	struct sb_net_sock s = { .fd = -1 };
	struct dest d = { .has_path = false };
	socklen_t len;
	int rc;

	if (addr_call_go(n, OP_BIND, &raw, &len, &s, &d)) {
		if (d.has_path)
			rc = sb_net_bind_unix(n, &s, (const struct sockaddr_un *)&raw, len, d.path.parentfd,
					      d.path.name);
		else
			rc = bind(s.fd, d.sa, d.len) ? -errno : 0;
		answer(n, rc);
	}
	dest_free(&d);
	sb_net_sock_put(&s);
	return 0;
}

/* listen() on an unbound socket binds it to the wildcard address and an
 * ephemeral port first (inet_autobind): getsockname() then says 0.0.0.0:0,
 * which is judged; on a bound socket its address is judged again. */
int sb_handle_listen(struct sb_notif *n)
{
	const __u64 *arg = n->req->data.args;
	struct sb_net_sock s = { .fd = -1 };
	struct sockaddr_storage me;
	socklen_t l = sizeof(me);
	struct sb_sa a;
	int rc;

	n->log = false;
	rc = sb_net_sock_get(n, (int)arg[0], &s);
	if (rc) {
		sb_notif_fail(n, -rc);
		return 0;
	}
	memset(&me, 0, sizeof(me));
	if (getsockname(s.fd, (struct sockaddr *)&me, &l) < 0)
		l = 0;
	sb_sa_decode(&me, l, &a);
	if (s.domain == AF_INET || s.domain == AF_INET6) {
		unsigned proto;
		if (!inet_proto(&s, &proto) && s.type == SOCK_STREAM)
			rc = refuse_type(n, OP_BIND, &s, &a);
		else if (inet_proto(&s, &proto) && proto == SB_PROTO_TCP)
			rc = (a.kind == SB_SA_INET || a.kind == SB_SA_INET6) ? judge_inet(n, OP_BIND, &a, proto)
									     : refuse_shape(n, OP_BIND, &a);
		else
			rc = GO;	/* not a listening kind: the kernel says EOPNOTSUPP */
	} else if (s.domain != AF_UNIX) {
		rc = refuse_family(n, OP_BIND, &s, &a);
	} else {
		rc = GO;	/* an AF_UNIX name was judged at bind() */
	}
	if (rc == GO)
		answer(n, listen(s.fd, (int)arg[1]) ? -errno : 0);
	sb_net_sock_put(&s);
	return 0;
}

/* ---- sending ---------------------------------------------------------------- */

/* Decide and send one message.  GO with *res (count or -errno) to answer,
 * STOP when a refusal was answered already. */
static int send_msg(struct sb_notif *n, const struct sb_net_sock *s, struct sb_net_msg *m, int flags,
		    ssize_t *res)
{
	struct dest d;
	int zc = 0;
	socklen_t zl = sizeof(zc);

	if (m->creds)
		return cannot_emulate(n, EPERM, "SCM_CREDENTIALS would carry the supervisor's credentials");
	if (decide(n, s, OP_SEND, &m->name, m->namelen, flags, &d) == STOP) {
		dest_free(&d);
		return STOP;
	}
	if (s->domain == AF_NETLINK &&
	    (s->protocol != NETLINK_ROUTE || !sb_netlink_route_readonly(m->data, m->len))) {
		dest_free(&d);
		return cannot_emulate(n, EPERM, "only read-only NETLINK_ROUTE requests are sent");
	}
	if ((flags & MSG_FASTOPEN) && d.sa && s->type == SOCK_STREAM && !s->nonblock &&
	    !(flags & MSG_DONTWAIT)) {
		/* A blocking Fast Open waits for the handshake inside sendmsg();
		 * EOPNOTSUPP is what a kernel without client TFO says, and
		 * callers then fall back to connect(). */
		*res = -EOPNOTSUPP;
	} else if ((flags & MSG_ZEROCOPY) &&
		   getsockopt(s->fd, SOL_SOCKET, SO_ZEROCOPY, &zc, &zl) == 0 && zc) {
		/* Our copy, not the program's pages, would be pinned: say the
		 * pages could not be pinned, the documented fallback. */
		*res = -ENOBUFS;
	} else {
		*res = sb_net_send(n, s, m, d.sa, d.len, flags & ~MSG_ZEROCOPY);
	}
	dest_free(&d);
	if (*res == -EPIPE && !(flags & MSG_NOSIGNAL))
		sb_net_sigpipe(n);
	return GO;
}

int sb_handle_sendto(struct sb_notif *n)
{
	const __u64 *arg = n->req->data.args;
	struct sb_net_sock s = { .fd = -1 };
	struct sb_net_msg m;
	ssize_t res = 0;
	int rc;

	n->log = false;
	sb_net_msg_init(&m);
	rc = sb_net_addr_sock_get(n, arg[4], arg[4] ? arg[5] : 0, (int)arg[0], &m.name, &m.namelen, &s);
	if (rc == 0)
		rc = sb_net_msg_from_buf(n, arg[1], arg[2], s.type == SOCK_STREAM, &m);
	if (rc)
		sb_notif_fail(n, -rc);
	else if (send_msg(n, &s, &m, (int)arg[3], &res) == GO)
		answer(n, res);
	sb_net_msg_free(&m);
	sb_net_sock_put(&s);
	return 0;
}

int sb_handle_sendmsg(struct sb_notif *n)
{
	const __u64 *arg = n->req->data.args;
	struct sb_net_sock s = { .fd = -1 };
	struct sb_net_msg m;
	struct msghdr um;
	ssize_t res = 0;
	int rc;

	n->log = false;
	sb_net_msg_init(&m);
	rc = sb_net_sock_get(n, (int)arg[0], &s);
	if (rc == 0)
		rc = sb_notif_read(n, arg[1], &um, sizeof(um));
	if (rc == 0)
		rc = sb_net_msg_from_user(n, &um, s.type == SOCK_STREAM, &m);
	if (rc)
		sb_notif_fail(n, -rc);
	else if (send_msg(n, &s, &m, (int)arg[2], &res) == GO)
		answer(n, res);
	sb_net_msg_free(&m);
	sb_net_sock_put(&s);
	return 0;
}

/* One message of a sendmmsg vector: returns true to go on with the next. */
static bool mmsg_one(struct sb_notif *n, const struct sb_net_sock *s, const struct mmsghdr *v,
		     uint64_t at, int flags, unsigned i)
{
	struct sb_net_msg m;
	ssize_t res = 0;
	int rc, step;

	sb_net_msg_init(&m);
	rc = sb_net_msg_from_user(n, &v->msg_hdr, s->type == SOCK_STREAM, &m);
	if (rc) {
		res = rc;
		step = GO;
	} else {
		step = send_msg(n, s, &m, flags, &res);
	}
	sb_net_msg_free(&m);
	/* As __sys_sendmmsg: an error ends the vector, and is the answer only
	 * when nothing was sent; a refusal after the first message likewise
	 * answers the count sent so far (the event still records it). */
	if (step == STOP || res < 0) {
		if (i > 0)
			sb_notif_return(n, i);
		else if (step == GO)
			sb_notif_fail(n, (int)-res);
		return false;
	}
	sb_net_put_u32(n, at + i * sizeof(*v) + offsetof(struct mmsghdr, msg_len), (uint32_t)res);
	return true;
}

int sb_handle_sendmmsg(struct sb_notif *n)
{
	const __u64 *arg = n->req->data.args;
	struct sb_net_sock s = { .fd = -1 };
	struct mmsghdr *vec = NULL;
	unsigned vlen = (unsigned)arg[2], i;
	int rc;

	n->log = false;
	if (vlen > UIO_MAXIOV)
		vlen = UIO_MAXIOV;
	rc = sb_net_sock_get(n, (int)arg[0], &s);
	if (rc == 0 && vlen > 0) {
		vec = calloc(vlen, sizeof(*vec));
		rc = vec ? sb_notif_read(n, arg[1], vec, vlen * sizeof(*vec)) : -ENOMEM;
	}
	if (rc) {
		sb_notif_fail(n, -rc);
		goto out;
	}
	for (i = 0; i < vlen; i++)
		if (!mmsg_one(n, &s, &vec[i], arg[1], (int)arg[3], i))
			break;
	if (i == vlen)
		sb_notif_return(n, vlen);
out:
	free(vec);
	sb_net_sock_put(&s);
	return 0;
}
