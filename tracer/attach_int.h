/* Internals of the attach backend, shared by attach.c (seize, event loop,
 * detach), attach_decode.c (the syscall table and strace-style text),
 * attach_judge.c (paths, addresses and verdicts) and attach_enforce.c
 * (refusing through the registers).  Not a contract with other areas:
 * those use attach.h.
 */
#ifndef SB_ATTACH_INT_H
#define SB_ATTACH_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "attach.h"
#include "event.h"
#include "pyframes.h"
#include "sockaddr.h"

#define SB_A_TEXT 4096		/* one call's argument text (longer is cut with "...") */
#define SB_A_STRMAX 32		/* strace's default -s: data strings and argv entries */

/* ---- text ------------------------------------------------------------------ */

/* A bounded line being built; `full` once something was cut. */
struct sb_abuf {
	char *s;
	size_t cap, len;
	bool full;
};

void sb_abuf_init(struct sb_abuf *b, char *s, size_t cap);
void sb_abuf_puts(struct sb_abuf *b, const char *s);
void sb_abuf_printf(struct sb_abuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A C string literal as strace writes it: quotes, \n \t \" \\, other bytes
 * outside printable ASCII as octal; at most `max` bytes, then "...". */
void sb_abuf_quote(struct sb_abuf *b, const char *s, size_t len, size_t max);

/* ---- the tracees' memory ---------------------------------------------------- */

/* Copy len bytes at addr of thread tid (process_vm_readv).  0, -EFAULT, -ESRCH. */
int sb_aread(pid_t tid, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of at most cap-1 bytes: 0, -ENAMETOOLONG (buf
 * then holds the first cap-1 bytes), -EFAULT, -ESRCH. */
int sb_aread_str(pid_t tid, uint64_t addr, char *buf, size_t cap);

/* ---- one call --------------------------------------------------------------- */

enum sb_ajudge {
	AJ_NONE = 0,	/* printed only (socket, accept, a send without address) */
	AJ_OPEN,	/* open family: access from the flags, creation judged on the parent */
	AJ_META,	/* stat, access, readlink, statfs, chdir: directories leading to an exposure pass */
	AJ_WRITE,	/* mkdir, unlink, chmod, ...: a write to path (and path2 when set) */
	AJ_EXEC,	/* execve, execveat */
	AJ_NET,		/* connect, bind, sendto, sendmsg, sendmmsg: address sa */
	AJ_LISTEN,	/* listen: the socket's bound address */
	AJ_CLONE,	/* clone, clone3, fork, vfork: clone_flags */
	AJ_KILL,	/* kill, tkill, tgkill */
};

enum sb_anet_op { ANET_CONNECT = 0, ANET_BIND, ANET_SEND };

/* Resolution flags of a path argument. */
enum { AR_FOLLOW = 1u << 0, AR_CREATE = 1u << 1, AR_EMPTY = 1u << 2 };

#define SB_A_MAX_ADDRS 8	/* sendmmsg: addresses judged per call */

struct sb_asys;

/* What a call touches, resolved once at its entry stop (attach_judge.c);
 * each policy then decides on it without looking at the process again. */
struct sb_apath {
	char canon[PATH_MAX];	/* canonical, or "pipe:[..]"-style text when fdobj */
	bool ok;		/* canon names the object (or the new name, !exists) */
	bool exists;
	bool isdir;
	bool fdobj;		/* not a file-system path */
	bool own_proc;		/* /proc/<the caller's own process>/... */
};

enum sb_anet_kind {
	AN_SKIP = 0,	/* nothing to decide (no destination, netlink, bad descriptor) */
	AN_INET,	/* addr judged by net= rules */
	AN_UNIX,	/* path judged as a write */
	AN_REFUSE,	/* no rule can allow it: why says so */
};

struct sb_anet {
	enum sb_anet_kind kind;
	struct sb_sa a;		/* AN_INET: where the kernel will really send */
	unsigned proto;		/* SB_PROTO_* */
	char why[SB_EV_NAME_MAX];
};

struct sb_aobj {
	struct sb_apath p, p2;
	struct sb_anet net[SB_A_MAX_ADDRS];
	size_t n_net;
	int kill_class;		/* AJ_KILL: 0 own process, 1 inside the traced tree, 2 outside */
};

struct sb_acall {
	const struct sb_asys *sys;
	int nr;
	uint64_t args[6];
	char text[SB_A_TEXT];	/* "AT_FDCWD, \"/etc/hosts\", O_RDONLY" as decoded so far */
	struct sb_abuf tb;

	enum sb_ajudge judge;
	int dirfd;
	unsigned res;			/* AR_* */
	unsigned access;		/* SB_ACC_* */
	char path[PATH_MAX];		/* as the program wrote it */
	bool has_path2;			/* rename, link: the second name is a write too */
	int dirfd2;
	unsigned res2;
	char path2[PATH_MAX];
	int sockfd;
	enum sb_anet_op op;
	int msgflags;
	size_t n_addrs;			/* addresses to judge (sendmmsg: several) */
	struct sockaddr_storage sa[SB_A_MAX_ADDRS];
	socklen_t salen[SB_A_MAX_ADDRS];
	uint64_t clone_flags;
	pid_t sig_pid, sig_tid;		/* kill: pid (group when sig_group), tkill: tid */
	bool sig_group;

	/* Outcome of judging (attach_judge.c). */
	struct sb_aobj obj;
	bool has_event;			/* an access: event made at exit */
	bool quiet;			/* judged but not shown (glibc's UDP probes) */
	int deny;			/* enforce: errno the call gets instead, 0 = runs */
	struct sb_event ev;
};

/* ---- the tracer's state -------------------------------------------------------- */

struct sb_atracee {
	pid_t tid, tgid;
	bool in_call;		/* an entry was decoded, its exit is pending */
	bool deny_pending;	/* the entry was refused: set the return at exit */
	bool detaching;		/* PTRACE_INTERRUPT sent to detach */
	bool detach_at_exit;	/* detach once the refused call has returned */
	bool gone;		/* exited or detached: the slot is free */
	struct sb_acall *call;	/* owned, allocated on first use */
};

struct sb_actx {
	const struct sb_attach_opts *o;
	FILE *out;
	struct sb_atracee *t;	/* owned array */
	size_t n, cap;
	pid_t *tgids;		/* processes being traced (for "inside" checks), owned */
	size_t n_tgids, cap_tgids;
	bool resolve;		/* canonical paths are needed (policy, learner or log) */
	/* The policy events are judged by: the options' policy, else the
	 * learner's (so a learning run logs would-deny as the supervisor's
	 * learn mode does); NULL: observe only. */
	const struct sb_policy *judge_policy;
	pid_t first_tgid;
	int first_status;	/* wait status of the first process, -1 while alive */
	bool detaching;		/* every tracee was asked to stop for the detach */
	bool no_info;		/* the kernel lacks PTRACE_GET_SYSCALL_INFO */
	struct timespec start, detach_start;	/* CLOCK_MONOTONIC */
	char *logline;		/* owned, SB_LOG_LINE_MAX bytes: one JSON event */
	struct sb_pystack *stack;	/* owned scratch: the calling thread's Python stack */
	struct sb_attach_stats st;
};

/* ---- attach_decode.c -------------------------------------------------------------- */

/* Decode an entry: 0 when the call is one we show (call->text, call->judge
 * filled), -ENOENT when it is not one of ours (nothing to do at exit). */
int sb_adecode_entry(struct sb_actx *c, const struct sb_atracee *t, int nr, const uint64_t args[6],
		     struct sb_acall *call);
/* Finish the line after the call returned `rval` (is_error: -4095..-1). */
void sb_adecode_exit(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, int64_t rval,
		     bool is_error);
/* The call's name, for the event. */
const char *sb_adecode_name(const struct sb_acall *call);
/* The result part of a line: "3", "-1 ENOENT (No such file or directory)". */
void sb_adecode_result(struct sb_abuf *b, int64_t rval, bool is_error);

/* ---- attach_judge.c --------------------------------------------------------------- */

/* Fill call->ev's object (canonical path, address, category) and judge it
 * with the options' policy; sets call->has_event, ->quiet and, when
 * enforcing, ->deny.  Runs at the entry stop, before the kernel acts. */
void sb_ajudge_entry(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call);
/* The verdict of the judged call under another policy (the learner's). */
enum sb_verdict sb_ajudge_again(const struct sb_acall *call, const struct sb_policy *pol);
/* Is pid one of the traced processes, or a descendant of one? */
bool sb_ajudge_inside(const struct sb_actx *c, pid_t pid);

/* One numeric field of /proc/PID/status ("Tgid", "PPid", "TracerPid"):
 * 0, -ESRCH (no such process) or -ENOENT (no such field). */
int sb_aproc_status_field(pid_t pid, const char *key, long *val);

/* ---- attach_enforce.c -------------------------------------------------------------- */

/* Can this architecture change a call through the registers? */
bool sb_aenforce_supported(void);
/* At the syscall-entry stop of tid: skip the call (number -1) and, where
 * the architecture allows, preset its return to -err. */
int sb_aenforce_entry(pid_t tid, int err);
/* At the syscall-exit stop: the call returns -err. */
int sb_aenforce_exit(pid_t tid, int err);

#endif
