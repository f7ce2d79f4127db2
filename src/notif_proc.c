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
 *
 * Under a layer with a pid namespace (unshare, bwrap, firejail) the pids a
 * program passes are its namespace's, while every check here (/proc, pidfds,
 * the sandbox's parent chain) speaks the supervisor's.  Each pid argument is
 * translated first (pidns_to_host); one that names nobody in the program's
 * namespace fails with ESRCH, as the kernel itself would answer, and never
 * reaches a check under its face value.  A CONTINUEd call is run by the
 * kernel in the program's namespace, where the pid names the very process
 * that was checked.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/* ---- the program's pid namespace ---------------------------------------------------- */

#ifndef NS_GET_PID_FROM_PIDNS
/* Linux 6.11: the pid `arg` of the namespace the nsfs fd names, as the
 * caller's namespace sees it. */
# define NS_GET_PID_FROM_PIDNS _IOR(0xb7, 0x6, int)
#endif

struct pidns {
	int fd;			/* the target's pid namespace (nsfs), -1 when it is ours */
	dev_t dev;
	ino_t ino;
};

static void pidns_close(struct pidns *ns)
{
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
}

/* The pid namespace the calling thread lives in, when it is not ours. */
static int pidns_open(struct sb_notif *n, struct pidns *ns)
{
	char path[64];
	struct stat a, b;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)n->req->pid);
	ns->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ns->fd < 0)
		return -ESRCH;
	if (fstat(ns->fd, &a) != 0 || stat("/proc/self/ns/pid", &b) != 0)
		rc = -errno;
	/* The tid may name another thread since the notification (reuse). */
	if (rc == 0)
		rc = sb_notif_valid(n);
	if (rc || (a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
		pidns_close(ns);
		return rc;
	}
	ns->dev = a.st_dev;
	ns->ino = a.st_ino;
	return 0;
}

/* Can this kernel translate with NS_GET_PID_FROM_PIDNS?  Probed once on our
 * own pid, because a missing pid answers ENOTTY instead of ESRCH on 6.11 to
 * 6.18 kernels before the fix, which looks like "no such ioctl". */
static bool pidns_ioctl_works(void)
{
	static atomic_int known;	/* 0 unknown, 1 yes, 2 no */
	int v = atomic_load(&known), fd;

	if (v)
		return v == 1;
#ifdef SB_TEST_WIDEN
	/* Test-only binary: take the /proc walk older kernels need. */
	if (getenv("SB_TEST_PIDNS_WALK") && *getenv("SB_TEST_PIDNS_WALK")) {
		atomic_store(&known, 2);
		return false;
	}
#endif
	v = 2;
	fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (ioctl(fd, NS_GET_PID_FROM_PIDNS, (unsigned long)getpid()) == getpid())
			v = 1;
		close(fd);
	}
	atomic_store(&known, v);
	return v == 1;
}

/* Kernels before 6.11: the task of our /proc whose innermost pid (NSpid) is
 * `pid` and whose pid namespace is the target's.  Slow, and only for
 * signals and priorities aimed at other processes. */
static int pidns_walk(const struct pidns *ns, pid_t pid, pid_t *out)
{
	DIR *procs = opendir("/proc");
	struct dirent *de;
	int rc = -ESRCH;

	if (!procs)
		return -errno;
	while (rc == -ESRCH && (de = readdir(procs))) {
		char path[64];
		struct stat st;
		DIR *tasks;
		struct dirent *te;
		int p = atoi(de->d_name);

		snprintf(path, sizeof(path), "/proc/%d/ns/pid", p);
		if (p <= 0 || stat(path, &st) != 0 || st.st_dev != ns->dev || st.st_ino != ns->ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", p);
		tasks = opendir(path);
		while (tasks && (te = readdir(tasks))) {
			struct sb_proc_ids ids;
			pid_t t = (pid_t)atoi(te->d_name);

			if (t > 0 && sb_proc_status(t, &ids) == 0 && ids.ns_tid == pid) {
				*out = t;
				rc = 0;
				break;
			}
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(procs);
	return rc;
}

/* `pid` (> 0) as the target passed it, in the supervisor's namespace. */
static int pidns_to_host(const struct pidns *ns, pid_t pid, pid_t *out)
{
	long host;

	if (ns->fd < 0 || pid <= 0) {
		*out = pid;
		return 0;
	}
	if (!pidns_ioctl_works())
		return pidns_walk(ns, pid, out);
	host = ioctl(ns->fd, NS_GET_PID_FROM_PIDNS, (unsigned long)pid);
	if (host <= 0)
		return -ESRCH;	/* ESRCH, or ENOTTY (above): nobody there */
	*out = (pid_t)host;
	return 0;
}

/* Translate one pid argument of the notified call; on failure answer it
 * (ESRCH: that pid names nobody the program could reach) and return false. */
static bool host_pid(struct sb_notif *n, pid_t pid, pid_t *out)
{
	struct pidns ns;
	int rc = pidns_open(n, &ns);

	if (rc == 0)
		rc = pidns_to_host(&ns, pid, out);
	pidns_close(&ns);
	if (rc) {
		n->ev->kind = SB_EV_PROC;
		sb_notif_fail(n, ESRCH);
		return false;
	}
	return true;
}

/* Is `pid` (ours) the caller's own process or one of its threads? */
static bool own_host_pid(struct sb_notif *n, pid_t pid)
{
	pid_t tgid;

	if (sb_notif_tgid(n, &tgid))
		return false;
	return pid == tgid || pid == (pid_t)n->req->pid || syscall(SYS_tgkill, tgid, pid, 0) == 0;
}

/* ---- setpriority, prlimit64 ------------------------------------------------------ */

/* Whom the call touches (pid in our namespace): the caller itself (0),
 * another sandboxed process (1), or someone outside (2). */
static int reach(struct sb_notif *n, pid_t pid)
{
	if (pid == 0 || own_host_pid(n, pid))
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
	/* CONTINUE: learn or audit mode, which enforce nothing (the refusal is
	 * recorded above); decided on registers only, nothing to race. */
	sb_notif_continue(n);
	return 0;
}

int sb_handle_prio(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	pid_t pid;
	int r;

	if (d->nr == __SNR_setpriority) {
		int which = (int)d->args[0];

		/* PRIO_PGRP and PRIO_USER reach our own group or every process of
		 * the user. */
		if (which != PRIO_PROCESS)
			return outside(n);
		pid = (pid_t)d->args[1];
	} else {
		pid = (pid_t)d->args[0];
	}
	if (pid < 0)
		return outside(n);	/* names nobody; refused as before */
	if (!host_pid(n, pid, &pid))
		return 0;
	r = reach(n, pid);
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

/* The kernel also takes a descriptor of a /proc/PID directory as a pidfd
 * (Linux 5.1's first form; CPython's own tests use it).  Read in our /proc,
 * so only where our procfs is the target's: another one's path does not
 * parse, and the kernel refuses such a descriptor to us anyway. */
static int proc_dir_pid(int fd, pid_t *pid)
{
	char path[64], link[64], *end;
	struct statfs sfs;
	ssize_t len;
	long v;

	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 6 || strncmp(link, "/proc/", 6) != 0)
		return -EBADF;
	link[len] = '\0';
	v = strtol(link + 6, &end, 10);
	if (end == link + 6 || *end || v <= 0 || v > INT_MAX)
		return -EBADF;	/* /proc/PID/task/TID, /proc/self, a file: not a process */
	*pid = (pid_t)v;
	return 0;
}

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
		return proc_dir_pid(pidfd, pid);
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

static int sig_other(struct sb_notif *n, struct sig_req *r)
{
	pid_t whom = r->tid ? r->tid : r->pid;
	struct sb_proc_ids ids;
	int pidfd, rc;

	pidfd = (int)syscall(SYS_pidfd_open, whom, r->tid ? PIDFD_THREAD : 0);
	if (pidfd < 0) {
		sb_notif_fail(n, errno == EINVAL ? ESRCH : errno);
		return 0;
	}
	if (r->tid) {
		/* The thread's own process decides, not the tgid argument: tgkill
		 * of a sandboxed pid with a thread of python-sb must not pass.
		 * Read after the pidfd pins the thread: a tid reused since then
		 * leaves the pidfd on a dead thread, which sending fails. */
		if (sb_proc_status(r->tid, &ids) || (r->pid && ids.tgid != r->pid)) {
			close(pidfd);
			sb_notif_fail(n, ESRCH);	/* as tgkill answers a wrong pair */
			return 0;
		}
		r->pid = ids.tgid;
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
	/* r.pid comes from our own fdinfo: already in our pid namespace. */
	n->ev->kind = SB_EV_PROC;
	if (!own_host_pid(n, r.pid) && !sb_sup_in_sandbox(n->sup, r.pid)) {
		close(fd);
		return outside(n);
	}
	n->ev->category = SB_API_PROCESS_CONTROL;
	if (!own_host_pid(n, r.pid) && !sb_policy_api_granted(n->policy, SB_API_PROCESS_CONTROL) &&
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

/* The pids of a decoded signal, from the target's namespace into ours
 * (kill(-1) and kill(0) name no pid).  False when answered (ESRCH). */
static bool sig_to_host(struct sb_notif *n, struct sig_req *r)
{
	struct pidns ns;
	int rc = pidns_open(n, &ns);

	if (rc == 0 && r->pid > 0)
		rc = pidns_to_host(&ns, r->pid, &r->pid);
	if (rc == 0 && r->tid > 0)
		rc = pidns_to_host(&ns, r->tid, &r->tid);
	pidns_close(&ns);
	if (rc)
		sb_notif_fail(n, ESRCH);
	return rc == 0;
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
	if (!sig_to_host(n, &r))
		return 0;
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
		 * members are ours.  Never the group we share with the CLI.
		 * CONTINUE: the kernel signals the group in the program's pid
		 * namespace, where the number names the leader checked here. */
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
