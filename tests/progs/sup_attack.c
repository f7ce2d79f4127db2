/* Attacks on the supervisor from native code (tests/integration/sup-*.py).
 *
 *   sup_attack CMD [ARGS...]
 *
 * Prints one line "CMD OK <detail>" or "CMD ERR <errno name>" and exits 0,
 * so the Python test can assert the exact outcome; the bypass commands that
 * the filter answers by killing the process (x32, int80) never print.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static const char *cmd;

static int report(long rc, const char *detail)
{
	if (rc < 0)
		printf("%s ERR %s\n", cmd, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	else
		printf("%s OK %s\n", cmd, detail ? detail : "");
	fflush(stdout);
	return 0;
}

static int read_fd(int fd)
{
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return report(-1, NULL);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return report(-1, NULL);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return report(0, buf);
}

static int do_procfd(const char *dir, const char *rel)
{
	char path[512];
	int fd = open(dir, O_PATH | O_DIRECTORY);

	if (fd < 0)
		return report(-1, NULL);
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", fd, rel);
	return read_fd(open(path, O_RDONLY));
}

static int do_opath_reopen(const char *file)
{
	char path[64];
	int fd = open(file, O_PATH);

	if (fd < 0)
		return report(-1, NULL);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return read_fd(open(path, O_RDONLY));
}

static int do_dirfd(const char *dir, const char *rel)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY);

	if (d < 0)
		return report(-1, NULL);
	return read_fd(openat(d, rel, O_RDONLY));
}

static int do_x32(void)
{
	/* getpid through the x32 ABI: the filter kills the process. */
	syscall(0x40000000 | SYS_getpid);
	return report(0, "survived");
}

static int do_int80(void)
{
#if defined(__x86_64__)
	long ret;

	/* i386 getpid (20) through int 0x80: a foreign architecture. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory");
	(void)ret;
	return report(0, "survived");
#else
	return report(0, "not x86_64");
#endif
}

static int do_process_vm_readv(pid_t pid)
{
	char buf[16];
	struct iovec l = { buf, sizeof(buf) }, r = { (void *)0x400000, sizeof(buf) };

	return report(process_vm_readv(pid, &l, 1, &r, 1, 0), NULL);
}

static int do_clone_ns(void)
{
	long rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

	if (rc == 0)
		_exit(0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return report(rc, NULL);
}

static int do_fifo(const char *path)
{
	int fd = open(path, O_RDONLY);

	return read_fd(fd);
}

int main(int argc, char **argv)
{
	const char *a = argc > 2 ? argv[2] : "", *b = argc > 3 ? argv[3] : "";

	if (argc < 2) {
		fprintf(stderr, "usage: sup_attack CMD [ARGS...]\n");
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "read"))
		return read_fd(open(a, O_RDONLY));
	if (!strcmp(cmd, "write")) {
		int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		return report(fd < 0 ? -1 : write(fd, b, strlen(b)), NULL);
	}
	if (!strcmp(cmd, "append")) {
		int fd = open(a, O_WRONLY | O_APPEND);

		return report(fd < 0 ? -1 : write(fd, b, strlen(b)), NULL);
	}
	if (!strcmp(cmd, "procfd"))
		return do_procfd(a, b);
	if (!strcmp(cmd, "opath"))
		return do_opath_reopen(a);
	if (!strcmp(cmd, "dirfd"))
		return do_dirfd(a, b);
	if (!strcmp(cmd, "link"))
		return report(link(a, b), NULL);
	if (!strcmp(cmd, "rename"))
		return report(rename(a, b), NULL);
	if (!strcmp(cmd, "unlink"))
		return report(unlink(a), NULL);
	if (!strcmp(cmd, "symlink"))
		return report(symlink(a, b), NULL);
	if (!strcmp(cmd, "mkdir"))
		return report(mkdir(a, 0755), NULL);
	if (!strcmp(cmd, "chmod"))
		return report(chmod(a, 0777), NULL);
	if (!strcmp(cmd, "truncate"))
		return report(truncate(a, 0), NULL);
	if (!strcmp(cmd, "kill"))
		return report(kill((pid_t)atoi(a), argc > 3 ? atoi(b) : SIGTERM), NULL);
	if (!strcmp(cmd, "exec")) {
		execl(a, a, (char *)NULL);
		return report(-1, NULL);
	}
	if (!strcmp(cmd, "fifo"))
		return do_fifo(a);
	if (!strcmp(cmd, "x32"))
		return do_x32();
	if (!strcmp(cmd, "int80"))
		return do_int80();
	if (!strcmp(cmd, "io_uring")) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		return report(syscall(SYS_io_uring_setup, 4, &p), NULL);
	}
	if (!strcmp(cmd, "ptrace"))
		return report(ptrace(PTRACE_ATTACH, 0, 0, 0), NULL);	/* kernel: ESRCH */
	if (!strcmp(cmd, "vmread"))
		return do_process_vm_readv((pid_t)atoi(a));
	if (!strcmp(cmd, "pidfd_getfd")) {
		int pfd = (int)syscall(SYS_pidfd_open, (pid_t)atoi(a), 0);

		return report(pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, atoi(b), 0), NULL);
	}
	if (!strcmp(cmd, "unshare"))
		return report(unshare(CLONE_NEWUSER), NULL);
	if (!strcmp(cmd, "clone_ns"))
		return do_clone_ns();
	if (!strcmp(cmd, "clone3"))
		return report(syscall(SYS_clone3, NULL, 0), NULL);
	if (!strcmp(cmd, "seccomp"))
		return report(syscall(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, NULL), NULL);
	if (!strcmp(cmd, "prctl_seccomp"))
		return report(prctl(PR_SET_SECCOMP, 2, 0, 0, 0), NULL);
	if (!strcmp(cmd, "tiocsti")) {
		char c = 'x';

		return report(ioctl(0, TIOCSTI, &c), NULL);
	}
	if (!strcmp(cmd, "personality"))
		return report(personality(ADDR_NO_RANDOMIZE), NULL);
	if (!strcmp(cmd, "bpf"))
		return report(syscall(SYS_bpf, 0, NULL, 0), NULL);
	if (!strcmp(cmd, "mount"))
		return report(mount("none", "/nonexistent-sb-attack", "tmpfs", 0, NULL), NULL);	/* kernel: ENOENT */
	if (!strcmp(cmd, "open_by_handle"))
		return report(syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0), NULL);
	fprintf(stderr, "sup_attack: unknown command %s\n", cmd);
	return 2;
}
