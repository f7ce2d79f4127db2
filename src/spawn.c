/* Starting the interpreter under the filter (SPEC §3 "Spawn").
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
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sup_priv.h"

#ifndef CLOSE_RANGE_CLOEXEC
# define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct spawn_msg {
	int rc;		/* 0 or -errno of the failed step */
	int step;	/* which step failed (for diagnostics) */
	int listener;	/* the listener's number in the child */
	int killable;
};

struct limits {
	int n;
	int res[SB_LIMIT__COUNT];
	struct rlimit rl[SB_LIMIT__COUNT];
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

static void child_report(int fd, int step, int rc, int listener, int killable)
{
	struct spawn_msg m = { rc, step, listener, killable };

	if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(127);
}

static __attribute__((noreturn)) void child_fail(int fd, int step, int rc)
{
	child_report(fd, step, rc, -1, 0);
	_exit(127);
}

static __attribute__((noreturn)) void child_main(const struct sb_run_opts *o, const struct sb_filter *f,
						 const struct limits *l, pid_t parent, int msg_w, int go_r)
{
	sigset_t none;
	int listener, killable = 1;
	char go;

	/* If the supervisor dies, so does the program (and it may already be
	 * gone: check after arming). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);	/* the CLI ignores it; python must not inherit that */
	for (int i = 0; i < l->n; i++)
		if (setrlimit(l->res[i], &l->rl[i]) < 0)
			child_fail(msg_w, 1, -errno);
	/* Everything but stdio and the agent's channel closes at execve (our
	 * two pipes are needed until then). */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		for (int fd = 3; fd < 1024; fd++)
			if (fd != msg_w && fd != go_r)
				fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	if (o->agent_fd >= 0 && fcntl(o->agent_fd, F_SETFD, 0) < 0)
		child_fail(msg_w, 2, -errno);
	if (o->child_setup) {
		int rc = o->child_setup(o->child_data);

		if (rc < 0)
			child_fail(msg_w, 3, rc);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(msg_w, 4, -errno);
	listener = sb_filter_install(f, true);
	if (listener == -EINVAL) {
		killable = 0;	/* before 5.19 */
		listener = sb_filter_install(f, false);
	}
	if (listener < 0)
		child_fail(msg_w, 5, listener);
	child_report(msg_w, 0, 0, listener, killable);
	if (read(go_r, &go, 1) != 1)
		_exit(127);	/* the supervisor is gone */
	close(listener);
	execve(o->python, o->argv, o->envp);
	_exit(127);
}

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

/* After a failed set-up: collect the child. */
static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

int sb_spawn(const struct sb_run_opts *o, const struct sb_filter *f, struct sb_child *out)
{
	int msg[2] = { -1, -1 }, go[2] = { -1, -1 }, rc;
	struct spawn_msg m;
	struct limits l;
	pid_t parent = getpid(), pid;

	out->pid = -1;
	out->pidfd = out->listener = -1;
	out->killable = false;
	prepare_limits(o->policy, &l);
	if (pipe2(msg, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0)
		child_main(o, f, &l, parent, msg[1], go[0]);
	close(msg[1]);
	close(go[0]);
	msg[1] = go[0] = -1;
	out->pid = pid;
	rc = read_full(msg[0], &m, sizeof(m));
	if (rc == 0)
		rc = m.rc;
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
	if (rc == 0 && write(go[1], "g", 1) != 1)
		rc = -EPIPE;
	if (rc) {
		kill(pid, SIGKILL);
		reap(pid);
		if (out->pidfd >= 0)
			close(out->pidfd);
		if (out->listener >= 0)
			close(out->listener);
		out->pid = -1;
		out->pidfd = out->listener = -1;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (msg[i] >= 0)
			close(msg[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	return rc;
}
