/* Performing socket calls for the program (see net_emul.h). */
#include "config.h"

#include "net_emul.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sup_priv.h"
#include "thread.h"

#ifndef UIO_MAXIOV
# define UIO_MAXIOV 1024
#endif
#ifndef SOL_UDP
# define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
# define UDP_SEGMENT 103
#endif

/* ---- the socket ---------------------------------------------------------- */

int sb_net_sock_get(struct sb_notif *n, int tfd, struct sb_net_sock *s)
{
	socklen_t l = sizeof(int);
	int fl, rc;

	s->fd = -1;
	rc = sb_notif_getfd(n, tfd);
	if (rc < 0)
		return rc;
	s->fd = rc;
	if (getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &s->domain, &l) < 0)
		goto fail;
	l = sizeof(int);
	if (getsockopt(s->fd, SOL_SOCKET, SO_TYPE, &s->type, &l) < 0)
		goto fail;
	l = sizeof(int);
	if (getsockopt(s->fd, SOL_SOCKET, SO_PROTOCOL, &s->protocol, &l) < 0)
		goto fail;
	fl = fcntl(s->fd, F_GETFL);
	if (fl < 0)
		goto fail;
	s->nonblock = fl & O_NONBLOCK;
	return 0;
fail:
	rc = -errno;
	sb_net_sock_put(s);
	return rc;
}

void sb_net_sock_put(struct sb_net_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* ---- copying out of the program ------------------------------------------ */

void sb_net_msg_init(struct sb_net_msg *m)
{
	memset(m, 0, sizeof(*m));
}

void sb_net_msg_free(struct sb_net_msg *m)
{
	for (size_t i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	free(m->fds);
	free(m->data);
	free(m->control);
	sb_net_msg_init(m);
}

static int copy_addr_nv(struct sb_notif *n, uint64_t uaddr, uint64_t ulen,
			struct sockaddr_storage *ss, socklen_t *len)
{
	int l = (int)(uint32_t)ulen;	/* the kernel takes an int */

	memset(ss, 0, sizeof(*ss));
	*len = 0;
	if (l < 0 || (size_t)l > sizeof(*ss))
		return -EINVAL;
	*len = (socklen_t)l;
	return sb_notif_read_nv(n, uaddr, ss, (size_t)l);
}

int sb_net_addr_sock_get(struct sb_notif *n, uint64_t uaddr, uint64_t ulen, int tfd,
			 struct sockaddr_storage *ss, socklen_t *len, struct sb_net_sock *s)
{
	int rc = copy_addr_nv(n, uaddr, ulen, ss, len);

	s->fd = -1;
	/* The address is used only once the socket is ours, and taking it
	 * ends with the ID_VALID that tells those bytes are the target's. */
	return rc ? rc : sb_net_sock_get(n, tfd, s);
}

static int copy_payload(struct sb_notif *n, const struct iovec *iov, size_t niov, bool stream,
			struct sb_net_msg *m)
{
	size_t want = 0, cap = stream ? SB_NET_STREAM_MAX : SB_NET_DGRAM_MAX, off = 0;
	int rc;

	for (size_t i = 0; i < niov; i++) {
		if (iov[i].iov_len > SSIZE_MAX || want + iov[i].iov_len > SSIZE_MAX)
			return -EINVAL;
		want += iov[i].iov_len;
	}
	if (want > cap && !stream)
		return -EMSGSIZE;
	m->len = want < cap ? want : cap;
	m->data = malloc(m->len ? m->len : 1);
	if (!m->data)
		return -ENOMEM;
	for (size_t i = 0; i < niov && off < m->len; i++) {
		size_t take = iov[i].iov_len < m->len - off ? iov[i].iov_len : m->len - off;
		if (take == 0)
			continue;
		rc = sb_notif_read(n, (uint64_t)(uintptr_t)iov[i].iov_base, m->data + off, take);
		if (rc)
			return rc;
		off += take;
	}
	return 0;
}

int sb_net_msg_from_buf(struct sb_notif *n, uint64_t buf, uint64_t len, bool stream,
			struct sb_net_msg *m)
{
	struct iovec iov = { (void *)(uintptr_t)buf, (size_t)len };

	if (len > INT_MAX)	/* __sys_sendto clamps as well */
		iov.iov_len = INT_MAX;
	return copy_payload(n, &iov, 1, stream, m);
}

/* Control messages the supervisor may send for the program: descriptors it
 * holds (duplicated), and per-packet IP options that neither name another
 * destination nor need a privilege (the supervisor's would be checked). */
static bool control_passes(int level, int type)
{
	switch (level) {
	case SOL_SOCKET:
		return type == SCM_RIGHTS;
	case SOL_IP:
		return type == IP_PKTINFO || type == IP_TTL || type == IP_TOS;
	case SOL_IPV6:
		return type == IPV6_PKTINFO || type == IPV6_HOPLIMIT || type == IPV6_TCLASS ||
		       type == IPV6_DONTFRAG;
	case SOL_UDP:
		return type == UDP_SEGMENT;
	default:
		return false;
	}
}

static int dup_rights(struct sb_notif *n, unsigned char *data, size_t len, struct sb_net_msg *m)
{
	size_t k = len / sizeof(int);
	int *grown;

	grown = realloc(m->fds, (m->nfds + k) * sizeof(int) + 1);
	if (!grown)
		return -ENOMEM;
	m->fds = grown;
	for (size_t i = 0; i < k; i++) {
		int tfd, ours;
		memcpy(&tfd, data + i * sizeof(int), sizeof(int));
		ours = sb_notif_getfd(n, tfd);
		if (ours < 0)
			return ours == -ESRCH ? -ESRCH : -EBADF;
		m->fds[m->nfds++] = ours;
		memcpy(data + i * sizeof(int), &ours, sizeof(int));
	}
	return 0;
}

/* Rebuild the control buffer in canonical layout, walking it exactly as the
 * kernel does (CMSG_FIRSTHDR/__cmsg_nxthdr, CMSG_OK), so the kernel reads back
 * the very messages we checked: a descriptor number that slipped past us
 * would be looked up in the supervisor's own table. */
static int rebuild_control(struct sb_notif *n, const unsigned char *src, size_t len, struct sb_net_msg *m)
{
	size_t off = 0, out = 0, room = len + CMSG_ALIGN(1) * (len / sizeof(struct cmsghdr) + 1);
	unsigned char *dst = calloc(1, room);

	if (!dst)
		return -ENOMEM;
	m->control = dst;
	while (off <= len && len - off >= sizeof(struct cmsghdr)) {
		struct cmsghdr h;
		size_t dlen;

		memcpy(&h, src + off, sizeof(h));
		if (h.cmsg_len < sizeof(struct cmsghdr) || h.cmsg_len > len - off)
			return -EINVAL;
		dlen = h.cmsg_len - CMSG_LEN(0);
		if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_CREDENTIALS) {
			m->creds = true;
		} else if (!control_passes(h.cmsg_level, h.cmsg_type)) {
			return -EINVAL;
		} else {
			struct cmsghdr o = { .cmsg_len = CMSG_LEN(dlen), .cmsg_level = h.cmsg_level,
					     .cmsg_type = h.cmsg_type };
			if (out + CMSG_SPACE(dlen) > room)
				return -ENOBUFS;
			memcpy(dst + out, &o, sizeof(o));
			memcpy(dst + out + CMSG_LEN(0), src + off + CMSG_LEN(0), dlen);
			if (h.cmsg_type == SCM_RIGHTS && h.cmsg_level == SOL_SOCKET) {
				int rc = dup_rights(n, dst + out + CMSG_LEN(0), dlen, m);
				if (rc)
					return rc;
			}
			out += CMSG_SPACE(dlen);
		}
		off += CMSG_ALIGN(h.cmsg_len);
	}
	m->controllen = out;
	return 0;
}

static int copy_control(struct sb_notif *n, const struct msghdr *um, struct sb_net_msg *m)
{
	unsigned char *raw;
	int rc;

	if (um->msg_controllen == 0)
		return 0;
	if (um->msg_controllen > INT_MAX || um->msg_controllen > SB_NET_CONTROL_MAX)
		return -ENOBUFS;
	raw = malloc(um->msg_controllen);
	if (!raw)
		return -ENOMEM;
	rc = sb_notif_read(n, (uint64_t)(uintptr_t)um->msg_control, raw, um->msg_controllen);
	if (rc == 0)
		rc = rebuild_control(n, raw, um->msg_controllen, m);
	free(raw);
	return rc;
}

int sb_net_msg_from_user(struct sb_notif *n, const struct msghdr *um, bool stream, struct sb_net_msg *m)
{
	int namelen = (int)um->msg_namelen;
	struct iovec *iov = NULL;
	int rc;

	/* __copy_msghdr: no pointer, no name; a negative length is EINVAL; a
	 * longer one is cut to a sockaddr_storage. */
	if (!um->msg_name)
		namelen = 0;
	if (namelen < 0)
		return -EINVAL;
	if ((size_t)namelen > sizeof(m->name))
		namelen = sizeof(m->name);
	if (namelen > 0) {
		rc = sb_notif_read(n, (uint64_t)(uintptr_t)um->msg_name, &m->name, (size_t)namelen);
		if (rc)
			return rc;
	}
	m->namelen = (socklen_t)namelen;

	if (um->msg_iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	if (um->msg_iovlen > 0) {
		iov = calloc(um->msg_iovlen, sizeof(*iov));
		if (!iov)
			return -ENOMEM;
		rc = sb_notif_read(n, (uint64_t)(uintptr_t)um->msg_iov, iov, um->msg_iovlen * sizeof(*iov));
		if (rc == 0)
			rc = copy_payload(n, iov, um->msg_iovlen, stream, m);
		free(iov);
	} else {
		rc = copy_payload(n, NULL, 0, stream, m);
	}
	if (rc)
		return rc;
	return copy_control(n, um, m);
}

/* ---- sending ----------------------------------------------------------- */

/* The rest of a send that would block: wait for it in the kernel, flagged
 * to the core so that another worker takes over meanwhile and a signal for
 * the program interrupts us. */
static ssize_t send_wait(struct sb_notif *n, const struct sb_net_sock *s, struct msghdr *km,
			 int flags, size_t done)
{
	const struct iovec *whole = km->msg_iov;
	struct iovec rest;
	bool stream = s->type == SOCK_STREAM;

	for (;;) {
		ssize_t r;
		int e, end, rc;

		rest.iov_base = (char *)whole->iov_base + done;
		rest.iov_len = whole->iov_len - done;
		km->msg_iov = &rest;
		if (done > 0) {		/* ancillary data went with the first bytes */
			km->msg_control = NULL;
			km->msg_controllen = 0;
		}
		rc = sb_notif_block_begin(n);
		if (rc < 0)
			return done ? (ssize_t)done : rc;
		r = sendmsg(s->fd, km, flags);
		e = errno;
		end = sb_notif_block_end(n);
		if (r >= 0)
			return stream ? (ssize_t)(done + (size_t)r) : r;
		if (e != EINTR)
			return done ? (ssize_t)done : -e;
		if (end != 0)
			return done ? (ssize_t)done : -EINTR;
		/* woken without cause: carry on waiting */
	}
}

ssize_t sb_net_send(struct sb_notif *n, const struct sb_net_sock *s, const struct sb_net_msg *m,
		    const struct sockaddr *to, socklen_t tolen, int flags)
{
	struct iovec iov = { m->data, m->len };
	struct msghdr km = {
		.msg_name = (void *)to, .msg_namelen = to ? tolen : 0,
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = m->controllen ? m->control : NULL, .msg_controllen = m->controllen,
	};
	bool dontwait = s->nonblock || (flags & MSG_DONTWAIT);
	int base = flags | MSG_NOSIGNAL;
	ssize_t r;

	/* First try without blocking, on this worker: the common case. */
	r = sendmsg(s->fd, &km, base | MSG_DONTWAIT);
	if (r >= 0) {
		if (dontwait || s->type != SOCK_STREAM || (size_t)r == m->len)
			return r;
		return send_wait(n, s, &km, base, (size_t)r);
	}
	if ((errno != EAGAIN && errno != EWOULDBLOCK) || dontwait)
		return -errno;
	return send_wait(n, s, &km, base, 0);
}

/* ---- connecting -------------------------------------------------------- */

static int connect_wait(struct sb_notif *n, const struct sb_net_sock *s, const struct sockaddr *sa,
			socklen_t len)
{
	bool again = false;

	for (;;) {
		int r, e, end, rc;

		rc = sb_notif_block_begin(n);
		if (rc < 0)
			return rc;
		r = connect(s->fd, sa, len);
		e = errno;
		end = sb_notif_block_end(n);
		if (r == 0)
			return 0;
		/* A TCP connect interrupted by us goes on in the kernel; calling
		 * again waits for it and says how it ended.  It may have finished
		 * in between (EISCONN), or the program's SO_SNDTIMEO ran out
		 * (EALREADY, which its own first call saw as EINPROGRESS). */
		if (again && e == EISCONN)
			return 0;
		if (again && e == EALREADY)
			return -EINPROGRESS;
		if (e != EINTR)
			return -e;
		if (end != 0)
			return -EINTR;
		again = true;
	}
}

int sb_net_connect(struct sb_notif *n, const struct sb_net_sock *s, const struct sockaddr *sa,
		   socklen_t len)
{
	/* Datagram connects and non-blocking sockets return at once. */
	if (s->nonblock || (s->type != SOCK_STREAM && s->type != SOCK_SEQPACKET))
		return connect(s->fd, sa, len) ? -errno : 0;
	return connect_wait(n, s, sa, len);
}

/* ---- binding an AF_UNIX path ------------------------------------------------ */

socklen_t sb_net_unix_fdaddr(int fd, struct sockaddr_un *out)
{
	memset(out, 0, sizeof(*out));
	out->sun_family = AF_UNIX;
	snprintf(out->sun_path, sizeof(out->sun_path), "/proc/self/fd/%d", fd);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(out->sun_path) + 1);
}

static bool landlock_usable(void)
{
	static atomic_int abi = -1;
	int v = atomic_load(&abi);

	if (v < 0) {
		v = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
		if (v < 0)
			v = 0;
		atomic_store(&abi, v);
	}
	return v >= 1;
}

struct bind_job {
	int sock, parentfd, cwdfd, rootfd;
	mode_t mask;
	const struct sockaddr_un *sa;
	socklen_t len;
	int rc;
};

/* Confine the calling thread (only) to creating sockets beneath dirfd. */
static int confine_thread(int dirfd)
{
	struct landlock_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_SOCK };
	struct landlock_path_beneath_attr pb = { .allowed_access = LANDLOCK_ACCESS_FS_MAKE_SOCK,
						 .parent_fd = dirfd };
	int rs, rc = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) ||
	    syscall(SYS_landlock_restrict_self, rs, 0))
		rc = -errno;
	close(rs);
	return rc;
}

/* A throw-away thread: its own fs struct (cwd, root, umask) and Landlock
 * domain die with it, the workers' are untouched. */
static void *bind_main(void *arg)
{
	struct bind_job *j = arg;

	if (unshare(CLONE_FS)) {
		j->rc = -errno;
		return NULL;
	}
	if (j->rootfd >= 0 && (fchdir(j->rootfd) || chroot("."))) {
		j->rc = -errno;
		return NULL;
	}
	if (fchdir(j->cwdfd)) {
		j->rc = -errno;
		return NULL;
	}
	umask(j->mask);
	j->rc = confine_thread(j->parentfd);
	if (j->rc == 0)
		j->rc = bind(j->sock, (const struct sockaddr *)j->sa, j->len) ? -errno : 0;
	return NULL;
}

static int open_proc(struct sb_notif *n, const char *what, int *out)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)n->req->pid, what);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if (sb_notif_valid(n)) {
		close(fd);
		return -ESRCH;
	}
	*out = fd;
	return 0;
}

static int run_bind_job(struct bind_job *j)
{
	pthread_t t;
	int rc = sb_thread_start(&t, 256 * 1024, bind_main, j);

	if (rc)
		return rc;
	pthread_join(t, NULL);
	return j->rc;
}

/* Fallback without Landlock: the parent directory through its descriptor. */
static int bind_via_fd(struct sb_notif *n, const struct sb_net_sock *s, int parentfd, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int len, rc;

	len = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", parentfd, name);
	if (len < 0 || (size_t)len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	rc = sb_umask_begin(n);
	if (rc)
		return rc;
	rc = bind(s->fd, (const struct sockaddr *)&sa,
		  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)len + 1)) ? -errno : 0;
	sb_umask_end();
	return rc;
}

int sb_net_bind_unix(struct sb_notif *n, const struct sb_net_sock *s, const struct sockaddr_un *sa,
		     socklen_t len, int parentfd, const char *name)
{
	struct bind_job j = { .sock = s->fd, .parentfd = parentfd, .cwdfd = -1, .rootfd = -1,
			      .sa = sa, .len = len, .rc = 0 };
	int rc;

	if (!landlock_usable())
		return bind_via_fd(n, s, parentfd, name);
	rc = sb_notif_umask(n, &j.mask);
	if (rc)
		return rc;
	rc = open_proc(n, "cwd", &j.cwdfd);
	if (rc)
		return rc;
	if (!sb_sup_same_root(n->sup)) {
		rc = open_proc(n, "root", &j.rootfd);
		if (rc)
			goto out;
	}
	rc = run_bind_job(&j);
	/* chroot needs CAP_SYS_CHROOT: without it, a program in another root
	 * gets the descriptor-relative name. */
	if (rc == -EPERM && j.rootfd >= 0)
		rc = bind_via_fd(n, s, parentfd, name);
out:
	if (j.cwdfd >= 0)
		close(j.cwdfd);
	if (j.rootfd >= 0)
		close(j.rootfd);
	return rc;
}

/* ---- writing back, signals ------------------------------------------------ */

int sb_net_put_u32(struct sb_notif *n, uint64_t addr, uint32_t v)
{
	struct iovec local = { &v, sizeof(v) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(v) };

	/* Still pending means the TID is still the program's thread. */
	if (sb_notif_valid(n))
		return -ESRCH;
	if (process_vm_writev(n->req->pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(v))
		return -EFAULT;
	return 0;
}

void sb_net_sigpipe(struct sb_notif *n)
{
	pid_t tgid;

	if (sb_notif_tgid(n, &tgid) == 0)
		syscall(SYS_tgkill, tgid, n->req->pid, SIGPIPE);
}
