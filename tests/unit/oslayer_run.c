/* Test driver for the kernel layers without the supervisor: load a policy,
 * prepare the layer (with its self-test), fork, apply it in the child, exec
 * a Python program.  What the program is refused is then refused by the
 * kernel layer alone.
 *
 *   oslayer_run [--config FILE] [--rule KEY=VALUE]... [--abi N] [--noop]
 *               [--no-selftest] [--describe] [--argv] [--probe-abi]
 *               -- PYTHON ARGS...
 *
 * The driver plays the supervisor's part of the listener hand-over: the
 * child's "filter" (installed after the layer, as spawn.c does) notifies
 * getppid() only, and the driver answers each with 4242, so a program that
 * sees os.getppid() == 4242 proves the listener crossed the namespaces or
 * the wrapper (whose stub is this binary, --_sb-stub) and is innermost.
 *
 * Exit: the program's status; 200 when the layer was refused (diag printed),
 * 201 on usage or harness errors.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "landlock.h"
#include "oslayer.h"
#include "policy.h"

extern char **environ;

enum { EXIT_LAYER = 200, EXIT_HARNESS = 201 };

static void print_diag(const struct sb_diag *d)
{
	for (size_t i = 0; i < d->n; i++) {
		char *s = sb_diag_format(&d->items[i]);

		fprintf(stderr, "oslayer_run: %s: %s\n", d->items[i].level == SB_DIAG_ERROR ? "error" : "warning",
			s ? s : d->items[i].msg);
		free(s);
	}
}

/* ---- the stub (inside bwrap / firejail) -------------------------------------- */

static int install_filter(void *data)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd = -ENOMEM;

	(void)data;
	if (!ctx)
		return -ENOMEM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fd = -errno;
		goto out;
	}
	fd = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0);
	if (!fd)
		fd = seccomp_load(ctx);
	if (!fd)
		fd = seccomp_notify_fd(ctx);
out:
	seccomp_release(ctx);
	return fd;
}

static int stub_main(int argc, char **argv)
{
	const char *exe;
	char **py_argv;
	int fd, rc = sb_oslayer_stub_parse(argc, argv, &fd, &exe, &py_argv);

	if (rc)
		return EXIT_HARNESS;
	rc = sb_oslayer_stub_exec(fd, install_filter, NULL, exe, py_argv, environ);
	fprintf(stderr, "oslayer_run: stub: %s\n", strerror(-rc));
	return EXIT_HARNESS;
}

/* Answer every getppid() with 4242 until the listener closes. */
static void *answer_notifications(void *arg)
{
	int listener = *(int *)arg;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;

	if (seccomp_notify_alloc(&req, &resp))
		return NULL;
	for (;;) {
		memset(req, 0, sizeof(*req));
		if (seccomp_notify_receive(listener, req)) {
			if (errno == EINTR)
				continue;
			break;
		}
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		resp->val = 4242;
		seccomp_notify_respond(listener, resp);
	}
	seccomp_notify_free(req, resp);
	return NULL;
}

/* ---- running ---------------------------------------------------------------- */

struct opts {
	const char *config;
	const char *rules[64];
	size_t n_rules;
	int abi;
	unsigned flags;
	bool describe, print_argv, probe_abi;
	char **prog;
};

static int parse(int argc, char **argv, struct opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--config") && i + 1 < argc)
			o->config = argv[++i];
		else if (!strcmp(a, "--rule") && i + 1 < argc && o->n_rules < 64)
			o->rules[o->n_rules++] = argv[++i];
		else if (!strcmp(a, "--abi") && i + 1 < argc)
			o->abi = atoi(argv[++i]);
		else if (!strcmp(a, "--noop"))
			o->flags |= SB_OSL_F_TEST_NOOP;
		else if (!strcmp(a, "--no-selftest"))
			o->flags |= SB_OSL_F_NO_SELFTEST;
		else if (!strcmp(a, "--describe"))
			o->describe = true;
		else if (!strcmp(a, "--argv"))
			o->print_argv = true;
		else if (!strcmp(a, "--probe-abi"))
			o->probe_abi = true;
		else
			return -EINVAL;
	}
	if (i + 1 >= argc && !o->probe_abi)
		return -EINVAL;
	o->prog = argv + i + 1;
	return 0;
}

static int load(const struct opts *o, struct sb_policy **p)
{
	char cwd[PATH_MAX];
	struct sb_load_opts lo = {
		.config_path = o->config, .cli_rules = o->rules, .n_cli_rules = o->n_rules,
		.envp = environ, .cwd = getcwd(cwd, sizeof(cwd)), .no_dns = true,
		.template_path = SB_SRCDIR "/rules/py-sandboxes.template",
	};
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_policy_load(&lo, p, &d);
	print_diag(&d);
	sb_diag_free(&d);
	return rc;
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return EXIT_HARNESS;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void __attribute__((noreturn)) child_fail(int rc)
{
	char msg[512];
	size_t n = sb_oslayer_child_error(rc, msg, sizeof(msg) - 1);

	msg[n++] = '\n';
	if (write(2, msg, n) < 0)
		_exit(EXIT_LAYER);
	_exit(EXIT_LAYER);
}

/* The spawn's order: namespaces, Landlock, then the filter, whose listener
 * goes to the parent over the socket (the unshare grandchild's host pid is
 * unknown to us, so no pidfd_getfd on a pid we guess). */
static int run_direct(struct sb_oslayer *l, char **prog)
{
	int sv[2], listener, rc;
	struct sb_diag d;
	pthread_t th;
	pid_t pid;

	if (sb_oslayer_stub_socketpair(sv) || sb_oslayer_before_clone(l))
		return EXIT_HARNESS;
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(sb_oslayer_clone_flags(l) | SIGCHLD), 0, 0, 0, 0);
	if (pid < 0)
		return EXIT_HARNESS;
	if (pid == 0) {
		close(sv[0]);
		if ((rc = sb_oslayer_setup_ns_child(l)) || (rc = sb_oslayer_apply_child(l)))
			child_fail(rc);
		listener = install_filter(NULL);
		if (listener < 0 || sb_oslayer_send_listener(sv[1], listener))
			_exit(EXIT_HARNESS);
		close(listener);
		close(sv[1]);
		execve(prog[0], prog, environ);
		_exit(127);
	}
	close(sv[1]);
	sb_diag_init(&d);
	rc = sb_oslayer_after_clone(l, pid, &d);
	print_diag(&d);
	sb_diag_free(&d);
	if (rc) {
		kill(pid, SIGKILL);
		wait_child(pid);
		sb_oslayer_spawn_done(l);
		return EXIT_LAYER;
	}
	rc = sb_oslayer_recv_listener(sv[0], &listener);
	close(sv[0]);
	if (rc) {
		rc = wait_child(pid);
		sb_oslayer_spawn_done(l);
		return rc == EXIT_LAYER ? rc : EXIT_HARNESS;
	}
	pthread_create(&th, NULL, answer_notifications, &listener);
	pthread_detach(th);
	rc = wait_child(pid);
	sb_oslayer_spawn_done(l);
	return rc;
}

static int run_wrapped(const struct sb_oslayer *l, char **prog, bool print_only)
{
	int sv[2], listener, rc;
	char **argv = NULL;
	pthread_t th;
	pid_t pid;

	if (sb_oslayer_stub_socketpair(sv) ||
	    sb_oslayer_wrap_argv(l, prog[0], prog, sv[1], &argv))
		return EXIT_HARNESS;
	if (print_only) {
		for (size_t i = 0; argv[i]; i++)
			printf("%s\n", argv[i]);
		sb_oslayer_argv_free(argv);
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	close(sv[1]);
	sb_oslayer_argv_free(argv);
	rc = sb_oslayer_recv_listener(sv[0], &listener);
	close(sv[0]);
	if (rc) {
		fprintf(stderr, "oslayer_run: no listener from the stub: %s\n", strerror(-rc));
		wait_child(pid);
		return EXIT_LAYER;
	}
	pthread_create(&th, NULL, answer_notifications, &listener);
	pthread_detach(th);
	return wait_child(pid);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct sb_policy *p = NULL;
	struct sb_oslayer *l = NULL;
	struct sb_diag d;
	char *text;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "--_sb-stub"))
		return stub_main(argc, argv);
	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: oslayer_run [--config F] [--rule K=V]... [--abi N] [--noop] "
			"[--no-selftest] [--describe] [--argv] -- PYTHON ARGS...\n");
		return EXIT_HARNESS;
	}
	if (o.probe_abi) {
		printf("%d\n", sb_ll_probe_abi());
		return 0;
	}
	if (load(&o, &p))
		return EXIT_HARNESS;
	sb_diag_init(&d);
	{
		struct sb_oslayer_args a = {
			.policy = p, .python_exe = o.prog[0], .mode = SB_MODE_ENFORCE,
			.flags = o.flags, .abi = o.abi,
		};

		rc = sb_oslayer_new_ex(&a, &l, &d);
	}
	print_diag(&d);
	sb_diag_free(&d);
	if (rc) {
		fprintf(stderr, "oslayer_run: layer refused: %s\n", strerror(-rc));
		sb_policy_free(p);
		return EXIT_LAYER;
	}
	if (o.describe) {
		if (!sb_oslayer_describe(l, &text)) {
			fputs(text, stdout);
			free(text);
		}
		rc = 0;
	} else if (sb_oslayer_kind(l) == SB_OSL_BWRAP || sb_oslayer_kind(l) == SB_OSL_FIREJAIL) {
		rc = run_wrapped(l, o.prog, o.print_argv);
	} else {
		fflush(NULL);
		rc = run_direct(l, o.prog);
	}
	sb_oslayer_free(l);
	sb_policy_free(p);
	return rc;
}
