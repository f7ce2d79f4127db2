/* Contract between the supervisor core (supervisor.c: receive, dispatch, reply)
 * and the per-family handlers (notif_open.c, notif_fs.c, notif_net.c,
 * notif_exec.c, notif_proc.c).  One handler per syscall family, reached through
 * one dispatch table generated from rules/syscalls.in.
 *
 * Fail closed: before a handler runs, resp is set to refuse (error -EPERM, no
 * CONTINUE); a handler that returns early without setting an answer refuses.
 */
#ifndef SB_NOTIF_H
#define SB_NOTIF_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compat.h"
#include "event.h"
#include "policy.h"
#include "supervisor.h"

struct sb_sup;		/* supervisor state, private to supervisor.c */
struct sb_pystack;	/* tracer/pyframes.h */

struct sb_notif {
	int listener;				/* the notify descriptor */
	const struct seccomp_notif *req;	/* as received (zeroed before RECV) */
	struct seccomp_notif_resp *resp;	/* answer the core sends */
	const struct sb_policy *policy;
	enum sb_mode mode;
	struct sb_sup *sup;
	struct sb_event *ev;	/* pre-filled: ts, pid, tid, nr, syscall; the handler fills the object */
	bool sent;		/* the handler already answered (ADDFD with SEND) */
	bool log;		/* emit ev when done (false for uninteresting calls) */

	/* Owned by the core, filled lazily by the helpers below; released after
	 * the answer.  Handlers do not touch them. */
	int pidfd;		/* pidfd of req->pid (sb_notif_getfd), -1 until needed */
	pid_t tgid;		/* thread group of req->pid, 0 until needed */
	unsigned blk;		/* slot in the blocking-call registry, 0 = none */
	struct sb_pystack *stk;	/* the worker's buffer for the Python stack */
	int attr;		/* stack: 0 not read yet, 1 read (ev filled), -errno */
};

/* A handler decides and answers one notification.  Returns 0 (resp or `sent`
 * says what happens) or -errno for a supervisor-side failure (the core then
 * refuses with EPERM). */
typedef int sb_notif_handler(struct sb_notif *n);

/* ---- helpers the core provides (supervisor.c, procmem.c) ----------------- */

/* Copy `len` bytes of the target's memory at `addr`, then check the request is
 * still valid (SECCOMP_IOCTL_NOTIF_ID_VALID).  -EFAULT, -ESRCH, -ENOENT. */
int sb_notif_read(struct sb_notif *n, uint64_t addr, void *buf, size_t len);

/* Copy a NUL-terminated string (at most cap-1 bytes); -ENAMETOOLONG when longer. */
int sb_notif_read_str(struct sb_notif *n, uint64_t addr, char *buf, size_t cap);

/* Is the request still pending?  0 or -ENOENT. */
int sb_notif_valid(struct sb_notif *n);

/* Duplicate the target's descriptor `fd` into the supervisor (pidfd_getfd);
 * returns the new fd or -errno.  The caller closes it.  A success is followed
 * by ID_VALID (-ENOENT when the request is gone), which also covers what was
 * read from the target before the call. */
int sb_notif_getfd(struct sb_notif *n, int fd);

/* Answer: the call returns `val` (>= 0) without running in the kernel. */
void sb_notif_return(struct sb_notif *n, int64_t val);

/* Answer: the call fails with errno `err` (> 0). */
void sb_notif_fail(struct sb_notif *n, int err);

/* Answer: let the kernel run the call (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 * Every caller carries a comment saying why it is race-safe. */
void sb_notif_continue(struct sb_notif *n);

/* Inject `fd` into the target and answer with its number atomically
 * (ADDFD + SECCOMP_ADDFD_FLAG_SEND); `cloexec` from the target's O_CLOEXEC.
 * On failure (RLIMIT_NOFILE: EMFILE) the call is answered with that error. */
int sb_notif_addfd_send(struct sb_notif *n, int fd, bool cloexec);

/* A refusal decided by the policy.  Records verdict, errno and tip in ev.
 * Enforce mode: answers with `err` and returns true (the handler stops).
 * Learn/audit mode: marks the event SB_WOULD_DENY and returns false, so the
 * handler goes on and performs the call as if allowed. */
bool sb_notif_refuse(struct sb_notif *n, int err, const struct sb_rule_ref *rule, const char *tip);

/* The target's umask (from /proc/TID/status). */
int sb_notif_umask(struct sb_notif *n, mode_t *mask);

/* A call that may block in the supervisor (a FIFO open, a blocking connect):
 * wrap it in block_begin/block_end.  Between the two, another worker keeps
 * receiving notifications, and the calling thread is interrupted (its system
 * call fails with EINTR) as soon as the target abandons the request or has a
 * signal pending that it does not block, so Ctrl-C reaches the program.
 * block_end returns 0 when the request is still ours to answer, -EINTR when a
 * signal is pending for the target (answer EINTR: the target's handler runs
 * and the call is retried as the kernel would), -ENOENT when the target went
 * away (answer nothing).  Must be paired; never nested. */
int sb_notif_block_begin(struct sb_notif *n);
int sb_notif_block_end(struct sb_notif *n);

/* ---- path resolution (pathres.c) ------------------------------------------- */

/* Resolve `path` as the target would, relative to `dirfd` (AT_FDCWD = its cwd)
 * inside its own root, with /proc/self and /proc/thread-self rewritten.
 * Writes the canonical absolute path into out (PATH_MAX).  `follow` false for
 * AT_SYMLINK_NOFOLLOW / O_NOFOLLOW semantics on the last component.
 * A missing last component is allowed (creation); a missing parent -> -ENOENT. */
int sb_notif_resolve(struct sb_notif *n, int dirfd, const char *path, bool follow, char *out);

#endif
