/* python-sb: run a Python program under a learned whitelist.
 *
 * This file is the only one that talks to the user: it parses the command
 * line, loads the policy, chooses the mode (enforce, learn, audit), starts the
 * supervisor and, at the end, writes what was learned and exits with the
 * program's status (its code, or 128+signal), 255 for our own failures.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "diag.h"
#include "drift.h"
#include "interp.h"
#include "learn.h"
#include "log.h"
#include "oslayer.h"
#include "stub_main.h"
#include "policy.h"
#include "print.h"
#include "report.h"
#include "pyframes.h"
#include "runtime.h"
#include "supervisor.h"
#include "main_priv.h"

extern char **environ;

static void run_free(struct run *r)
{
	if (r->agent)
		sb_agent_free(r->agent);
	if (r->oslayer)
		sb_oslayer_free(r->oslayer);
	if (r->agent_child_fd >= 0)
		close(r->agent_child_fd);
	if (r->learn)
		sb_learn_free(r->learn);
	free(r->journal);
	sb_report_free(r->report);
	if (r->log_fd >= 0)
		close(r->log_fd);
	sb_env_free(r->child_env);
	free(r->child_argv);
	sb_policy_free(r->policy);
	free(r->config_path);
	sb_interp_free(&r->interp);
	sb_cli_free(&r->cli);
	pthread_mutex_destroy(&r->event_lock);
}

/* ---- events: log, learn, audit ------------------------------------------ */

static void on_event(const struct sb_event *ev, void *data)
{
	/* Serialised by event_lock; an event with long, escaped paths needs the
	 * full SB_LOG_LINE_MAX, too big for a thread's stack. */
	static char buf[SB_LOG_LINE_MAX];
	static struct sb_event named;
	struct run *r = data;
	int len;

	pthread_mutex_lock(&r->event_lock);
	if (ev->verdict != SB_ALLOWED)
		r->denials++;
	if (r->log_fd >= 0) {
		/* The supervisor's tids are ours (host) to look up; the agent's are
		 * its interpreter's, in a layer's pid namespace maybe: left out.
		 * Always named here: the workers leave comm unset (reading it
		 * was a use of uninitialised memory, found by check-valgrind). */
		if (ev->nr >= 0) {
			named = *ev;
			(void)sb_event_fill_comm(&named);
			ev = &named;
		}
		len = sb_event_to_json(ev, buf, sizeof(buf));
		/* A full disk must not stop the program: a lost log line is counted,
		 * the decision itself was already made. */
		if (len > 0 && write(r->log_fd, buf, (size_t)len) != len)
			r->log_lost++;
	}
	if (r->learn)
		sb_learn_record(r->learn, ev);
	if (r->report)
		sb_report_add(r->report, ev);
	pthread_mutex_unlock(&r->event_lock);
}

/* ---- signals -------------------------------------------------------------- */

/* A terminal's Ctrl-C reaches the whole foreground group, the program
 * included, so only signals sent to python-sb alone (kill(1), a service
 * manager) are forwarded; that way the program sees each signal once. */
static void forward_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (info->si_code == SI_KERNEL)
		return;
	sb_supervise_signal(sig);
}

static void install_signal_forwarding(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- argv for the interpreter -------------------------------------------- */

static int build_child_argv(struct run *r)
{
	return sb_cli_python_argv(&r->cli, r->interp.argv0, &r->child_argv);
}

static bool env_has(char *const *env, const char *key)
{
	size_t klen = strlen(key);

	for (; *env; env++)
		if (strncmp(*env, key, klen) == 0 && (*env)[klen] == '=')
			return true;
	return false;
}

/* Add KEY=VALUE unless KEY is already set. */
static int env_add(char ***envp, const char *key, const char *value)
{
	size_t n = 0;
	char **e = *envp, **ne, *kv;

	if (env_has(e, key))
		return 0;
	while (e[n])
		n++;
	if (asprintf(&kv, "%s=%s", key, value) < 0)
		return -ENOMEM;
	ne = realloc(e, (n + 2) * sizeof(*ne));
	if (!ne) {
		free(kv);
		return -ENOMEM;
	}
	ne[n] = kv;
	ne[n + 1] = NULL;
	*envp = ne;
	return 0;
}

static int build_child_env(struct run *r)
{
	int rc;

	if (r->mode == SB_MODE_LEARN) {
		/* Learning watches the program with the full environment (reference §3)
		 * and records which variables it reads. */
		size_t n = 0;

		while (environ[n])
			n++;
		r->child_env = calloc(n + 1, sizeof(char *));
		if (!r->child_env)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (!(r->child_env[i] = strdup(environ[i])))
				return -ENOMEM;
		return 0;
	}
	const char *term = getenv("TERM");

	rc = sb_policy_build_env(r->policy, environ, &r->child_env);
	if (rc)
		return rc;
	/* Upstream always passes TERM (reference §1.2). */
	if (term && *term && (rc = env_add(&r->child_env, "TERM", term)))
		return rc;
	return rc;
}

/* ---- policy ---------------------------------------------------------------- */

static int load_policy(struct run *r)
{
	struct sb_load_opts o = {
		.config_path = r->config_path,
		.cli_rules = (const char *const *)r->cli.rules,
		.n_cli_rules = r->cli.n_rules,
		.envp = environ,
		.cwd = r->cwd,
		.cli_learn = r->cli.learn ? (r->cli.learn_file ? r->cli.learn_file : "") : NULL,
	};
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_policy_load(&o, &r->policy, &d);
	if (rc == -EINVAL || sb_diag_has_errors(&d)) {
		sb_print_warnings(&d);
		sb_print_config_errors(&d);
		sb_diag_free(&d);
		return -EINVAL;
	}
	sb_print_warnings(&d);
	sb_diag_free(&d);
	if (rc) {
		sb_error("cannot load the policy '%s': %s", r->config_path, strerror(-rc));
		return rc;
	}
	rc = sb_runtime_grants(r->policy, r->interp.exe);
	if (rc)
		sb_error("cannot grant the interpreter's own files (%s): %s", r->interp.exe, strerror(-rc));
	return rc;
}

static int select_mode(struct run *r)
{
	const struct sb_settings *s = sb_policy_settings(r->policy);

	if (s->learn_file) {
		if (r->cli.audit) {
			sb_error("--audit and learning cannot be combined");
			return -EINVAL;
		}
		r->mode = SB_MODE_LEARN;
	} else {
		r->mode = r->cli.audit ? SB_MODE_AUDIT : SB_MODE_ENFORCE;
	}
	return 0;
}

/* ---- running ----------------------------------------------------------------- */

int sb_main_open_log(struct run *r)
{
	if (!r->cli.log_file)
		return 0;
	r->log_fd = open(r->cli.log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (r->log_fd < 0) {
		sb_error("cannot open the log '%s': %s", r->cli.log_file, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Learning and auditing share the recorder: learning turns what it saw into
 * rules, auditing lists what the policy would have refused.  While learning,
 * a journal next to the rule file keeps what was seen if python-sb itself is
 * killed; the next run replays it. */
static int start_learner(struct run *r)
{
	const struct sb_settings *s = sb_policy_settings(r->policy);
	struct sb_learn_opts lo = {
		.policy = r->policy, .envp = environ, .cwd = r->cwd,
		.python_prefix = r->interp.prefix, .python_base_prefix = r->interp.base_prefix,
		.python_exe = r->interp.exe, .audit = r->mode == SB_MODE_AUDIT,
	};
	unsigned long replayed = 0;
	int rc;

	rc = sb_learn_new(&lo, &r->learn);
	if (rc) {
		sb_error("cannot start %s: %s", r->mode == SB_MODE_AUDIT ? "auditing" : "learning", strerror(-rc));
		return rc;
	}
	if (r->mode != SB_MODE_LEARN)
		return 0;
	r->journal = sb_learn_journal_name(s->learn_file);
	if (!r->journal)
		return -ENOMEM;
	rc = sb_learn_replay(r->learn, r->journal, &replayed);
	if (rc)
		sb_warn("cannot replay the learning journal '%s': %s", r->journal, strerror(-rc));
	else if (replayed)
		sb_msg("replayed %lu item(s) an interrupted run left in '%s'", replayed, r->journal);
	rc = sb_learn_journal_open(r->learn, r->journal);
	if (rc)
		sb_warn("no learning journal ('%s': %s): a killed python-sb would lose this run",
			r->journal, strerror(-rc));
	return 0;
}

static int open_report(struct run *r)
{
	int rc;

	if (!r->cli.report_file)
		return 0;
	rc = sb_report_new(r->cli.report_file, &r->report);
	if (rc)
		sb_error("cannot prepare the report '%s': %s", r->cli.report_file, strerror(-rc));
	return rc;
}

/* The report is written whatever the end was, with the final status. */
static int finish_report(struct run *r, int status)
{
	int rc;

	if (!r->report)
		return status;
	rc = sb_report_write(r->report, status, r->config_path);
	if (rc) {
		sb_error("cannot write the report '%s': %s", r->cli.report_file, strerror(-rc));
		return status ? status : SB_EXIT_INTERNAL;
	}
	return status;
}

static int start_helpers(struct run *r)
{
	const struct sb_settings *s = sb_policy_settings(r->policy);
	int rc;

	if (r->mode == SB_MODE_LEARN || r->mode == SB_MODE_AUDIT) {
		rc = start_learner(r);
		if (rc)
			return rc;
	}
	if (!s->py_sandbox)
		return 0;
	if (!sb_agent_loadable(r->cli.py_opts, r->cli.n_py_opts)) {
		sb_warn("-I, -E or -S keep the Python agent out: imports and API calls are not guarded, "
			"the supervisor alone enforces the policy");
		return 0;
	}
	rc = sb_agent_prepare(r->policy, r->mode, &r->child_env, &r->agent, &r->agent_child_fd);
	if (rc) {
		sb_error("cannot prepare the Python agent: %s", strerror(-rc));
		return rc;
	}
	/* The user's own PYTHONDONTWRITEBYTECODE counts even when env= keeps it
	 * from the program.  A failure only leaves the agent to compile in
	 * memory, as it did. */
	if (sb_agent_writes_bytecode(r->cli.py_opts, r->cli.n_py_opts, r->child_env) &&
	    sb_agent_writes_bytecode(NULL, 0, environ))
		(void)sb_agent_bytecode(r->interp.exe);
	return 0;
}

static int exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return SB_EXIT_INTERNAL;
}

static void report_supervise_error(int rc)
{
	switch (rc) {
	case -EBUSY:
		sb_error_hint("run python-sb outside that sandbox (or its supervisor's own policy must "
			      "confine the program)",
			      "another seccomp supervisor already watches this process tree "
			      "(SECCOMP_FILTER_FLAG_NEW_LISTENER: EBUSY)");
		break;
	case -ENOSYS:
	case -EINVAL:
		sb_error_hint("python-sb needs Linux >= 5.14 with CONFIG_SECCOMP_FILTER "
			      "(seccomp user notification with ADDFD_FLAG_SEND)",
			      "this kernel cannot supervise the program: %s", strerror(-rc));
		break;
	default:
		sb_error("cannot start the supervised program: %s", strerror(-rc));
	}
}

static int finish_learning(struct run *r)
{
	const struct sb_settings *s = sb_policy_settings(r->policy);
	struct sb_diag d;
	char *msg = NULL;
	int rc;

	sb_diag_init(&d);
	rc = sb_learn_write(r->learn, s->learn_file, NULL, &msg, &d);
	sb_print_warnings(&d);
	if (rc) {
		sb_print_config_errors(&d);
		sb_error("cannot write the learned rules to '%s': %s", s->learn_file, strerror(-rc));
	} else {
		if (msg)
			sb_msg("%s", msg);
		sb_learn_journal_close(r->learn, true);
	}
	free(msg);
	sb_diag_free(&d);
	return rc;
}

static int apply_oslayer_in_child(void *data)
{
	const struct run *r = data;

	return sb_oslayer_apply_child(r->oslayer);
}

static void print_diag_errors(const struct sb_diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].level == SB_DIAG_ERROR)
			sb_error("%s", d->items[i].msg);
}

/* The program's child applied the layer and probed it: is it refused? */
static int judge_oslayer_probe(void *data)
{
	struct run *r = data;
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_oslayer_selftest_collect(r->oslayer, &d);
	if (rc) {
		print_diag_errors(&d);
		r->layer_failed = true;
	}
	sb_diag_free(&d);
	return rc;
}

/* The kernel layer of os-sandbox= is computed once every grant is known (the
 * policy's, the interpreter's, the agent's), and proven by a self-test probe
 * before the program starts.  Landlock is applied by the spawn's child_setup,
 * which then runs the probe in that very child, and child_ready judges it
 * before the child may exec; the namespaces and the wrappers start the
 * interpreter themselves (the spawn gets the layer in the run options) and
 * are probed here. */
static int prepare_oslayer(struct run *r, enum sb_mode mode, unsigned flags)
{
	struct sb_oslayer_args a = {
		.policy = r->policy, .python_exe = r->interp.exe, .mode = mode, .flags = flags,
	};
	struct sb_diag d;
	int rc;

#ifdef SB_TEST_WIDEN
	/* Test-only binary: a layer that restricts nothing, which its
	 * self-test must catch (tests/integration/os-landlock-selftest.py). */
	if (getenv("SB_TEST_NOOP_LAYER"))
		a.flags |= SB_OSL_F_TEST_NOOP;
#endif
	sb_diag_init(&d);
	rc = sb_oslayer_new_ex(&a, &r->oslayer, &d);
	sb_print_warnings(&d);
	if (rc) {
		print_diag_errors(&d);
		if (!d.n)
			sb_error("cannot prepare the kernel layer: %s", strerror(-rc));
		sb_diag_free(&d);
		return rc;
	}
	sb_diag_free(&d);
	return 0;
}

/* Returns the number of distinct would-be refusals. */
static int print_audit_summary(struct run *r)
{
	char *text = NULL;
	int n = sb_learn_audit_summary(r->learn, &text);

	if (n < 0) {
		sb_error("cannot summarise the audit: %s", strerror(-n));
		return 1;	/* unknown: count as a violation for --fail-on-violation */
	}
	if (n == 0)
		sb_msg("audit: nothing would have been refused");
	else
		fprintf(stderr, "python-sb: audit: %d access(es) would have been refused:\n%s", n, text);
	free(text);
	return n;
}

static int run_program(struct run *r)
{
	struct sb_run_opts o = {
		.policy = r->policy,
		.mode = r->mode,
		.python = r->interp.exe,
		.argv = r->child_argv,
		.envp = r->child_env,
		.notice_fd = STDERR_FILENO,
		.on_event = on_event,
		.event_data = r,
		.refusals_only = r->mode == SB_MODE_ENFORCE && r->log_fd < 0 && !r->learn && !r->report,
		.agent_fd = r->agent_child_fd,
		.agent = r->agent,
		.child_setup = r->oslayer ? apply_oslayer_in_child : NULL,
		.child_ready = r->oslayer ? judge_oslayer_probe : NULL,
		.child_data = r,
		.kernel_enforces_fs = r->oslayer && sb_oslayer_enforces_fs(r->oslayer),
		.kernel_enforces_fs_read = r->oslayer && sb_oslayer_enforces_fs_read(r->oslayer),
		.oslayer = r->oslayer,
	};
	int wstatus = 0, rc;

	if (r->agent && (rc = sb_agent_start(r->agent, on_event, r)) != 0) {
		sb_error("cannot start the Python agent channel: %s", strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	install_signal_forwarding();
	rc = sb_supervise(&o, &wstatus);
	if (r->agent)
		sb_agent_finish(r->agent);
	if (rc) {
		if (!r->layer_failed)
			report_supervise_error(rc);
		return SB_EXIT_INTERNAL;
	}
	if (r->mode == SB_MODE_LEARN && finish_learning(r))
		return SB_EXIT_INTERNAL;
	if (r->log_lost)
		sb_warn("%lu decision(s) could not be written to the log '%s'", r->log_lost, r->cli.log_file);
	if (r->mode == SB_MODE_AUDIT && print_audit_summary(r) > 0 && r->cli.fail_on_violation)
		return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? SB_EXIT_VIOLATION : exit_status(wstatus);
	return exit_status(wstatus);
}

/* ---- the other actions ------------------------------------------------------- */

/* -V/-VV and --help-env/--help-xoptions/--help-all are answered by the
 * interpreter itself, with the options as typed. */
static int exec_python_directly(struct run *r)
{
	char **argv = NULL;
	int rc = sb_cli_python_argv(&r->cli, r->interp.argv0, &argv);

	if (rc) {
		sb_error("cannot build the interpreter's command line: %s", strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	execv(r->interp.exe, argv);
	sb_error("cannot run %s: %s", r->interp.exe, strerror(errno));
	free(argv);
	return SB_EXIT_INTERNAL;
}

static int do_check_config(struct run *r)
{
	char *text = NULL;
	int rc = sb_policy_describe(r->policy, &text);

	if (rc) {
		sb_error("cannot describe the policy: %s", strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	fputs(text, stdout);
	free(text);
	/* Probed at once: its outcome is part of the description. */
	if (prepare_oslayer(r, SB_MODE_ENFORCE, 0))
		return SB_EXIT_INTERNAL;
	rc = sb_oslayer_describe(r->oslayer, &text);
	if (rc) {
		sb_error("cannot describe the kernel layer: %s", strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static int do_diff(struct run *r)
{
	struct sb_diag d;
	char *text = NULL;
	bool widens = false;
	int rc;

	sb_diag_init(&d);
	rc = sb_drift_diff(r->cli.diff_old, r->cli.diff_new, environ, r->cwd, &text, &widens, &d);
	if (rc) {
		sb_print_config_errors(&d);
		sb_diag_free(&d);
		sb_error("cannot compare '%s' and '%s': %s", r->cli.diff_old, r->cli.diff_new, strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	sb_diag_free(&d);
	fputs(text, stdout);
	free(text);
	/* Drift that grants more is what CI must stop on. */
	return widens ? 1 : 0;
}

static int do_stack(struct run *r)
{
	char *text = NULL, *end;
	long pid = strtol(r->cli.stack_pid, &end, 10);
	int rc;

	if (*end || pid <= 0 || pid > INT_MAX) {
		sb_error("--stack needs a process id, not '%s'", r->cli.stack_pid);
		return SB_EXIT_USAGE;
	}
	rc = sb_stack_dump((pid_t)pid, r->cli.native, &text);
	if (rc) {
		if (rc == -EPERM || rc == -EACCES)
			sb_error_hint("run as the same user as the process, as root, or lower "
				      "/proc/sys/kernel/yama/ptrace_scope",
				      "cannot read process %ld: %s", pid, strerror(-rc));
		else if (rc == -ESRCH)
			sb_error("no process %ld", pid);
		else if (rc == -ENOENT)
			sb_error_hint("python-sb reads CPython 3.11 to 3.14",
				      "process %ld does not run a Python interpreter python-sb can read", pid);
		else
			sb_error("cannot read the stacks of process %ld: %s", pid, strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static int find_interpreter(struct run *r)
{
	int rc = sb_interp_find(r->cli.python, getenv("PATH"), &r->interp);

	if (rc) {
		sb_error_hint("install python3, or name one with --python=PATH",
			      "cannot find the interpreter '%s': %s",
			      r->cli.python ? r->cli.python : "python3", strerror(-rc));
	}
	return rc;
}

static int parse_command_line(struct run *r, int argc, char **argv)
{
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_cli_parse(argc, argv, &r->cli, &d);
	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "%s\n", d.items[i].msg);
	sb_diag_free(&d);
	return rc;
}

static int prepare_run(struct run *r)
{
	int rc;

	rc = sb_cli_find_config(&r->cli, r->interp.exe, r->cwd, &r->config_path);
	if (rc) {
		sb_error("cannot locate the rule file: %s", strerror(-rc));
		return SB_EXIT_INTERNAL;
	}
	if (load_policy(r))
		return SB_EXIT_INTERNAL;
	if (r->cli.action == SB_ACT_CHECK_CONFIG)
		return do_check_config(r);
	if (select_mode(r) || build_child_env(r) || sb_main_open_log(r) || open_report(r) ||
	    start_helpers(r) || prepare_oslayer(r, r->mode, SB_OSL_F_SELFTEST_IN_CHILD) || build_child_argv(r))
		return SB_EXIT_INTERNAL;
	return finish_report(r, run_program(r));
}

int main(int argc, char **argv)
{
	struct run r = { .log_fd = -1, .agent_child_fd = -1 };
	int status;

	if (argc > 1 && strcmp(argv[1], "--_sb-stub") == 0)
		return sb_stub_main(argc, argv);
	pthread_mutex_init(&r.event_lock, NULL);
	if (!getcwd(r.cwd, sizeof(r.cwd))) {
		sb_error("cannot read the current directory: %s", strerror(errno));
		return SB_EXIT_INTERNAL;
	}
	if (parse_command_line(&r, argc, argv)) {
		run_free(&r);
		return SB_EXIT_USAGE;
	}
	if (r.cli.report_file && sb_report_format_of(r.cli.report_file) < 0) {
		sb_error_hint("name it .sarif (SARIF 2.1.0), .xml (JUnit XML) or .json",
			      "--report=%s: unknown report format", r.cli.report_file);
		run_free(&r);
		return SB_EXIT_USAGE;
	}
	switch (r.cli.action) {
	case SB_ACT_HELP:
		fputs(sb_cli_help(), stdout);
		status = 0;
		break;
	case SB_ACT_DIFF:
		status = do_diff(&r);
		break;
	case SB_ACT_STACK:
		status = do_stack(&r);
		break;
	case SB_ACT_ATTACH:
		status = sb_main_attach(&r);
		break;
	case SB_ACT_VERSION:
	case SB_ACT_PY_HELP:
		status = find_interpreter(&r) ? SB_EXIT_INTERNAL : exec_python_directly(&r);
		break;
	default:
		status = find_interpreter(&r) ? SB_EXIT_INTERNAL : prepare_run(&r);
	}
	run_free(&r);
	return status;
}
