/* Attach mode: which calls are shown and how, strace-style (SPEC §8).
 *
 * One row per system call of the file, network and process families, with an
 * entry decoder and, where the call writes something back (a stat buffer, a
 * link target, an accepted address), an exit decoder.  As in strace, the
 * line is built in two halves: the arguments the program passed are read at
 * the entry stop (execve's argv does not exist any more at its exit), the
 * results at the exit stop.  The entry decoder also says what the call
 * touches (call->judge and its fields) for attach_judge.c.
 *
 * Output follows strace(1) without -y/-v: `openat(AT_FDCWD, "/etc/hosts",
 * O_RDONLY|O_CLOEXEC) = 3`, sockaddrs through sockaddr.h, data strings cut
 * at 32 bytes, paths whole, errors as `-1 ENOENT (No such file or
 * directory)`.  Reading the program's memory is best effort: a bad pointer
 * prints as its address, as strace does, and is never an error here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach_int.h"
#include "sockaddr.h"

/* The kernel's O_LARGEFILE (glibc defines it as 0 on 64-bit targets, the
 * kernel still reports the bit when a program passes it). */
#if defined(__x86_64__)
# define SB_O_LARGEFILE 0100000
#elif defined(__aarch64__)
# define SB_O_LARGEFILE 0400000
#else
# define SB_O_LARGEFILE 0
#endif
/* The kernel's own __O_TMPFILE bit (glibc's __O_TMPFILE includes
 * O_DIRECTORY): O_TMPFILE is both bits together. */
#define SB_O_TMPFILE_BIT 020000000
#define SB_O_TMPFILE (SB_O_TMPFILE_BIT | O_DIRECTORY)
#ifndef AT_RECURSIVE
# define AT_RECURSIVE 0x8000
#endif
#ifndef RENAME_NOREPLACE
# define RENAME_NOREPLACE (1 << 0)
# define RENAME_EXCHANGE (1 << 1)
# define RENAME_WHITEOUT (1 << 2)
#endif
#ifndef MSG_ZEROCOPY
# define MSG_ZEROCOPY 0x4000000
#endif

#define SB_A_NR_MAX 1024
#define SB_A_ARGV_MAX 32	/* argv entries shown, as strace's -s for arrays */
#define SB_A_ENV_SCAN 4096	/* environment pointers counted at most */

typedef int sb_aentry_fn(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call);
typedef void sb_aexit_fn(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
			 bool is_error);

struct sb_asys {
	int nr;
	const char *name;
	sb_aentry_fn *entry;
	sb_aexit_fn *exit;	/* NULL: every argument was printed at entry */
};

/* ---- text ---------------------------------------------------------------------- */

void sb_abuf_init(struct sb_abuf *b, char *s, size_t cap)
{
	b->s = s;
	b->cap = cap;
	b->len = 0;
	b->full = false;
	if (cap)
		s[0] = '\0';
}

/* Cut marker: the last bytes of a full buffer become "..." so a cut line
 * never looks complete. */
static void abuf_overflow(struct sb_abuf *b)
{
	b->full = true;
	if (b->cap >= 4) {
		memcpy(b->s + b->cap - 4, "...", 4);
		b->len = b->cap - 1;
	}
}

void sb_abuf_puts(struct sb_abuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->full)
		return;
	if (b->len + n + 1 > b->cap) {
		abuf_overflow(b);
		return;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void sb_abuf_printf(struct sb_abuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		abuf_overflow(b);
		return;
	}
	b->len += (size_t)n;
}

void sb_abuf_quote(struct sb_abuf *b, const char *s, size_t len, size_t max)
{
	char esc[8];

	sb_abuf_puts(b, "\"");
	for (size_t i = 0; i < len && i < max && !b->full; i++) {
		unsigned char ch = (unsigned char)s[i];

		switch (ch) {
		case '"': sb_abuf_puts(b, "\\\""); continue;
		case '\\': sb_abuf_puts(b, "\\\\"); continue;
		case '\n': sb_abuf_puts(b, "\\n"); continue;
		case '\t': sb_abuf_puts(b, "\\t"); continue;
		case '\r': sb_abuf_puts(b, "\\r"); continue;
		case '\f': sb_abuf_puts(b, "\\f"); continue;
		case '\v': sb_abuf_puts(b, "\\v"); continue;
		}
		if (ch >= ' ' && ch < 0x7f) {
			esc[0] = (char)ch;
			esc[1] = '\0';
		} else {
			/* The shortest octal form is safe only when no digit follows. */
			bool digit_next = i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '7';
			snprintf(esc, sizeof(esc), digit_next ? "\\%03o" : "\\%o", ch);
		}
		sb_abuf_puts(b, esc);
	}
	sb_abuf_puts(b, "\"");
	if (len > max)
		sb_abuf_puts(b, "...");
}

/* ---- the tracee's memory --------------------------------------------------------- */

int sb_aread(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	if (addr == 0)
		return -EFAULT;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

int sb_aread_str(pid_t tid, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	if (cap == 0)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	if (addr == 0)
		return -EFAULT;
	/* Page by page: a string ending just before an unmapped page must
	 * still read. */
	while (got < cap - 1) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (size_t)(a & 4095);
		char *nul;
		int rc;

		if (chunk > cap - 1 - got)
			chunk = cap - 1 - got;
		rc = sb_aread(tid, a, buf + got, chunk);
		if (rc) {
			buf[got] = '\0';
			return rc;
		}
		nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return 0;
		got += chunk;
	}
	buf[cap - 1] = '\0';
	return -ENAMETOOLONG;
}

/* ---- argument printers -------------------------------------------------------------- */

struct flag {
	uint64_t val;
	const char *name;
};

static void put_flags(struct sb_abuf *b, const struct flag *tab, size_t n, uint64_t v, const char *zero)
{
	bool any = false;

	if (v == 0) {
		sb_abuf_puts(b, zero);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (tab[i].val && (v & tab[i].val) == tab[i].val) {
			sb_abuf_printf(b, "%s%s", any ? "|" : "", tab[i].name);
			v &= ~tab[i].val;
			any = true;
		}
	}
	if (v)
		sb_abuf_printf(b, "%s%#" PRIx64, any ? "|" : "", v);
}

#define FLAGS(b, tab, v, zero) put_flags((b), (tab), sizeof(tab) / sizeof((tab)[0]), (v), (zero))

static void put_dirfd(struct sb_abuf *b, int fd)
{
	if (fd == AT_FDCWD)
		sb_abuf_puts(b, "AT_FDCWD");
	else
		sb_abuf_printf(b, "%d", fd);
}

static void put_addr(struct sb_abuf *b, uint64_t a)
{
	if (a)
		sb_abuf_printf(b, "%#" PRIx64, a);
	else
		sb_abuf_puts(b, "NULL");
}

/* A path argument: read into dst (PATH_MAX) and shown whole.  Returns 0
 * when dst holds it. */
static int put_path(struct sb_abuf *b, pid_t tid, uint64_t addr, char *dst)
{
	int rc = sb_aread_str(tid, addr, dst, PATH_MAX);

	if (rc == 0 || rc == -ENAMETOOLONG)
		sb_abuf_quote(b, dst, strlen(dst), PATH_MAX);
	else
		put_addr(b, addr);
	return rc;
}

/* A data buffer: at most SB_A_STRMAX bytes shown. */
static void put_data(struct sb_abuf *b, pid_t tid, uint64_t addr, uint64_t len)
{
	char tmp[SB_A_STRMAX];
	size_t n = len < sizeof(tmp) ? (size_t)len : sizeof(tmp);

	if (sb_aread(tid, addr, tmp, n) != 0) {
		put_addr(b, addr);
		return;
	}
	sb_abuf_quote(b, tmp, len < SIZE_MAX ? (size_t)len : SIZE_MAX, SB_A_STRMAX);
}

static void put_open_flags(struct sb_abuf *b, uint64_t fl)
{
	static const struct flag tab[] = {
		{ O_CREAT, "O_CREAT" }, { O_EXCL, "O_EXCL" }, { O_NOCTTY, "O_NOCTTY" },
		{ O_TRUNC, "O_TRUNC" }, { O_APPEND, "O_APPEND" }, { O_NONBLOCK, "O_NONBLOCK" },
		{ O_SYNC, "O_SYNC" }, { O_DSYNC, "O_DSYNC" }, { O_ASYNC, "O_ASYNC" },
		{ O_DIRECT, "O_DIRECT" }, { SB_O_LARGEFILE, "O_LARGEFILE" }, { O_NOFOLLOW, "O_NOFOLLOW" },
		{ O_NOATIME, "O_NOATIME" }, { O_CLOEXEC, "O_CLOEXEC" }, { O_PATH, "O_PATH" },
		{ SB_O_TMPFILE, "O_TMPFILE" }, { O_DIRECTORY, "O_DIRECTORY" },
	};
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "0x3" };
	uint64_t rest = fl & ~(uint64_t)O_ACCMODE;

	sb_abuf_puts(b, acc[fl & O_ACCMODE]);
	if (rest) {
		sb_abuf_puts(b, "|");
		FLAGS(b, tab, rest, "0");
	}
}

static void put_mode(struct sb_abuf *b, uint64_t mode)
{
	sb_abuf_printf(b, "%#03" PRIo64, mode & 07777);
}

static const char *file_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "S_IFREG";
	case S_IFDIR: return "S_IFDIR";
	case S_IFLNK: return "S_IFLNK";
	case S_IFCHR: return "S_IFCHR";
	case S_IFBLK: return "S_IFBLK";
	case S_IFIFO: return "S_IFIFO";
	case S_IFSOCK: return "S_IFSOCK";
	}
	return NULL;
}

static void put_type_mode(struct sb_abuf *b, uint64_t mode)
{
	const char *t = file_type((mode_t)mode);

	if (t)
		sb_abuf_printf(b, "%s|", t);
	else if (mode & S_IFMT)
		sb_abuf_printf(b, "%#" PRIo64 "|", mode & S_IFMT);
	put_mode(b, mode);
}

static const struct flag at_flags[] = {
	{ AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" }, { AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW" },
	{ AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT" }, { AT_EMPTY_PATH, "AT_EMPTY_PATH" },
	{ AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC" }, { AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC" },
	{ AT_RECURSIVE, "AT_RECURSIVE" },
};

static void put_access_mode(struct sb_abuf *b, uint64_t mode)
{
	static const struct flag tab[] = { { R_OK, "R_OK" }, { W_OK, "W_OK" }, { X_OK, "X_OK" } };

	FLAGS(b, tab, mode, "F_OK");
}

static void put_signal(struct sb_abuf *b, int sig)
{
	const char *abbrev = sig > 0 && sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		sb_abuf_printf(b, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		sb_abuf_printf(b, "SIGRT_%d", sig - SIGRTMIN);
	else
		sb_abuf_printf(b, "%d", sig);
}

static void put_clone_flags(struct sb_abuf *b, uint64_t fl, bool with_signal)
{
	static const struct flag tab[] = {
		{ CLONE_VM, "CLONE_VM" }, { CLONE_FS, "CLONE_FS" }, { CLONE_FILES, "CLONE_FILES" },
		{ CLONE_SIGHAND, "CLONE_SIGHAND" }, { CLONE_PIDFD, "CLONE_PIDFD" },
		{ CLONE_PTRACE, "CLONE_PTRACE" }, { CLONE_VFORK, "CLONE_VFORK" },
		{ CLONE_PARENT, "CLONE_PARENT" }, { CLONE_THREAD, "CLONE_THREAD" },
		{ CLONE_NEWNS, "CLONE_NEWNS" }, { CLONE_SYSVSEM, "CLONE_SYSVSEM" },
		{ CLONE_SETTLS, "CLONE_SETTLS" }, { CLONE_PARENT_SETTID, "CLONE_PARENT_SETTID" },
		{ CLONE_CHILD_CLEARTID, "CLONE_CHILD_CLEARTID" }, { CLONE_UNTRACED, "CLONE_UNTRACED" },
		{ CLONE_CHILD_SETTID, "CLONE_CHILD_SETTID" }, { CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
		{ CLONE_NEWUTS, "CLONE_NEWUTS" }, { CLONE_NEWIPC, "CLONE_NEWIPC" },
		{ CLONE_NEWUSER, "CLONE_NEWUSER" }, { CLONE_NEWPID, "CLONE_NEWPID" },
		{ CLONE_NEWNET, "CLONE_NEWNET" }, { CLONE_IO, "CLONE_IO" },
	};
	uint64_t sig = with_signal ? fl & 0xff : 0;

	fl &= with_signal ? ~(uint64_t)0xff : ~(uint64_t)0;
	if (fl || !sig)
		FLAGS(b, tab, fl, "0");
	if (sig) {
		if (fl)
			sb_abuf_puts(b, "|");
		put_signal(b, (int)sig);
	}
}

static void put_msg_flags(struct sb_abuf *b, uint64_t fl)
{
	static const struct flag tab[] = {
		{ MSG_OOB, "MSG_OOB" }, { MSG_PEEK, "MSG_PEEK" }, { MSG_DONTROUTE, "MSG_DONTROUTE" },
		{ MSG_DONTWAIT, "MSG_DONTWAIT" }, { MSG_EOR, "MSG_EOR" }, { MSG_CONFIRM, "MSG_CONFIRM" },
		{ MSG_NOSIGNAL, "MSG_NOSIGNAL" }, { MSG_MORE, "MSG_MORE" }, { MSG_FASTOPEN, "MSG_FASTOPEN" },
		{ MSG_ZEROCOPY, "MSG_ZEROCOPY" },
	};

	FLAGS(b, tab, fl, "0");
}

/* A sockaddr argument of `len` bytes: copied into the call's first address
 * slot (for judging) and shown as strace shows it. */
static int put_sockaddr(struct sb_abuf *b, pid_t tid, uint64_t addr, uint64_t len, struct sb_acall *call,
			size_t slot)
{
	struct sockaddr_storage *ss = &call->sa[slot];
	size_t n = len > sizeof(*ss) ? sizeof(*ss) : (size_t)len;
	char text[512];

	memset(ss, 0, sizeof(*ss));
	if (!addr) {
		sb_abuf_puts(b, "NULL");
		return -EFAULT;
	}
	if ((int64_t)len < 0 || sb_aread(tid, addr, ss, n) != 0) {
		put_addr(b, addr);
		return -EFAULT;
	}
	call->salen[slot] = (socklen_t)n;
	sb_sa_format(ss, n, text, sizeof(text));
	sb_abuf_puts(b, text);
	return 0;
}

/* ---- results ---------------------------------------------------------------------- */

/* Kernel-internal codes a tracer sees when a signal interrupts a call. */
static const char *restart_text(int err, const char **name)
{
	switch (err) {
	case 512: *name = "ERESTARTSYS"; return "To be restarted if SA_RESTART is set";
	case 513: *name = "ERESTARTNOINTR"; return "To be restarted";
	case 514: *name = "ERESTARTNOHAND"; return "To be restarted if no handler";
	case 516: *name = "ERESTART_RESTARTBLOCK"; return "Interrupted by signal";
	}
	return NULL;
}

void sb_adecode_result(struct sb_abuf *b, int64_t rval, bool is_error)
{
	const char *name = NULL, *text;
	int err = (int)-rval;

	if (!is_error) {
		sb_abuf_printf(b, "%" PRId64, rval);
		return;
	}
	if ((text = restart_text(err, &name)) != NULL) {
		sb_abuf_printf(b, "? %s (%s)", name, text);
		return;
	}
	name = strerrorname_np(err);
	if (name)
		sb_abuf_printf(b, "-1 %s (%s)", name, strerror(err));
	else
		sb_abuf_printf(b, "-1 errno %d", err);
}

/* ---- file family ---------------------------------------------------------------------- */

static void judge_path(struct sb_acall *call, enum sb_ajudge j, int dirfd, unsigned res, unsigned access)
{
	call->judge = j;
	call->dirfd = dirfd;
	call->res = res;
	call->access = access;
}

static bool is_tmpfile(uint64_t fl)
{
	return (fl & SB_O_TMPFILE) == SB_O_TMPFILE;
}

/* Creates something: O_CREAT, or an unnamed file in a directory. */
static bool creates(uint64_t fl)
{
	return (fl & O_CREAT) || is_tmpfile(fl);
}

static unsigned open_access(uint64_t fl)
{
	unsigned acc;

	if (fl & O_PATH)
		return SB_ACC_READ;
	switch (fl & O_ACCMODE) {
	case O_RDONLY: acc = SB_ACC_READ; break;
	case O_WRONLY: acc = SB_ACC_WRITE; break;
	default: acc = SB_ACC_READ | SB_ACC_WRITE; break;
	}
	if ((fl & O_TRUNC) || creates(fl))
		acc |= SB_ACC_WRITE;
	return acc;
}

static unsigned open_res(uint64_t fl)
{
	bool excl = (fl & O_CREAT) && (fl & O_EXCL);

	return ((fl & O_NOFOLLOW) || excl ? 0 : AR_FOLLOW) | (creates(fl) ? AR_CREATE : 0);
}

static int dec_open_common(struct sb_acall *call, pid_t tid, int dirfd, uint64_t pathp, uint64_t fl,
			   uint64_t mode, bool at)
{
	struct sb_abuf *b = &call->tb;

	if (at) {
		put_dirfd(b, dirfd);
		sb_abuf_puts(b, ", ");
	}
	put_path(b, tid, pathp, call->path);
	sb_abuf_puts(b, ", ");
	put_open_flags(b, fl);
	if (creates(fl)) {
		sb_abuf_puts(b, ", ");
		put_mode(b, mode);
	}
	judge_path(call, AJ_OPEN, dirfd, open_res(fl), open_access(fl));
	return 0;
}

static int dec_open(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	return dec_open_common(call, t->tid, AT_FDCWD, call->args[0], call->args[1], call->args[2], false);
}

static int dec_openat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	return dec_open_common(call, t->tid, (int)call->args[0], call->args[1], call->args[2], call->args[3], true);
}

static int dec_creat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	put_mode(&call->tb, call->args[1]);
	judge_path(call, AJ_OPEN, AT_FDCWD, AR_FOLLOW | AR_CREATE, SB_ACC_WRITE);
	return 0;
}

static int dec_openat2(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag rtab[] = {
		{ RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV" }, { RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS" },
		{ RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS" }, { RESOLVE_BENEATH, "RESOLVE_BENEATH" },
		{ RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT" }, { RESOLVE_CACHED, "RESOLVE_CACHED" },
	};
	struct sb_abuf *b = &call->tb;
	struct open_how how;

	(void)c;
	put_dirfd(b, (int)call->args[0]);
	sb_abuf_puts(b, ", ");
	put_path(b, t->tid, call->args[1], call->path);
	sb_abuf_puts(b, ", ");
	if (call->args[3] < sizeof(how) || sb_aread(t->tid, call->args[2], &how, sizeof(how)) != 0) {
		put_addr(b, call->args[2]);
		sb_abuf_printf(b, ", %" PRIu64, call->args[3]);
		judge_path(call, AJ_OPEN, (int)call->args[0], AR_FOLLOW, SB_ACC_READ);
		return 0;
	}
	sb_abuf_puts(b, "{flags=");
	put_open_flags(b, how.flags);
	if (creates(how.flags)) {
		sb_abuf_puts(b, ", mode=");
		put_mode(b, how.mode);
	}
	sb_abuf_puts(b, ", resolve=");
	FLAGS(b, rtab, how.resolve, "0");
	sb_abuf_printf(b, "}, %" PRIu64, call->args[3]);
	judge_path(call, AJ_OPEN, (int)call->args[0], open_res(how.flags), open_access(how.flags));
	return 0;
}

static void put_stat(struct sb_abuf *b, pid_t tid, uint64_t addr)
{
	struct stat st;

	if (sb_aread(tid, addr, &st, sizeof(st)) != 0) {
		put_addr(b, addr);
		return;
	}
	sb_abuf_puts(b, "{st_mode=");
	put_type_mode(b, st.st_mode);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		sb_abuf_printf(b, ", st_rdev=makedev(%#x, %#x), ...}", major(st.st_rdev), minor(st.st_rdev));
	else
		sb_abuf_printf(b, ", st_size=%lld, ...}", (long long)st.st_size);
}

/* stat, lstat: path, buffer (at exit). */
static int dec_stat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	judge_path(call, AJ_META, AT_FDCWD, call->sys->name[0] == 'l' ? 0 : AR_FOLLOW, SB_ACC_READ);
	return 0;
}

static void exit_stat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
		      bool is_error)
{
	(void)c;
	(void)rval;
	if (is_error)
		put_addr(&call->tb, call->args[1]);
	else
		put_stat(&call->tb, t->tid, call->args[1]);
}

/* A descriptor with "" and AT_EMPTY_PATH is fstat(): no path is touched,
 * the supervisor lets it through in the kernel, it is not shown. */
static bool is_fd_query(const struct sb_acall *call, int dirfd, uint64_t flags)
{
	return (flags & AT_EMPTY_PATH) && dirfd >= 0 && call->path[0] == '\0';
}

static int dec_newfstatat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	put_dirfd(&call->tb, (int)call->args[0]);
	sb_abuf_puts(&call->tb, ", ");
	put_path(&call->tb, t->tid, call->args[1], call->path);
	if (is_fd_query(call, (int)call->args[0], call->args[3]))
		return -ENOENT;
	sb_abuf_puts(&call->tb, ", ");
	judge_path(call, AJ_META, (int)call->args[0],
		   (call->args[3] & AT_SYMLINK_NOFOLLOW ? 0 : AR_FOLLOW) |
			   (call->args[3] & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_READ);
	return 0;
}

static void exit_newfstatat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
			    bool is_error)
{
	(void)c;
	(void)rval;
	if (is_error)
		put_addr(&call->tb, call->args[2]);
	else
		put_stat(&call->tb, t->tid, call->args[2]);
	sb_abuf_puts(&call->tb, ", ");
	FLAGS(&call->tb, at_flags, call->args[3], "0");
}

static int dec_statx(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag mask[] = {
		{ 0xfff, "STATX_ALL" }, { 0x7ff, "STATX_BASIC_STATS" }, { 0x1, "STATX_TYPE" },
		{ 0x2, "STATX_MODE" }, { 0x4, "STATX_NLINK" }, { 0x8, "STATX_UID" }, { 0x10, "STATX_GID" },
		{ 0x20, "STATX_ATIME" }, { 0x40, "STATX_MTIME" }, { 0x80, "STATX_CTIME" },
		{ 0x100, "STATX_INO" }, { 0x200, "STATX_SIZE" }, { 0x400, "STATX_BLOCKS" },
		{ 0x800, "STATX_BTIME" }, { 0x1000, "STATX_MNT_ID" }, { 0x2000, "STATX_DIOALIGN" },
	};
	struct sb_abuf *b = &call->tb;

	(void)c;
	put_dirfd(b, (int)call->args[0]);
	sb_abuf_puts(b, ", ");
	put_path(b, t->tid, call->args[1], call->path);
	if (is_fd_query(call, (int)call->args[0], call->args[2]))
		return -ENOENT;
	sb_abuf_puts(b, ", ");
	FLAGS(b, at_flags, call->args[2], "AT_STATX_SYNC_AS_STAT");
	sb_abuf_puts(b, ", ");
	FLAGS(b, mask, call->args[3], "0");
	sb_abuf_puts(b, ", ");
	judge_path(call, AJ_META, (int)call->args[0],
		   (call->args[2] & AT_SYMLINK_NOFOLLOW ? 0 : AR_FOLLOW) |
			   (call->args[2] & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_READ);
	return 0;
}

static void exit_statx(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
		       bool is_error)
{
	struct statx stx;

	(void)c;
	(void)rval;
	if (is_error || sb_aread(t->tid, call->args[4], &stx, sizeof(stx)) != 0) {
		put_addr(&call->tb, call->args[4]);
		return;
	}
	sb_abuf_puts(&call->tb, "{stx_mode=");
	put_type_mode(&call->tb, stx.stx_mode);
	sb_abuf_printf(&call->tb, ", stx_size=%llu, ...}", (unsigned long long)stx.stx_size);
}

static int dec_statfs(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	judge_path(call, AJ_META, AT_FDCWD, AR_FOLLOW, SB_ACC_READ);
	return 0;
}

static void exit_statfs(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
			bool is_error)
{
	struct statfs sf;

	(void)c;
	(void)rval;
	if (is_error || sb_aread(t->tid, call->args[1], &sf, sizeof(sf)) != 0) {
		put_addr(&call->tb, call->args[1]);
		return;
	}
	sb_abuf_printf(&call->tb, "{f_type=%#lx, f_bsize=%ld, ...}", (unsigned long)sf.f_type, (long)sf.f_bsize);
}

static int dec_access(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag fl[] = { { AT_EACCESS, "AT_EACCESS" }, { AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" },
					  { AT_EMPTY_PATH, "AT_EMPTY_PATH" } };
	struct sb_abuf *b = &call->tb;
	bool at = call->sys->name[0] == 'f';
	bool two = strcmp(call->sys->name, "faccessat2") == 0;
	int dirfd = at ? (int)call->args[0] : AT_FDCWD;
	uint64_t mode = call->args[at ? 2 : 1], flags = two ? call->args[3] : 0;

	(void)c;
	if (at) {
		put_dirfd(b, dirfd);
		sb_abuf_puts(b, ", ");
	}
	put_path(b, t->tid, call->args[at ? 1 : 0], call->path);
	sb_abuf_puts(b, ", ");
	put_access_mode(b, mode);
	if (two) {
		sb_abuf_puts(b, ", ");
		FLAGS(b, fl, flags, "0");
	}
	judge_path(call, AJ_META, dirfd,
		   (flags & AT_SYMLINK_NOFOLLOW ? 0 : AR_FOLLOW) | (flags & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_READ | (mode & W_OK ? SB_ACC_WRITE : 0));
	return 0;
}

static int dec_readlink(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	bool at = strcmp(call->sys->name, "readlinkat") == 0;

	(void)c;
	if (at) {
		put_dirfd(&call->tb, (int)call->args[0]);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[at ? 1 : 0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	judge_path(call, AJ_META, at ? (int)call->args[0] : AT_FDCWD, 0, SB_ACC_READ);
	return 0;
}

static void exit_readlink(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
			  bool is_error)
{
	bool at = strcmp(call->sys->name, "readlinkat") == 0;
	uint64_t buf = call->args[at ? 2 : 1], size = call->args[at ? 3 : 2];
	char tmp[PATH_MAX];
	size_t n = !is_error && rval > 0 ? (size_t)rval : 0;

	(void)c;
	if (n > sizeof(tmp))
		n = sizeof(tmp);
	if (is_error || sb_aread(t->tid, buf, tmp, n) != 0)
		put_addr(&call->tb, buf);
	else
		sb_abuf_quote(&call->tb, tmp, n, PATH_MAX);
	sb_abuf_printf(&call->tb, ", %" PRIu64, size);
}

/* One path and nothing else: unlink, rmdir, chdir, chroot. */
static int dec_path1(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	const char *n = call->sys->name;
	bool meta = strcmp(n, "chdir") == 0 || strcmp(n, "chroot") == 0;

	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path);
	judge_path(call, meta ? AJ_META : AJ_WRITE, AT_FDCWD, meta ? AR_FOLLOW : 0,
		   meta ? SB_ACC_READ : SB_ACC_WRITE);
	return 0;
}

static int dec_unlinkat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag fl[] = { { AT_REMOVEDIR, "AT_REMOVEDIR" } };

	(void)c;
	put_dirfd(&call->tb, (int)call->args[0]);
	sb_abuf_puts(&call->tb, ", ");
	put_path(&call->tb, t->tid, call->args[1], call->path);
	sb_abuf_puts(&call->tb, ", ");
	FLAGS(&call->tb, fl, call->args[2], "0");
	judge_path(call, AJ_WRITE, (int)call->args[0], 0, SB_ACC_WRITE);
	return 0;
}

/* mkdir, chmod (path, mode); mkdirat, fchmodat (dirfd, path, mode). */
static int dec_path_mode(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	bool at = strcmp(call->sys->name, "mkdirat") == 0 || strcmp(call->sys->name, "fchmodat") == 0;
	bool mk = strncmp(call->sys->name, "mkdir", 5) == 0;

	(void)c;
	if (at) {
		put_dirfd(&call->tb, (int)call->args[0]);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[at ? 1 : 0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	put_mode(&call->tb, call->args[at ? 2 : 1]);
	judge_path(call, AJ_WRITE, at ? (int)call->args[0] : AT_FDCWD, mk ? AR_CREATE : AR_FOLLOW, SB_ACC_WRITE);
	return 0;
}

static int dec_mknod(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	bool at = strcmp(call->sys->name, "mknodat") == 0;
	uint64_t mode = call->args[at ? 2 : 1], dev = call->args[at ? 3 : 2];

	(void)c;
	if (at) {
		put_dirfd(&call->tb, (int)call->args[0]);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[at ? 1 : 0], call->path);
	sb_abuf_puts(&call->tb, ", ");
	put_type_mode(&call->tb, mode);
	if (S_ISCHR(mode) || S_ISBLK(mode))
		sb_abuf_printf(&call->tb, ", makedev(%#x, %#x)", major(dev), minor(dev));
	judge_path(call, AJ_WRITE, at ? (int)call->args[0] : AT_FDCWD, AR_CREATE, SB_ACC_WRITE);
	return 0;
}

static void put_id(struct sb_abuf *b, uint64_t id)
{
	if ((uint32_t)id == (uint32_t)-1)
		sb_abuf_puts(b, "-1");
	else
		sb_abuf_printf(b, "%u", (unsigned)id);
}

static int dec_chown(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	const char *n = call->sys->name;
	bool at = strcmp(n, "fchownat") == 0;
	unsigned i = at ? 1 : 0;

	(void)c;
	if (at) {
		put_dirfd(&call->tb, (int)call->args[0]);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[i], call->path);
	sb_abuf_puts(&call->tb, ", ");
	put_id(&call->tb, call->args[i + 1]);
	sb_abuf_puts(&call->tb, ", ");
	put_id(&call->tb, call->args[i + 2]);
	if (at) {
		sb_abuf_puts(&call->tb, ", ");
		FLAGS(&call->tb, at_flags, call->args[4], "0");
	}
	judge_path(call, AJ_WRITE, at ? (int)call->args[0] : AT_FDCWD,
		   strcmp(n, "lchown") == 0 || (at && (call->args[4] & AT_SYMLINK_NOFOLLOW)) ? 0 : AR_FOLLOW,
		   SB_ACC_WRITE);
	return 0;
}

static int dec_truncate(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path);
	sb_abuf_printf(&call->tb, ", %" PRId64, (int64_t)call->args[1]);
	judge_path(call, AJ_WRITE, AT_FDCWD, AR_FOLLOW, SB_ACC_WRITE);
	return 0;
}

static void put_timespec(struct sb_abuf *b, const struct timespec *ts)
{
	if (ts->tv_nsec == UTIME_NOW)
		sb_abuf_puts(b, "UTIME_NOW");
	else if (ts->tv_nsec == UTIME_OMIT)
		sb_abuf_puts(b, "UTIME_OMIT");
	else
		sb_abuf_printf(b, "{tv_sec=%lld, tv_nsec=%ld}", (long long)ts->tv_sec, (long)ts->tv_nsec);
}

static int dec_utimensat(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	struct timespec ts[2];

	(void)c;
	/* utimensat(fd, NULL, ...) is futimens(): no path. */
	if (call->args[1] == 0)
		return -ENOENT;
	put_dirfd(&call->tb, (int)call->args[0]);
	sb_abuf_puts(&call->tb, ", ");
	put_path(&call->tb, t->tid, call->args[1], call->path);
	sb_abuf_puts(&call->tb, ", ");
	if (call->args[2] && sb_aread(t->tid, call->args[2], ts, sizeof(ts)) == 0) {
		sb_abuf_puts(&call->tb, "[");
		put_timespec(&call->tb, &ts[0]);
		sb_abuf_puts(&call->tb, ", ");
		put_timespec(&call->tb, &ts[1]);
		sb_abuf_puts(&call->tb, "]");
	} else {
		put_addr(&call->tb, call->args[2]);
	}
	sb_abuf_puts(&call->tb, ", ");
	FLAGS(&call->tb, at_flags, call->args[3], "0");
	judge_path(call, AJ_WRITE, (int)call->args[0],
		   (call->args[3] & AT_SYMLINK_NOFOLLOW ? 0 : AR_FOLLOW) |
			   (call->args[3] & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_WRITE);
	return 0;
}

/* rename, link: (old, new); renameat(2), linkat: (olddir, old, newdir, new[, flags]). */
static int dec_two_paths(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag rflags[] = { { RENAME_NOREPLACE, "RENAME_NOREPLACE" },
					      { RENAME_EXCHANGE, "RENAME_EXCHANGE" },
					      { RENAME_WHITEOUT, "RENAME_WHITEOUT" } };
	static const struct flag lflags[] = { { AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW" },
					      { AT_EMPTY_PATH, "AT_EMPTY_PATH" } };
	const char *n = call->sys->name;
	bool at = strstr(n, "at") != NULL;	/* renameat, renameat2, linkat */
	bool link = strncmp(n, "link", 4) == 0;
	struct sb_abuf *b = &call->tb;
	int od = at ? (int)call->args[0] : AT_FDCWD, nd = at ? (int)call->args[2] : AT_FDCWD;
	uint64_t flags = 0;

	(void)c;
	if (at) {
		put_dirfd(b, od);
		sb_abuf_puts(b, ", ");
	}
	put_path(b, t->tid, call->args[at ? 1 : 0], call->path);
	sb_abuf_puts(b, ", ");
	if (at) {
		put_dirfd(b, nd);
		sb_abuf_puts(b, ", ");
	}
	put_path(b, t->tid, call->args[at ? 3 : 1], call->path2);
	if (strcmp(n, "renameat2") == 0 || strcmp(n, "linkat") == 0) {
		flags = call->args[4];
		sb_abuf_puts(b, ", ");
		if (link)
			FLAGS(b, lflags, flags, "0");
		else
			FLAGS(b, rflags, flags, "0");
	}
	judge_path(call, AJ_WRITE, od,
		   (link && (flags & AT_SYMLINK_FOLLOW) ? AR_FOLLOW : 0) | (flags & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_WRITE);
	call->has_path2 = true;
	call->dirfd2 = nd;
	call->res2 = AR_CREATE;
	return 0;
}

/* symlink(target, linkpath), symlinkat(target, newdirfd, linkpath): the
 * target is text, only the new name is a write. */
static int dec_symlink(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	bool at = strcmp(call->sys->name, "symlinkat") == 0;
	int nd = at ? (int)call->args[1] : AT_FDCWD;

	(void)c;
	put_path(&call->tb, t->tid, call->args[0], call->path2);
	sb_abuf_puts(&call->tb, ", ");
	if (at) {
		put_dirfd(&call->tb, nd);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[at ? 2 : 1], call->path);
	judge_path(call, AJ_WRITE, nd, AR_CREATE, SB_ACC_WRITE);
	return 0;
}

/* argv as strace shows it: ["ls", "-l"], entries cut at 32 bytes, 32 of them. */
static void put_argv(struct sb_abuf *b, pid_t tid, uint64_t argv)
{
	uint64_t p;
	char s[SB_A_STRMAX + 2];
	size_t i;

	if (!argv || sb_aread(tid, argv, &p, sizeof(p)) != 0) {
		put_addr(b, argv);
		return;
	}
	sb_abuf_puts(b, "[");
	for (i = 0; i < SB_A_ARGV_MAX; i++) {
		int rc;

		if (sb_aread(tid, argv + i * sizeof(p), &p, sizeof(p)) != 0 || !p)
			break;
		if (i)
			sb_abuf_puts(b, ", ");
		rc = sb_aread_str(tid, p, s, sizeof(s));
		if (rc == 0 || rc == -ENAMETOOLONG)
			sb_abuf_quote(b, s, strlen(s), SB_A_STRMAX);
		else
			put_addr(b, p);
	}
	if (i == SB_A_ARGV_MAX && sb_aread(tid, argv + i * sizeof(p), &p, sizeof(p)) == 0 && p)
		sb_abuf_puts(b, ", ...");
	sb_abuf_puts(b, "]");
}

static void put_envp(struct sb_abuf *b, pid_t tid, uint64_t envp)
{
	uint64_t p;
	size_t n = 0;

	put_addr(b, envp);
	if (!envp)
		return;
	while (n < SB_A_ENV_SCAN && sb_aread(tid, envp + n * sizeof(p), &p, sizeof(p)) == 0 && p)
		n++;
	sb_abuf_printf(b, " /* %zu var%s */", n, n == 1 ? "" : "s");
}

static int dec_execve(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	static const struct flag fl[] = { { AT_EMPTY_PATH, "AT_EMPTY_PATH" },
					  { AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" } };
	bool at = strcmp(call->sys->name, "execveat") == 0;
	unsigned i = at ? 1 : 0;
	uint64_t flags = at ? call->args[4] : 0;

	(void)c;
	if (at) {
		put_dirfd(&call->tb, (int)call->args[0]);
		sb_abuf_puts(&call->tb, ", ");
	}
	put_path(&call->tb, t->tid, call->args[i], call->path);
	sb_abuf_puts(&call->tb, ", ");
	put_argv(&call->tb, t->tid, call->args[i + 1]);
	sb_abuf_puts(&call->tb, ", ");
	put_envp(&call->tb, t->tid, call->args[i + 2]);
	if (at) {
		sb_abuf_puts(&call->tb, ", ");
		FLAGS(&call->tb, fl, flags, "0");
	}
	judge_path(call, AJ_EXEC, at ? (int)call->args[0] : AT_FDCWD,
		   (flags & AT_SYMLINK_NOFOLLOW ? 0 : AR_FOLLOW) | (flags & AT_EMPTY_PATH ? AR_EMPTY : 0),
		   SB_ACC_EXEC);
	return 0;
}

/* ---- network family ------------------------------------------------------------------- */

static void put_socket_type(struct sb_abuf *b, uint64_t type)
{
	static const struct flag tf[] = { { SOCK_NONBLOCK, "SOCK_NONBLOCK" }, { SOCK_CLOEXEC, "SOCK_CLOEXEC" } };
	static const char *const names[] = { [SOCK_STREAM] = "SOCK_STREAM", [SOCK_DGRAM] = "SOCK_DGRAM",
					      [SOCK_RAW] = "SOCK_RAW", [SOCK_RDM] = "SOCK_RDM",
					      [SOCK_SEQPACKET] = "SOCK_SEQPACKET" };
	uint64_t base = type & 0xf, rest = type & ~(uint64_t)0xf;

	if (base < sizeof(names) / sizeof(names[0]) && names[base])
		sb_abuf_puts(b, names[base]);
	else
		sb_abuf_printf(b, "%#" PRIx64, base);
	if (rest) {
		sb_abuf_puts(b, "|");
		FLAGS(b, tf, rest, "0");
	}
}

static int dec_socket(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	int dom = (int)call->args[0], proto = (int)call->args[2];
	const char *fam = sb_sa_family_name(dom);

	(void)c;
	(void)t;
	if (fam)
		sb_abuf_puts(&call->tb, fam);
	else
		sb_abuf_printf(&call->tb, "%d", dom);
	sb_abuf_puts(&call->tb, ", ");
	put_socket_type(&call->tb, call->args[1]);
	if ((dom == AF_INET || dom == AF_INET6) && proto == IPPROTO_TCP)
		sb_abuf_puts(&call->tb, ", IPPROTO_TCP");
	else if ((dom == AF_INET || dom == AF_INET6) && proto == IPPROTO_UDP)
		sb_abuf_puts(&call->tb, ", IPPROTO_UDP");
	else if ((dom == AF_INET || dom == AF_INET6) && proto == IPPROTO_IP)
		sb_abuf_puts(&call->tb, ", IPPROTO_IP");
	else if (dom == AF_NETLINK && proto == 0)
		sb_abuf_puts(&call->tb, ", NETLINK_ROUTE");
	else
		sb_abuf_printf(&call->tb, ", %d", proto);
	return 0;
}

/* connect, bind: (fd, addr, len). */
static int dec_connect(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	sb_abuf_printf(&call->tb, "%d, ", (int)call->args[0]);
	if (put_sockaddr(&call->tb, t->tid, call->args[1], call->args[2], call, 0) == 0)
		call->n_addrs = 1;
	sb_abuf_printf(&call->tb, ", %u", (unsigned)call->args[2]);
	call->judge = AJ_NET;
	call->sockfd = (int)call->args[0];
	call->op = call->sys->name[0] == 'b' ? ANET_BIND : ANET_CONNECT;
	return 0;
}

static int dec_listen(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	(void)t;
	sb_abuf_printf(&call->tb, "%d, %d", (int)call->args[0], (int)call->args[1]);
	call->judge = AJ_LISTEN;
	call->sockfd = (int)call->args[0];
	call->op = ANET_BIND;
	return 0;
}

/* accept, accept4: the peer's address exists only at exit. */
static int dec_accept(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	uint32_t in = 0;

	(void)c;
	sb_abuf_printf(&call->tb, "%d, ", (int)call->args[0]);
	/* The length the program offered, shown as strace's [in => out]. */
	if (call->args[2] && sb_aread(t->tid, call->args[2], &in, sizeof(in)) == 0)
		call->salen[0] = in;
	else
		call->salen[0] = 0;
	return 0;
}

static void exit_accept(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
			bool is_error)
{
	static const struct flag fl[] = { { SOCK_NONBLOCK, "SOCK_NONBLOCK" }, { SOCK_CLOEXEC, "SOCK_CLOEXEC" } };
	struct sb_abuf *b = &call->tb;
	uint32_t out = 0;

	(void)c;
	(void)rval;
	if (!call->args[1]) {
		sb_abuf_puts(b, "NULL, NULL");
	} else if (is_error || sb_aread(t->tid, call->args[2], &out, sizeof(out)) != 0) {
		put_addr(b, call->args[1]);
		sb_abuf_puts(b, ", ");
		put_addr(b, call->args[2]);
	} else {
		put_sockaddr(b, t->tid, call->args[1], out < call->salen[0] ? out : call->salen[0], call, 0);
		if (out != call->salen[0])
			sb_abuf_printf(b, ", [%u => %u]", (unsigned)call->salen[0], (unsigned)out);
		else
			sb_abuf_printf(b, ", [%u]", (unsigned)out);
	}
	if (strcmp(call->sys->name, "accept4") == 0) {
		sb_abuf_puts(b, ", ");
		FLAGS(b, fl, call->args[3], "0");
	}
}

/* sendto with a destination; without one it is a write on a connected
 * socket, not an access (the supervisor does not see it either). */
static int dec_sendto(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	struct sb_abuf *b = &call->tb;

	(void)c;
	if (!call->args[4])
		return -ENOENT;
	sb_abuf_printf(b, "%d, ", (int)call->args[0]);
	put_data(b, t->tid, call->args[1], call->args[2]);
	sb_abuf_printf(b, ", %" PRIu64 ", ", call->args[2]);
	put_msg_flags(b, call->args[3]);
	sb_abuf_puts(b, ", ");
	if (put_sockaddr(b, t->tid, call->args[4], call->args[5], call, 0) == 0)
		call->n_addrs = 1;
	sb_abuf_printf(b, ", %u", (unsigned)call->args[5]);
	call->judge = AJ_NET;
	call->sockfd = (int)call->args[0];
	call->op = ANET_SEND;
	call->msgflags = (int)call->args[3];
	return 0;
}

/* One msghdr: its address into slot (when there is one), shown briefly. */
static bool put_msghdr(struct sb_abuf *b, pid_t tid, const struct msghdr *m, struct sb_acall *call, size_t slot)
{
	struct iovec iov;
	bool named = m->msg_name && m->msg_namelen;

	sb_abuf_puts(b, "{msg_name=");
	if (named && slot < SB_A_MAX_ADDRS &&
	    put_sockaddr(b, tid, (uint64_t)(uintptr_t)m->msg_name, m->msg_namelen, call, slot) == 0)
		call->n_addrs = slot + 1;
	else if (!named)
		sb_abuf_puts(b, "NULL");
	else
		put_addr(b, (uint64_t)(uintptr_t)m->msg_name);
	sb_abuf_printf(b, ", msg_namelen=%u, msg_iov=", (unsigned)m->msg_namelen);
	if (m->msg_iovlen && sb_aread(tid, (uint64_t)(uintptr_t)m->msg_iov, &iov, sizeof(iov)) == 0) {
		sb_abuf_puts(b, "[{iov_base=");
		put_data(b, tid, (uint64_t)(uintptr_t)iov.iov_base, iov.iov_len);
		sb_abuf_printf(b, ", iov_len=%zu}%s]", iov.iov_len, m->msg_iovlen > 1 ? ", ..." : "");
	} else {
		put_addr(b, (uint64_t)(uintptr_t)m->msg_iov);
	}
	sb_abuf_printf(b, ", msg_iovlen=%zu, msg_controllen=%zu, msg_flags=0}", (size_t)m->msg_iovlen,
		       (size_t)m->msg_controllen);
	return named;
}

static int dec_sendmsg(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	struct msghdr m;

	(void)c;
	if (sb_aread(t->tid, call->args[1], &m, sizeof(m)) != 0 || !m.msg_name || !m.msg_namelen)
		return -ENOENT;
	sb_abuf_printf(&call->tb, "%d, ", (int)call->args[0]);
	put_msghdr(&call->tb, t->tid, &m, call, 0);
	sb_abuf_puts(&call->tb, ", ");
	put_msg_flags(&call->tb, call->args[2]);
	call->judge = AJ_NET;
	call->sockfd = (int)call->args[0];
	call->op = ANET_SEND;
	call->msgflags = (int)call->args[2];
	return 0;
}

static int dec_sendmmsg(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	unsigned vlen = (unsigned)call->args[2];
	struct mmsghdr mm;
	bool any = false;

	(void)c;
	/* Shown only when some message names a destination. */
	for (unsigned i = 0; i < vlen && i < SB_A_MAX_ADDRS && !any; i++)
		if (sb_aread(t->tid, call->args[1] + i * sizeof(mm), &mm, sizeof(mm)) == 0 && mm.msg_hdr.msg_name &&
		    mm.msg_hdr.msg_namelen)
			any = true;
	if (!any)
		return -ENOENT;
	sb_abuf_printf(&call->tb, "%d, [", (int)call->args[0]);
	for (unsigned i = 0; i < vlen && i < SB_A_MAX_ADDRS; i++) {
		if (sb_aread(t->tid, call->args[1] + i * sizeof(mm), &mm, sizeof(mm)) != 0)
			break;
		sb_abuf_puts(&call->tb, i ? ", {msg_hdr=" : "{msg_hdr=");
		/* Slots stay in message order; an unnamed message leaves its
		 * slot's length 0 (judged as "no destination"). */
		call->salen[i] = 0;
		put_msghdr(&call->tb, t->tid, &mm.msg_hdr, call, i);
		if (call->n_addrs < i + 1)
			call->n_addrs = i + 1;
		sb_abuf_puts(&call->tb, "}");
	}
	sb_abuf_printf(&call->tb, "%s], %u, ", vlen > SB_A_MAX_ADDRS ? ", ..." : "", vlen);
	put_msg_flags(&call->tb, call->args[3]);
	call->judge = AJ_NET;
	call->sockfd = (int)call->args[0];
	call->op = ANET_SEND;
	call->msgflags = (int)call->args[3];
	return 0;
}

/* ---- process family -------------------------------------------------------------------- */

static int dec_clone(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	(void)t;
	sb_abuf_puts(&call->tb, "child_stack=");
	put_addr(&call->tb, call->args[1]);
	sb_abuf_puts(&call->tb, ", flags=");
	put_clone_flags(&call->tb, call->args[0], true);
	call->judge = AJ_CLONE;
	call->clone_flags = call->args[0] & ~(uint64_t)0xff;
	return 0;
}

static int dec_clone3(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	struct clone_args ca;
	struct sb_abuf *b = &call->tb;

	(void)c;
	memset(&ca, 0, sizeof(ca));
	call->judge = AJ_CLONE;
	if (call->args[1] < CLONE_ARGS_SIZE_VER0 ||
	    sb_aread(t->tid, call->args[0], &ca, CLONE_ARGS_SIZE_VER0) != 0) {
		put_addr(b, call->args[0]);
		/* Unreadable flags: judged as the process creation it may be. */
		call->clone_flags = 0;
	} else {
		sb_abuf_puts(b, "{flags=");
		put_clone_flags(b, ca.flags, false);
		sb_abuf_puts(b, ", exit_signal=");
		put_signal(b, (int)ca.exit_signal);
		sb_abuf_puts(b, ", stack=");
		put_addr(b, ca.stack);
		sb_abuf_printf(b, ", stack_size=%#llx}", (unsigned long long)ca.stack_size);
		call->clone_flags = ca.flags;
	}
	sb_abuf_printf(b, ", %" PRIu64, call->args[1]);
	return 0;
}

static int dec_fork(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	(void)c;
	(void)t;
	call->judge = AJ_CLONE;
	call->clone_flags = 0;
	return 0;
}

static int dec_kill(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	const char *n = call->sys->name;
	int sig;

	(void)c;
	(void)t;
	call->judge = AJ_KILL;
	if (strcmp(n, "tgkill") == 0) {
		call->sig_pid = (pid_t)call->args[0];
		call->sig_tid = (pid_t)call->args[1];
		sig = (int)call->args[2];
		sb_abuf_printf(&call->tb, "%d, %d, ", call->sig_pid, call->sig_tid);
	} else if (strcmp(n, "tkill") == 0) {
		call->sig_tid = (pid_t)call->args[0];
		sig = (int)call->args[1];
		sb_abuf_printf(&call->tb, "%d, ", call->sig_tid);
	} else {
		call->sig_pid = (pid_t)call->args[0];
		sig = (int)call->args[1];
		sb_abuf_printf(&call->tb, "%d, ", call->sig_pid);
		if (call->sig_pid < -1) {
			call->sig_pid = -call->sig_pid;
			call->sig_group = true;
		}
	}
	put_signal(&call->tb, sig);
	return 0;
}

/* ---- the table ------------------------------------------------------------------------- */

#define ROW(name, entry, exit) { __NR_##name, #name, entry, exit }

static const struct sb_asys rows[] = {
#ifdef __NR_open
	ROW(open, dec_open, NULL),
#endif
	ROW(openat, dec_openat, NULL),
#ifdef __NR_openat2
	ROW(openat2, dec_openat2, NULL),
#endif
#ifdef __NR_creat
	ROW(creat, dec_creat, NULL),
#endif
#ifdef __NR_stat
	ROW(stat, dec_stat, exit_stat),
	ROW(lstat, dec_stat, exit_stat),
#endif
#ifdef __NR_newfstatat
	ROW(newfstatat, dec_newfstatat, exit_newfstatat),
#endif
	ROW(statx, dec_statx, exit_statx),
	ROW(statfs, dec_statfs, exit_statfs),
#ifdef __NR_access
	ROW(access, dec_access, NULL),
#endif
	ROW(faccessat, dec_access, NULL),
#ifdef __NR_faccessat2
	ROW(faccessat2, dec_access, NULL),
#endif
#ifdef __NR_readlink
	ROW(readlink, dec_readlink, exit_readlink),
#endif
	ROW(readlinkat, dec_readlink, exit_readlink),
	ROW(chdir, dec_path1, NULL),
	ROW(chroot, dec_path1, NULL),
#ifdef __NR_mkdir
	ROW(mkdir, dec_path_mode, NULL),
#endif
	ROW(mkdirat, dec_path_mode, NULL),
#ifdef __NR_unlink
	ROW(unlink, dec_path1, NULL),
	ROW(rmdir, dec_path1, NULL),
#endif
	ROW(unlinkat, dec_unlinkat, NULL),
#ifdef __NR_rename
	ROW(rename, dec_two_paths, NULL),
#endif
#ifdef __NR_renameat
	ROW(renameat, dec_two_paths, NULL),
#endif
	ROW(renameat2, dec_two_paths, NULL),
#ifdef __NR_link
	ROW(link, dec_two_paths, NULL),
	ROW(symlink, dec_symlink, NULL),
#endif
	ROW(linkat, dec_two_paths, NULL),
	ROW(symlinkat, dec_symlink, NULL),
#ifdef __NR_chmod
	ROW(chmod, dec_path_mode, NULL),
	ROW(chown, dec_chown, NULL),
	ROW(lchown, dec_chown, NULL),
	ROW(mknod, dec_mknod, NULL),
#endif
	ROW(fchmodat, dec_path_mode, NULL),
	ROW(fchownat, dec_chown, NULL),
	ROW(mknodat, dec_mknod, NULL),
	ROW(truncate, dec_truncate, NULL),
	ROW(utimensat, dec_utimensat, NULL),
	ROW(execve, dec_execve, NULL),
	ROW(execveat, dec_execve, NULL),

	ROW(socket, dec_socket, NULL),
	ROW(connect, dec_connect, NULL),
	ROW(bind, dec_connect, NULL),
	ROW(listen, dec_listen, NULL),
#ifdef __NR_accept
	ROW(accept, dec_accept, exit_accept),
#endif
	ROW(accept4, dec_accept, exit_accept),
	ROW(sendto, dec_sendto, NULL),
	ROW(sendmsg, dec_sendmsg, NULL),
	ROW(sendmmsg, dec_sendmmsg, NULL),

	ROW(clone, dec_clone, NULL),
#ifdef __NR_clone3
	ROW(clone3, dec_clone3, NULL),
#endif
#ifdef __NR_fork
	ROW(fork, dec_fork, NULL),
	ROW(vfork, dec_fork, NULL),
#endif
	ROW(kill, dec_kill, NULL),
	ROW(tkill, dec_kill, NULL),
	ROW(tgkill, dec_kill, NULL),
};

static const struct sb_asys *by_nr[SB_A_NR_MAX];
static pthread_once_t by_nr_once = PTHREAD_ONCE_INIT;

static void by_nr_init(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].nr >= 0 && rows[i].nr < SB_A_NR_MAX)
			by_nr[rows[i].nr] = &rows[i];
}

int sb_adecode_entry(struct sb_actx *c, const struct sb_atracee *t, int nr, const uint64_t args[6],
		     struct sb_acall *call)
{
	const struct sb_asys *s;

	pthread_once(&by_nr_once, by_nr_init);
	if (nr < 0 || nr >= SB_A_NR_MAX || !(s = by_nr[nr]))
		return -ENOENT;
	call->sys = s;
	call->nr = nr;
	memcpy(call->args, args, sizeof(call->args));
	sb_abuf_init(&call->tb, call->text, sizeof(call->text));
	call->judge = AJ_NONE;
	call->path[0] = call->path2[0] = '\0';
	call->has_path2 = false;
	call->n_addrs = 0;
	call->salen[0] = 0;
	call->sig_pid = call->sig_tid = 0;
	call->sig_group = false;
	call->msgflags = 0;
	call->has_event = call->quiet = false;
	call->deny = 0;
	return s->entry(c, t, call);
}

void sb_adecode_exit(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
		     bool is_error)
{
	if (call->sys->exit)
		call->sys->exit(c, t, call, rval, is_error);
}

const char *sb_adecode_name(const struct sb_acall *call)
{
	return call->sys->name;
}
