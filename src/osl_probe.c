/* Self-test of a kernel layer: a probe child applies the very layer the
 * program will get and tries one path and one TCP port the policy refuses.
 * A layer that lets either through stops the run (anchors §5.5 item 15: a
 * silently inert layer is worse than none, OpenShell #803). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "osl_int.h"

struct probe_res {
	int setup;		/* 0 or -errno from applying the layer */
	int file;		/* errno of the open, 0 = it opened */
	int conn;
	int bind;
	char msg[256];		/* the child's account of a setup failure */
};

struct probe {
	char file[PATH_MAX];	/* "" when no path could be probed */
	bool created;
	int cport, bport;	/* -1: not probed */
	int listener;		/* unshare: a host-side listener on cport */
};

/* ---- choosing what to probe --------------------------------------------------- */

typedef bool covered_fn(const struct sb_oslayer *l, const char *path);

static bool ll_covered(const struct sb_oslayer *l, const char *path)
{
	return sb_ll_plan_grants(l->ll, path, SB_LL_FS_READ_FILE);
}

/* What the new root shows: the exposures, and its own /proc and /dev. */
static bool exposed(const struct sb_oslayer *l, const char *path)
{
	if (osl_path_under(path, "/proc") || osl_path_under(path, "/dev"))
		return true;
	for (size_t i = 0; i < l->in.n_paths; i++)
		if (osl_path_under(path, l->in.paths[i].path))
			return true;
	return false;
}

/* A fresh file in a writable place no rule covers; else an existing
 * readable system file no rule covers. */
static void pick_file(const struct sb_oslayer *l, covered_fn *covered, struct probe *pr)
{
	static const char *const existing[] = { "/etc/passwd", "/etc/hostname", "/etc/os-release",
						"/proc/version" };
	const char *dirs[] = { getenv("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm", getenv("HOME") };

	pr->file[0] = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *dir = dirs[i] && dirs[i][0] == '/' ? realpath(dirs[i], NULL) : NULL;
		int fd;

		if (!dir)
			continue;
		snprintf(pr->file, sizeof(pr->file), "%s/.python-sb-probe-XXXXXX", strcmp(dir, "/") ? dir : "");
		free(dir);
		if (covered(l, pr->file))
			continue;
		fd = mkstemp(pr->file);
		if (fd < 0)
			continue;
		close(fd);
		pr->created = true;
		return;
	}
	for (size_t i = 0; i < sizeof(existing) / sizeof(existing[0]); i++) {
		char *canon = realpath(existing[i], NULL);

		if (canon && !covered(l, canon) && access(canon, R_OK) == 0) {
			snprintf(pr->file, sizeof(pr->file), "%s", canon);
			free(canon);
			return;
		}
		free(canon);
	}
	pr->file[0] = 0;
}

static int pick_port(const struct sb_ll_plan *p, uint64_t right)
{
	if (!(p->handled_net & right))
		return -1;
	for (int port = 65535; port > 0; port--)
		if (!sb_ll_plan_port_allowed(p, (uint16_t)port, right))
			return port;
	return -1;
}

/* ---- the probe child ------------------------------------------------------------ */

static int try_tcp(int port, bool do_bind)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (s < 0)
		return errno;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = do_bind ? bind(s, (struct sockaddr *)&sin, sizeof(sin))
		     : connect(s, (struct sockaddr *)&sin, sizeof(sin));
	rc = rc < 0 ? errno : 0;
	close(s);
	return rc;
}

/* In the child, after the layer is applied: system calls only. */
static void run_probes(const struct probe *pr, struct probe_res *r)
{
	if (pr->file[0]) {
		int fd = open(pr->file, O_RDONLY | O_CLOEXEC);

		r->file = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
	if (pr->cport > 0)
		r->conn = try_tcp(pr->cport, false);
	if (pr->bport > 0)
		r->bind = try_tcp(pr->bport, true);
}

static void child_report(int wfd, struct probe_res *r)
{
	(void)sb_write_all(wfd, r, sizeof(*r));	/* short: the parent fails closed */
	_exit(0);
}

static void probe_child(const struct sb_oslayer *l, const struct probe *pr, int wfd)
{
	struct probe_res r;

	memset(&r, 0, sizeof(r));
	if (l->kind == SB_OSL_UNSHARE)
		r.setup = sb_oslayer_setup_ns_child(l);
	else
		r.setup = sb_oslayer_apply_child(l);
	if (r.setup)
		sb_oslayer_child_error(r.setup, r.msg, sizeof(r.msg));
	else
		run_probes(pr, &r);
	child_report(wfd, &r);
}

static int run_child(const struct sb_oslayer *cl, const struct probe *pr, struct probe_res *r,
		     struct sb_diag *diag)
{
	struct sb_oslayer *l = (struct sb_oslayer *)cl;	/* per-spawn state (slirp4netns) only */
	int fds[2], status, rc;
	ssize_t got = 0;
	pid_t pid;

	rc = sb_oslayer_before_clone(l);
	if (rc)
		return rc;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	pid = (pid_t)syscall(SYS_clone, (unsigned long)(sb_oslayer_clone_flags(l) | SIGCHLD), 0, 0, 0, 0);
	if (pid < 0) {
		rc = -errno;
		close(fds[0]);
		close(fds[1]);
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		probe_child(l, pr, fds[1]);
	}
	close(fds[1]);
	rc = sb_oslayer_after_clone(l, pid, diag);
	if (rc)
		kill(pid, SIGKILL);
	while (!rc && (size_t)got < sizeof(*r)) {
		ssize_t n = read(fds[0], (char *)r + got, sizeof(*r) - (size_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && (size_t)got != sizeof(*r))
		rc = -EPROTO;	/* the child died before it answered: fail closed */
out:
	sb_oslayer_spawn_done(l);
	return rc;
}

/* ---- judging ------------------------------------------------------------------------ */

static const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "no error";

	return n ? n : "?";
}

/* `want` lists the errnos that prove a refusal (0-terminated). */
static int judge(struct osl_strv *out, struct sb_diag *diag, const char *layer, const char *what,
		 int got, const int *want)
{
	for (const int *w = want; *w; w++)
		if (got == *w) {
			osl_strv_addf(out, "self-test: %s refused (%s)", what, errname(got));
			return 0;
		}
	sb_diag_error(diag, "", 0, "os-sandbox=%s: the self-test failed: %s was not refused (%s); "
		      "the kernel layer does not enforce the policy, so the program is not started. "
		      "Hint: report this with the output of python-sb --check-config", layer, what,
		      got ? errname(got) : "it succeeded");
	return -EIO;
}

static int evaluate(const struct sb_oslayer *l, const struct probe *pr, const struct probe_res *r,
		    const int *want_file, const int *want_net, struct osl_strv *out, struct sb_diag *diag)
{
	const char *name = sb_oslayer_name(l);
	char what[PATH_MAX + 64];
	int rc = 0;

	if (r->setup) {
		sb_diag_error(diag, "", 0, "os-sandbox=%s cannot be applied: %s", name, r->msg);
		return -ENOTSUP;
	}
	if (pr->file[0]) {
		snprintf(what, sizeof(what), "reading %s", pr->file);
		rc = judge(out, diag, name, what, r->file, want_file);
	} else {
		osl_strv_add(out, "self-test: no file outside the exposures to probe (the policy exposes "
			     "every candidate location)");
	}
	if (!rc && pr->cport > 0) {
		snprintf(what, sizeof(what), "TCP connect to 127.0.0.1 port %d", pr->cport);
		rc = judge(out, diag, name, what, r->conn, want_net);
	}
	if (!rc && pr->bport > 0) {
		snprintf(what, sizeof(what), "TCP bind to 127.0.0.1 port %d", pr->bport);
		rc = judge(out, diag, name, what, r->bind, want_net);
	}
	if (!rc && out->oom)
		rc = -ENOMEM;
	return rc;
}

static const int ll_refused[] = { EACCES, 0 };

static void plan_landlock(const struct sb_oslayer *l, struct probe *pr)
{
	*pr = (struct probe){ .cport = -1, .bport = -1, .listener = -1 };
	pick_file(l, ll_covered, pr);
	pr->cport = pick_port(l->ll, SB_LL_NET_CONNECT_TCP);
	pr->bport = pick_port(l->ll, SB_LL_NET_BIND_TCP);
}

int osl_selftest_landlock(const struct sb_oslayer *l, struct osl_strv *out, struct sb_diag *diag)
{
	struct probe pr;
	struct probe_res r;
	int rc;

	plan_landlock(l, &pr);
	memset(&r, 0, sizeof(r));
	rc = run_child(l, &pr, &r, diag);
	if (pr.created)
		unlink(pr.file);
	if (rc) {
		sb_diag_error(diag, "", 0, "os-sandbox=landlock: the self-test probe could not run: %s",
			      strerror(-rc));
		return rc;
	}
	return evaluate(l, &pr, &r, ll_refused, ll_refused, out, diag);
}

/* ---- the probe in the program's own child (Landlock) ------------------------------- */

/* A probe child costs a fork, a wait and a second application of the layer
 * on the way to every program start; the program's own child can run the
 * same probes right after restricting itself, before its filter and its
 * execve, while the parent waits for its report anyway. */
struct osl_pending {
	struct probe pr;
	int fd[2];		/* the child's result: it writes, the parent reads */
};

int osl_selftest_landlock_defer(struct sb_oslayer *l)
{
	struct osl_pending *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (pipe2(p->fd, O_CLOEXEC) < 0) {
		int rc = -errno;

		free(p);
		return rc;
	}
	plan_landlock(l, &p->pr);
	l->pending = p;
	return 0;
}

void osl_pending_child(const struct sb_oslayer *l)
{
	struct probe_res r;

	if (!l->pending)
		return;
	memset(&r, 0, sizeof(r));
	run_probes(&l->pending->pr, &r);
	/* A short write leaves the parent a short read: it fails closed. */
	(void)sb_write_all(l->pending->fd[1], &r, sizeof(r));
}

void osl_pending_free(struct sb_oslayer *l)
{
	struct osl_pending *p = l->pending;

	if (!p)
		return;
	for (int i = 0; i < 2; i++)
		if (p->fd[i] >= 0)
			close(p->fd[i]);
	if (p->pr.created)
		unlink(p->pr.file);
	free(p);
	l->pending = NULL;
}

int osl_pending_collect(struct sb_oslayer *l, struct sb_diag *diag)
{
	struct osl_pending *p = l->pending;
	struct probe_res r;
	int rc;

	/* Our write end closed, the read ends at the child's report or, if it
	 * died without one, at once. */
	close(p->fd[1]);
	p->fd[1] = -1;
	if (sb_read_all(p->fd[0], &r, sizeof(r)) != 0) {
		sb_diag_error(diag, "", 0, "os-sandbox=landlock: the self-test probe could not run: %s",
			      strerror(EPROTO));
		rc = -EPROTO;
	} else {
		osl_strv_free(&l->selftest);
		rc = evaluate(l, &p->pr, &r, ll_refused, ll_refused, &l->selftest, diag);
	}
	osl_pending_free(l);
	return rc;
}

/* A listener on the host's loopback: from inside a network namespace of
 * its own, the program must not reach it. */
static int host_listener(int *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(s, 1) < 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) < 0) {
		int err = -errno;

		close(s);
		return err;
	}
	*port = ntohs(sin.sin_port);
	return s;
}

int osl_selftest_unshare(const struct sb_oslayer *l, struct osl_strv *out, struct sb_diag *diag)
{
	static const int hidden[] = { ENOENT, EACCES, 0 };
	static const int unreachable[] = { ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, 0 };
	struct probe pr = { .cport = -1, .bport = -1, .listener = -1 };
	struct probe_res r;
	int rc;

	pick_file(l, exposed, &pr);
	pr.listener = host_listener(&pr.cport);
	if (pr.listener < 0) {
		rc = pr.listener;
		goto out;
	}
	memset(&r, 0, sizeof(r));
	rc = run_child(l, &pr, &r, diag);
	if (rc == -EPERM || rc == -EINVAL || rc == -ENOSPC || rc == -EUSERS) {
		sb_diag_error(diag, "", 0, "os-sandbox=unshare cannot be applied: creating the namespaces "
			      "failed (%s). Hint: unprivileged user namespaces must be enabled "
			      "(sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1, "
			      "kernel.apparmor_restrict_unprivileged_userns=0)", strerror(-rc));
		rc = -ENOTSUP;
		goto out;
	}
	if (!rc)
		rc = evaluate(l, &pr, &r, hidden, unreachable, out, diag);
	else
		sb_diag_error(diag, "", 0, "os-sandbox=unshare: the self-test probe could not run: %s",
			      strerror(-rc));
out:
	if (pr.listener >= 0)
		close(pr.listener);
	if (pr.created)
		unlink(pr.file);
	return rc;
}

/* ---- wrappers: the interpreter itself is the probe ------------------------------------ */

static const char wrap_probe_code[] =
	"import socket, sys\n"
	"f, p = sys.argv[1], int(sys.argv[2])\n"
	"a = b = 0\n"
	"try:\n"
	"    open(f).close()\n"
	"except OSError as e:\n"
	"    a = e.errno\n"
	"if p > 0:\n"
	"    s = socket.socket()\n"
	"    try:\n"
	"        s.connect(('127.0.0.1', p))\n"
	"    except OSError as e:\n"
	"        b = e.errno\n"
	"print('probe', a, b)\n";

/* Run `argv` with stdout and stderr into one pipe; its text into buf. */
static int run_capture(char *const *argv, char *buf, size_t len, int *status)
{
	int fds[2];
	size_t got = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == len - 1)
			break;
	}
	buf[got] = 0;
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

int osl_selftest_wrapper(const struct sb_oslayer *l, const char *python_exe, struct osl_strv *out,
			 struct sb_diag *diag)
{
	static const int hidden[] = { ENOENT, EACCES, 0 };
	static const int unreachable[] = { ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, 0 };
	struct probe pr = { .cport = -1, .bport = -1, .listener = -1 };
	bool noop = l->flags & SB_OSL_F_TEST_NOOP;
	struct probe_res r = { 0 };
	struct osl_strv argv = { 0 };
	char text[2048], port[16], *line;
	int status = 0, rc;

	pick_file(l, exposed, &pr);
	/* With the host's network shared on purpose there is no port to prove. */
	if (!(l->kind == SB_OSL_BWRAP && !osl_strv_has(&l->wrap_opts, "--unshare-net")))
		pr.listener = host_listener(&pr.cport);
	if (!noop) {
		osl_strv_add(&argv, l->wrap_bin);
		for (size_t i = 0; i < l->wrap_opts.n; i++)
			osl_strv_add(&argv, l->wrap_opts.v[i]);
		osl_strv_add(&argv, "--");
	}
	snprintf(port, sizeof(port), "%d", pr.cport);
	osl_strv_add(&argv, python_exe);
	osl_strv_add(&argv, "-I");
	osl_strv_add(&argv, "-S");
	osl_strv_add(&argv, "-c");
	osl_strv_add(&argv, wrap_probe_code);
	osl_strv_add(&argv, pr.file[0] ? pr.file : "/");
	osl_strv_add(&argv, port);
	rc = argv.oom ? -ENOMEM : run_capture(argv.v, text, sizeof(text), &status);
	if (rc)
		goto out;
	line = strstr(text, "probe ");
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !line ||
	    sscanf(line, "probe %d %d", &r.file, &r.conn) != 2) {
		text[strcspn(text, "\n")] = 0;
		snprintf(r.msg, sizeof(r.msg), "%.60s did not run the probe: %.160s", l->wrap_bin,
			 text[0] ? text : "no output");
		r.setup = -ENOTSUP;
	}
	rc = evaluate(l, &pr, &r, hidden, unreachable, out, diag);
out:
	if (pr.listener >= 0)
		close(pr.listener);
	if (pr.created)
		unlink(pr.file);
	osl_strv_free(&argv);
	return rc;
}
