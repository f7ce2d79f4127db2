/* Internals shared by the supervisor's own files (supervisor.c, spawn.c,
 * filter.c, procmem.c, pathres.c and the notif_*.c handlers).  Not a contract
 * with other areas: those use supervisor.h and notif.h.
 */
#ifndef SB_SUP_PRIV_H
#define SB_SUP_PRIV_H

#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
};

struct sb_syscall_row {
	const char *name;	/* libseccomp name, "" for a range */
	int nr;			/* fixed number or -1 */
	enum sb_filter_action action;
	int a;
	unsigned long long b;
	int val;
	sb_notif_handler *handler;	/* NULL when the kernel decides alone */
	int kind;		/* enum sb_event_kind or -1 */
};

extern const struct sb_syscall_row sb_syscall_rows[];
extern const size_t sb_syscall_nrows;

/* The row's number on the native architecture, or -1 when it has none. */
int sb_syscall_row_nr(const struct sb_syscall_row *row);

/* ---- filter.c ------------------------------------------------------------------ */

struct sb_filter {
	struct sock_filter *insns;	/* owned */
	unsigned short len;
};

/* Build the BPF program for `mode` (the python-api categories the policy
 * grants decide which process calls stay in-kernel).  Returns 0 or -errno. */
int sb_filter_build(const struct sb_policy *p, enum sb_mode mode, struct sb_filter *out);
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

/* ---- pathres.c ------------------------------------------------------------------- */

enum sb_res_flags {
	SB_RES_FOLLOW = 1u << 0,	/* follow a symlink in the last component */
	SB_RES_PARENT = 1u << 1,	/* the caller acts on (parentfd, name) */
	SB_RES_EMPTY = 1u << 2,		/* AT_EMPTY_PATH: "" is the dirfd itself */
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

/* The handlers named in rules/syscalls.in. */
#include "syscall_table.h"

#endif
