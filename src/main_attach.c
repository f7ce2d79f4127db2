/* python-sb --attach PID: trace a running process with ptrace, report or
 * refuse what a policy would, or learn from it (tracer/attach.h,
 * doc/attach.md).  Part of the CLI: it prints. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "main_priv.h"
#include "print.h"
#include "runtime.h"

extern char **environ;

/* ---- --attach PID (tracer/attach.h, doc/attach.md) ----------------------------- */

static volatile sig_atomic_t attach_stop;

static void attach_on_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

static int attach_error(int rc, const struct sb_attach_info *info)
{
	int pid = (int)info->pid;

	switch (rc) {
	case -ESRCH:
		sb_error("no process %d", pid);
		break;
	case -EBUSY:
		sb_error_hint("a process has one tracer at a time (a debugger, strace, another python-sb)",
			      "process %d is already traced by process %d", pid, (int)info->tracer);
		break;
	case -EPERM:
		if (info->ptrace_scope > 0)
			sb_error_hint(info->ptrace_scope == 1 ? "run as root, or lower /proc/sys/kernel/yama/ptrace_scope to 0"
							      : "run as root (CAP_SYS_PTRACE)",
				      "not allowed to trace process %d (/proc/sys/kernel/yama/ptrace_scope is %d)", pid,
				      info->ptrace_scope);
		else
			sb_error_hint("run as the same user as the process, or as root; a python-sb inside a "
				      "Landlock sandbox cannot trace outside it",
				      "not allowed to trace process %d", pid);
		break;
	case -EINVAL:
		sb_error("process %d is python-sb itself", pid);
		break;
	case -EOPNOTSUPP:
		sb_error("--enforce cannot change system calls on this architecture");
		break;
	case -ENOSYS:
		sb_error_hint("Linux >= 5.3 (PTRACE_GET_SYSCALL_INFO)",
			      "this kernel cannot tell system call entries from exits");
		break;
	case -ETIMEDOUT:
		sb_error("some threads of process %d did not stop to be detached; the kernel releases them "
			 "when python-sb exits", pid);
		break;
	default:
		sb_error("cannot attach to process %d: %s", pid, strerror(-rc));
	}
	return SB_EXIT_INTERNAL;
}

/* A rule file as it applies to the traced process: ./ rules from its
 * directory, the command line's rules, its interpreter's implicit grants. */
static int attach_load(struct run *r, const char *path, bool learning, const struct sb_attach_info *info,
		       struct sb_policy **out)
{
	struct sb_load_opts lo = {
		.config_path = path, .cli_rules = (const char *const *)r->cli.rules,
		.n_cli_rules = r->cli.n_rules, .envp = environ, .cwd = info->cwd[0] ? info->cwd : r->cwd,
		.cli_learn = learning ? path : NULL,
	};
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_policy_load(&lo, out, &d);
	sb_print_warnings(&d);
	if (rc == -EINVAL || sb_diag_has_errors(&d)) {
		sb_print_config_errors(&d);
		sb_diag_free(&d);
		return -EINVAL;
	}
	sb_diag_free(&d);
	if (rc) {
		sb_error("cannot load the policy '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (info->exe[0] == '/' && (rc = sb_runtime_grants(*out, info->exe)) != 0)
		sb_error("cannot grant the interpreter's own files (%s): %s", info->exe, strerror(-rc));
	return rc;
}

/* The learner for --attach ... --learn FILE, with its journal. */
static int attach_learner(const struct sb_policy *pol, const struct sb_attach_info *info, const char *file,
			  struct sb_learn **learn, char **journal)
{
	struct sb_learn_opts lo = { .policy = pol, .envp = environ, .cwd = info->cwd, .python_exe = info->exe };
	unsigned long replayed = 0;
	int rc = sb_learn_new(&lo, learn);

	if (rc) {
		sb_error("cannot start learning: %s", strerror(-rc));
		return rc;
	}
	if (!(*journal = sb_learn_journal_name(file)))
		return -ENOMEM;
	if ((rc = sb_learn_replay(*learn, *journal, &replayed)) != 0)
		sb_warn("cannot replay the learning journal '%s': %s", *journal, strerror(-rc));
	else if (replayed)
		sb_msg("replayed %lu item(s) an interrupted run left in '%s'", replayed, *journal);
	if ((rc = sb_learn_journal_open(*learn, *journal)) != 0)
		sb_warn("no learning journal ('%s': %s): a killed python-sb would lose this run", *journal,
			strerror(-rc));
	return 0;
}

static int attach_write_learned(struct sb_learn *learn, const char *file)
{
	struct sb_diag d;
	char *msg = NULL;
	int rc;

	sb_diag_init(&d);
	rc = sb_learn_write(learn, file, NULL, &msg, &d);
	sb_print_warnings(&d);
	if (rc) {
		sb_print_config_errors(&d);
		sb_error("cannot write the learned rules to '%s': %s", file, strerror(-rc));
	} else {
		if (msg)
			sb_msg("%s", msg);
		sb_learn_journal_close(learn, true);
	}
	free(msg);
	sb_diag_free(&d);
	return rc;
}

static void attach_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	/* No SA_RESTART: the signal must end the wait for the next stop. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = attach_on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void attach_summary(const struct sb_attach_opts *o, const struct sb_attach_stats *st, int status)
{
	pid_t pid = o->pids[0];

	if (o->policy && (st->refused || st->would_deny))
		sb_msg("attach: %lu access(es) %s", st->refused + st->would_deny,
		       o->enforce ? "refused" : "outside the policy");
	if (st->log_lost)
		sb_warn("%lu log line(s) could not be written", st->log_lost);
	if (status == -1)
		sb_msg("detached from process %d", (int)pid);
	else if (WIFEXITED(status))
		sb_msg("process %d exited with status %d", (int)pid, WEXITSTATUS(status));
	else
		sb_msg("process %d was killed by signal %d", (int)pid, WTERMSIG(status));
}

int sb_main_attach(struct run *r)
{
	struct sb_attach_opts o = { .log_fd = -1, .stop = &attach_stop, .duration = r->cli.duration };
	struct sb_policy *policy = NULL, *learn_policy = NULL;
	struct sb_learn *learn = NULL;
	struct sb_attach_info info;
	struct sb_attach_stats st;
	char *journal = NULL;
	pid_t *pids = NULL;
	size_t n_pids = 0;
	int rc, wstatus = -1, status = SB_EXIT_INTERNAL;

	if (sb_attach_parse_pids(r->cli.attach_pids, &pids, &n_pids) != 0) {
		sb_error("--attach needs process ids, not '%s'", r->cli.attach_pids);
		return SB_EXIT_USAGE;
	}
	if (r->cli.native)
		sb_warn("--native is not used by --attach: locations are Python frames");
	if ((rc = sb_attach_check(pids[0], &info)) != 0) {
		status = attach_error(rc, &info);
		goto out;
	}
	if (r->cli.attach_policy && attach_load(r, r->cli.attach_policy, false, &info, &policy))
		goto out;
	if (r->cli.attach_learn && (attach_load(r, r->cli.attach_learn, true, &info, &learn_policy) ||
				    attach_learner(learn_policy, &info, r->cli.attach_learn, &learn, &journal)))
		goto out;
	if (sb_main_open_log(r))
		goto out;
	attach_signals();
	o.pids = pids;
	o.n_pids = n_pids;
	o.policy = policy;
	o.enforce = r->cli.attach_enforce;
	o.learn = learn;
	o.learn_policy = learn_policy;
	o.log_fd = r->log_fd;
	o.trace = !policy || r->cli.verbose > 0;
	o.info = &info;
	o.stats = &st;
	rc = sb_attach_run(&o, &wstatus);
	if (rc)
		attach_error(rc, &info);
	else
		attach_summary(&o, &st, wstatus);
	/* What was seen is written even when the session ended badly. */
	if (learn && attach_write_learned(learn, r->cli.attach_learn) != 0)
		goto out;
	status = rc ? SB_EXIT_INTERNAL : 0;
out:
	sb_learn_free(learn);
	free(journal);
	sb_policy_free(policy);
	sb_policy_free(learn_policy);
	free(pids);
	return status;
}
