/* Attach mode: watch a running process through ptrace (SPEC §8, issue 6).
 *
 * `python-sb --attach PID` seizes every thread of each process, follows new
 * threads and children, decodes the same file, network and process calls as
 * the supervisor and prints them strace-style, each followed by the Python
 * location that made it.  With a policy it reports (or, with enforce, refuses)
 * what the policy would not allow; with a learner it feeds every event to it.
 * It detaches cleanly on a deadline, on the caller's stop flag or when the
 * targets exit: the targets carry on.  doc/attach.md is the user's guide.
 *
 * Library style: returns 0 or -errno; prints only to the FILE* it is given.
 * Single-threaded: every ptrace request comes from the calling thread, which
 * must be the only thread of the caller with SIGCHLD unblocked while
 * sb_attach_run() runs (it blocks SIGCHLD in this thread and waits for it;
 * SIGCHLD's disposition is SIG_DFL meanwhile, then restored).  It waits
 * with waitpid(-1, __WALL): the caller must have no children of its own to
 * reap meanwhile.
 */
#ifndef SB_ATTACH_H
#define SB_ATTACH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "learn.h"
#include "policy.h"

/* What went wrong with which process (filled by sb_attach_check and
 * sb_attach_run for the CLI's messages). */
struct sb_attach_info {
	pid_t pid;		/* the process the error is about, 0 if none */
	pid_t tracer;		/* -EBUSY: TracerPid of that process */
	int ptrace_scope;	/* -EPERM: /proc/sys/kernel/yama/ptrace_scope, -1 if unknown */
	char exe[4096];		/* /proc/PID/exe of the first process ("" if unreadable) */
	char cwd[4096];		/* its current directory ("" if unreadable): the base of
				   ./ rules when judging or learning for it */
};

/* What happened while attached (may be NULL in the options). */
struct sb_attach_stats {
	unsigned long calls;		/* lines printed / events made */
	unsigned long refused;		/* SB_DENIED (enforce) */
	unsigned long would_deny;	/* SB_WOULD_DENY (report) */
	unsigned long log_lost;		/* JSON lines that could not be written */
	unsigned long tracees;		/* threads and processes seen in all */
};

struct sb_attach_opts {
	const pid_t *pids;		/* processes to attach to (a thread id means its process) */
	size_t n_pids;
	/* Decisions: NULL = observe only.  With a policy every access outside it
	 * prints a notice ("python-sb: WOULD DENY ...", or DENIED with enforce). */
	const struct sb_policy *policy;
	bool enforce;			/* refuse through ptrace what `policy` refuses */
	/* Learning: every event goes to `learn`, judged against `learn_policy`
	 * (the rule file being learned into: what it allows is not new).  NULL
	 * learn_policy: every event counts as new to the learner. */
	struct sb_learn *learn;
	const struct sb_policy *learn_policy;
	int log_fd;			/* JSON lines (sb_event_to_json), -1 = none */
	FILE *out;			/* trace lines and notices; NULL = stderr */
	bool trace;			/* print the strace-style lines (notices are printed anyway) */
	double duration;		/* seconds; 0 = until *stop or the targets exit */
	volatile sig_atomic_t *stop;	/* set by the caller's SIGINT/SIGTERM handler; may be NULL */
	struct sb_attach_info *info;	/* error details; may be NULL */
	struct sb_attach_stats *stats;	/* may be NULL */
};

/* Check that `pid` can be attached to, without attaching: -ESRCH (no such
 * process), -EBUSY (already traced by another tracer: info->tracer), -EPERM
 * (not ours to trace: credentials, Yama's ptrace_scope in
 * info->ptrace_scope, a Landlock domain), -EINVAL (our own process), 0.
 * Also fills info->exe and info->cwd. */
int sb_attach_check(pid_t pid, struct sb_attach_info *info);

/* Attach, trace until the deadline, *stop or the exit of every target, and
 * detach.  *status_out (may be NULL) receives the wait status of the first
 * process when it ended while attached, or -1 when it was left running.
 * Returns 0 or -errno: -ESRCH, -EPERM, -EBUSY, -EINVAL as sb_attach_check
 * (info->pid says which process; nothing stays attached), -EINVAL also for
 * enforce without a policy, -EOPNOTSUPP (enforce on an architecture without
 * register support here), -ENOSYS (no PTRACE_GET_SYSCALL_INFO: kernel <
 * 5.3), -ETIMEDOUT (some thread did not stop for the detach within 5 s: the
 * kernel detaches it when the caller exits), -ENOMEM. */
int sb_attach_run(const struct sb_attach_opts *o, int *status_out);

/* Parse "PID[,PID...]" (the CLI's --attach argument) into a malloc'ed array.
 * -EINVAL on anything else, -ENOMEM. */
int sb_attach_parse_pids(const char *s, pid_t **pids, size_t *n);

#endif
