/* Where the rule file is (reference §1.3): sb_cli_find_config().
 *
 * For "-m pkg.mod" the module's directory is asked of the interpreter the
 * program will run under, since only it knows its sys.path, .pth files and
 * meta-path finders (editable installs).  importlib.util.find_spec() would
 * import the parent packages, that is run the program's own code outside the
 * sandbox, so the finder below walks sys.meta_path itself, handing each level
 * the parent's __path__ as the import system does, without executing anything.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"

/* Prints, NUL-terminated, each directory the module sys.argv[1] lives in
 * (several for a namespace package), or nothing. */
static const char finder_py[] =
	"import os, sys\n"
	"def dirs(name):\n"
	"    path, spec = None, None\n"
	"    parts = name.split('.')\n"
	"    for i in range(len(parts)):\n"
	"        full, spec = '.'.join(parts[:i + 1]), None\n"
	"        for finder in sys.meta_path:\n"
	"            find = getattr(finder, 'find_spec', None)\n"
	"            spec = find(full, path) if find else None\n"
	"            if spec is not None:\n"
	"                break\n"
	"        if spec is None:\n"
	"            return []\n"
	"        path = spec.submodule_search_locations\n"
	"        if path is None and i + 1 < len(parts):\n"
	"            return []\n"
	"    if path is not None:\n"
	"        return list(path)\n"
	"    if spec.has_location and spec.origin:\n"
	"        return [os.path.dirname(spec.origin)]\n"
	"    return []\n"
	"try:\n"
	"    found = dirs(sys.argv[1])\n"
	"except Exception:\n"
	"    sys.exit(1)\n"
	"for d in found:\n"
	"    sys.stdout.buffer.write(os.fsencode(d) + b'\\0')\n";

/* The finder output is a few paths: anything larger is not ours. */
#define FINDER_MAX_OUTPUT 65536

/* ---- paths ------------------------------------------------------------------- */

static char *join(const char *dir, size_t dlen, const char *name)
{
	char *s = NULL;

	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	if (dlen == 0)
		return strdup(name);
	if (asprintf(&s, "%.*s%s%s", (int)dlen, dir, dir[dlen - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return s;
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* <dir>/.py-sandboxes when it exists, dir relative to cwd.  Returns 0 with
 * *out set or left NULL, or -ENOMEM. */
static int config_in(const char *cwd, const char *dir, size_t dlen, char **out)
{
	char *d = NULL, *c;

	if (dlen == 0)
		return 0;
	if (dir[0] != '/') {
		if (asprintf(&d, "%s/%.*s", cwd, (int)dlen, dir) < 0)
			return -ENOMEM;
		dir = d;
		dlen = strlen(d);
	}
	c = join(dir, dlen, SB_CLI_CONFIG_NAME);
	free(d);
	if (!c)
		return -ENOMEM;
	if (is_file(c))
		*out = c;
	else
		free(c);
	return 0;
}

/* An executable on PATH, resolved before fork (execvp may allocate). */
static char *resolve_program(const char *prog)
{
	const char *path = getenv("PATH"), *p;

	if (strchr(prog, '/'))
		return strdup(prog);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p++) {
		const char *end = strchrnul(p, ':');
		char *cand = NULL;

		if (end > p && asprintf(&cand, "%.*s/%s", (int)(end - p), p, prog) >= 0) {
			if (access(cand, X_OK) == 0)
				return cand;
			free(cand);
		}
		if (!*end)
			break;
		p = end;
	}
	errno = ENOENT;
	return NULL;
}

/* ---- running the finder ------------------------------------------------------ */

/* Only async-signal-safe calls: the caller may have threads. */
static void __attribute__((noreturn)) finder_child(const char *exe, char **argv, const char *cwd,
						  int devnull, int out)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(cwd) < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	close_range(3, ~0U, 0);
	execv(exe, argv);
	_exit(127);
}

/* Read the child's stdout until EOF, the size limit or the deadline. */
static int read_all(int fd, long long deadline, char *buf, size_t cap, size_t *len)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - sb_now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		if (*len == cap)
			return -E2BIG;
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*len += (size_t)n;
	}
}

/* Run argv; on success (exit 0 within the time-out) *out holds its stdout. */
static int run_finder(const char *exe, char **argv, const char *cwd, int timeout_ms,
		      char **out, size_t *len)
{
	int pfd[2] = { -1, -1 }, devnull = -1, status = 0, rc;
	long long deadline = sb_now_ms() + timeout_ms;
	char *buf = malloc(FINDER_MAX_OUTPUT);
	pid_t pid = -1;

	*len = 0;
	rc = buf ? 0 : -ENOMEM;
	if (!rc && (pipe2(pfd, O_CLOEXEC) < 0 || (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0))
		rc = -errno;
	if (!rc && (pid = fork()) < 0)
		rc = -errno;
	if (pid == 0)
		finder_child(exe, argv, cwd, devnull, pfd[1]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (!rc)
		rc = read_all(pfd[0], deadline, buf, FINDER_MAX_OUTPUT, len);
	if (pid > 0) {
		int wrc = sb_child_reap(pid, deadline, rc != 0, &status);

		if (!rc)
			rc = wrc;
		if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			rc = -ECHILD;
	}
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (devnull >= 0)
		close(devnull);
	if (rc)
		free(buf);
	else
		*out = buf;
	return rc;
}

/* The CPython options that change sys.path, so that the finder sees the path
 * the program will see. */
static bool path_option(const char *opt)
{
	static const char *const opts[] = { "-E", "-I", "-s", "-S", "-P" };

	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		if (strcmp(opt, opts[k]) == 0)
			return true;
	return false;
}

/* The .py-sandboxes of the first directory of the module that has one. */
static int config_for_module(const struct sb_cli *cli, const char *python, const char *cwd,
			     int timeout_ms, char **out)
{
	char **argv = calloc(cli->n_py_opts + 6, sizeof(*argv));
	char *exe = resolve_program(python), *buf = NULL;
	size_t n = 0, len = 0;
	int rc = 0;

	if (!argv || (!exe && errno == ENOMEM)) {
		rc = -ENOMEM;
		goto out;
	}
	if (!exe)	/* no interpreter: the cwd fallback */
		goto out;
	argv[n++] = (char *)python;
	argv[n++] = "-B";	/* write nothing */
	for (size_t k = 0; k < cli->n_py_opts; k++)
		if (path_option(cli->py_opts[k]))
			argv[n++] = (char *)cli->py_opts[k];
	argv[n++] = "-c";
	argv[n++] = (char *)finder_py;
	argv[n++] = (char *)cli->cmd_arg;
	rc = run_finder(exe, argv, cwd, timeout_ms, &buf, &len);
	if (rc) {	/* not found, failed, hung: the cwd fallback */
		rc = rc == -ENOMEM ? rc : 0;
		goto out;
	}
	for (size_t off = 0; off < len && !*out && !rc;) {
		const char *d = buf + off;
		size_t dl = strnlen(d, len - off);

		if (off + dl == len)	/* no terminator: truncated output */
			break;
		rc = config_in(cwd, d, dl, out);
		off += dl + 1;
	}
out:
	free(buf);
	free(exe);
	free(argv);
	return rc;
}

int sb_cli_find_config_timeout(const struct sb_cli *cli, const char *python, const char *cwd,
			       int timeout_ms, char **out)
{
	const char *slash;
	int rc = 0;

	if (!cli || !cwd || !out)
		return -EINVAL;
	*out = NULL;
	if (cli->config) {
		*out = strdup(cli->config);
		return *out ? 0 : -ENOMEM;
	}
	if (cli->cmd == SB_CMD_SCRIPT && (slash = strrchr(cli->cmd_arg, '/')))
		rc = config_in(cwd, cli->cmd_arg, slash == cli->cmd_arg ? 1 : (size_t)(slash - cli->cmd_arg), out);
	else if (cli->cmd == SB_CMD_MODULE && cli->cmd_arg[0])
		rc = config_for_module(cli, python ? python : cli->python ? cli->python : "python3",
				       cwd, timeout_ms, out);
	if (!rc && !*out)
		*out = join(cwd, strlen(cwd), SB_CLI_CONFIG_NAME);
	if (!rc && !*out)
		rc = -ENOMEM;
	return rc;
}

int sb_cli_find_config(const struct sb_cli *cli, const char *python, const char *cwd, char **out)
{
	return sb_cli_find_config_timeout(cli, python, cwd, SB_CLI_FIND_TIMEOUT_MS, out);
}
