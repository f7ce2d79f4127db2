/* The kernel's floor for a seccomp user-notification supervisor: what a
 * trapped call costs when the supervisor answers CONTINUE at once, without
 * reading anything or deciding.  python-sb's added time per call is judged
 * against it (bench/run.py prints both).  Never installed.
 *
 *   unotify-floor [CALLS]
 *   unotify-floor --run PROGRAM [ARG...]
 *   unotify-floor --run-walk PROGRAM [ARG...]
 *
 * For each setup (waiting threads, sync wake-up on or off) a child installs
 * a filter that notifies openat and newfstatat only, then times CALLS
 * open+close pairs and CALLS stats of a fixed path; the parent's threads wait
 * in NOTIF_RECV and CONTINUE.  Prints one line per setup, µs per call.
 *
 * --run execs PROGRAM under the same filter (newfstatat with AT_EMPTY_PATH
 * on a real descriptor passes in-kernel, as under python-sb) with one
 * waiter and the sync wake-up: bench/run.py times a workload that way to
 * show how much of python-sb's added time is the trap alone.
 *
 * --run-walk does, before each CONTINUE, the least any supervisor must do to
 * decide on a resolved path: read the path from the target (256 bytes, as
 * python-sb's first read), check the request is still alive (ID_VALID) and
 * open the path O_PATH without following symlinks (openat2, then close).
 * At an interpreter's start the caches are cold, and this walk costs several
 * times what it costs in a loop; it also warms the kernel's own lookup that
 * follows the CONTINUE.  The difference to --run is the walk's share,
 * which python-sb pays as well; python-sb minus --run-walk is its deciding.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

struct result {
	double open_us, stat_us;
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void loops(long calls, struct result *r)
{
	struct stat st;
	double t0 = now_us();

	for (long i = 0; i < calls; i++)
		close(open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	r->open_us = (now_us() - t0) / (double)calls;
	t0 = now_us();
	for (long i = 0; i < calls; i++)
		stat("/usr", &st);
	r->stat_us = (now_us() - t0) / (double)calls;
}

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 2, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		/* newfstatat: fstat() (AT_EMPTY_PATH, dirfd >= 0) in-kernel */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static bool walk;	/* --run-walk */

/* The walk of --run-walk (see the top); absolute paths only, as the
 * import system's are. */
static void walk_path(int fd, const struct seccomp_notif *req)
{
	char path[257];
	struct iovec local = { path, 256 }, remote;
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	__u64 id = req->id;
	ssize_t n;
	int obj;

	remote.iov_base = (void *)(uintptr_t)req->data.args[1];
	remote.iov_len = 256;
	n = process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0);
	if (n <= 0 || ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
		return;
	path[n] = '\0';
	if (path[0] != '/' || !memchr(path, '\0', (size_t)n))
		return;
	obj = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (obj >= 0)
		close(obj);
}

static void *answer(void *arg)
{
	int fd = (int)(intptr_t)arg;

	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;	/* ENOENT: the child is gone */
		}
		if (walk)
			walk_path(fd, &req);
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		/* CONTINUE: a benchmark of the mechanism, nothing is judged. */
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static int send_fd(int sock, int fd)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char c, buf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &c, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1 || !(cm = CMSG_FIRSTHDR(&m)) || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/* One setup: waiters < 0 runs the loops without a filter (bare). */
static int run(int waiters, int sync, long calls, struct result *r)
{
	int sv[2], listener = -1, status, n = 0, rc = 0;
	pthread_t th[4];
	pid_t pid;
	char go = 'g';

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = waiters >= 0 ? install_filter() : -1;

		if (waiters >= 0 && (fd < 0 || send_fd(sv[0], fd) < 0))
			_exit(1);
		if (fd >= 0)
			close(fd);
		if (read(sv[0], &go, 1) != 1)
			_exit(1);
		loops(calls, r);
		_exit(write(sv[0], r, sizeof(*r)) == (ssize_t)sizeof(*r) ? 0 : 1);
	}
	if (waiters >= 0) {
		listener = recv_fd(sv[1]);
		if (listener < 0)
			rc = listener;
		else if (sync && ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
				       SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0)
			rc = -errno;
		for (; rc == 0 && n < waiters && n < 4; n++)
			if (pthread_create(&th[n], NULL, answer, (void *)(intptr_t)listener))
				rc = -EAGAIN;
		usleep(20000);	/* every waiter in RECV */
	}
	if (rc == 0 && (write(sv[1], &go, 1) != 1 || read(sv[1], r, sizeof(*r)) != (ssize_t)sizeof(*r)))
		rc = -EPIPE;
	if (rc)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* The listener has no users left: RECV fails, the waiters return. */
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (listener >= 0)
		close(listener);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

/* --run: PROGRAM under the filter, answered by one thread with the sync
 * wake-up; exits with PROGRAM's status. */
static int run_program(char **argv)
{
	int sv[2], listener, status;
	pthread_t th;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int fd = install_filter();

		if (fd < 0 || send_fd(sv[0], fd) < 0)
			_exit(127);
		close(fd);
		close(sv[0]);
		close(sv[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	listener = recv_fd(sv[1]);
	if (listener < 0 || ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0 ||
	    pthread_create(&th, NULL, answer, (void *)(intptr_t)listener)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	close(sv[0]);
	close(sv[1]);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	/* Descendants may still hold the filter: leave without waiting for
	 * the answering thread. */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	static const struct {
		int waiters, sync;
		const char *what;
	} setups[] = {
		{ -1, 0, "bare (no filter)" },
		{ 1, 1, "1 thread in RECV, sync wake-up" },
		{ 2, 1, "2 threads in RECV, sync wake-up" },
		{ 1, 0, "1 thread in RECV, no sync wake-up" },
	};
	long calls;

	if (argc > 2 && !strcmp(argv[1], "--run"))
		return run_program(argv + 2);
	if (argc > 2 && !strcmp(argv[1], "--run-walk")) {
		walk = true;
		return run_program(argv + 2);
	}
	calls = argc > 1 ? atol(argv[1]) : 20000;

	if (calls <= 0) {
		fprintf(stderr, "usage: unotify-floor [CALLS]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(setups) / sizeof(setups[0]); i++) {
		struct result r;
		int rc = run(setups[i].waiters, setups[i].sync, calls, &r);

		if (rc) {
			fprintf(stderr, "unotify-floor: %s: %s\n", setups[i].what, strerror(-rc));
			return 1;
		}
		printf("%s\topen+close %.2f us\tstat %.2f us\n", setups[i].what, r.open_us, r.stat_us);
	}
	return 0;
}
