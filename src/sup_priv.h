/* Internals shared by the supervisor's own files (supervisor.c, spawn.c,
 * filter.c, procmem.c, pathres.c and the notif_*.c handlers).  Not a contract
 * with other areas: those use supervisor.h and notif.h.
 */
#ifndef SB_SUP_PRIV_H
#define SB_SUP_PRIV_H

#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "notif.h"
#include "supervisor.h"

/* ---- the syscall table (rules/syscalls.in) ------------------------------------- */

enum sb_filter_action {
	SB_FA_NOTIFY = 0,
	SB_FA_NOTIFY_UNLESS_FD,	/* a = dirfd arg, b = flags arg (AT_EMPTY_PATH) */
	SB_FA_NOTIFY_IF_SET,	/* a = arg that must be non-zero */
	SB_FA_API,		/* val = enum sb_api_category */
	SB_FA_CLONE,		/* namespaces refused, CLONE_THREAD: threads, else process-exec */
	SB_FA_ERRNO,		/* val = errno; with name "" a number range nr..a */
	SB_FA_ERRNO_IF,		/* (u32)arg a == b: errno val */
	SB_FA_ERRNO_IF_NE,	/* (u32)arg A == b and arg B != V: errno val, a = A | B << 8 | V << 16 */
};

struct sb_syscall_row {
	const char *name;	/* the kernel's name, "" for a range */
	int nr;			/* x86_64 number (<sys/syscall.h> at build time), range start */
	enum sb_filter_action action;
	int a;
	unsigned long long b;
	int val;
	sb_notif_handler *handler;	/* NULL when the kernel decides alone */
	int kind;		/* enum sb_event_kind or -1 */
};

extern const struct sb_syscall_row sb_syscall_rows[];
extern const size_t sb_syscall_nrows;

/* The row's number on the native architecture (x86_64, the only one we build
 * for: resolved by the compiler, no name lookup at run time). */
static inline int sb_syscall_row_nr(const struct sb_syscall_row *row)
{
	return row->nr;
}

/* Copy src into dst[cap], cut to fit and always terminated: what
 * snprintf(dst, cap, "%s", src) does, without the format machinery on the
 * path of every decision. */
static inline void sb_copy_str(char *dst, size_t cap, const char *src)
{
	size_t len = strnlen(src, cap - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* ---- filter.c ------------------------------------------------------------------ */

/* The one architecture the filter is built for (src/filter.c kills every
 * other): a constant, so that python-sb does not load libseccomp to ask. */
#if !defined(__x86_64__) || defined(__ILP32__)
# error "python-sb's seccomp filter is written for x86_64 (src/filter.c)"
#endif
#define SB_ARCH_NATIVE AUDIT_ARCH_X86_64

struct sb_filter {
	struct sock_filter *insns;	/* owned */
	unsigned short len;
};

/* Build the BPF program for `mode` (the python-api categories the policy
 * grants decide which process calls stay in-kernel).  Returns 0 or -errno. */
int sb_filter_build(const struct sb_policy *p, enum sb_mode mode, struct sb_filter *out);
/* The same from another table (tests/unit/check_filter.c).  -EINVAL when rows
 * sharing a number could make the verdict depend on their order (see
 * src/filter.c), or a number is out of range. */
int sb_filter_build_rows(const struct sb_syscall_row *rows, size_t n, const struct sb_policy *p,
			 enum sb_mode mode, struct sb_filter *out);
void sb_filter_free(struct sb_filter *f);

/* Install `f` on the calling thread with NEW_LISTENER (and WAIT_KILLABLE_RECV
 * when `killable`); returns the listener fd or -errno.  Async-signal-safe. */
int sb_filter_install(const struct sb_filter *f, bool killable);

/* ---- spawn.c ------------------------------------------------------------------- */

struct sb_child {
	pid_t pid;
	int pidfd;		/* owned */
	int listener;		/* owned, in the supervisor */
	bool killable;		/* the filter has WAIT_KILLABLE_RECV */
};

/* Fork the child, set it up (SPEC §3 spawn) and receive its listener.  The
 * child then waits in its first execve, which the supervisor must answer. */
int sb_spawn(const struct sb_run_opts *o, const struct sb_filter *f, struct sb_child *out);

/* ---- procmem.c: /proc readers ---------------------------------------------------- */

struct sb_proc_ids {
	pid_t tgid, ppid;
	pid_t ns_tgid, ns_tid;	/* innermost pid namespace (NStgid/NSpid) */
	mode_t umask;
	uint64_t sig_pending;	/* SigPnd | ShdPnd */
	uint64_t sig_blocked;
	uid_t uid, euid;
};

/* Parse /proc/TID/status.  Returns 0, -ESRCH or -EIO. */
int sb_proc_status(pid_t tid, struct sb_proc_ids *out);

/* The parent of `pid` from /proc/PID/stat.  0 or -ESRCH. */
int sb_proc_ppid(pid_t pid, pid_t *ppid);

/* sb_notif_read_str() without its ID_VALID check: for a path handed to
 * sb_path_resolve() with SB_RES_UNCHECKED, which checks once for the path and
 * the target's cwd together, before either is used. */
int sb_notif_read_str_nv(struct sb_notif *n, uint64_t addr, char *buf, size_t cap);

/* sb_notif_read() without its ID_VALID check: for bytes checked by the
 * ID_VALID that sb_notif_getfd() does after taking a descriptor. */
int sb_notif_read_nv(struct sb_notif *n, uint64_t addr, void *buf, size_t len);

/* ---- pathres.c ------------------------------------------------------------------- */

enum sb_res_flags {
	SB_RES_FOLLOW = 1u << 0,	/* follow a symlink in the last component */
	SB_RES_PARENT = 1u << 1,	/* the caller acts on (parentfd, name) */
	SB_RES_EMPTY = 1u << 2,		/* AT_EMPTY_PATH: "" is the dirfd itself */
	SB_RES_UNCHECKED = 1u << 3,	/* `path` came from sb_notif_read_str_nv() */
	SB_RES_ANON = 1u << 4,		/* an unlinked regular file (O_TMPFILE) is an
					 * object too, its canon the kernel's name
					 * for it without " (deleted)"; sets anon */
};

/* A resolved path, as the target would see it. */
struct sb_path {
	char canon[PATH_MAX];	/* canonical absolute path in the target's root, or
				 * "pipe:[..]"-style text for a descriptor object */
	size_t len;
	int objfd;		/* O_PATH fd of the object, -1 when it does not exist */
	int parentfd;		/* O_PATH directory fd (SB_RES_PARENT), else -1 */
	char name[NAME_MAX + 2];	/* last component for *at calls (SB_RES_PARENT),
					 * with the caller's trailing '/' kept */
	bool fdobj;		/* not a file-system path (pipe, socket, anon inode) */
	bool walked;		/* resolved by the slow walker (/proc/self, magic links) */
	bool dot_last;		/* SB_RES_PARENT on a "." or ".." last component */
	bool anon;		/* SB_RES_ANON: the object is an unlinked file */
};

void sb_path_init(struct sb_path *p);
/* Resolve `path` (NULL with SB_RES_EMPTY: the dirfd itself) relative to the
 * target's `dirfd` (AT_FDCWD: its cwd) inside its root.  Errors as the kernel
 * would give them (-ENOENT, -ENOTDIR, -ELOOP, -ENAMETOOLONG, -EACCES for a
 * magic link into another process), -ESRCH when the target went away. */
int sb_path_resolve(struct sb_notif *n, int dirfd, const char *path, unsigned flags, struct sb_path *out);
void sb_path_release(struct sb_path *p);

/* ---- supervisor.c services for handlers ---------------------------------------- */

/* The thread group of the calling thread (cached, validated with tgkill). */
int sb_notif_tgid(struct sb_notif *n, pid_t *tgid);

/* The table row of the notified call. */
const struct sb_syscall_row *sb_notif_row(const struct sb_notif *n);

/* Is `pid` (in the target's pid namespace) the target's own process or one
 * of its threads? */
bool sb_notif_own_pid(struct sb_notif *n, pid_t pid);

/* True once: the child's first execve (the interpreter itself). */
bool sb_sup_first_exec(struct sb_sup *s, pid_t tid);

/* Is `pid` a process of the sandbox (the child or one of its descendants)? */
bool sb_sup_in_sandbox(struct sb_sup *s, pid_t pid);

/* opts->kernel_enforces_fs */
bool sb_sup_kernel_fs(const struct sb_sup *s);
/* opts->kernel_enforces_fs_read (or the above) */
bool sb_sup_kernel_fs_read(const struct sb_sup *s);
/* ... and Landlock judges truncation too (ABI >= 3). */
bool sb_sup_kernel_truncate(const struct sb_sup *s);

/* The target's root is ours (no chroot, no mount namespace of a layer). */
bool sb_sup_same_root(const struct sb_sup *s);
void sb_sup_root_changed(struct sb_sup *s);

/* Policy files (never writable, nor any directory holding one renamed). */
bool sb_sup_holds_policy_file(const struct sb_sup *s, const char *canon, size_t len);

/* Fill the event object of a path decision. */
void sb_notif_ev_path(struct sb_notif *n, const char *canon, unsigned access);

/* Decide `access` to a resolved path with the policy and, on a refusal, answer
 * it (ENOENT for hidden, EACCES for read-only / protected).  Returns true when
 * the handler must stop (refused in enforce mode). */
bool sb_notif_check_path(struct sb_notif *n, const struct sb_path *p, unsigned access);

/* The same for a metadata call (stat, access, chdir): directories leading to
 * an exposure are visible there. */
bool sb_notif_check_meta(struct sb_notif *n, const struct sb_path *p, unsigned access);

/* Map a resolution error to the program's errno and answer it. */
void sb_notif_fail_resolve(struct sb_notif *n, int rc);

/* Supervisor-side calls that need the target's umask run inside
 * sb_umask_begin()/end() on the worker's private fs struct. */
int sb_umask_begin(struct sb_notif *n);
void sb_umask_end(void);

/* ---- sup_attr.c: Python attribution and the refusals it allows ------------- */

struct sb_pyctx;	/* what the policy says about imports and eval; per-run state */

/* Compile what attribution needs from o (mode, policy, agent).  0 or -errno. */
int sb_pyctx_new(const struct sb_run_opts *o, struct sb_pyctx **out);
void sb_pyctx_free(struct sb_pyctx *c);
/* A process of the tree exited (reaped): drop its attribution state. */
void sb_pyctx_exited(struct sb_pyctx *c, pid_t pid);
/* Print the notice of `ev` (process pid)?  False for an import refusal
 * already printed for that process and module (one import makes many). */
bool sb_pyctx_first_notice(struct sb_pyctx *c, pid_t pid, const struct sb_event *ev);
/* The running supervisor's (NULL-safe callers: supervisor.c owns it). */
struct sb_pyctx *sb_sup_py(struct sb_sup *s);

/* Read the calling thread's Python stack (once per notification, while the
 * target waits) into ev: pyloc, from_eval, importing, stack.  0 (an unknown
 * stack leaves them empty) or -errno (-ENOENT: the request died meanwhile). */
int sb_notif_attribute(struct sb_notif *n);

/* sb_notif_refuse() in learn/audit mode: attribute the would-be refusal if
 * the learner may keep it (not metadata calls, not /proc, /sys, /dev). */
void sb_notif_attribute_would_deny(struct sb_notif *n);

/* May the program learn that `canon` exists (and what it is)?  True when the
 * policy lets it read it, it leads to an exposure, or the run enforces
 * nothing. */
bool sb_notif_path_visible(struct sb_notif *n, const char *canon, size_t len);

/* The path decision of n was an implicit grant (the interpreter's tree, the
 * agent's directories: rule files named "<...>"), or no rule at all. */
bool sb_notif_implicit(const struct sb_notif *n);

enum sb_pyv {
	SB_PYV_OPEN = 0,	/* an open (or creation) the policy allowed */
	SB_PYV_META,		/* a metadata call (stat, access...) the policy allowed */
	SB_PYV_EXEC,		/* an execve the policy allowed */
};

/* Enforce mode: refuse (and answer) an access the policy allows when the
 * Python stack shows it is made for an import python-import= does not
 * allow, or by code from eval that no eval-* rule grants it.  `implicit`:
 * the policy allowed it by an implicit grant (the interpreter's tree).
 * Returns true when refused (the handler stops). */
bool sb_notif_py_veto(struct sb_notif *n, enum sb_pyv what, const char *canon, bool implicit);

/* The same for connect and sendto, before their handler runs. */
bool sb_notif_py_veto_net(struct sb_notif *n);

/* The handlers named in rules/syscalls.in. */
#include "syscall_table.h"

#endif
