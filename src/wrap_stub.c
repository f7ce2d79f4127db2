/* The exec stub that keeps the supervisor's filter innermost under bwrap or
 * firejail, and the wrapper's command line.
 *
 *   spawn child: exec <bwrap|firejail> <opts> -- <python-sb> --_sb-stub FD EXE -- ARGV...
 *   stub (inside the wrapper, after its namespaces and mounts):
 *     1. install the seccomp filter with NEW_LISTENER (python-sb: the BPF
 *        program the supervisor sends on FD first, stub_main.c; spawn.c's
 *        installer);
 *     2. write one byte on FD ('K' when the filter waits killably, else
 *        'P'): the supervisor's end has SO_PASSCRED, so the kernel hands it
 *        the stub's pid translated into the supervisor's pid namespace (the
 *        stub's own getpid() is meaningless there);
 *     3. write the listener's fd number (write(2) is never notified, unlike
 *        sendmsg, whose address the filter cannot see);
 *     4. wait for the go-ahead byte: the supervisor has taken the listener
 *        with pidfd_getfd(); close it and execve the interpreter.
 * Steps 2-4 are sb_oslayer_send_listener(); the unshare layer's grandchild
 * (whose host pid the spawn does not know either) uses them as well.
 */
#include "fdio.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "osl_int.h"

#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
# define SYS_pidfd_getfd 438
#endif

/* The stub is python-sb itself: its binary and every file it has mapped (its
 * shared libraries) must be visible inside the wrapper. */
int osl_self_files(const char *self_exe, struct osl_strv *files)
{
	char *me = realpath("/proc/self/exe", NULL), *want = realpath(self_exe, NULL);
	char line[PATH_MAX + 256];
	FILE *f;
	int rc = 0;

	if (!want) {
		rc = -errno;
		goto out;
	}
	osl_strv_add(files, want);
	if (!me || strcmp(me, want))
		goto out;	/* another binary: only it (tests use a static one) */
	f = fopen("/proc/self/maps", "re");
	if (!f) {
		rc = -errno;
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		size_t n;

		if (!path)
			continue;
		n = strcspn(path, "\n");
		path[n] = 0;
		if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
			continue;
		if (access(path, R_OK) == 0 && !osl_strv_has(files, path))
			osl_strv_add(files, path);
	}
	fclose(f);
out:
	if (!rc && files->oom)
		rc = -ENOMEM;
	free(me);
	free(want);
	return rc;
}

int sb_oslayer_wrap_argv(const struct sb_oslayer *l, const char *python_exe, char *const *python_argv,
			 int stub_fd, char ***out)
{
	return sb_oslayer_wrap_argv_keep(l, python_exe, python_argv, stub_fd, NULL, 0, out);
}

int sb_oslayer_wrap_argv_keep(const struct sb_oslayer *l, const char *python_exe, char *const *python_argv,
			      int stub_fd, const int *keep_fds, size_t n_keep, char ***out)
{
	struct osl_strv v = { 0 };

	*out = NULL;
	if (!l || (l->kind != SB_OSL_BWRAP && l->kind != SB_OSL_FIREJAIL))
		return -EINVAL;
	osl_strv_add(&v, l->wrap_bin);
	for (size_t i = 0; i < l->wrap_opts.n; i++)
		osl_strv_add(&v, l->wrap_opts.v[i]);
	/* firejail closes every other descriptor; bwrap passes them on. */
	if (l->kind == SB_OSL_FIREJAIL) {
		osl_strv_addf(&v, "--keep-fd=%d", stub_fd);
		for (size_t i = 0; i < n_keep; i++)
			if (keep_fds[i] >= 0)
				osl_strv_addf(&v, "--keep-fd=%d", keep_fds[i]);
	}
	osl_strv_add(&v, "--");
	osl_strv_add(&v, l->self_exe);
	osl_strv_add(&v, "--_sb-stub");
	osl_strv_addf(&v, "%d", stub_fd);
	osl_strv_add(&v, python_exe);
	osl_strv_add(&v, "--");
	for (size_t i = 0; python_argv && python_argv[i]; i++)
		osl_strv_add(&v, python_argv[i]);
	if (v.oom) {
		osl_strv_free(&v);
		return -ENOMEM;
	}
	*out = v.v;
	return 0;
}

void sb_oslayer_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int sb_oslayer_stub_parse(int argc, char **argv, int *fd, const char **exe, char ***py_argv)
{
	char *end;
	long n;

	if (argc < 5 || strcmp(argv[1], "--_sb-stub") || strcmp(argv[4], "--"))
		return -EINVAL;
	errno = 0;
	n = strtol(argv[2], &end, 10);
	if (errno || *end || n < 0 || n > INT_MAX || argv[3][0] != '/')
		return -EINVAL;
	*fd = (int)n;
	*exe = argv[3];
	*py_argv = argv + 5;
	return argv[5] ? 0 : -EINVAL;
}

int sb_oslayer_stub_socketpair(int sv[2])
{
	int one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* Set before the stub writes, so its first byte carries its pid. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    fcntl(sv[1], F_SETFD, 0) < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		return err;
	}
	return 0;
}

int sb_oslayer_stub_exec(int sock, int (*install)(void *data), void *data,
			 const char *exe, char *const *argv, char *const *envp)
{
	int listener, rc;

	if (fcntl(sock, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	listener = install(data);
	if (listener < 0)
		return listener;
	rc = sb_oslayer_send_listener(sock, listener);
	close(listener);
	if (rc)
		return rc;
	close(sock);
	execve(exe, argv, envp);
	return -errno;
}

int sb_oslayer_send_listener(int sock, int listener)
{
	return sb_oslayer_send_listener_ex(sock, listener, 0);
}

int sb_oslayer_send_listener_ex(int sock, int listener, unsigned flags)
{
	char go;
	int rc = sb_write_all(sock, flags & SB_OSL_LISTENER_KILLABLE ? "K" : "P", 1);

	if (!rc)
		rc = sb_write_all(sock, &listener, sizeof(listener));
	if (!rc)
		rc = sb_read_all(sock, &go, 1);
	if (!rc && go != 'G')
		rc = -EPROTO;
	return rc;
}

/* The stub's pid in our pid namespace, from the credentials of its first
 * byte ('P', or 'K' when its filter waits killably). */
static int recv_pid(int sock, pid_t *pid, unsigned *flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;

			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			if ((byte != 'P' && byte != 'K') || cr.pid <= 0)
				return -EPROTO;
			*pid = cr.pid;
			*flags = byte == 'K' ? SB_OSL_LISTENER_KILLABLE : 0;
			return 0;
		}
	return -EPROTO;
}

int sb_oslayer_take_listener(int sock, int *listener, pid_t *pid, unsigned *flags)
{
	int fdnum = -1, pidfd, fd, rc;

	*listener = -1;
	*pid = 0;
	*flags = 0;
	rc = recv_pid(sock, pid, flags);
	if (!rc)
		rc = sb_read_all(sock, &fdnum, sizeof(fdnum));
	if (rc)
		return rc;
	/* The sender waits for the go-ahead, so the pid still names it. */
	pidfd = (int)syscall(SYS_pidfd_open, *pid, 0);
	if (pidfd < 0)
		return -errno;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, fdnum, 0);
	rc = fd < 0 ? -errno : 0;
	close(pidfd);
	if (!rc)
		*listener = fd;
	return rc;
}

int sb_oslayer_release_stub(int sock)
{
	ssize_t n;

	/* MSG_NOSIGNAL: a stub that died gives EPIPE, not a SIGPIPE here. */
	do
		n = send(sock, "G", 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : n < 0 ? -errno : -EPIPE;
}

int sb_oslayer_recv_listener(int sock, int *listener)
{
	unsigned flags;
	pid_t pid;
	int fd, rc = sb_oslayer_take_listener(sock, &fd, &pid, &flags);

	*listener = -1;
	if (rc)
		return rc;
	rc = sb_oslayer_release_stub(sock);
	if (rc) {
		close(fd);
		return rc;
	}
	*listener = fd;
	return 0;
}
