/* Performing socket calls on behalf of a supervised program (SPEC §3: "copy
 * the sockaddr, decide, take the socket with pidfd_getfd, perform the call in
 * the supervisor, return its result").  Internal to the network handlers
 * (notif_net.c); library style, returns 0/-errno, never prints.
 *
 * Nothing here decides: notif_net.c judges the copied address and only then
 * hands it, with the copied payload, to these functions.  What the kernel
 * finally uses is therefore exactly what was judged: our copy of the address,
 * our duplicate of the socket (its type cannot change), never the program's
 * memory or descriptor table, which another thread may rewrite meanwhile.
 */
#ifndef SB_NET_EMUL_H
#define SB_NET_EMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "notif.h"

/* Payload copied per call.  A datagram must go whole (a short datagram send
 * is wrong), a stream may be sent in part: the program sees a short count. */
#define SB_NET_DGRAM_MAX (256u * 1024u)
#define SB_NET_STREAM_MAX (1024u * 1024u)
#define SB_NET_CONTROL_MAX (64u * 1024u)

/* The program's socket, duplicated into the supervisor. */
struct sb_net_sock {
	int fd;			/* owned, -1 when none */
	int domain, type, protocol;
	bool nonblock;		/* O_NONBLOCK on the shared open file description */
};

/* Take the program's descriptor `tfd` (EBADF, ENOTSOCK as the kernel says). */
int sb_net_sock_get(struct sb_notif *n, int tfd, struct sb_net_sock *s);
void sb_net_sock_put(struct sb_net_sock *s);

/* One outgoing message copied out of the program. */
struct sb_net_msg {
	struct sockaddr_storage name;	/* msg_name as given (first namelen bytes) */
	socklen_t namelen;		/* 0: no address */
	unsigned char *data;		/* owned payload */
	size_t len;
	unsigned char *control;		/* owned, rebuilt: only the kinds we pass */
	size_t controllen;
	int *fds;			/* owned duplicates for SCM_RIGHTS */
	size_t nfds;
	bool creds;			/* SCM_CREDENTIALS was asked for (refused) */
};

void sb_net_msg_init(struct sb_net_msg *m);
void sb_net_msg_free(struct sb_net_msg *m);

/* Copy an address argument (connect, bind, sendto): `ulen` as the syscall got
 * it; EINVAL for a negative or oversized length, EFAULT for bad memory.  Then
 * take the target's socket `tfd` (sb_net_sock_get); one ID_VALID, the one
 * after pidfd_getfd, checks both.  On failure no socket is held. */
int sb_net_addr_sock_get(struct sb_notif *n, uint64_t uaddr, uint64_t ulen, int tfd,
			 struct sockaddr_storage *ss, socklen_t *len, struct sb_net_sock *s);

/* Copy sendto's buffer; `stream` allows a capped copy (else EMSGSIZE). */
int sb_net_msg_from_buf(struct sb_notif *n, uint64_t buf, uint64_t len, bool stream,
			struct sb_net_msg *m);

/* Copy a struct msghdr (already read from the program) with its name, iovec
 * and control data.  SCM_RIGHTS descriptors are duplicated (EBADF when one is
 * not open); unknown control messages give EINVAL, SCM_CREDENTIALS sets
 * m->creds (the caller refuses it: the supervisor's credentials would be
 * checked instead of the program's). */
int sb_net_msg_from_user(struct sb_notif *n, const struct msghdr *um, bool stream,
			 struct sb_net_msg *m);

/* Send m (to `to`, or the connected peer when NULL) on s with the program's
 * flags.  Never raises SIGPIPE in the supervisor; never blocks a worker
 * outside sb_notif_block_begin/end.  Returns the byte count or -errno
 * (-EINTR when a signal for the program interrupted a blocking send). */
ssize_t sb_net_send(struct sb_notif *n, const struct sb_net_sock *s, const struct sb_net_msg *m,
		    const struct sockaddr *to, socklen_t tolen, int flags);

/* connect(2) on s; a blocking socket waits between block_begin/end, so a
 * signal for the program interrupts it (EINTR) and SO_SNDTIMEO is the
 * kernel's own.  Returns 0 or -errno. */
int sb_net_connect(struct sb_notif *n, const struct sb_net_sock *s, const struct sockaddr *sa,
		   socklen_t len);

/* bind(2) of an AF_UNIX path socket with the program's own address `sa`
 * (so getsockname() and peers see the name it chose), its cwd and umask,
 * on a helper thread confined by Landlock to creating sockets beneath
 * `parentfd`, the checked parent directory: a symlink swapped into the
 * path after the check makes the bind fail (EACCES) instead of creating a
 * socket file elsewhere.  Without Landlock, binds "/proc/self/fd/P/name"
 * (race-free, but the bound name then differs).  Returns 0 or -errno. */
int sb_net_bind_unix(struct sb_notif *n, const struct sb_net_sock *s, const struct sockaddr_un *sa,
		     socklen_t len, int parentfd, const char *name);

/* "/proc/self/fd/FD": an AF_UNIX address reaching the socket file held open
 * (O_PATH) by the supervisor, whatever happens to its path meanwhile. */
socklen_t sb_net_unix_fdaddr(int fd, struct sockaddr_un *out);

/* Store a u32 into the program's memory (sendmmsg's msg_len), after checking
 * the request is still pending.  0 or -errno. */
int sb_net_put_u32(struct sb_notif *n, uint64_t addr, uint32_t v);

/* The kernel raises SIGPIPE in the sending thread on EPIPE unless
 * MSG_NOSIGNAL: do the same for the program's thread. */
void sb_net_sigpipe(struct sb_notif *n);

#endif
