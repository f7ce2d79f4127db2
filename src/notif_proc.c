/* Process calls: creation (clone, fork, vfork), identities (set*id,
 * setgroups), sessions (setsid, setpgid), priorities and limits aimed at
 * others, signals, personality (SPEC §3 "Python-level categories have
 * syscall-level teeth").
 *
 * Most are decided on register arguments alone.  A CONTINUE after such a
 * decision is race-free: registers are the target thread's own saved state,
 * which no other thread can rewrite while it waits, and the kernel runs the
 * call with exactly those values.  The one thing that can change under a
 * decision is what a pid names (reuse after exit): signals to another
 * process are therefore sent by the supervisor through a pidfd opened before
 * the check, and checked again after it (the receiver then sees the
 * supervisor as si_pid).  setpriority/prlimit64 on another sandboxed process
 * are CONTINUEd: reuse within that window would need the pid space to wrap
 * around in microseconds, and they need `process-control` in the first place.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sup_priv.h"

#define SB_CLONE_NS_FLAGS                                                                    \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
	 CLONE_NEWPID | CLONE_NEWNET)

/* A category the policy may not grant: refuse (enforce) or record (learn). */
static int api_decide(struct sb_notif *n, enum sb_api_category cat, int err)
{
	n->ev->kind = SB_EV_PROC;
	n->ev->category = (int)cat;
	if (!sb_policy_api_granted(n->policy, cat) && sb_notif_refuse(n, err, NULL, NULL))
		return 0;
	/* CONTINUE: decided on registers only (top of this file). */
	sb_notif_continue(n);
	return 0;
}

int sb_handle_clone(struct sb_notif *n)
{
	uint64_t flags = n->req->data.args[0];

	if (n->req->data.nr != __SNR_clone)
		return api_decide(n, SB_API_PROCESS_EXEC, EPERM);
	if (flags & SB_CLONE_NS_FLAGS) {
		/* New namespaces: refused in every mode (also in-kernel). */
		n->ev->kind = SB_EV_PROC;
		n->ev->verdict = SB_DENIED;
		sb_notif_fail(n, EPERM);
		return 0;
	}
	return api_decide(n, flags & CLONE_THREAD ? SB_API_THREADS : SB_API_PROCESS_EXEC, EPERM);
}

int sb_handle_api(struct sb_notif *n)
{
	const struct sb_syscall_row *row = sb_notif_row(n);

	if (!row || row->action != SB_FA_API)
		return -EINVAL;
	return api_decide(n, (enum sb_api_category)row->val, EPERM);
}

int sb_handle_personality(struct sb_notif *n)
{
	uint32_t persona = (uint32_t)n->req->data.args[0];

	n->ev->kind = SB_EV_PROC;
	/* The query and plain PER_LINUX only: ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC
	 * and the like weaken what runs next.  CONTINUE: a register decision. */
	if (persona == 0xffffffffu || persona == 0) {
		n->log = false;
		sb_notif_continue(n);
		return 0;
	}
	n->ev->verdict = SB_DENIED;
	sb_notif_fail(n, EPERM);
	return 0;
}

/* ---- setpriority, prlimit64 ------------------------------------------------------ */

/* Whom the call touches: the caller itself (0), another sandboxed process
 * (1), or someone outside (2). */
static int reach(struct sb_notif *n, pid_t pid)
{
	if (pid == 0 || sb_notif_own_pid(n, pid))
		return 0;
	return sb_sup_in_sandbox(n->sup, pid) ? 1 : 2;
}

static int outside(struct sb_notif *n)
{
	/* Nothing outside the sandbox is the program's to touch: no rule
	 * allows it (the supervisor, the terminal's other jobs, the user's
	 * other processes). */
	n->ev->kind = SB_EV_PROC;
	n->ev->category = -1;	/* no category grant reaches outside */
	if (sb_notif_refuse(n, EPERM, NULL, ""))
		return 0;
	sb_notif_continue(n);
	return 0;
}

int sb_handle_prio(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int r;

	if (d->nr == __SNR_setpriority) {
		int which = (int)d->args[0];

		/* PRIO_PGRP and PRIO_USER reach our own group or every process of
		 * the user. */
		if (which != PRIO_PROCESS)
			return outside(n);
		r = reach(n, (pid_t)d->args[1]);
	} else {
		r = reach(n, (pid_t)d->args[0]);
	}
	if (r == 0) {
		n->log = false;
		sb_notif_continue(n);	/* the caller itself: a register decision */
		return 0;
	}
	if (r == 2)
		return outside(n);
	return api_decide(n, SB_API_PROCESS_CONTROL, EPERM);
}

/* ---- signals ---------------------------------------------------------------------- */

struct sig_req {
	pid_t pid;		/* target process (kill, rt_sigqueueinfo) or its tgid */
	pid_t tid;		/* thread (tkill, tgkill, rt_tgsigqueueinfo), else 0 */
	int sig;
	uint64_t info;		/* siginfo_t * or 0 */
	bool group;		/* kill(-pgid) */
};

static int pidfd_pid(int pidfd, pid_t *pid)
{
	char path[64], buf[1024], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	p = strstr(buf, "\nPid:");
	if (!p)
		return -EBADF;	/* not a pidfd */
	*pid = (pid_t)atol(p + 5);
	return *pid > 0 ? 0 : -ESRCH;
}

/* Send the signal ourselves through a pidfd held across the check. */
static int send_checked(struct sb_notif *n, const struct sig_req *r, int pidfd)
{
	siginfo_t info;
	pid_t whom = r->tid ? r->tid : r->pid;
	int rc;

	if (r->info) {
		rc = sb_notif_read(n, r->info, &info, sizeof(info));
		if (rc)
			return rc;
	}
	/* Re-checked now that the pidfd pins the process: a reused pid fails
	 * here, or the pidfd names a dead process and sending fails ESRCH. */
	if (!sb_sup_in_sandbox(n->sup, r->pid ? r->pid : whom))
		return -EPERM;
	if (syscall(SYS_pidfd_send_signal, pidfd, r->sig, r->info ? &info : NULL, 0) < 0)
		return -errno;
	return 0;
}

static int sig_other(struct sb_notif *n, const struct sig_req *r)
{
	pid_t whom = r->tid ? r->tid : r->pid;
	int pidfd, rc;

	pidfd = (int)syscall(SYS_pidfd_open, whom, r->tid ? PIDFD_THREAD : 0);
	if (pidfd < 0) {
		sb_notif_fail(n, errno == EINVAL ? ESRCH : errno);
		return 0;
	}
	if (!sb_sup_in_sandbox(n->sup, r->pid)) {
		close(pidfd);
		return outside(n);
	}
	n->ev->category = SB_API_PROCESS_CONTROL;
	if (!sb_policy_api_granted(n->policy, SB_API_PROCESS_CONTROL) && sb_notif_refuse(n, EPERM, NULL, NULL)) {
		close(pidfd);
		return 0;
	}
	rc = send_checked(n, r, pidfd);
	close(pidfd);
	if (rc)
		sb_notif_fail_resolve(n, rc);
	else
		sb_notif_return(n, 0);
	return 0;
}

static int decode_sig(struct sb_notif *n, struct sig_req *r)
{
	const struct seccomp_data *d = &n->req->data;

	memset(r, 0, sizeof(*r));
	switch (d->nr) {
	case __SNR_kill:
		r->pid = (pid_t)d->args[0];
		r->sig = (int)d->args[1];
		if (r->pid < -1) {
			r->pid = -r->pid;
			r->group = true;
		}
		return 0;
	case __SNR_tkill:
		r->tid = (pid_t)d->args[0];
		r->sig = (int)d->args[1];
		return 0;
	case __SNR_tgkill:
		r->pid = (pid_t)d->args[0];
		r->tid = (pid_t)d->args[1];
		r->sig = (int)d->args[2];
		return 0;
	case __SNR_rt_sigqueueinfo:
		r->pid = (pid_t)d->args[0];
		r->sig = (int)d->args[1];
		r->info = d->args[2];
		return 0;
	case __SNR_rt_tgsigqueueinfo:
		r->pid = (pid_t)d->args[0];
		r->tid = (pid_t)d->args[1];
		r->sig = (int)d->args[2];
		r->info = d->args[3];
		return 0;
	}
	return -ENOSYS;
}

static int handle_pidfd_signal(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct sig_req r = { .sig = (int)d->args[1], .info = d->args[2] };
	int fd = sb_notif_getfd(n, (int)d->args[0]), rc;

	if (fd < 0) {
		sb_notif_fail_resolve(n, fd);
		return 0;
	}
	rc = pidfd_pid(fd, &r.pid);
	if (rc == 0 && d->args[3]) {
		rc = -EINVAL;	/* PIDFD_SIGNAL_* scopes: not emulated */
	}
	if (rc) {
		close(fd);
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	n->ev->kind = SB_EV_PROC;
	if (!sb_notif_own_pid(n, r.pid) && !sb_sup_in_sandbox(n->sup, r.pid)) {
		close(fd);
		return outside(n);
	}
	n->ev->category = SB_API_PROCESS_CONTROL;
	if (!sb_notif_own_pid(n, r.pid) && !sb_policy_api_granted(n->policy, SB_API_PROCESS_CONTROL) &&
	    sb_notif_refuse(n, EPERM, NULL, NULL)) {
		close(fd);
		return 0;
	}
	/* The target's own pidfd, duplicated: it cannot be swapped under us. */
	rc = send_checked(n, &r, fd);
	close(fd);
	if (rc)
		sb_notif_fail_resolve(n, rc);
	else
		sb_notif_return(n, 0);
	return 0;
}

int sb_handle_kill(struct sb_notif *n)
{
	struct sig_req r;
	pid_t tgid;

	if (n->req->data.nr == __SNR_pidfd_send_signal)
		return handle_pidfd_signal(n);
	if (decode_sig(n, &r))
		return -ENOSYS;
	n->ev->kind = SB_EV_PROC;
	if (sb_notif_tgid(n, &tgid))
		return -ESRCH;
	/* The caller's own process (raise, pthread_kill, abort): CONTINUE, a
	 * register decision; the thread group cannot change while the caller
	 * waits in this call. */
	if ((r.pid == tgid && !r.group) || (!r.pid && r.tid && syscall(SYS_tgkill, tgid, r.tid, 0) == 0)) {
		n->log = false;
		sb_notif_continue(n);
		return 0;
	}
	if (r.pid == 0 || r.pid == -1)
		return outside(n);	/* our shared process group, or everyone */
	if (r.group) {
		/* A group led by a sandboxed process (start_new_session): its
		 * members are ours.  Never the group we share with the CLI. */
		if (r.pid == getpgrp() || !sb_sup_in_sandbox(n->sup, r.pid))
			return outside(n);
		return api_decide(n, SB_API_PROCESS_CONTROL, EPERM);
	}
	if (!r.pid && r.tid) {
		struct sb_proc_ids ids;

		if (sb_proc_status(r.tid, &ids)) {
			sb_notif_fail(n, ESRCH);
			return 0;
		}
		r.pid = ids.tgid;
	}
	return sig_other(n, &r);
}
