/* The supervisor: spawn the interpreter under a seccomp user-notification
 * filter and decide each notified system call against the policy (SPEC §3).
 * Library style: returns 0 or -errno, never prints except the one-line refusal
 * notices it is asked to write on `notice_fd` (stderr in practice).
 */
#ifndef SB_SUPERVISOR_H
#define SB_SUPERVISOR_H

#include <stdbool.h>
#include <sys/types.h>

#include "event.h"
#include "policy.h"

struct sb_agent;	/* agent.h */

enum sb_mode {
	SB_MODE_ENFORCE = 0,	/* refuse what the policy does not allow */
	SB_MODE_LEARN,		/* allow everything, record events */
	SB_MODE_AUDIT,		/* allow everything, report what would be refused */
};

/* Called on the supervisor's event thread, one event at a time, in order; the
 * callee must not block for long.  Never called on a deciding worker. */
typedef void sb_event_fn(const struct sb_event *ev, void *data);

struct sb_oslayer;

struct sb_run_opts {
	const struct sb_policy *policy;
	enum sb_mode mode;
	const char *python;		/* absolute path of the interpreter to exec */
	char *const *argv;		/* full argv, argv[0] as python itself would see it */
	char *const *envp;		/* the child's environment, already filtered */
	int notice_fd;			/* refusal lines "python-sb: DENIED ..." (-1: none) */
	sb_event_fn *on_event;		/* every decision (log, learn, report); may be NULL */
	void *event_data;
	/* on_event wants refusals only (enforce mode without a log, learning
	 * or a report): allowed calls then cost no event after the answer. */
	bool refusals_only;
	int agent_fd;			/* descriptor to inherit for the agent (-1: none) */
	/* The agent's channel (NULL: none): a refused open, connect or exec is
	 * explained to the agent first (sb_agent_refusal), so the program gets
	 * RuleFileNotFoundError & co. with the supervisor's text. */
	struct sb_agent *agent;
	int workers;			/* worker threads (0: default) */
	/* Called in the child after the rlimits and before the seccomp filter
	 * (a kernel layer such as Landlock).  Async-signal-safe, no allocation;
	 * a negative return aborts the spawn and sb_supervise returns it.  NULL:
	 * nothing to do. */
	int (*child_setup)(void *data);
	void *child_data;
	/* Called in the parent once the child has run child_setup and
	 * installed the filter, before it may exec (plain spawn only: the
	 * Landlock self-test it ran, sb_oslayer_selftest_collect).  A negative
	 * return kills it and sb_supervise returns that.  NULL: nothing. */
	int (*child_ready)(void *data);
	/* The kernel layer enforces exactly the policy's file exposure
	 * (sb_oslayer_enforces_fs): read-only opens the policy allows may then
	 * be CONTINUEd, since whatever a racing thread substitutes is refused by
	 * the kernel (SPEC §9).  false: every open is emulated. */
	bool kernel_enforces_fs;
	/* The same for read-only opens alone (sb_oslayer_enforces_fs_read). */
	bool kernel_enforces_fs_read;
	/* The kernel layer of os-sandbox= (src/oslayer.h).  The namespaces
	 * (unshare) and the wrappers (bwrap, firejail) start the interpreter
	 * themselves, so sb_spawn must know them; NULL or any other kind: the
	 * plain spawn (child_setup applies Landlock). */
	struct sb_oslayer *oslayer;
};

/* Run the program to completion.  *wstatus receives its wait status.
 * Returns 0, or -errno when the sandbox could not be set up (-EBUSY: an outer
 * seccomp supervisor already owns the listener; -ENOSYS: kernel too old). */
int sb_supervise(const struct sb_run_opts *opts, int *wstatus);

/* Forward a signal to the supervised program (from the CLI's handlers). */
void sb_supervise_signal(int sig);

#endif
