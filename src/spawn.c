/* Starting the interpreter under the filter (SPEC §3 "Spawn"), alone or
 * inside a kernel layer that starts it itself (doc/os-layers.md "Wiring").
 *
 * Child, between fork and execve (system calls only, nothing allocated):
 * PDEATHSIG then a check that the parent is still there, rlimits from the
 * limit-* keys, every descriptor but 0, 1, 2 and the agent's closed on exec,
 * the kernel layer hook, no_new_privs, the filter with NEW_LISTENER, the
 * listener's number sent to the parent, a wait for the parent's go-ahead, and
 * the execve, whose notification the supervisor answers (the first execve of
 * the child is always allowed).
 *
 * Parent: pidfd_open + pidfd_getfd take the listener (so the child never
 * needs sendmsg); then the go-ahead.
 *
 * os-sandbox=unshare: the child is cloned into new namespaces and stays pid 1
 * of its pid namespace (a small init, src/unshare.c); its child finishes the
 * spawn.  os-sandbox=bwrap|firejail: a stand-in child forks the wrapper,
 * whose exec stub (python-sb --_sb-stub, stub_main.c) installs the filter we
 * send it.  In both the process that execs the interpreter is not our child,
 * so it hands the listener over on a socket whose credentials tell us its
 * pid in our namespace (wrap_stub.c), and its first execve is answered here
 * (answer_first_exec): the supervisor's own first-exec rule knows only
 * out->pid.  out->pid is the child we can wait for: pid 1 of the namespace
 * (which leaves with the program's status) or the stand-in (which leaves with
 * the wrapper's, forwards signals to the program and lives in its root, so
 * the supervisor resolves paths inside it).
 *
 * WAIT_KILLABLE_RECV (5.19): once a worker has received a notification the
 * target ignores non-fatal signals until the answer, so an emulated call is
 * never half done (a mkdir performed, then restarted by SA_RESTART and
 * answered EEXIST).  Ctrl-C still reaches the program: only blocking
 * emulations wait for long, and the interrupter ends those with EINTR as soon
 * as a signal is pending (supervisor.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oslayer.h"
#include "stub_main.h"
#include "sup_priv.h"

#ifndef CLOSE_RANGE_CLOEXEC
# define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum spawn_step {
	STEP_OK = 0, STEP_RLIMIT, STEP_AGENT_FD, STEP_LAYER, STEP_FILTER, STEP_NAMESPACES,
	STEP_EXEC_WRAPPER, STEP_STUB_ROOT, STEP_CAPS,
};

struct spawn_msg {
	int rc;		/* 0 or -errno of the failed step */
	int step;	/* enum spawn_step */
	int listener;	/* the listener's number in the child (plain spawn) */
	int killable;
	char text[240];	/* the kernel layer's own words (sb_oslayer_child_error) */
};

struct limits {
	int n;
	int res[SB_LIMIT__COUNT];
	struct rlimit rl[SB_LIMIT__COUNT];
};

/* Everything the children use, prepared before the fork. */
struct spawn {
	const struct sb_run_opts *o;
	const struct sb_filter *f;
	struct limits l;
	pid_t parent;
	int msg[2];		/* children -> parent: struct spawn_msg */
	int go[2];		/* parent -> child: the go-ahead (plain), the stub's pid (wrapper) */
	int sv[2];		/* the stub's socket (unshare, wrappers) */
	char **wargv;		/* the wrapper's command line */
	uint64_t sig_dfl;	/* signals the wrapper ignores and the stub restores */
};

static void prepare_limits(const struct sb_policy *p, struct limits *l)
{
	static const int res[SB_LIMIT__COUNT] = {
		[SB_LIMIT_NPROC] = RLIMIT_NPROC, [SB_LIMIT_AS] = RLIMIT_AS,
		[SB_LIMIT_NOFILE] = RLIMIT_NOFILE, [SB_LIMIT_FSIZE] = RLIMIT_FSIZE,
		[SB_LIMIT_CPU] = RLIMIT_CPU,
	};
	const struct sb_settings *s = sb_policy_settings(p);

	l->n = 0;
	for (int i = 0; i < SB_LIMIT__COUNT; i++) {
		if (!s->limit_set[i])
			continue;
		l->res[l->n] = res[i];
		l->rl[l->n].rlim_cur = l->rl[l->n].rlim_max = (rlim_t)s->limit[i];
		l->n++;
	}
}

/* ---- the children (system calls only) ----------------------------------------------- */

/* "<what failed>: ENAME" for the wrapper's steps, without stdio. */
static void step_text(int step, int rc, char *buf, size_t len)
{
	const char *what = step == STEP_EXEC_WRAPPER ? "cannot run the wrapper"
			 : step == STEP_CAPS	     ? "cannot drop the program's capabilities"
						     : "the stand-in cannot enter the program's root";
	const char *name = strerrorname_np(-rc);
	size_t at = 0;

	for (const char *p = what; *p && at + 1 < len; p++)
		buf[at++] = *p;
	for (const char *p = ": "; *p && at + 1 < len; p++)
		buf[at++] = *p;
	for (const char *p = name ? name : "error"; *p && at + 1 < len; p++)
		buf[at++] = *p;
	buf[at] = 0;
}

static void child_report(const struct spawn *sp, int step, int rc, int listener, int killable)
{
	struct spawn_msg m;

	memset(&m, 0, sizeof(m));
	m.rc = rc;
	m.step = step;
	m.listener = listener;
	m.killable = killable;
	if (rc && (step == STEP_LAYER || step == STEP_NAMESPACES))
		sb_oslayer_child_error(rc, m.text, sizeof(m.text));
	else if (rc && (step == STEP_EXEC_WRAPPER || step == STEP_STUB_ROOT || step == STEP_CAPS))
		step_text(step, rc, m.text, sizeof(m.text));
	if (write(sp->msg[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(127);
}

static __attribute__((noreturn)) void child_fail(const struct spawn *sp, int step, int rc)
{
	child_report(sp, step, rc, -1, 0);
	_exit(127);
}

/* The parent's ends are closed in every child: a pipe whose only reader is
 * the parent then tells whether the parent is still there. */
static void close_parent_ends(struct spawn *sp)
{
	close(sp->msg[0]);
	close(sp->go[1]);
	if (sp->sv[0] >= 0)
		close(sp->sv[0]);
	sp->msg[0] = sp->go[1] = sp->sv[0] = -1;
}

/* getppid() cannot tell from inside a new pid namespace (it answers 0):
 * ask the pipe only the parent reads instead. */
static bool parent_alive(const struct spawn *sp)
{
	struct pollfd p = { .fd = sp->msg[1], .events = POLLOUT };

	return poll(&p, 1, 0) >= 0 && !(p.revents & POLLERR);
}

/* Shared by every process that goes on to exec (the interpreter, or the
 * wrapper that will): signals, rlimits, descriptors, the layer hook. */
static void child_prepare(const struct spawn *sp)
{
	const struct sb_run_opts *o = sp->o;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);	/* the CLI ignores it; python must not inherit that */
	for (int i = 0; i < sp->l.n; i++)
		if (setrlimit(sp->l.res[i], &sp->l.rl[i]) < 0)
			child_fail(sp, STEP_RLIMIT, -errno);
	/* Everything but stdio and the agent's channel closes at execve (our
	 * pipes are close-on-exec already and needed until then). */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		for (int fd = 3; fd < 1024; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (o->agent_fd >= 0 && fcntl(o->agent_fd, F_SETFD, 0) < 0)
		child_fail(sp, STEP_AGENT_FD, -errno);
	if (o->child_setup) {
		int rc = o->child_setup(o->child_data);

		if (rc < 0)
			child_fail(sp, STEP_LAYER, rc);
	}
}

/* A program run as root keeps every capability unless we take them: with
 * CAP_NET_ADMIN it reconfigures the host's interfaces, with CAP_NET_RAW it
 * sniffs loopback, with CAP_SYSLOG it reads the kernel log, and RLIMIT_NPROC
 * (limit-nproc=) does not hold for it (red-team N08, N10, N15, K12, P23).
 * Unless the policy grants `privileges`, the bounding, ambient and
 * inheritable sets are emptied, so no execve gives them back, then the
 * current ones.  Without CAP_SETPCAP (not root) there is nothing to drop and
 * the bounding-set drops fail with EPERM: that is not an error.  Enforce and
 * audit only: learning watches the program as it would run bare. */
static int drop_capabilities(const struct spawn *sp)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2];

	if (sp->o->mode == SB_MODE_LEARN || sb_policy_api_granted(sp->o->policy, SB_API_PRIVILEGES))
		return 0;
	for (unsigned long cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	memset(none, 0, sizeof(none));
	if (syscall(SYS_capset, &hdr, none) < 0)
		return -errno;
	return 0;
}

int sb_spawn_install_filter(const struct sb_filter *f, bool *killable)
{
	int listener;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	*killable = true;
	listener = sb_filter_install(f, true);
	if (listener == -EINVAL) {
		*killable = false;	/* before 5.19 */
		listener = sb_filter_install(f, false);
	}
	return listener;
}

static __attribute__((noreturn)) void child_main(struct spawn *sp)
{
	bool killable;
	int listener, rc;
	char go;

	close_parent_ends(sp);
	/* If the supervisor dies, so does the program (and it may already be
	 * gone: check after arming). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != sp->parent)
		_exit(127);
	child_prepare(sp);
	rc = drop_capabilities(sp);
	if (rc)
		child_fail(sp, STEP_CAPS, rc);
	listener = sb_spawn_install_filter(sp->f, &killable);
	if (listener < 0)
		child_fail(sp, STEP_FILTER, listener);
	child_report(sp, STEP_OK, 0, listener, killable);
	if (read(sp->go[0], &go, 1) != 1)
		_exit(127);	/* the supervisor is gone */
	close(listener);
	execve(sp->o->python, sp->o->argv, sp->o->envp);
	_exit(127);
}

/* os-sandbox=unshare: cloned into the new namespaces.  pid 1 stays in
 * sb_oslayer_setup_ns_child() as the namespace's init; its child (PDEATHSIG
 * on pid 1) carries on here and hands its listener over on the socket. */
static __attribute__((noreturn)) void ns_child_main(struct spawn *sp)
{
	bool killable;
	int listener, rc;

	close_parent_ends(sp);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || !parent_alive(sp))
		_exit(127);
	rc = sb_oslayer_setup_ns_child(sp->o->oslayer);
	if (rc)
		child_fail(sp, STEP_NAMESPACES, rc);
	child_prepare(sp);
	rc = drop_capabilities(sp);
	if (rc)
		child_fail(sp, STEP_CAPS, rc);
	listener = sb_spawn_install_filter(sp->f, &killable);
	if (listener < 0)
		child_fail(sp, STEP_FILTER, listener);
	child_report(sp, STEP_OK, 0, -1, killable);
	if (sb_oslayer_send_listener_ex(sp->sv[1], listener, killable ? SB_OSL_LISTENER_KILLABLE : 0))
		_exit(127);	/* the supervisor is gone */
	close(listener);
	execve(sp->o->python, sp->o->argv, sp->o->envp);
	_exit(127);
}

/* bwrap/firejail: the wrapper, forked by the stand-in.  No filter of its
 * own: the stub installs ours inside, after the wrapper's set-up. */
static __attribute__((noreturn)) void wrapper_main(struct spawn *sp, pid_t stand_in)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != stand_in)
		_exit(127);
	child_prepare(sp);
	if (fcntl(sp->sv[1], F_SETFD, 0) < 0)
		child_fail(sp, STEP_EXEC_WRAPPER, -errno);
	for (int sig = 1; sig <= 64; sig++)
		if (sp->sig_dfl & (UINT64_C(1) << (sig - 1)))
			signal(sig, SIG_IGN);
	execve(sp->wargv[0], sp->wargv, sp->o->envp);
	child_fail(sp, STEP_EXEC_WRAPPER, -errno);
}

/* Move the stand-in into the program's root, so that the supervisor, which
 * looks at its child's root, resolves the program's paths inside it.
 * Without CAP_SYS_CHROOT, in a user namespace of its own. */
static int follow_root(pid_t prog)
{
	char path[32] = "/proc/", digits[12];
	size_t n = 0, at = 6;
	int fd, rc = 0;

	/* "/proc/PID/root" without stdio: we are a fork of a process that may
	 * have other threads. */
	do
		digits[n++] = (char)('0' + prog % 10);
	while ((prog /= 10) > 0 && n < sizeof(digits));
	while (n)
		path[at++] = digits[--n];
	memcpy(path + at, "/root", sizeof("/root"));
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchdir(fd) < 0)
		rc = -errno;
	if (!rc && chroot(".") < 0) {
		rc = -errno;
		if (rc == -EPERM && unshare(CLONE_NEWUSER) == 0)
			rc = chroot(".") < 0 ? -errno : 0;
	}
	if (!rc && chdir("/") < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The stand-in's life after the hand-over: forward the signals sent to it
 * alone (a terminal's reach the whole group, the program included) to the
 * program, and leave with the wrapper's status, as the wrapper reports the
 * program's (128+n for a signal).  Never returns. */
static __attribute__((noreturn)) void stand_in_wait(pid_t wrapper, int prog_pidfd, const sigset_t *all)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(all, &si), st;
		pid_t w;

		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			if (si.si_code != SI_KERNEL)
				syscall(SYS_pidfd_send_signal, prog_pidfd, sig, NULL, 0);
			continue;
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == wrapper)
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
}

static __attribute__((noreturn)) void stand_in_main(struct spawn *sp)
{
	sigset_t all;
	pid_t wrapper, prog = 0, self = getpid();
	int pidfd, rc;

	close_parent_ends(sp);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != sp->parent)
		_exit(127);
	/* Blocked from here on, so the wrapper's end is never missed. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	wrapper = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);
	if (wrapper < 0)
		child_fail(sp, STEP_EXEC_WRAPPER, -errno);
	if (wrapper == 0)
		wrapper_main(sp, self);
	close(sp->sv[1]);
	/* The parent tells us the stub's pid once it holds the listener; the
	 * stub waits for the go-ahead meanwhile, so the pid still names it. */
	if (read(sp->go[0], &prog, sizeof(prog)) != (ssize_t)sizeof(prog) || prog <= 0)
		_exit(127);
	pidfd = (int)syscall(SYS_pidfd_open, prog, 0);
	rc = pidfd < 0 ? -errno : follow_root(prog);
	if (rc)
		child_fail(sp, STEP_STUB_ROOT, rc);
	child_report(sp, STEP_OK, 0, -1, 0);
	/* Nothing else of ours stays open in the stand-in. */
	for (int fd = 0; fd < pidfd; fd++)
		close(fd);
	syscall(SYS_close_range, (unsigned)pidfd + 1, ~0U, 0);
	stand_in_wait(wrapper, pidfd, &all);
}

/* ---- the parent ------------------------------------------------------------------ */

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

/* The child's report; -EPIPE when every writer is gone without one. */
static int read_report(const struct sb_run_opts *o, int fd, struct spawn_msg *m)
{
	int rc = read_full(fd, m, sizeof(*m));

	if (rc)
		return rc;
	m->text[sizeof(m->text) - 1] = 0;
	if (m->rc && m->text[0] && o->notice_fd >= 0)
		dprintf(o->notice_fd, "python-sb: os-sandbox=%s: %s\n",
			o->oslayer ? sb_oslayer_name(o->oslayer) : "?", m->text);
	return m->rc;
}

/* After a failed set-up: collect the child. */
static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* The interpreter's first execve, made by a process that is not our child
 * (pid 1's child in the namespace, the stub inside the wrapper).  It is the
 * first notification of the listener: between the filter and the execve
 * those processes make no notified call. */
static int answer_first_exec(int listener, pid_t pid)
{
	struct pollfd p = { .fd = listener, .events = POLLIN };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int rc = 0;

	for (;;) {
		int n = poll(&p, 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (p.revents & POLLIN)
			break;
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			return -EPIPE;	/* it died before its execve */
	}
	for (;;) {
		memset(&req, 0, sizeof(req));	/* the kernel wants it zeroed */
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
			break;
		if (errno != EINTR)
			return -errno;
	}
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if ((pid_t)req.pid == pid && req.data.arch == SB_ARCH_NATIVE && req.data.nr == SYS_execve) {
		/* CONTINUE: the caller is still our own code (the spawn's
		 * grandchild, or the stub), single-threaded, executing the path
		 * we gave it; no program code has run yet. */
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		resp.error = -EPERM;
		rc = -EPROTO;
	}
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* The listener of a process that is not our child, and its first execve. */
static int take_over(struct spawn *sp, struct sb_child *out, pid_t *prog)
{
	unsigned flags = 0;
	int rc = sb_oslayer_take_listener(sp->sv[0], &out->listener, prog, &flags);

	if (rc)
		return rc;
	out->killable = flags & SB_OSL_LISTENER_KILLABLE;
	return 0;
}

static int release_and_answer(struct spawn *sp, struct sb_child *out, pid_t prog)
{
	int rc = sb_oslayer_release_stub(sp->sv[0]);

	return rc ? rc : answer_first_exec(out->listener, prog);
}

static int spawn_plain(struct spawn *sp, struct sb_child *out)
{
	struct spawn_msg m;
	pid_t pid = fork();
	int rc;

	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_main(sp);
	out->pid = pid;
	close(sp->msg[1]);
	close(sp->go[0]);
	sp->msg[1] = sp->go[0] = -1;
	rc = read_report(sp->o, sp->msg[0], &m);
	if (rc == 0) {
		out->killable = m.killable != 0;
		out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (out->pidfd < 0)
			rc = -errno;
	}
	if (rc == 0) {
		out->listener = (int)syscall(SYS_pidfd_getfd, out->pidfd, m.listener, 0);
		if (out->listener < 0)
			rc = -errno;
	}
	if (rc == 0 && sp->o->child_ready)
		rc = sp->o->child_ready(sp->o->child_data);
	if (rc == 0 && write(sp->go[1], "g", 1) != 1)
		rc = -EPIPE;
	return rc;
}

static void notice_diag(const struct sb_run_opts *o, const struct sb_diag *d)
{
	for (size_t i = 0; o->notice_fd >= 0 && i < d->n; i++)
		dprintf(o->notice_fd, "python-sb: %s\n", d->items[i].msg);
}

static int spawn_unshare(struct spawn *sp, struct sb_child *out)
{
	struct sb_oslayer *layer = sp->o->oslayer;
	struct spawn_msg m;
	struct sb_diag d;
	pid_t pid, prog = 0;
	int rc = sb_oslayer_before_clone(layer);

	if (rc)
		return rc;
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(sb_oslayer_clone_flags(layer) | SIGCHLD), 0, 0, 0, 0);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		ns_child_main(sp);
	out->pid = pid;
	close(sp->msg[1]);
	close(sp->sv[1]);
	sp->msg[1] = sp->sv[1] = -1;
	sb_diag_init(&d);
	rc = sb_oslayer_after_clone(layer, pid, &d);
	if (rc)
		notice_diag(sp->o, &d);
	sb_diag_free(&d);
	if (!rc)
		rc = read_report(sp->o, sp->msg[0], &m);
	if (!rc)
		rc = take_over(sp, out, &prog);
	if (!rc)
		rc = release_and_answer(sp, out, prog);
	if (!rc) {
		out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		rc = out->pidfd < 0 ? -errno : 0;
	}
	return rc;
}

/* The signals a terminal sends to the whole group that the wrapper would
 * die of while the program handles them: ignored in the wrapper, restored by
 * the stub.  Those python-sb itself was started with ignored stay so. */
static uint64_t wrapper_ignores(void)
{
	static const int sigs[] = { SIGINT, SIGQUIT };
	uint64_t mask = 0;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;

		if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			mask |= UINT64_C(1) << (sigs[i] - 1);
	}
	return mask;
}

static int spawn_wrapped(struct spawn *sp, struct sb_child *out)
{
	int keep[1] = { sp->o->agent_fd }, rc;
	struct spawn_msg m;
	pid_t pid, prog = 0;

	rc = sb_oslayer_wrap_argv_keep(sp->o->oslayer, sp->o->python, sp->o->argv, sp->sv[1], keep, 1,
				       &sp->wargv);
	if (rc)
		return rc;
	sp->sig_dfl = wrapper_ignores();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		stand_in_main(sp);
	out->pid = pid;
	close(sp->msg[1]);
	close(sp->go[0]);
	close(sp->sv[1]);
	sp->msg[1] = sp->go[0] = sp->sv[1] = -1;
	rc = sb_stub_send_filter(sp->sv[0], sp->f, sp->sig_dfl);
	if (!rc)
		rc = take_over(sp, out, &prog);
	if (rc) {
		/* The wrapper (or its exec) failed first: its own words are on
		 * stderr already; ours, if any, are in the pipe. */
		struct pollfd p = { .fd = sp->msg[0], .events = POLLIN };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
			int why = read_report(sp->o, sp->msg[0], &m);

			rc = why && why != -EPIPE ? why : rc;
		}
		return rc;
	}
	if (write(sp->go[1], &prog, sizeof(prog)) != (ssize_t)sizeof(prog))
		rc = -EPIPE;
	if (!rc)
		rc = read_report(sp->o, sp->msg[0], &m);
	if (!rc)
		rc = release_and_answer(sp, out, prog);
	if (!rc) {
		out->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		rc = out->pidfd < 0 ? -errno : 0;
	}
	return rc;
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

int sb_spawn(const struct sb_run_opts *o, const struct sb_filter *f, struct sb_child *out)
{
	struct spawn sp = { .o = o, .f = f, .parent = getpid(), .msg = { -1, -1 }, .go = { -1, -1 },
			    .sv = { -1, -1 } };
	enum sb_osl_kind kind = o->oslayer ? sb_oslayer_kind(o->oslayer) : SB_OSL_NONE;
	int rc;

	out->pid = -1;
	out->pidfd = out->listener = -1;
	out->killable = false;
	prepare_limits(o->policy, &sp.l);
	if (pipe2(sp.msg, O_CLOEXEC) < 0 || pipe2(sp.go, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	if (kind == SB_OSL_UNSHARE || kind == SB_OSL_BWRAP || kind == SB_OSL_FIREJAIL) {
		rc = sb_oslayer_stub_socketpair(sp.sv);
		if (rc)
			goto out;
	}
	if (kind == SB_OSL_UNSHARE)
		rc = spawn_unshare(&sp, out);
	else if (kind == SB_OSL_BWRAP || kind == SB_OSL_FIREJAIL)
		rc = spawn_wrapped(&sp, out);
	else
		rc = spawn_plain(&sp, out);
	if (rc && out->pid > 0) {
		kill(out->pid, SIGKILL);
		reap(out->pid);
		if (out->pidfd >= 0)
			close(out->pidfd);
		if (out->listener >= 0)
			close(out->listener);
		out->pid = -1;
		out->pidfd = out->listener = -1;
	}
	if (rc)
		sb_oslayer_spawn_done(o->oslayer);
out:
	close_pair(sp.msg);
	close_pair(sp.go);
	close_pair(sp.sv);
	sb_oslayer_argv_free(sp.wargv);
	return rc;
}
