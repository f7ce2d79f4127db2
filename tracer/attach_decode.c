/* Attach mode: which calls are shown and how, strace-style (SPEC §8).
 *
 * One row per system call of the file, network and process families, with an
 * entry decoder and, where the call writes something back (a stat buffer, a
 * link target, an accepted address), an exit decoder.  Most rows are data:
 * what each argument is (a path, a descriptor, flags, a mode, a sockaddr...)
 * and how the call is judged, for one printer and one judge (dec_row,
 * exit_row); the calls that pass structures of their own (openat2, accept,
 * sendmsg, clone...) keep decoders of their own.  As in strace, the line is
 * built in two halves: the arguments the program passed are read at the
 * entry stop (execve's argv does not exist any more at its exit), the
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

/* What one argument of a table-driven row is, and so how it is shown.  A
 * row lists them in the call's argument order (K_END: no more). */
enum akind {
	K_END = 0,
	K_DIRFD,	/* AT_FDCWD or a descriptor: the first is path's directory, the second path2's */
	K_PATH,		/* the name judged, read into call->path */
	K_PATH2,	/* a second name, judged as created (rename, link), into call->path2 */
	K_TARGET,	/* a symlink's target: text, not judged, into call->path2 */
	K_OPENFL,	/* O_* */
	K_CMODE,	/* a mode, shown only when the open flags before it create (never first) */
	K_MODE,		/* permission bits */
	K_TMODE,	/* S_IF* and permission bits */
	K_DEV,		/* makedev(), shown only when the mode before it is a device's (never first) */
	K_AMODE,	/* R_OK|W_OK|X_OK */
	K_ID,		/* a uid or gid, -1 kept */
	K_OFF,		/* a signed length */
	K_SIZE,		/* an unsigned size */
	K_TIMES,	/* struct timespec[2] */
	K_ARGV,
	K_ENVP,
	K_INT,		/* a descriptor, a backlog: %d */
	K_DATA,		/* a buffer of the next argument's length, cut at SB_A_STRMAX (never last) */
	K_SOCKADDR,	/* a sockaddr of the next argument's length, kept for the judge (never last) */
	K_SALEN,	/* a socklen_t */
	K_MSGFL,	/* MSG_*, the judge's msgflags */
	K_DOMAIN,	/* AF_* */
	K_SOCKTYPE,	/* SOCK_* */
	K_PROTO,	/* IPPROTO_* for the first argument's domain */
	K_PID,		/* kill's target (negative: a group), tgkill's thread group */
	K_TID,		/* tkill's and tgkill's thread */
	K_SIG,
	/* Flag words (flagsets[], is_flags()); the first one of a row is the
	 * one its J_* options read. */
	K_ATFL,
	K_STATXFL,
	K_STATXMASK,
	K_ACCFL,
	K_UNLINKFL,
	K_RENAMEFL,
	K_LINKFL,
	K_EXECFL,
	/* Written by the kernel (is_out(): these stay last): shown at the exit
	 * stop, from the first one on. */
	K_STAT,
	K_STATX,
	K_STATFS,
	K_LINK,		/* readlink's buffer, rval bytes */
};

/* How a table-driven row is judged beyond its judge/res/access. */
enum {
	J_OPEN = 1u << 0,	/* res and access come from the open flags */
	J_WOK = 1u << 1,	/* W_OK in the access mode adds write access */
	J_NOFOLLOW = 1u << 2,	/* AT_SYMLINK_NOFOLLOW in the flag word drops AR_FOLLOW */
	J_FOLLOW = 1u << 3,	/* AT_SYMLINK_FOLLOW in the flag word adds AR_FOLLOW */
	J_EMPTY = 1u << 4,	/* AT_EMPTY_PATH in the flag word adds AR_EMPTY */
	J_FDQUERY = 1u << 5,	/* "" with AT_EMPTY_PATH on a descriptor is not shown (fstat) */
	J_NULLPATH = 1u << 6,	/* a NULL path is not shown (futimens) */
	J_NULLADDR = 1u << 7,	/* a NULL address is not shown (a send on a connected socket) */
	J_GROUP = 1u << 8,	/* a K_PID below -1 names a process group */
};

#define SB_A_NARGS 6

struct sb_asys {
	int nr;
	const char *name;
	sb_aentry_fn *entry;
	sb_aexit_fn *exit;		/* NULL: every argument was printed at entry */
	/* Table-driven rows (entry dec_row, exit exit_row): */
	uint8_t arg[SB_A_NARGS];	/* enum akind */
	enum sb_ajudge judge;
	unsigned res;			/* AR_*, before the J_* options */
	unsigned access;		/* SB_ACC_*, likewise */
	enum sb_anet_op op;		/* AJ_NET, AJ_LISTEN */
	unsigned opt;			/* J_* */
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
			/* The shortest octal form is safe only when no digit follows
			 * (a byte past `max` is not shown, and may not be there). */
			bool digit_next = i + 1 < len && i + 1 < max && s[i + 1] >= '0' && s[i + 1] <= '7';
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

/* The flag words of the rows, by kind. */
static const struct flag statx_mask[] = {
	{ 0xfff, "STATX_ALL" }, { 0x7ff, "STATX_BASIC_STATS" }, { 0x1, "STATX_TYPE" },
	{ 0x2, "STATX_MODE" }, { 0x4, "STATX_NLINK" }, { 0x8, "STATX_UID" }, { 0x10, "STATX_GID" },
	{ 0x20, "STATX_ATIME" }, { 0x40, "STATX_MTIME" }, { 0x80, "STATX_CTIME" },
	{ 0x100, "STATX_INO" }, { 0x200, "STATX_SIZE" }, { 0x400, "STATX_BLOCKS" },
	{ 0x800, "STATX_BTIME" }, { 0x1000, "STATX_MNT_ID" }, { 0x2000, "STATX_DIOALIGN" },
};
static const struct flag access_flags[] = { { AT_EACCESS, "AT_EACCESS" },
					    { AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" },
					    { AT_EMPTY_PATH, "AT_EMPTY_PATH" } };
static const struct flag unlink_flags[] = { { AT_REMOVEDIR, "AT_REMOVEDIR" } };
static const struct flag rename_flags[] = { { RENAME_NOREPLACE, "RENAME_NOREPLACE" },
					    { RENAME_EXCHANGE, "RENAME_EXCHANGE" },
					    { RENAME_WHITEOUT, "RENAME_WHITEOUT" } };
static const struct flag link_flags[] = { { AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW" },
					  { AT_EMPTY_PATH, "AT_EMPTY_PATH" } };
static const struct flag exec_flags[] = { { AT_EMPTY_PATH, "AT_EMPTY_PATH" },
					  { AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" } };

struct flagset {
	const struct flag *tab;
	size_t n;
	const char *zero;	/* shown for 0 */
};

#define FLAGSET(tab, zero) { (tab), sizeof(tab) / sizeof((tab)[0]), (zero) }

static const struct flagset flagsets[] = {
	[K_ATFL] = FLAGSET(at_flags, "0"),
	[K_STATXFL] = FLAGSET(at_flags, "AT_STATX_SYNC_AS_STAT"),
	[K_STATXMASK] = FLAGSET(statx_mask, "0"),
	[K_ACCFL] = FLAGSET(access_flags, "0"),
	[K_UNLINKFL] = FLAGSET(unlink_flags, "0"),
	[K_RENAMEFL] = FLAGSET(rename_flags, "0"),
	[K_LINKFL] = FLAGSET(link_flags, "0"),
	[K_EXECFL] = FLAGSET(exec_flags, "0"),
};

static bool is_flags(unsigned k)
{
	return k >= K_ATFL && k <= K_EXECFL;
}

/* Written by the kernel: shown at the exit stop. */
static bool is_out(unsigned k)
{
	return k >= K_STAT;
}

static void put_stat(struct sb_abuf *b, const struct stat *st)
{
	sb_abuf_puts(b, "{st_mode=");
	put_type_mode(b, st->st_mode);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		sb_abuf_printf(b, ", st_rdev=makedev(%#x, %#x), ...}", major(st->st_rdev), minor(st->st_rdev));
	else
		sb_abuf_printf(b, ", st_size=%lld, ...}", (long long)st->st_size);
}

/* A stat, statx or statfs buffer the kernel filled; unreadable, its
 * address, as strace shows it. */
static void put_statbuf(struct sb_abuf *b, pid_t tid, unsigned k, uint64_t addr)
{
	union {
		struct stat st;
		struct statx stx;
		struct statfs sf;
	} u;
	size_t len = k == K_STAT ? sizeof(u.st) : k == K_STATX ? sizeof(u.stx) : sizeof(u.sf);

	if (sb_aread(tid, addr, &u, len) != 0) {
		put_addr(b, addr);
		return;
	}
	if (k == K_STAT) {
		put_stat(b, &u.st);
	} else if (k == K_STATX) {
		sb_abuf_puts(b, "{stx_mode=");
		put_type_mode(b, u.stx.stx_mode);
		sb_abuf_printf(b, ", stx_size=%llu, ...}", (unsigned long long)u.stx.stx_size);
	} else {
		sb_abuf_printf(b, "{f_type=%#lx, f_bsize=%ld, ...}", (unsigned long)u.sf.f_type, (long)u.sf.f_bsize);
	}
}

/* readlink's buffer: the rval bytes the kernel wrote. */
static void put_link(struct sb_abuf *b, pid_t tid, uint64_t addr, int64_t rval)
{
	char tmp[PATH_MAX];
	size_t n = rval > 0 ? (size_t)rval : 0;

	if (n > sizeof(tmp))
		n = sizeof(tmp);
	if (sb_aread(tid, addr, tmp, n) != 0)
		put_addr(b, addr);
	else
		sb_abuf_quote(b, tmp, n, PATH_MAX);
}

static void put_id(struct sb_abuf *b, uint64_t id)
{
	if ((uint32_t)id == (uint32_t)-1)
		sb_abuf_puts(b, "-1");
	else
		sb_abuf_printf(b, "%u", (unsigned)id);
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

static void put_times(struct sb_abuf *b, pid_t tid, uint64_t addr)
{
	struct timespec ts[2];

	/* NULL (both "now") reads as a fault: shown as NULL. */
	if (sb_aread(tid, addr, ts, sizeof(ts)) != 0) {
		put_addr(b, addr);
		return;
	}
	sb_abuf_puts(b, "[");
	put_timespec(b, &ts[0]);
	sb_abuf_puts(b, ", ");
	put_timespec(b, &ts[1]);
	sb_abuf_puts(b, "]");
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

static void put_socket_domain(struct sb_abuf *b, int dom)
{
	const char *fam = sb_sa_family_name(dom);

	if (fam)
		sb_abuf_puts(b, fam);
	else
		sb_abuf_printf(b, "%d", dom);
}

static void put_socket_proto(struct sb_abuf *b, int dom, int proto)
{
	bool inet = dom == AF_INET || dom == AF_INET6;

	if (inet && proto == IPPROTO_TCP)
		sb_abuf_puts(b, "IPPROTO_TCP");
	else if (inet && proto == IPPROTO_UDP)
		sb_abuf_puts(b, "IPPROTO_UDP");
	else if (inet && proto == IPPROTO_IP)
		sb_abuf_puts(b, "IPPROTO_IP");
	else if (dom == AF_NETLINK && proto == 0)
		sb_abuf_puts(b, "NETLINK_ROUTE");
	else
		sb_abuf_printf(b, "%d", proto);
}

/* A call on socket args[0] (AJ_NET: judged on the addresses
 * put_sockaddr() kept). */
static void judge_net(struct sb_acall *call, enum sb_ajudge j, enum sb_anet_op op, int msgflags)
{
	call->judge = j;
	call->sockfd = (int)call->args[0];
	call->op = op;
	call->msgflags = msgflags;
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
	judge_net(call, AJ_NET, ANET_SEND, (int)call->args[2]);
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
	judge_net(call, AJ_NET, ANET_SEND, (int)call->args[3]);
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

/* ---- table-driven rows ------------------------------------------------------------------ */

/* A row says what each argument is (enum akind) and how the call is judged
 * (judge, res, access, op, J_*): put_args() shows the arguments, judge_row()
 * fills the judge's fields from the same kinds. */

/* A mode after open flags, a device after a mode: shown only when the
 * argument before says there is one, as the kernel reads it only then. */
static bool arg_shown(const struct sb_acall *call, unsigned i)
{
	switch (call->sys->arg[i]) {
	case K_CMODE: return creates(call->args[i - 1]);
	case K_DEV: return S_ISCHR(call->args[i - 1]) || S_ISBLK(call->args[i - 1]);
	}
	return true;
}

/* Argument i of a row; rval and is_error only matter to the kinds the
 * kernel writes (is_out), which this is called for at the exit stop. */
static void put_arg(struct sb_acall *call, pid_t tid, unsigned i, int64_t rval, bool is_error)
{
	struct sb_abuf *b = &call->tb;
	unsigned k = call->sys->arg[i];
	uint64_t v = call->args[i];

	if (is_flags(k)) {
		put_flags(b, flagsets[k].tab, flagsets[k].n, v, flagsets[k].zero);
		return;
	}
	if (is_out(k) && is_error) {
		put_addr(b, v);
		return;
	}
	switch (k) {
	case K_DIRFD: put_dirfd(b, (int)v); break;
	case K_PATH: put_path(b, tid, v, call->path); break;
	case K_PATH2: case K_TARGET: put_path(b, tid, v, call->path2); break;
	case K_OPENFL: put_open_flags(b, v); break;
	case K_CMODE: case K_MODE: put_mode(b, v); break;
	case K_TMODE: put_type_mode(b, v); break;
	case K_DEV: sb_abuf_printf(b, "makedev(%#x, %#x)", major(v), minor(v)); break;
	case K_AMODE: put_access_mode(b, v); break;
	case K_ID: put_id(b, v); break;
	case K_OFF: sb_abuf_printf(b, "%" PRId64, (int64_t)v); break;
	case K_SIZE: sb_abuf_printf(b, "%" PRIu64, v); break;
	case K_TIMES: put_times(b, tid, v); break;
	case K_ARGV: put_argv(b, tid, v); break;
	case K_ENVP: put_envp(b, tid, v); break;
	case K_INT: sb_abuf_printf(b, "%d", (int)v); break;
	case K_DATA: put_data(b, tid, v, call->args[i + 1]); break;
	case K_SOCKADDR:
		if (put_sockaddr(b, tid, v, call->args[i + 1], call, 0) == 0)
			call->n_addrs = 1;
		break;
	case K_SALEN: sb_abuf_printf(b, "%u", (unsigned)v); break;
	case K_MSGFL: put_msg_flags(b, v); break;
	case K_DOMAIN: put_socket_domain(b, (int)v); break;
	case K_SOCKTYPE: put_socket_type(b, v); break;
	case K_PROTO: put_socket_proto(b, (int)call->args[0], (int)v); break;
	case K_PID: case K_TID: sb_abuf_printf(b, "%d", (int)(pid_t)v); break;
	case K_SIG: put_signal(b, (int)v); break;
	case K_STAT: case K_STATX: case K_STATFS: put_statbuf(b, tid, k, v); break;
	case K_LINK: put_link(b, tid, v, rval); break;
	}
}

/* The arguments from `from` on.  At entry it stops before the first one
 * the kernel writes and leaves the line open (", "), as strace does; the
 * exit stop goes on from there. */
static void put_args(struct sb_acall *call, pid_t tid, unsigned from, bool at_exit, int64_t rval, bool is_error)
{
	const uint8_t *kind = call->sys->arg;
	bool first = true;

	for (unsigned i = from; i < SB_A_NARGS && kind[i] != K_END; i++) {
		if (!at_exit && is_out(kind[i])) {
			sb_abuf_puts(&call->tb, ", ");
			return;
		}
		if (!arg_shown(call, i))
			continue;
		if (!first)
			sb_abuf_puts(&call->tb, ", ");
		first = false;
		put_arg(call, tid, i, rval, is_error);
	}
}

/* The index of the nth argument of kind k, -1 when the row has none. */
static int arg_index(const struct sb_asys *s, unsigned k, unsigned nth)
{
	for (int i = 0; i < SB_A_NARGS && s->arg[i] != K_END; i++)
		if (s->arg[i] == k && nth-- == 0)
			return i;
	return -1;
}

static uint64_t arg_of(const struct sb_acall *call, unsigned k, unsigned nth, uint64_t none)
{
	int i = arg_index(call->sys, k, nth);

	return i < 0 ? none : call->args[i];
}

/* The row's first flag word, the one the J_* options read; 0 when none. */
static uint64_t flag_word(const struct sb_acall *call)
{
	for (int i = 0; i < SB_A_NARGS && call->sys->arg[i] != K_END; i++)
		if (is_flags(call->sys->arg[i]))
			return call->args[i];
	return 0;
}

/* What a path row says the call touches: path from the first dirfd,
 * path2 (when it is a name the call creates) from the second. */
static void judge_path_row(struct sb_acall *call)
{
	const struct sb_asys *s = call->sys;
	uint64_t flags = flag_word(call);
	unsigned res = s->res, access = s->access;

	if (s->opt & J_OPEN) {
		res = open_res(arg_of(call, K_OPENFL, 0, 0));
		access = open_access(arg_of(call, K_OPENFL, 0, 0));
	}
	if ((s->opt & J_WOK) && (arg_of(call, K_AMODE, 0, 0) & W_OK))
		access |= SB_ACC_WRITE;
	if ((s->opt & J_NOFOLLOW) && (flags & AT_SYMLINK_NOFOLLOW))
		res &= ~(unsigned)AR_FOLLOW;
	if ((s->opt & J_FOLLOW) && (flags & AT_SYMLINK_FOLLOW))
		res |= AR_FOLLOW;
	if ((s->opt & J_EMPTY) && (flags & AT_EMPTY_PATH))
		res |= AR_EMPTY;
	judge_path(call, s->judge, (int)arg_of(call, K_DIRFD, 0, (uint64_t)AT_FDCWD), res, access);
	if (arg_index(s, K_PATH2, 0) >= 0) {
		call->has_path2 = true;
		call->dirfd2 = (int)arg_of(call, K_DIRFD, 1, (uint64_t)AT_FDCWD);
		call->res2 = AR_CREATE;
	}
}

/* The signal's target: kill's pid (below -1, a process group), tkill's
 * thread, tgkill's both. */
static void judge_kill_row(struct sb_acall *call)
{
	call->judge = AJ_KILL;
	call->sig_pid = (pid_t)arg_of(call, K_PID, 0, 0);
	call->sig_tid = (pid_t)arg_of(call, K_TID, 0, 0);
	if ((call->sys->opt & J_GROUP) && call->sig_pid < -1) {
		call->sig_pid = -call->sig_pid;
		call->sig_group = true;
	}
}

static void judge_row(struct sb_acall *call)
{
	const struct sb_asys *s = call->sys;

	switch (s->judge) {
	case AJ_NONE:
		break;
	case AJ_NET:
	case AJ_LISTEN:
		/* The socket is the first argument; the address, if any, was
		 * kept by put_sockaddr(). */
		judge_net(call, s->judge, s->op, (int)arg_of(call, K_MSGFL, 0, 0));
		break;
	case AJ_KILL:
		judge_kill_row(call);
		break;
	default:
		judge_path_row(call);
		break;
	}
}

static int dec_row(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	unsigned opt = call->sys->opt;

	(void)c;
	/* utimensat(fd, NULL, ...) is futimens(): no path. */
	if ((opt & J_NULLPATH) && !arg_of(call, K_PATH, 0, 0))
		return -ENOENT;
	/* sendto without a destination is a write on a connected socket, not
	 * an access (the supervisor does not see it either). */
	if ((opt & J_NULLADDR) && !arg_of(call, K_SOCKADDR, 0, 0))
		return -ENOENT;
	put_args(call, t->tid, 0, false, 0, false);
	/* A descriptor with "" and AT_EMPTY_PATH is fstat(): no path is
	 * touched, the supervisor lets it through in the kernel, it is not
	 * shown. */
	if ((opt & J_FDQUERY) && (flag_word(call) & AT_EMPTY_PATH) &&
	    (int)arg_of(call, K_DIRFD, 0, (uint64_t)AT_FDCWD) >= 0 && call->path[0] == '\0')
		return -ENOENT;
	judge_row(call);
	return 0;
}

static void exit_row(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
		     bool is_error)
{
	(void)c;
	for (unsigned i = 0; i < SB_A_NARGS && call->sys->arg[i] != K_END; i++) {
		if (is_out(call->sys->arg[i])) {
			put_args(call, t->tid, i, true, rval, is_error);
			return;
		}
	}
}

/* ---- the table ------------------------------------------------------------------------- */

#define ROW(nm, entry_fn, exit_fn) { .nr = __NR_##nm, .name = #nm, .entry = (entry_fn), .exit = (exit_fn) }
/* A row judged on a path (AJ_OPEN, AJ_META, AJ_WRITE, AJ_EXEC): as j, with
 * resolution res_ and access acc before the J_* options opts; then its
 * arguments' kinds, in order. */
#define PROW(nm, j, res_, acc, opts, ...)                                                                       \
	{ .nr = __NR_##nm, .name = #nm, .entry = dec_row, .exit = exit_row, .judge = (j), .res = (res_),        \
	  .access = (acc), .opt = (opts), .arg = { __VA_ARGS__ } }
/* A socket row: judged as j (AJ_NET, AJ_LISTEN: an op_ on the socket in
 * the first argument; AJ_NONE); then its arguments' kinds. */
#define NROW(nm, j, op_, opts, ...)                                                                             \
	{ .nr = __NR_##nm, .name = #nm, .entry = dec_row, .exit = exit_row, .judge = (j), .op = (op_),          \
	  .opt = (opts), .arg = { __VA_ARGS__ } }
/* A signal row (AJ_KILL). */
#define KROW(nm, opts, ...)                                                                                     \
	{ .nr = __NR_##nm, .name = #nm, .entry = dec_row, .exit = exit_row, .judge = AJ_KILL, .opt = (opts),    \
	  .arg = { __VA_ARGS__ } }
#define RD SB_ACC_READ
#define WR SB_ACC_WRITE
#define AT_RES (J_NOFOLLOW | J_EMPTY)	/* the usual AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH */

static const struct sb_asys rows[] = {
#ifdef __NR_open
	PROW(open, AJ_OPEN, 0, 0, J_OPEN, K_PATH, K_OPENFL, K_CMODE),
#endif
	PROW(openat, AJ_OPEN, 0, 0, J_OPEN, K_DIRFD, K_PATH, K_OPENFL, K_CMODE),
#ifdef __NR_openat2
	ROW(openat2, dec_openat2, NULL),
#endif
#ifdef __NR_creat
	PROW(creat, AJ_OPEN, AR_FOLLOW | AR_CREATE, WR, 0, K_PATH, K_MODE),
#endif
#ifdef __NR_stat
	PROW(stat, AJ_META, AR_FOLLOW, RD, 0, K_PATH, K_STAT),
	PROW(lstat, AJ_META, 0, RD, 0, K_PATH, K_STAT),
#endif
#ifdef __NR_newfstatat
	PROW(newfstatat, AJ_META, AR_FOLLOW, RD, AT_RES | J_FDQUERY, K_DIRFD, K_PATH, K_STAT, K_ATFL),
#endif
	PROW(statx, AJ_META, AR_FOLLOW, RD, AT_RES | J_FDQUERY, K_DIRFD, K_PATH, K_STATXFL, K_STATXMASK, K_STATX),
	PROW(statfs, AJ_META, AR_FOLLOW, RD, 0, K_PATH, K_STATFS),
#ifdef __NR_access
	PROW(access, AJ_META, AR_FOLLOW, RD, J_WOK, K_PATH, K_AMODE),
#endif
	PROW(faccessat, AJ_META, AR_FOLLOW, RD, J_WOK, K_DIRFD, K_PATH, K_AMODE),
#ifdef __NR_faccessat2
	PROW(faccessat2, AJ_META, AR_FOLLOW, RD, J_WOK | AT_RES, K_DIRFD, K_PATH, K_AMODE, K_ACCFL),
#endif
#ifdef __NR_readlink
	PROW(readlink, AJ_META, 0, RD, 0, K_PATH, K_LINK, K_SIZE),
#endif
	PROW(readlinkat, AJ_META, 0, RD, 0, K_DIRFD, K_PATH, K_LINK, K_SIZE),
	PROW(chdir, AJ_META, AR_FOLLOW, RD, 0, K_PATH),
	PROW(chroot, AJ_META, AR_FOLLOW, RD, 0, K_PATH),
#ifdef __NR_mkdir
	PROW(mkdir, AJ_WRITE, AR_CREATE, WR, 0, K_PATH, K_MODE),
#endif
	PROW(mkdirat, AJ_WRITE, AR_CREATE, WR, 0, K_DIRFD, K_PATH, K_MODE),
#ifdef __NR_unlink
	PROW(unlink, AJ_WRITE, 0, WR, 0, K_PATH),
	PROW(rmdir, AJ_WRITE, 0, WR, 0, K_PATH),
#endif
	PROW(unlinkat, AJ_WRITE, 0, WR, 0, K_DIRFD, K_PATH, K_UNLINKFL),
#ifdef __NR_rename
	PROW(rename, AJ_WRITE, 0, WR, 0, K_PATH, K_PATH2),
#endif
#ifdef __NR_renameat
	PROW(renameat, AJ_WRITE, 0, WR, 0, K_DIRFD, K_PATH, K_DIRFD, K_PATH2),
#endif
	PROW(renameat2, AJ_WRITE, 0, WR, J_EMPTY, K_DIRFD, K_PATH, K_DIRFD, K_PATH2, K_RENAMEFL),
#ifdef __NR_link
	PROW(link, AJ_WRITE, 0, WR, 0, K_PATH, K_PATH2),
	PROW(symlink, AJ_WRITE, AR_CREATE, WR, 0, K_TARGET, K_PATH),
#endif
	PROW(linkat, AJ_WRITE, 0, WR, J_FOLLOW | J_EMPTY, K_DIRFD, K_PATH, K_DIRFD, K_PATH2, K_LINKFL),
	PROW(symlinkat, AJ_WRITE, AR_CREATE, WR, 0, K_TARGET, K_DIRFD, K_PATH),
#ifdef __NR_chmod
	PROW(chmod, AJ_WRITE, AR_FOLLOW, WR, 0, K_PATH, K_MODE),
	PROW(chown, AJ_WRITE, AR_FOLLOW, WR, 0, K_PATH, K_ID, K_ID),
	PROW(lchown, AJ_WRITE, 0, WR, 0, K_PATH, K_ID, K_ID),
	PROW(mknod, AJ_WRITE, AR_CREATE, WR, 0, K_PATH, K_TMODE, K_DEV),
#endif
	PROW(fchmodat, AJ_WRITE, AR_FOLLOW, WR, 0, K_DIRFD, K_PATH, K_MODE),
	PROW(fchownat, AJ_WRITE, AR_FOLLOW, WR, J_NOFOLLOW, K_DIRFD, K_PATH, K_ID, K_ID, K_ATFL),
	PROW(mknodat, AJ_WRITE, AR_CREATE, WR, 0, K_DIRFD, K_PATH, K_TMODE, K_DEV),
	PROW(truncate, AJ_WRITE, AR_FOLLOW, WR, 0, K_PATH, K_OFF),
	PROW(utimensat, AJ_WRITE, AR_FOLLOW, WR, AT_RES | J_NULLPATH, K_DIRFD, K_PATH, K_TIMES, K_ATFL),
	PROW(execve, AJ_EXEC, AR_FOLLOW, SB_ACC_EXEC, 0, K_PATH, K_ARGV, K_ENVP),
	PROW(execveat, AJ_EXEC, AR_FOLLOW, SB_ACC_EXEC, AT_RES, K_DIRFD, K_PATH, K_ARGV, K_ENVP, K_EXECFL),

	NROW(socket, AJ_NONE, 0, 0, K_DOMAIN, K_SOCKTYPE, K_PROTO),
	NROW(connect, AJ_NET, ANET_CONNECT, 0, K_INT, K_SOCKADDR, K_SALEN),
	NROW(bind, AJ_NET, ANET_BIND, 0, K_INT, K_SOCKADDR, K_SALEN),
	NROW(listen, AJ_LISTEN, ANET_BIND, 0, K_INT, K_INT),
#ifdef __NR_accept
	ROW(accept, dec_accept, exit_accept),
#endif
	ROW(accept4, dec_accept, exit_accept),
	NROW(sendto, AJ_NET, ANET_SEND, J_NULLADDR, K_INT, K_DATA, K_SIZE, K_MSGFL, K_SOCKADDR, K_SALEN),
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
	KROW(kill, J_GROUP, K_PID, K_SIG),
	KROW(tkill, 0, K_TID, K_SIG),
	KROW(tgkill, 0, K_PID, K_TID, K_SIG),
};

#undef RD
#undef WR
#undef AT_RES

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
