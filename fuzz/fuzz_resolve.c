/* libFuzzer target: the supervisor's path resolver (src/pathres.c,
 * sb_path_resolve) on hostile path strings, against a live target.
 *
 * The resolver is not pure: it resolves as the target would (its cwd, its
 * descriptors, its root, /proc/self meaning the target) and checks the
 * notification stays valid.  So this target starts two real targets: child
 * processes that install a seccomp filter with a listener, hand the listener
 * over, and block for ever in getppid() under a notification that is never
 * answered.  One shares our root, the other is chroot()ed into its
 * directory (the supervisor then resolves under /proc/PID/root; without
 * CAP_SYS_CHROOT that one is left out, with a note on stderr).  Each has
 * its cwd in a small tree of directories, files, a FIFO and symbolic links
 * (absolute, "..", loops, chains, dangling, /proc/self, /proc/self/fd/N,
 * /proc/thread-self, /proc/self/root, /proc/self/cwd), and descriptors 40
 * (a directory), 41/42 (a pipe) and 43 (a socket).  Our own descriptors
 * 40-47 are another pipe, which the targets do not have.
 *
 * Only pathres.c and procmem.c are linked: the two accessors of the
 * supervisor's private state they call (is the target's root ours, the
 * target's thread group) are provided here.  The kernel side (seccomp
 * notification ids, pidfd_getfd, /proc, openat2) is the real one.
 *
 * Input: a control byte (target, SB_RES_* flags, dirfd), then the path as
 * the supervisor would have read it (at most PATH_MAX - 1 bytes, up to the
 * first NUL).
 *
 * Promises checked:
 *  - success gives a NUL-terminated canonical path of the right length; for
 *    a file-system object, descriptors that really are that object (and its
 *    parent directory for SB_RES_PARENT), inside the chrooted target's root;
 *    a descriptor object ("pipe:[..]") only through the target's own table;
 *  - /proc/self and magic links are the target's, never the supervisor's:
 *    no result names our pid, our pipe or our listener;
 *  - no descriptor leaks, whatever the outcome, and the notification is
 *    still pending afterwards (the resolver never answers or loses it). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "sup_priv.h"

/* ---- the two accessors of the supervisor's state pathres.c needs ---- */

struct sb_sup {
	bool same_root;
};

bool sb_sup_same_root(const struct sb_sup *s)
{
	return s->same_root;
}

int sb_notif_tgid(struct sb_notif *n, pid_t *tgid)
{
	struct sb_proc_ids ids;
	int rc;

	if (n->tgid > 0) {
		*tgid = n->tgid;
		return 0;
	}
	rc = sb_proc_status((pid_t)n->req->pid, &ids);
	if (rc == 0)
		rc = sb_notif_valid(n);
	if (rc == 0)
		*tgid = n->tgid = ids.tgid;
	return rc;
}

/* No policy here: an arbitrary but fixed answer, so that both ways of a
 * failed lookup (its error kept, or hidden as ENOENT) are taken. */
bool sb_notif_path_visible(struct sb_notif *n, const char *canon, size_t len)
{
	(void)n;
	(void)canon;
	return len % 2 == 0;
}

/* ---- the targets ---- */

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "fuzz_resolve: add this architecture's AUDIT_ARCH"
#endif

struct target {
	struct sb_sup sup;
	pid_t pid;
	int listener;
	struct seccomp_notif req;
	char root[PATH_MAX];	/* its directory, canonical */
};

static struct target targets[2];
static char ours_pipe[64], ours_listener[64];

static const char *const tree_dirs[] = { "a", "a/b", "a/b/c", "emptydir" };
static const char *const tree_files[] = { "file", "a/b/file2", "a/b/c/deep" };
static const struct { const char *name, *to; } tree_links[] = {
	{ "l_abs", "/etc" }, { "l_up", ".." }, { "l_loop", "l_loop" }, { "l_ab", "l_chain" },
	{ "l_chain", "a/b" }, { "l_dangling", "nowhere/x" }, { "l_self", "/proc/self" },
	{ "l_fd", "/proc/self/fd/40" }, { "l_tself", "/proc/thread-self/cwd" },
	{ "l_root", "/proc/self/root/a" }, { "l_cwd", "/proc/self/cwd/a/b" }, { "a/b/l_back", "../../file" },
	{ "a/l_file", "/file" }, { "l_slash", "a/b/" }, { "l_dotdot", "a/../../.." },
};

static void make_tree(const char *dir)
{
	char p[PATH_MAX];
	int fd;

	for (size_t i = 0; i < sizeof(tree_dirs) / sizeof(tree_dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, tree_dirs[i]);
		mkdir(p, 0755);
	}
	for (size_t i = 0; i < sizeof(tree_files) / sizeof(tree_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, tree_files[i]);
		if ((fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) >= 0)
			close(fd);
	}
	for (size_t i = 0; i < sizeof(tree_links) / sizeof(tree_links[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, tree_links[i].name);
		if (symlink(tree_links[i].to, p) < 0)
			abort();
	}
	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0644);
}

/* In the child: async-signal-safe calls only (the parent may have threads). */
static void target_main(const char *dir, bool chrooted, int sock, pid_t parent)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { "L", 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int pfd[2], fd, lfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	if (chdir(dir) < 0)
		_exit(1);
	if (chrooted && (chroot(".") < 0 || chdir("/") < 0))
		_exit(3);	/* not root: the parent goes on with one target */
	for (fd = 40; fd <= 47; fd++)
		close(fd);
	if ((fd = open("a", O_PATH | O_DIRECTORY)) < 0 || dup2(fd, 40) < 0 || pipe(pfd) < 0 ||
	    dup2(pfd[0], 41) < 0 || dup2(pfd[1], 42) < 0 || (fd = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 ||
	    dup2(fd, 43) < 0)
		_exit(1);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(1);
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (lfd < 0)
		_exit(2);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	if (sendmsg(sock, &mh, 0) != 1)
		_exit(1);
	close(lfd);
	close(sock);
	for (;;)
		syscall(SYS_getppid);	/* the notification we never answer */
}

/* Returns false when the chrooted target cannot be made (no CAP_SYS_CHROOT). */
static bool start_target(struct target *t, const char *dir, bool chrooted)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	pid_t parent = getpid();
	int sv[2];

	if (!realpath(dir, t->root) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	t->pid = fork();
	if (t->pid < 0)
		abort();
	if (t->pid == 0) {
		close(sv[0]);
		target_main(dir, chrooted, sv[1], parent);
	}
	close(sv[1]);
	if (recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) != 1 || !(cm = CMSG_FIRSTHDR(&mh)) || cm->cmsg_type != SCM_RIGHTS) {
		int status = 0;

		close(sv[0]);
		if (waitpid(t->pid, &status, 0) == t->pid && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
			fprintf(stderr, "fuzz_resolve: no chroot() allowed: the chrooted target is left out\n");
			t->pid = 0;
			return false;
		}
		fprintf(stderr, "fuzz_resolve: the target could not install a seccomp listener\n");
		abort();
	}
	memcpy(&t->listener, CMSG_DATA(cm), sizeof(int));
	close(sv[0]);
	memset(&t->req, 0, sizeof(t->req));
	if (ioctl(t->listener, SECCOMP_IOCTL_NOTIF_RECV, &t->req) < 0)
		abort();
	t->sup.same_root = !chrooted;
	return true;
}

static void init_targets(void)
{
	char base[] = "/tmp/fuzz_resolve.XXXXXX", dir[PATH_MAX], link[64];
	int pfd[2];

	if (!mkdtemp(base))
		abort();
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/t%d", base, i);
		if (mkdir(dir, 0755) < 0)
			abort();
		make_tree(dir);
		if (!start_target(&targets[i], dir, i == 1))
			targets[i] = targets[0];	/* the same-root one serves both */
	}
	/* Our descriptors 40-47: a pipe only we hold. */
	if (pipe(pfd) < 0)
		abort();
	for (int fd = 40; fd <= 47; fd++)
		if (dup2(pfd[0], fd) < 0)
			abort();
	close(pfd[0]);
	close(pfd[1]);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", 40);
	ssize_t n = readlink(link, ours_pipe, sizeof(ours_pipe) - 1);
	if (n <= 0)
		abort();
	ours_pipe[n] = '\0';
	snprintf(link, sizeof(link), "/proc/self/fd/%d", targets[0].listener);
	n = readlink(link, ours_listener, sizeof(ours_listener) - 1);
	if (n <= 0)
		abort();
	ours_listener[n] = '\0';
}

/* ---- checks ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static bool fd_is(int fd, const struct target *t, const char *canon)
{
	char link[64], real[PATH_MAX], want[2 * PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n <= 0)
		return false;
	real[n] = '\0';
	if (t->sup.same_root)
		snprintf(want, sizeof(want), "%s", canon);
	else
		snprintf(want, sizeof(want), "%s%s", t->root, strcmp(canon, "/") ? canon : "");
	return strcmp(real, want) == 0;
}

static bool lexically_canonical(const char *p)
{
	if (strcmp(p, "/") == 0)
		return true;
	return p[0] == '/' && p[strlen(p) - 1] != '/' && !strstr(p, "//") && !strstr(p, "/./") &&
	       !strstr(p, "/../") && strcmp(p + strlen(p) - (strlen(p) >= 2 ? 2 : 0), "/.") &&
	       (strlen(p) < 3 || strcmp(p + strlen(p) - 3, "/.."));
}

static void check_result(const struct target *t, const char *path, unsigned flags, const struct sb_path *out)
{
	char ourproc[32];
	size_t ol;

	FUZZ_CHECK(out->len < PATH_MAX && strlen(out->canon) == out->len);
	FUZZ_CHECK(strcmp(out->canon, ours_pipe) != 0 && strcmp(out->canon, ours_listener) != 0);
	ol = (size_t)snprintf(ourproc, sizeof(ourproc), "/proc/%d", (int)getpid());
	if (!strstr(path, ourproc + 6))
		FUZZ_CHECK(strncmp(out->canon, ourproc, ol) != 0 || (out->canon[ol] && out->canon[ol] != '/'));
	if (out->fdobj) {
		FUZZ_CHECK(out->canon[0] != '/' && out->objfd >= 0);
		return;
	}
	if (!lexically_canonical(out->canon)) {
		fprintf(stderr, "not canonical: '%s' for '%s'\n", out->canon, path);
		FUZZ_CHECK(!"a canonical path");
	}
	if (flags & SB_RES_PARENT) {
		char name[NAME_MAX + 2];
		size_t nl;

		FUZZ_CHECK(out->parentfd >= 0);
		snprintf(name, sizeof(name), "%s", out->name);
		nl = strlen(name);
		if (nl && name[nl - 1] == '/')
			name[--nl] = '\0';
		FUZZ_CHECK(nl > 0 && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."));
		/* canon is the parent's path and the name */
		const char *slash = strrchr(out->canon, '/');
		FUZZ_CHECK(slash && strcmp(slash + 1, name) == 0);
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%.*s", slash == out->canon ? 1 : (int)(slash - out->canon),
			 out->canon);
		FUZZ_CHECK(fd_is(out->parentfd, t, parent));
	} else {
		FUZZ_CHECK(out->objfd >= 0 && out->parentfd < 0);
	}
	if (out->objfd >= 0 && !fd_is(out->objfd, t, out->canon)) {
		fprintf(stderr, "descriptor is not '%s' (path '%s')\n", out->canon, path);
		FUZZ_CHECK(!"the descriptor is the object named");
	}
}

/* Take one of the target's descriptors (40: its "a") through the pidfd the
 * resolver's thread then keeps for the target's thread (procmem.c): taken
 * before any input, so that each input's count of our descriptors is exact. */
static void keep_pidfd(struct target *t, int i)
{
	struct sb_notif n = { .listener = t->listener, .req = &t->req, .sup = &t->sup, .pidfd = -1 };
	struct sb_path out;

	if (sb_path_resolve(&n, 40, "b", SB_RES_FOLLOW, &out) != 0) {
		fprintf(stderr, "fuzz_resolve: self-test 'b' from fd 40 in target %d failed\n", i);
		abort();
	}
	sb_path_release(&out);
	if (n.pidfd >= 0)
		close(n.pidfd);
}

/* The harness works: plain paths, /proc/self and a magic link resolve to
 * what the target sees, in both targets. */
static void selftest(void)
{
	static const struct { const char *path, *want; } cases[] = {
		{ "a/b/c", "/a/b/c" }, { "l_ab/file2", "/a/b/file2" }, { "/proc/self/fd/40", "/a" },
		{ "l_fd/b", "/a/b" },
	};

	for (int i = 0; i < 2; i++) {
		struct target *t = &targets[i];

		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			struct sb_notif n = { .listener = t->listener, .req = &t->req, .sup = &t->sup, .pidfd = -1 };
			char want[2 * PATH_MAX];
			struct sb_path out;
			int rc;

			if (i == 1 && strncmp(cases[k].path, "/proc", 5) == 0)
				continue;	/* no /proc in the chroot */
			if (i == 1 && strcmp(cases[k].path, "l_fd/b") == 0)
				continue;
			snprintf(want, sizeof(want), "%s%s", t->sup.same_root ? t->root : "", cases[k].want);
			rc = sb_path_resolve(&n, AT_FDCWD, cases[k].path, SB_RES_FOLLOW, &out);
			if (rc != 0 || strcmp(out.canon, want) != 0) {
				fprintf(stderr, "fuzz_resolve: self-test '%s' in target %d: %d '%s', want '%s'\n",
					cases[k].path, i, rc, rc ? "" : out.canon, want);
				abort();
			}
			sb_path_release(&out);
			if (n.pidfd >= 0)
				close(n.pidfd);
		}
		keep_pidfd(t, i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int dirfds[8] = { AT_FDCWD, AT_FDCWD, 40, 41, 43, 44, 2, 99 };
	static char path[PATH_MAX];
	struct fin f = { data, size };
	uint8_t ctl = fin_u8(&f);
	struct target *t;
	unsigned flags = (ctl >> 1) & 7;
	int dirfd = dirfds[(ctl >> 4) & 7], before, rc;
	bool null_path = (ctl & 0x80) && (flags & SB_RES_EMPTY);
	struct sb_path out;
	char canon[PATH_MAX];

	if (!targets[0].pid) {
		init_targets();
		selftest();
	}
	t = &targets[ctl & 1];
	fin_str(&f, path, sizeof(path));
	static struct sb_event ev;	/* failed lookups name the path there */
	struct sb_notif n = {
		.listener = t->listener, .req = &t->req, .sup = &t->sup, .pidfd = -1, .ev = &ev,
	};

	ev.path[0] = '\0';

	before = count_fds();
	rc = sb_path_resolve(&n, dirfd, null_path ? NULL : path, flags, &out);
	FUZZ_CHECK(rc <= 0);
	if (rc == 0)
		check_result(t, path, flags, &out);
	else
		FUZZ_CHECK(out.objfd < 0 && out.parentfd < 0);
	sb_path_release(&out);
	if (!null_path) {
		rc = sb_notif_resolve(&n, dirfd, path, flags & SB_RES_FOLLOW, canon);
		FUZZ_CHECK(rc <= 0);
		if (rc == 0)
			FUZZ_CHECK(strlen(canon) < PATH_MAX && strcmp(canon, ours_pipe) && strcmp(canon, ours_listener));
	}
	if (n.pidfd >= 0)
		close(n.pidfd);	/* the core's, released after each notification */
	FUZZ_CHECK(count_fds() == before);
	if (sb_notif_valid(&n) != 0) {
		fprintf(stderr, "fuzz_resolve: target %d lost its notification\n", ctl & 1);
		abort();
	}
	return 0;
}
