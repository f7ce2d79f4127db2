/* Unit tests of the attach backend's pure parts: the strace-style decoders
 * (run on this process's own memory, as the tracer reads a tracee's), the
 * result text, string quoting and the --attach PID list.  The live
 * behaviour (seize, stops, policy, detach) is in tests/integration/attach-*.py. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach_int.h"

#define P(x) ((uint64_t)(uintptr_t)(x))

struct dcase {
	const char *what;
	long nr;
	uint64_t args[6];
	const char *text;	/* NULL: the call is not shown */
	enum sb_ajudge judge;
	unsigned access;
};

static struct sb_actx ctx;
static struct sb_atracee self;

static void setup(void)
{
	memset(&ctx, 0, sizeof(ctx));
	memset(&self, 0, sizeof(self));
	self.tid = self.tgid = getpid();
}

static struct sb_acall *call_new(void)
{
	struct sb_acall *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	return c;
}

static void run_case(const struct dcase *d)
{
	struct sb_acall *c = call_new();
	int rc = sb_adecode_entry(&ctx, &self, (int)d->nr, d->args, c);

	if (!d->text) {
		ck_assert_msg(rc == -ENOENT, "%s: shown as %s", d->what, c->text);
	} else {
		ck_assert_msg(rc == 0, "%s: not shown (%d)", d->what, rc);
		ck_assert_msg(strcmp(c->text, d->text) == 0, "%s:\n got  %s\n want %s", d->what, c->text, d->text);
		ck_assert_msg(c->judge == d->judge, "%s: judge %d, want %d", d->what, c->judge, d->judge);
		if (d->access)
			ck_assert_msg(c->access == d->access, "%s: access %u, want %u", d->what, c->access, d->access);
	}
	free(c);
}

START_TEST(decode_file_calls)
{
	static const char weird[] = "a\"b\n\001c\0017";
	const struct dcase cases[] = {
		{ "openat read", SYS_openat, { (uint64_t)AT_FDCWD, P("/etc/hosts"), O_RDONLY | O_CLOEXEC },
		  "AT_FDCWD, \"/etc/hosts\", O_RDONLY|O_CLOEXEC", AJ_OPEN, SB_ACC_READ },
		{ "openat create", SYS_openat, { 3, P("x"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644 },
		  "3, \"x\", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644", AJ_OPEN, SB_ACC_WRITE },
		{ "openat listdir", SYS_openat,
		  { (uint64_t)AT_FDCWD, P("/d"), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY },
		  "AT_FDCWD, \"/d\", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY", AJ_OPEN, SB_ACC_READ },
		{ "openat tmpfile", SYS_openat, { (uint64_t)AT_FDCWD, P("/tmp"), O_RDWR | O_TMPFILE, 0600 },
		  "AT_FDCWD, \"/tmp\", O_RDWR|O_TMPFILE, 0600", AJ_OPEN, SB_ACC_READ | SB_ACC_WRITE },
#ifdef __x86_64__
		{ "openat largefile", SYS_openat, { (uint64_t)AT_FDCWD, P("/f"), 0100000 },
		  "AT_FDCWD, \"/f\", O_RDONLY|O_LARGEFILE", AJ_OPEN, SB_ACC_READ },
#endif
		{ "openat unknown bit", SYS_openat, { (uint64_t)AT_FDCWD, P("/f"), 0x80000000u | O_APPEND | O_WRONLY },
		  "AT_FDCWD, \"/f\", O_WRONLY|O_APPEND|0x80000000", AJ_OPEN, SB_ACC_WRITE },
		{ "openat O_PATH", SYS_openat, { (uint64_t)AT_FDCWD, P("/f"), O_PATH | O_RDWR },
		  "AT_FDCWD, \"/f\", O_RDWR|O_PATH", AJ_OPEN, SB_ACC_READ },
		{ "quoting", SYS_openat, { (uint64_t)AT_FDCWD, P(weird), O_RDONLY },
		  "AT_FDCWD, \"a\\\"b\\n\\1c\\0017\", O_RDONLY", AJ_OPEN, SB_ACC_READ },
		{ "bad pointer", SYS_openat, { (uint64_t)AT_FDCWD, 8, O_RDONLY }, "AT_FDCWD, 0x8, O_RDONLY", AJ_OPEN,
		  SB_ACC_READ },
		{ "null path", SYS_openat, { (uint64_t)AT_FDCWD, 0, O_RDONLY }, "AT_FDCWD, NULL, O_RDONLY", AJ_OPEN,
		  SB_ACC_READ },
		{ "fstat is not a path", SYS_newfstatat, { 3, P(""), P(&ctx), AT_EMPTY_PATH }, NULL, AJ_NONE, 0 },
		{ "newfstatat", SYS_newfstatat, { (uint64_t)AT_FDCWD, P("/etc"), P(&ctx), 0 },
		  "AT_FDCWD, \"/etc\", ", AJ_META, SB_ACC_READ },
		{ "statx", SYS_statx, { (uint64_t)AT_FDCWD, P("/x"), AT_SYMLINK_NOFOLLOW, 0x7ff, P(&ctx) },
		  "AT_FDCWD, \"/x\", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, ", AJ_META, SB_ACC_READ },
		{ "faccessat2", SYS_faccessat2, { (uint64_t)AT_FDCWD, P("f"), R_OK | W_OK, AT_EACCESS },
		  "AT_FDCWD, \"f\", R_OK|W_OK, AT_EACCESS", AJ_META, SB_ACC_READ | SB_ACC_WRITE },
#ifdef SYS_access
		{ "access", SYS_access, { P("f"), F_OK }, "\"f\", F_OK", AJ_META, SB_ACC_READ },
#endif
		{ "unlinkat dir", SYS_unlinkat, { (uint64_t)AT_FDCWD, P("d"), AT_REMOVEDIR },
		  "AT_FDCWD, \"d\", AT_REMOVEDIR", AJ_WRITE, SB_ACC_WRITE },
		{ "renameat2", SYS_renameat2, { (uint64_t)AT_FDCWD, P("a"), 5, P("b"), 1 },
		  "AT_FDCWD, \"a\", 5, \"b\", RENAME_NOREPLACE", AJ_WRITE, SB_ACC_WRITE },
		{ "linkat", SYS_linkat, { (uint64_t)AT_FDCWD, P("a"), (uint64_t)AT_FDCWD, P("b"), AT_SYMLINK_FOLLOW },
		  "AT_FDCWD, \"a\", AT_FDCWD, \"b\", AT_SYMLINK_FOLLOW", AJ_WRITE, SB_ACC_WRITE },
		{ "symlinkat", SYS_symlinkat, { P("t"), (uint64_t)AT_FDCWD, P("l") }, "\"t\", AT_FDCWD, \"l\"", AJ_WRITE,
		  SB_ACC_WRITE },
		{ "mkdirat", SYS_mkdirat, { (uint64_t)AT_FDCWD, P("d"), 0755 }, "AT_FDCWD, \"d\", 0755", AJ_WRITE,
		  SB_ACC_WRITE },
		{ "fchownat", SYS_fchownat, { (uint64_t)AT_FDCWD, P("f"), (uint32_t)-1, 1000, AT_SYMLINK_NOFOLLOW },
		  "AT_FDCWD, \"f\", -1, 1000, AT_SYMLINK_NOFOLLOW", AJ_WRITE, SB_ACC_WRITE },
		{ "mknodat fifo", SYS_mknodat, { (uint64_t)AT_FDCWD, P("p"), S_IFIFO | 0600, 0 },
		  "AT_FDCWD, \"p\", S_IFIFO|0600", AJ_WRITE, SB_ACC_WRITE },
		{ "truncate", SYS_truncate, { P("f"), 100 }, "\"f\", 100", AJ_WRITE, SB_ACC_WRITE },
		{ "utimensat futimens", SYS_utimensat, { 3, 0, 0, 0 }, NULL, AJ_NONE, 0 },
		{ "chdir", SYS_chdir, { P("/") }, "\"/\"", AJ_META, SB_ACC_READ },
		{ "readlinkat", SYS_readlinkat, { (uint64_t)AT_FDCWD, P("l"), P(&ctx), 10 }, "AT_FDCWD, \"l\", ", AJ_META,
		  SB_ACC_READ },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}
END_TEST

START_TEST(decode_net_and_process_calls)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(8080) };
	char data[40];
	const char *argv[] = { "ls", "-l", NULL };
	const char *envp[] = { "A=1", "B=2", NULL };
	char exec_text[256];
	struct clone_args ca = { .flags = CLONE_VM | CLONE_THREAD, .exit_signal = 0 };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(data, 'a', sizeof(data));
	snprintf(exec_text, sizeof(exec_text), "\"/bin/ls\", [\"ls\", \"-l\"], %p /* 2 vars */", (void *)envp);
	{
		const struct dcase cases[] = {
			{ "connect", SYS_connect, { 4, P(&sin), sizeof(sin) },
			  "4, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16", AJ_NET,
			  0 },
			{ "connect NULL", SYS_connect, { 4, 0, 0 }, "4, NULL, 0", AJ_NET, 0 },
			{ "bind", SYS_bind, { 4, P(&sin), sizeof(sin) },
			  "4, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16", AJ_NET,
			  0 },
			{ "listen", SYS_listen, { 4, 128 }, "4, 128", AJ_LISTEN, 0 },
			{ "socket", SYS_socket, { AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP },
			  "AF_INET6, SOCK_DGRAM|SOCK_NONBLOCK, IPPROTO_UDP", AJ_NONE, 0 },
			{ "socket netlink", SYS_socket, { AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 },
			  "AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE", AJ_NONE, 0 },
			{ "sendto with address", SYS_sendto, { 3, P("hello"), 5, MSG_NOSIGNAL, P(&sin), sizeof(sin) },
			  "3, \"hello\", 5, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(8080), "
			  "sin_addr=inet_addr(\"127.0.0.1\")}, 16", AJ_NET, 0 },
			{ "sendto long data", SYS_sendto, { 3, P(data), sizeof(data), 0, P(&sin), sizeof(sin) },
			  "3, \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"..., 40, 0, {sa_family=AF_INET, sin_port=htons(8080), "
			  "sin_addr=inet_addr(\"127.0.0.1\")}, 16", AJ_NET, 0 },
			{ "send on a connected socket", SYS_sendto, { 3, P("x"), 1, 0, 0, 0 }, NULL, AJ_NONE, 0 },
			{ "clone fork", SYS_clone, { CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | SIGCHLD, 0 },
			  "child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD", AJ_CLONE, 0 },
			{ "clone3 thread", SYS_clone3, { P(&ca), sizeof(ca) },
			  "{flags=CLONE_VM|CLONE_THREAD, exit_signal=0, stack=NULL, stack_size=0}, 88", AJ_CLONE, 0 },
			{ "kill group", SYS_kill, { (uint64_t)-5, SIGTERM }, "-5, SIGTERM", AJ_KILL, 0 },
			{ "tgkill rt", SYS_tgkill, { 1, 2, (uint64_t)(SIGRTMIN + 1) }, "1, 2, SIGRT_1", AJ_KILL, 0 },
			{ "execve", SYS_execve, { P("/bin/ls"), P(argv), P(envp) }, exec_text, AJ_EXEC, SB_ACC_EXEC },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			run_case(&cases[i]);
	}
}
END_TEST

/* Every path-taking row, with all it hands the judge: what is touched, from
 * which directory, how it is resolved, and as what access. */
struct jcase {
	const char *what;
	long nr;
	uint64_t args[6];
	const char *text;
	enum sb_ajudge judge;
	int dirfd;
	unsigned res, access;
	const char *path;
	const char *path2;	/* NULL: no second name to judge */
	int dirfd2;
};

static void run_jcase(const struct jcase *d)
{
	struct sb_acall *c = call_new();
	int rc = sb_adecode_entry(&ctx, &self, (int)d->nr, d->args, c);

	ck_assert_msg(rc == 0, "%s: not shown (%d)", d->what, rc);
	ck_assert_msg(strcmp(c->text, d->text) == 0, "%s:\n got  %s\n want %s", d->what, c->text, d->text);
	ck_assert_msg(c->judge == d->judge, "%s: judge %d, want %d", d->what, c->judge, d->judge);
	ck_assert_msg(c->dirfd == d->dirfd, "%s: dirfd %d, want %d", d->what, c->dirfd, d->dirfd);
	ck_assert_msg(c->res == d->res, "%s: res %u, want %u", d->what, c->res, d->res);
	ck_assert_msg(c->access == d->access, "%s: access %u, want %u", d->what, c->access, d->access);
	ck_assert_msg(strcmp(c->path, d->path) == 0, "%s: path %s, want %s", d->what, c->path, d->path);
	ck_assert_msg(c->has_path2 == (d->path2 != NULL), "%s: has_path2 %d", d->what, c->has_path2);
	if (d->path2) {
		ck_assert_msg(strcmp(c->path2, d->path2) == 0, "%s: path2 %s", d->what, c->path2);
		ck_assert_msg(c->dirfd2 == d->dirfd2, "%s: dirfd2 %d, want %d", d->what, c->dirfd2, d->dirfd2);
		ck_assert_msg(c->res2 == AR_CREATE, "%s: res2 %u", d->what, c->res2);
	}
	free(c);
}

#define CWD ((uint64_t)AT_FDCWD)
#define RD SB_ACC_READ
#define WR SB_ACC_WRITE

START_TEST(decode_path_rows)
{
	static const char *const argv[] = { "sh", NULL };
	struct timespec ts[2] = { { 1, 2 }, { 0, UTIME_OMIT } };
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	const struct jcase cases[] = {
#ifdef SYS_open
		{ "open create", SYS_open, { P("/f"), O_WRONLY | O_CREAT, 0600 }, "\"/f\", O_WRONLY|O_CREAT, 0600",
		  AJ_OPEN, AT_FDCWD, AR_FOLLOW | AR_CREATE, WR, "/f" },
		{ "open nofollow", SYS_open, { P("/f"), O_RDONLY | O_NOFOLLOW, 0600 }, "\"/f\", O_RDONLY|O_NOFOLLOW",
		  AJ_OPEN, AT_FDCWD, 0, RD, "/f" },
#endif
#ifdef SYS_creat
		{ "creat", SYS_creat, { P("/f"), 0644 }, "\"/f\", 0644", AJ_OPEN, AT_FDCWD, AR_FOLLOW | AR_CREATE, WR,
		  "/f" },
#endif
		{ "openat excl", SYS_openat, { 7, P("f"), O_RDWR | O_CREAT | O_EXCL, 0640 },
		  "7, \"f\", O_RDWR|O_CREAT|O_EXCL, 0640", AJ_OPEN, 7, AR_CREATE, RD | WR, "f" },
		{ "openat2", SYS_openat2, { CWD, P("/f"), P(&how), sizeof(how) },
		  "AT_FDCWD, \"/f\", {flags=O_RDONLY|O_CLOEXEC, resolve=RESOLVE_BENEATH}, 24", AJ_OPEN, AT_FDCWD,
		  AR_FOLLOW, RD, "/f" },
		{ "openat2 short", SYS_openat2, { CWD, P("/f"), 8, 8 }, "AT_FDCWD, \"/f\", 0x8, 8", AJ_OPEN, AT_FDCWD,
		  AR_FOLLOW, RD, "/f" },
#ifdef SYS_stat
		{ "stat", SYS_stat, { P("/s"), P(&ctx) }, "\"/s\", ", AJ_META, AT_FDCWD, AR_FOLLOW, RD, "/s" },
		{ "lstat", SYS_lstat, { P("/s"), P(&ctx) }, "\"/s\", ", AJ_META, AT_FDCWD, 0, RD, "/s" },
#endif
		{ "newfstatat nofollow", SYS_newfstatat, { 3, P("s"), P(&ctx), AT_SYMLINK_NOFOLLOW },
		  "3, \"s\", ", AJ_META, 3, 0, RD, "s" },
		{ "newfstatat empty cwd", SYS_newfstatat, { CWD, P(""), P(&ctx), AT_EMPTY_PATH },
		  "AT_FDCWD, \"\", ", AJ_META, AT_FDCWD, AR_FOLLOW | AR_EMPTY, RD, "" },
		{ "statx sync as stat", SYS_statx, { CWD, P("/x"), 0, 0, P(&ctx) },
		  "AT_FDCWD, \"/x\", AT_STATX_SYNC_AS_STAT, 0, ", AJ_META, AT_FDCWD, AR_FOLLOW, RD, "/x" },
		{ "statx mask bits", SYS_statx, { CWD, P("/x"), AT_EMPTY_PATH | AT_NO_AUTOMOUNT, 0x3 | 0x4000, P(&ctx) },
		  "AT_FDCWD, \"/x\", AT_NO_AUTOMOUNT|AT_EMPTY_PATH, STATX_TYPE|STATX_MODE|0x4000, ", AJ_META, AT_FDCWD,
		  AR_FOLLOW | AR_EMPTY, RD, "/x" },
		{ "statfs", SYS_statfs, { P("/"), P(&ctx) }, "\"/\", ", AJ_META, AT_FDCWD, AR_FOLLOW, RD, "/" },
#ifdef SYS_access
		{ "access write", SYS_access, { P("f"), W_OK | X_OK }, "\"f\", W_OK|X_OK", AJ_META, AT_FDCWD, AR_FOLLOW,
		  RD | WR, "f" },
#endif
		{ "faccessat", SYS_faccessat, { 4, P("f"), X_OK }, "4, \"f\", X_OK", AJ_META, 4, AR_FOLLOW, RD, "f" },
		{ "faccessat2 nofollow", SYS_faccessat2, { CWD, P("f"), R_OK, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH },
		  "AT_FDCWD, \"f\", R_OK, AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH", AJ_META, AT_FDCWD, AR_EMPTY, RD, "f" },
#ifdef SYS_readlink
		{ "readlink", SYS_readlink, { P("l"), P(&ctx), 10 }, "\"l\", ", AJ_META, AT_FDCWD, 0, RD, "l" },
#endif
		{ "readlinkat", SYS_readlinkat, { 5, P("l"), P(&ctx), 10 }, "5, \"l\", ", AJ_META, 5, 0, RD, "l" },
		{ "chdir", SYS_chdir, { P("/d") }, "\"/d\"", AJ_META, AT_FDCWD, AR_FOLLOW, RD, "/d" },
		{ "chroot", SYS_chroot, { P("/r") }, "\"/r\"", AJ_META, AT_FDCWD, AR_FOLLOW, RD, "/r" },
#ifdef SYS_mkdir
		{ "mkdir", SYS_mkdir, { P("d"), 0755 }, "\"d\", 0755", AJ_WRITE, AT_FDCWD, AR_CREATE, WR, "d" },
#endif
		{ "mkdirat", SYS_mkdirat, { 3, P("d"), 0700 }, "3, \"d\", 0700", AJ_WRITE, 3, AR_CREATE, WR, "d" },
#ifdef SYS_unlink
		{ "unlink", SYS_unlink, { P("f") }, "\"f\"", AJ_WRITE, AT_FDCWD, 0, WR, "f" },
		{ "rmdir", SYS_rmdir, { P("d") }, "\"d\"", AJ_WRITE, AT_FDCWD, 0, WR, "d" },
#endif
		{ "unlinkat", SYS_unlinkat, { 3, P("f"), 0 }, "3, \"f\", 0", AJ_WRITE, 3, 0, WR, "f" },
#ifdef SYS_rename
		{ "rename", SYS_rename, { P("a"), P("b") }, "\"a\", \"b\"", AJ_WRITE, AT_FDCWD, 0, WR, "a", "b",
		  AT_FDCWD },
#endif
#ifdef SYS_renameat
		{ "renameat", SYS_renameat, { 3, P("a"), 4, P("b") }, "3, \"a\", 4, \"b\"", AJ_WRITE, 3, 0, WR, "a", "b",
		  4 },
#endif
		{ "renameat2 flags", SYS_renameat2, { 3, P("a"), CWD, P("b"), RENAME_EXCHANGE | 8 },
		  "3, \"a\", AT_FDCWD, \"b\", RENAME_EXCHANGE|0x8", AJ_WRITE, 3, 0, WR, "a", "b", AT_FDCWD },
		{ "renameat2 empty bit", SYS_renameat2, { CWD, P("a"), CWD, P("b"), AT_EMPTY_PATH },
		  "AT_FDCWD, \"a\", AT_FDCWD, \"b\", 0x1000", AJ_WRITE, AT_FDCWD, AR_EMPTY, WR, "a", "b", AT_FDCWD },
#ifdef SYS_link
		{ "link", SYS_link, { P("a"), P("b") }, "\"a\", \"b\"", AJ_WRITE, AT_FDCWD, 0, WR, "a", "b", AT_FDCWD },
		{ "symlink", SYS_symlink, { P("t"), P("l") }, "\"t\", \"l\"", AJ_WRITE, AT_FDCWD, AR_CREATE, WR, "l" },
#endif
		{ "linkat follow", SYS_linkat, { 3, P("a"), 4, P("b"), AT_SYMLINK_FOLLOW },
		  "3, \"a\", 4, \"b\", AT_SYMLINK_FOLLOW", AJ_WRITE, 3, AR_FOLLOW, WR, "a", "b", 4 },
		{ "linkat empty", SYS_linkat, { 3, P(""), CWD, P("b"), AT_EMPTY_PATH },
		  "3, \"\", AT_FDCWD, \"b\", AT_EMPTY_PATH", AJ_WRITE, 3, AR_EMPTY, WR, "", "b", AT_FDCWD },
		{ "symlinkat", SYS_symlinkat, { P("t"), 5, P("l") }, "\"t\", 5, \"l\"", AJ_WRITE, 5, AR_CREATE, WR, "l" },
#ifdef SYS_chmod
		{ "chmod", SYS_chmod, { P("f"), 04755 }, "\"f\", 04755", AJ_WRITE, AT_FDCWD, AR_FOLLOW, WR, "f" },
		{ "chown", SYS_chown, { P("f"), 0, 0 }, "\"f\", 0, 0", AJ_WRITE, AT_FDCWD, AR_FOLLOW, WR, "f" },
		{ "lchown", SYS_lchown, { P("f"), 1000, (uint32_t)-1 }, "\"f\", 1000, -1", AJ_WRITE, AT_FDCWD, 0, WR,
		  "f" },
		{ "mknod chr", SYS_mknod, { P("c"), S_IFCHR | 0600, makedev(1, 3) },
		  "\"c\", S_IFCHR|0600, makedev(0x1, 0x3)", AJ_WRITE, AT_FDCWD, AR_CREATE, WR, "c" },
#endif
		{ "fchmodat", SYS_fchmodat, { 3, P("f"), 0600 }, "3, \"f\", 0600", AJ_WRITE, 3, AR_FOLLOW, WR, "f" },
		{ "fchownat follow", SYS_fchownat, { 3, P("f"), 1, 2, AT_EMPTY_PATH },
		  "3, \"f\", 1, 2, AT_EMPTY_PATH", AJ_WRITE, 3, AR_FOLLOW, WR, "f" },
		{ "mknodat blk", SYS_mknodat, { 3, P("b"), S_IFBLK | 0660, makedev(8, 1) },
		  "3, \"b\", S_IFBLK|0660, makedev(0x8, 0x1)", AJ_WRITE, 3, AR_CREATE, WR, "b" },
		{ "mknodat plain", SYS_mknodat, { 3, P("r"), 0644, 0 }, "3, \"r\", 0644", AJ_WRITE, 3, AR_CREATE, WR,
		  "r" },
		{ "truncate negative", SYS_truncate, { P("f"), (uint64_t)-1 }, "\"f\", -1", AJ_WRITE, AT_FDCWD, AR_FOLLOW,
		  WR, "f" },
		{ "utimensat times", SYS_utimensat, { CWD, P("f"), P(ts), AT_SYMLINK_NOFOLLOW },
		  "AT_FDCWD, \"f\", [{tv_sec=1, tv_nsec=2}, UTIME_OMIT], AT_SYMLINK_NOFOLLOW", AJ_WRITE, AT_FDCWD, 0, WR,
		  "f" },
		{ "utimensat now", SYS_utimensat, { 3, P(""), 0, AT_EMPTY_PATH }, "3, \"\", NULL, AT_EMPTY_PATH",
		  AJ_WRITE, 3, AR_FOLLOW | AR_EMPTY, WR, "" },
		{ "execve", SYS_execve, { P("/bin/sh"), P(argv), 0 }, "\"/bin/sh\", [\"sh\"], NULL", AJ_EXEC, AT_FDCWD,
		  AR_FOLLOW, SB_ACC_EXEC, "/bin/sh" },
		{ "execveat", SYS_execveat, { 3, P(""), P(argv), 0, AT_EMPTY_PATH },
		  "3, \"\", [\"sh\"], NULL, AT_EMPTY_PATH", AJ_EXEC, 3, AR_FOLLOW | AR_EMPTY, SB_ACC_EXEC, "" },
		{ "execveat nofollow", SYS_execveat, { CWD, P("/x"), 0, 0, AT_SYMLINK_NOFOLLOW },
		  "AT_FDCWD, \"/x\", NULL, NULL, AT_SYMLINK_NOFOLLOW", AJ_EXEC, AT_FDCWD, 0, SB_ACC_EXEC, "/x" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_jcase(&cases[i]);
}
END_TEST

/* Socket and signal rows, with what they hand the judge. */
START_TEST(decode_net_kill_rows)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53) };
	static const struct {
		const char *what;
		long nr;
		uint64_t args[6];
		const char *text;
	} shown[] = {
		{ "socket tcp", SYS_socket, { AF_INET, SOCK_STREAM, IPPROTO_TCP }, "AF_INET, SOCK_STREAM, IPPROTO_TCP" },
		{ "socket ip", SYS_socket, { AF_INET, SOCK_DGRAM, 0 }, "AF_INET, SOCK_DGRAM, IPPROTO_IP" },
		{ "socket unix", SYS_socket, { AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0 },
		  "AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0" },
		{ "socket unknown", SYS_socket, { 12345, 99, 7 }, "12345, SOCK_RAW|0x60, 7" },
		{ "socket odd type", SYS_socket, { AF_INET6, 0xe, IPPROTO_UDP }, "AF_INET6, 0xe, IPPROTO_UDP" },
		{ "kill", SYS_kill, { 12, 0 }, "12, 0" },
		{ "tkill", SYS_tkill, { 5, SIGKILL }, "5, SIGKILL" },
		{ "listen negative", SYS_listen, { 3, (uint64_t)-1 }, "3, -1" },
	};
	struct sb_acall *c;
	uint64_t a[6];

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		c = call_new();
		ck_assert_msg(sb_adecode_entry(&ctx, &self, (int)shown[i].nr, shown[i].args, c) == 0, "%s",
			      shown[i].what);
		ck_assert_msg(strcmp(c->text, shown[i].text) == 0, "%s:\n got  %s\n want %s", shown[i].what, c->text,
			      shown[i].text);
		free(c);
	}

	c = call_new();
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memcpy(a, (uint64_t[6]){ 4, P(&sin), sizeof(sin) }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_connect, a, c), 0);
	ck_assert(c->judge == AJ_NET && c->sockfd == 4 && c->op == ANET_CONNECT && c->n_addrs == 1);
	ck_assert_uint_eq(c->salen[0], sizeof(sin));
	ck_assert_int_eq(c->msgflags, 0);
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_bind, a, c), 0);
	ck_assert(c->judge == AJ_NET && c->sockfd == 4 && c->op == ANET_BIND && c->n_addrs == 1);
	a[1] = 8;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_connect, a, c), 0);
	ck_assert_str_eq(c->text, "4, 0x8, 16");
	ck_assert(c->judge == AJ_NET && c->n_addrs == 0);

	memcpy(a, (uint64_t[6]){ 5, P("x"), 1, MSG_DONTWAIT, P(&sin), sizeof(sin) }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_sendto, a, c), 0);
	ck_assert(c->judge == AJ_NET && c->sockfd == 5 && c->op == ANET_SEND && c->n_addrs == 1);
	ck_assert_int_eq(c->msgflags, MSG_DONTWAIT);
	a[4] = 8;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_sendto, a, c), 0);
	ck_assert_str_eq(c->text, "5, \"x\", 1, MSG_DONTWAIT, 0x8, 16");
	ck_assert(c->judge == AJ_NET && c->n_addrs == 0);

	memcpy(a, (uint64_t[6]){ 6, 511 }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_listen, a, c), 0);
	ck_assert(c->judge == AJ_LISTEN && c->sockfd == 6 && c->op == ANET_BIND);

	memcpy(a, (uint64_t[6]){ 5, SIGKILL }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_tkill, a, c), 0);
	ck_assert(c->judge == AJ_KILL && c->sig_tid == 5 && c->sig_pid == 0 && !c->sig_group);
	memcpy(a, (uint64_t[6]){ (uint64_t)-9, 8, SIGTERM }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_tgkill, a, c), 0);
	ck_assert_str_eq(c->text, "-9, 8, SIGTERM");
	ck_assert(c->judge == AJ_KILL && c->sig_pid == -9 && c->sig_tid == 8 && !c->sig_group);
	memcpy(a, (uint64_t[6]){ (uint64_t)-1, SIGTERM }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_kill, a, c), 0);
	ck_assert(c->judge == AJ_KILL && c->sig_pid == -1 && c->sig_tid == 0 && !c->sig_group);
	memcpy(a, (uint64_t[6]){ 77, SIGTERM }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_kill, a, c), 0);
	ck_assert(c->judge == AJ_KILL && c->sig_pid == 77 && !c->sig_group);

	memcpy(a, (uint64_t[6]){ AF_INET, SOCK_STREAM, 0 }, sizeof(a));
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_socket, a, c), 0);
	ck_assert(c->judge == AJ_NONE);
	free(c);
}
END_TEST

/* Calls the table does not show: a descriptor query, futimens(). */
START_TEST(decode_hidden_rows)
{
	const struct dcase cases[] = {
		{ "statx fd query", SYS_statx, { 3, P(""), AT_EMPTY_PATH, 0x7ff, P(&ctx) }, NULL, AJ_NONE, 0 },
		{ "newfstatat fd query", SYS_newfstatat, { 0, P(""), P(&ctx), AT_EMPTY_PATH }, NULL, AJ_NONE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}
END_TEST

/* The second half of each call that writes something back. */
static void entry_exit(long nr, const uint64_t a[6], int64_t rval, bool err, const char *want)
{
	struct sb_acall *c = call_new();

	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, (int)nr, a, c), 0);
	sb_adecode_exit(&ctx, &self, c, rval, err);
	ck_assert_msg(strcmp(c->text, want) == 0, "nr %ld:\n got  %s\n want %s", nr, c->text, want);
	free(c);
}

START_TEST(decode_exit_rows)
{
	struct stat st;
	struct statx stx;
	struct statfs sf;
	char want[256];
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(80) };
	uint32_t slen = sizeof(sin);

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFCHR | 0620;
	st.st_rdev = makedev(136, 3);
#ifdef SYS_stat
	entry_exit(SYS_stat, (uint64_t[6]){ P("/dev/pts/3"), P(&st) }, 0, false,
		   "\"/dev/pts/3\", {st_mode=S_IFCHR|0620, st_rdev=makedev(0x88, 0x3), ...}");
	snprintf(want, sizeof(want), "\"/x\", %p", (void *)&st);
	entry_exit(SYS_lstat, (uint64_t[6]){ P("/x"), P(&st) }, -ENOENT, true, want);
#endif
	st.st_mode = S_IFREG | 0644;
	st.st_size = 10;
	entry_exit(SYS_newfstatat, (uint64_t[6]){ 3, P("f"), P(&st), AT_SYMLINK_NOFOLLOW }, 0, false,
		   "3, \"f\", {st_mode=S_IFREG|0644, st_size=10, ...}, AT_SYMLINK_NOFOLLOW");
	entry_exit(SYS_newfstatat, (uint64_t[6]){ CWD, P("f"), 8, 0 }, 0, false, "AT_FDCWD, \"f\", 0x8, 0");

	memset(&stx, 0, sizeof(stx));
	stx.stx_mode = S_IFDIR | 0755;
	stx.stx_size = 4096;
	entry_exit(SYS_statx, (uint64_t[6]){ CWD, P("/d"), 0, 0x7ff, P(&stx) }, 0, false,
		   "AT_FDCWD, \"/d\", AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS, "
		   "{stx_mode=S_IFDIR|0755, stx_size=4096, ...}");
	snprintf(want, sizeof(want), "AT_FDCWD, \"/d\", AT_STATX_SYNC_AS_STAT, 0, %p", (void *)&stx);
	entry_exit(SYS_statx, (uint64_t[6]){ CWD, P("/d"), 0, 0, P(&stx) }, -EACCES, true, want);

	memset(&sf, 0, sizeof(sf));
	sf.f_type = 0xef53;
	sf.f_bsize = 4096;
	entry_exit(SYS_statfs, (uint64_t[6]){ P("/"), P(&sf) }, 0, false, "\"/\", {f_type=0xef53, f_bsize=4096, ...}");
	snprintf(want, sizeof(want), "\"/\", %p", (void *)&sf);
	entry_exit(SYS_statfs, (uint64_t[6]){ P("/"), P(&sf) }, -ENOENT, true, want);

#ifdef SYS_readlink
	entry_exit(SYS_readlink, (uint64_t[6]){ P("l"), P("abcdef"), 10 }, 3, false, "\"l\", \"abc\", 10");
	snprintf(want, sizeof(want), "\"l\", %p, 10", (void *)"abcdef");
	entry_exit(SYS_readlink, (uint64_t[6]){ P("l"), P("abcdef"), 10 }, -EINVAL, true, want);
#endif
	entry_exit(SYS_readlinkat, (uint64_t[6]){ 3, P("l"), 0, 10 }, 3, false, "3, \"l\", NULL, 10");

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	entry_exit(SYS_accept4, (uint64_t[6]){ 3, P(&sin), P(&slen), SOCK_CLOEXEC }, 5, false,
		   "3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"127.0.0.1\")}, [16], SOCK_CLOEXEC");
	entry_exit(SYS_accept4, (uint64_t[6]){ 3, 0, 0, 0 }, 5, false, "3, NULL, NULL, 0");
}
END_TEST

#undef CWD
#undef RD
#undef WR

/* Targets of calls checked for what the judge gets, not only the text. */
START_TEST(decode_judge_fields)
{
	uint64_t a[6] = { (uint64_t)-7, SIGKILL };
	struct sb_acall *c = call_new();

	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_kill, a, c), 0);
	ck_assert_int_eq(c->sig_pid, 7);
	ck_assert(c->sig_group);
	a[0] = (uint64_t)AT_FDCWD;
	a[1] = P("/x/y");
	a[2] = O_WRONLY | O_CREAT | O_EXCL;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_openat, a, c), 0);
	/* O_CREAT|O_EXCL never follows a final symlink */
	ck_assert_uint_eq(c->res, AR_CREATE);
	ck_assert_str_eq(c->path, "/x/y");
	a[0] = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
	a[1] = 0;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_clone, a, c), 0);
	ck_assert(c->clone_flags & CLONE_THREAD);
	free(c);
}
END_TEST

START_TEST(decode_exit_halves)
{
	struct stat st;
	char target[] = "/usr/bin/python3.11";
	uint64_t a[6] = { (uint64_t)AT_FDCWD, P("/etc"), P(&st), 0 };
	struct sb_acall *c = call_new();

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | 0755;
	st.st_size = 4096;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_newfstatat, a, c), 0);
	sb_adecode_exit(&ctx, &self, c, 0, false);
	ck_assert_str_eq(c->text, "AT_FDCWD, \"/etc\", {st_mode=S_IFDIR|0755, st_size=4096, ...}, 0");

	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_newfstatat, a, c), 0);
	sb_adecode_exit(&ctx, &self, c, -ENOENT, true);
	{
		char want[128];

		snprintf(want, sizeof(want), "AT_FDCWD, \"/etc\", %p, 0", (void *)&st);
		ck_assert_str_eq(c->text, want);
	}

	a[1] = P("/proc/self/exe");
	a[2] = P(target);
	a[3] = 4096;
	ck_assert_int_eq(sb_adecode_entry(&ctx, &self, SYS_readlinkat, a, c), 0);
	sb_adecode_exit(&ctx, &self, c, 10, false);
	ck_assert_str_eq(c->text, "AT_FDCWD, \"/proc/self/exe\", \"/usr/bin/p\", 4096");
	free(c);
}
END_TEST

START_TEST(result_text)
{
	static const struct { int64_t rval; bool err; const char *text; } cases[] = {
		{ 3, false, "3" },
		{ 0, false, "0" },
		{ -ENOENT, true, "-1 ENOENT (No such file or directory)" },
		{ -ECONNREFUSED, true, "-1 ECONNREFUSED (Connection refused)" },
		{ -512, true, "? ERESTARTSYS (To be restarted if SA_RESTART is set)" },
		{ -516, true, "? ERESTART_RESTARTBLOCK (Interrupted by signal)" },
		{ -4000, true, "-1 errno 4000" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[128];
		struct sb_abuf b;

		sb_abuf_init(&b, buf, sizeof(buf));
		sb_adecode_result(&b, cases[i].rval, cases[i].err);
		ck_assert_str_eq(buf, cases[i].text);
	}
}
END_TEST

START_TEST(text_is_bounded)
{
	char buf[16];
	struct sb_abuf b;

	sb_abuf_init(&b, buf, sizeof(buf));
	sb_abuf_puts(&b, "0123456789");
	sb_abuf_printf(&b, "%s", "abcdefghij");
	ck_assert(b.full);
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1);
	ck_assert_str_eq(buf + strlen(buf) - 3, "...");
	sb_abuf_puts(&b, "more");
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1);

	sb_abuf_init(&b, buf, sizeof(buf));
	sb_abuf_quote(&b, "abcdef", 6, 3);
	ck_assert_str_eq(buf, "\"abc\"...");

	/* Cut after a NUL: the byte past the cut is neither shown nor (in
	 * put_data's buffer) read, so it cannot choose \000 over \0. */
	sb_abuf_init(&b, buf, sizeof(buf));
	sb_abuf_quote(&b, "ab\0" "1", 4, 3);
	ck_assert_str_eq(buf, "\"ab\\0\"...");
	sb_abuf_init(&b, buf, sizeof(buf));
	sb_abuf_quote(&b, "ab\0" "1", 4, 4);
	ck_assert_str_eq(buf, "\"ab\\0001\"");
}
END_TEST

START_TEST(memory_reads)
{
	char s[8];
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(m, MAP_FAILED);
	/* A string ending right before an unmapped page reads. */
	munmap(m + page, (size_t)page);
	memcpy(m + page - 4, "abc", 4);
	ck_assert_int_eq(sb_aread_str(getpid(), P(m + page - 4), s, sizeof(s)), 0);
	ck_assert_str_eq(s, "abc");
	/* One running into it does not. */
	memcpy(m + page - 3, "xyz", 3);
	ck_assert_int_eq(sb_aread_str(getpid(), P(m + page - 3), s, sizeof(s)), -EFAULT);
	/* Too long for the buffer. */
	ck_assert_int_eq(sb_aread_str(getpid(), P("0123456789"), s, sizeof(s)), -ENAMETOOLONG);
	ck_assert_str_eq(s, "0123456");
	ck_assert_int_eq(sb_aread(getpid(), 0, s, 1), -EFAULT);
	munmap(m, (size_t)page);
}
END_TEST

START_TEST(pid_lists)
{
	static const struct { const char *in; int rc; size_t n; pid_t first, last; } cases[] = {
		{ "1", 0, 1, 1, 1 },
		{ "12,345,6", 0, 3, 12, 6 },
		{ "2147483647", 0, 1, 2147483647, 2147483647 },
		{ "", -EINVAL, 0, 0, 0 },
		{ "0", -EINVAL, 0, 0, 0 },
		{ "1,", -EINVAL, 0, 0, 0 },
		{ ",1", -EINVAL, 0, 0, 0 },
		{ "1,,2", -EINVAL, 0, 0, 0 },
		{ "-1", -EINVAL, 0, 0, 0 },
		{ "12a", -EINVAL, 0, 0, 0 },
		{ "2147483648", -EINVAL, 0, 0, 0 },
		{ "1 2", -EINVAL, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t *p = NULL;
		size_t n = 99;
		int rc = sb_attach_parse_pids(cases[i].in, &p, &n);

		ck_assert_msg(rc == cases[i].rc, "'%s': %d", cases[i].in, rc);
		if (rc == 0) {
			ck_assert_uint_eq(n, cases[i].n);
			ck_assert_int_eq(p[0], cases[i].first);
			ck_assert_int_eq(p[n - 1], cases[i].last);
		} else {
			ck_assert_ptr_null(p);
			ck_assert_uint_eq(n, 0);
		}
		free(p);
	}
}
END_TEST

START_TEST(check_errors)
{
	struct sb_attach_info info;
	pid_t child = fork();

	ck_assert_int_ge(child, 0);
	if (child == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert_int_eq(sb_attach_check(child, &info), -ESRCH);
	ck_assert_int_eq(info.pid, child);
	ck_assert_int_eq(sb_attach_check(getpid(), &info), -EINVAL);
	ck_assert_int_eq(sb_attach_check(0, &info), -ESRCH);
}
END_TEST

static Suite *attach_suite(void)
{
	Suite *s = suite_create("attach");
	TCase *tc = tcase_create("decode");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, decode_file_calls);
	tcase_add_test(tc, decode_net_and_process_calls);
	tcase_add_test(tc, decode_path_rows);
	tcase_add_test(tc, decode_hidden_rows);
	tcase_add_test(tc, decode_net_kill_rows);
	tcase_add_test(tc, decode_exit_rows);
	tcase_add_test(tc, decode_judge_fields);
	tcase_add_test(tc, decode_exit_halves);
	tcase_add_test(tc, result_text);
	tcase_add_test(tc, text_is_bounded);
	tcase_add_test(tc, memory_reads);
	tcase_add_test(tc, pid_lists);
	tcase_add_test(tc, check_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(attach_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
