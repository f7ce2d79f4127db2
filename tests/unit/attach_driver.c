/* Test helper: python-sb's attach mode without main.c.
 *
 *   attach_driver [--policy=FILE [--enforce]] [--learn=FILE] [--log=FILE]
 *                 [--duration=SECONDS] [--no-trace] PID[,PID...]
 *
 * Does what main.c is asked to do for --attach (the wiring in the lead's
 * report follows this file): check the first process, load the policy and
 * the rule file being learned into relative to the target's current
 * directory with the target interpreter's implicit grants, run
 * sb_attach_run() with SIGINT/SIGTERM setting the stop flag, write what was
 * learned.  Messages and exit codes are python-sb's: 0 once detached or
 * once the targets ended (their status is reported, not returned), 255 on
 * errors, 2 on usage errors.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "diag.h"
#include "learn.h"
#include "policy.h"
#include "runtime.h"

extern char **environ;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void print_diag(struct sb_diag *d)
{
	sb_diag_sort(d);
	for (size_t i = 0; i < d->n; i++) {
		char *s = sb_diag_format(&d->items[i]);

		fprintf(stderr, "python-sb: %s%s\n", d->items[i].level == SB_DIAG_WARNING ? "warning: " : "",
			s ? s : "(out of memory)");
		free(s);
	}
}

/* A rule file loaded as it would apply to the target; learn_file set for
 * the file being learned into.  Implicit grants of the target interpreter. */
static int load(const char *path, const char *learn_file, const struct sb_attach_info *info,
		struct sb_policy **out)
{
	struct sb_load_opts lo = {
		.config_path = path, .envp = environ, .cwd = info->cwd, .cli_learn = learn_file,
	};
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_policy_load(&lo, out, &d);
	print_diag(&d);
	if (rc == 0 && sb_diag_has_errors(&d))
		rc = -EINVAL;
	sb_diag_free(&d);
	if (rc) {
		fprintf(stderr, "python-sb: cannot load the policy '%s': %s\n", path, strerror(-rc));
		return rc;
	}
	if (info->exe[0] == '/' && (rc = sb_runtime_grants(*out, info->exe)) != 0)
		fprintf(stderr, "python-sb: cannot grant the interpreter's own files (%s): %s\n", info->exe,
			strerror(-rc));
	return rc;
}

static int report_error(int rc, const struct sb_attach_info *info)
{
	switch (rc) {
	case -ESRCH:
		fprintf(stderr, "python-sb: no process %d\n", (int)info->pid);
		break;
	case -EBUSY:
		fprintf(stderr, "python-sb: process %d is already traced by process %d\n", (int)info->pid,
			(int)info->tracer);
		fprintf(stderr, "python-sb: Hint: a process has one tracer at a time (a debugger, strace, "
				"another python-sb)\n");
		break;
	case -EPERM:
		fprintf(stderr, "python-sb: not allowed to trace process %d\n", (int)info->pid);
		if (info->ptrace_scope > 0)
			fprintf(stderr, "python-sb: Hint: /proc/sys/kernel/yama/ptrace_scope is %d: run as root "
					"(or with CAP_SYS_PTRACE)%s\n", info->ptrace_scope,
				info->ptrace_scope == 1 ? ", or lower it to 0" : "");
		else
			fprintf(stderr, "python-sb: Hint: run as the same user as the process or as root; a "
					"Landlock-sandboxed python-sb cannot trace outside its domain\n");
		break;
	case -EINVAL:
		fprintf(stderr, "python-sb: process %d is python-sb itself\n", (int)info->pid);
		break;
	default:
		fprintf(stderr, "python-sb: cannot attach to process %d: %s\n", (int)info->pid, strerror(-rc));
	}
	return 255;
}

int main(int argc, char **argv)
{
	const char *policy_file = NULL, *learn_file = NULL, *log_file = NULL, *pid_arg = NULL;
	struct sb_attach_opts o = { .log_fd = -1, .trace = true, .stop = &stop_flag };
	struct sb_policy *policy = NULL, *learn_policy = NULL;
	struct sb_learn *learn = NULL;
	struct sb_attach_info info;
	struct sb_attach_stats st;
	struct sigaction sa;
	pid_t *pids = NULL;
	size_t n_pids = 0;
	int rc, status = -1, ret = 255;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--policy=", 9) == 0)
			policy_file = argv[i] + 9;
		else if (strcmp(argv[i], "--enforce") == 0)
			o.enforce = true;
		else if (strncmp(argv[i], "--learn=", 8) == 0)
			learn_file = argv[i] + 8;
		else if (strncmp(argv[i], "--log=", 6) == 0)
			log_file = argv[i] + 6;
		else if (strncmp(argv[i], "--duration=", 11) == 0)
			o.duration = atof(argv[i] + 11);
		else if (strcmp(argv[i], "--no-trace") == 0)
			o.trace = false;
		else if (argv[i][0] != '-' && !pid_arg)
			pid_arg = argv[i];
		else {
			fprintf(stderr, "usage: attach_driver [--policy=F [--enforce]] [--learn=F] [--log=F] "
					"[--duration=S] [--no-trace] PID[,PID...]\n");
			return 2;
		}
	}
	if (!pid_arg || sb_attach_parse_pids(pid_arg, &pids, &n_pids) != 0) {
		fprintf(stderr, "python-sb: --attach needs process ids, not '%s'\n", pid_arg ? pid_arg : "");
		return 2;
	}
	if (o.enforce && !policy_file) {
		fprintf(stderr, "python-sb: --enforce needs --policy FILE\n");
		free(pids);
		return 2;
	}
	rc = sb_attach_check(pids[0], &info);
	if (rc) {
		ret = report_error(rc, &info);
		goto out;
	}
	if (policy_file && load(policy_file, NULL, &info, &policy))
		goto out;
	if (learn_file) {
		struct sb_learn_opts lo = { .envp = environ, .cwd = info.cwd, .python_exe = info.exe };

		if (load(learn_file, learn_file, &info, &learn_policy))
			goto out;
		lo.policy = learn_policy;
		if ((rc = sb_learn_new(&lo, &learn)) != 0) {
			fprintf(stderr, "python-sb: cannot start learning: %s\n", strerror(-rc));
			goto out;
		}
	}
	if (log_file && (o.log_fd = open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "python-sb: cannot open the log '%s': %s\n", log_file, strerror(errno));
		goto out;
	}
	/* No SA_RESTART: the signal must end the wait for the next stop. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	o.pids = pids;
	o.n_pids = n_pids;
	o.policy = policy;
	o.learn = learn;
	o.learn_policy = learn_policy;
	o.info = &info;
	o.stats = &st;
	rc = sb_attach_run(&o, &status);
	if (rc) {
		ret = report_error(rc, &info);
		goto out;
	}
	if (learn) {
		struct sb_diag d;
		char *msg = NULL;

		sb_diag_init(&d);
		rc = sb_learn_write(learn, learn_file, NULL, &msg, &d);
		print_diag(&d);
		sb_diag_free(&d);
		if (rc) {
			fprintf(stderr, "python-sb: cannot write the learned rules to '%s': %s\n", learn_file,
				strerror(-rc));
			goto out;
		}
		if (msg)
			fprintf(stderr, "python-sb: %s\n", msg);
		free(msg);
	}
	if (policy && (st.would_deny || st.refused))
		fprintf(stderr, "python-sb: attach: %lu access(es) %s\n", st.refused + st.would_deny,
			o.enforce ? "refused" : "outside the policy");
	if (status == -1)
		fprintf(stderr, "python-sb: detached from process %d\n", (int)pids[0]);
	else if (WIFEXITED(status))
		fprintf(stderr, "python-sb: process %d exited with status %d\n", (int)pids[0], WEXITSTATUS(status));
	else
		fprintf(stderr, "python-sb: process %d was killed by signal %d\n", (int)pids[0], WTERMSIG(status));
	ret = 0;
out:
	if (o.log_fd >= 0)
		close(o.log_fd);
	sb_learn_free(learn);
	sb_policy_free(policy);
	sb_policy_free(learn_policy);
	free(pids);
	return ret;
}
