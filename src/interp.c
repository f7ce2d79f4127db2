/* See interp.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interp.h"

extern char **environ;

static bool is_exec_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static int search_path(const char *name, const char *path_env, char **out)
{
	const char *p = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";

	while (*p) {
		const char *colon = strchrnul(p, ':');
		size_t dlen = (size_t)(colon - p);
		char *cand = NULL;

		if (dlen == 0) {
			if (asprintf(&cand, "./%s", name) < 0)
				return -ENOMEM;
		} else if (asprintf(&cand, "%.*s/%s", (int)dlen, p, name) < 0) {
			return -ENOMEM;
		}
		if (is_exec_file(cand)) {
			*out = cand;
			return 0;
		}
		free(cand);
		p = *colon ? colon + 1 : colon;
	}
	return -ENOENT;
}

static bool is_elf(const char *p)
{
	unsigned char magic[4];
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

/* A pyenv shim (or any wrapper script) would make the sandboxed program's first
 * exec a shell, which then execs python: ask the wrapper once where the real
 * interpreter is, and run that directly. */
static int ask_executable(const char *wrapper, char **out)
{
	char *argv[] = { (char *)wrapper, "-c", "import sys; sys.stdout.write(sys.executable)", NULL };
	posix_spawn_file_actions_t fa;
	char buf[PATH_MAX];
	size_t len = 0;
	int pipefd[2], status, rc;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	rc = posix_spawn(&pid, wrapper, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc) {
		close(pipefd[0]);
		return -rc;
	}
	for (;;) {
		ssize_t n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1)
			break;
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || buf[0] != '/' || !is_exec_file(buf))
		return -ENOEXEC;
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

static char *parent_dir(const char *path, int levels)
{
	char *d = strdup(path);

	while (d && levels-- > 0) {
		char *slash = strrchr(d, '/');

		if (!slash)
			break;
		if (slash == d)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return d;
}

/* CPython's getpath in short: a pyvenv.cfg next to or above the executable
 * makes that directory sys.prefix; the real installation is two levels above
 * the resolved binary (bin/python3.X). */
static int derive_prefixes(struct sb_interp *in)
{
	char real[PATH_MAX], *venv, cfg[PATH_MAX + 16];

	if (!realpath(in->exe, real))
		return -errno;
	in->prefix = parent_dir(real, 2);
	if (!in->prefix)
		return -ENOMEM;
	venv = parent_dir(in->exe, 2);
	if (!venv)
		return -ENOMEM;
	snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", venv);
	if (access(cfg, F_OK) == 0 && strcmp(venv, in->prefix) != 0) {
		in->base_prefix = in->prefix;
		in->prefix = venv;
	} else {
		free(venv);
	}
	return 0;
}

int sb_interp_find(const char *requested, const char *path_env, struct sb_interp *out)
{
	const char *name = requested && *requested ? requested : "python3";
	char *found = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/')) {
		if (name[0] == '/') {
			found = strdup(name);
		} else {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd)))
				return -errno;
			if (asprintf(&found, "%s/%s", cwd, name) < 0)
				found = NULL;
		}
		if (!found)
			return -ENOMEM;
		if (!is_exec_file(found)) {
			free(found);
			return -ENOENT;
		}
	} else {
		rc = search_path(name, path_env, &found);
		if (rc)
			return rc;
	}
	if (!is_elf(found)) {
		char *real = NULL;

		rc = ask_executable(found, &real);
		free(found);
		if (rc)
			return rc;
		found = real;
	}
	out->exe = found;
	out->argv0 = strdup(found);
	rc = out->argv0 ? derive_prefixes(out) : -ENOMEM;
	if (rc)
		sb_interp_free(out);
	return rc;
}

void sb_interp_free(struct sb_interp *in)
{
	free(in->exe);
	free(in->argv0);
	free(in->prefix);
	free(in->base_prefix);
	in->exe = in->argv0 = in->prefix = in->base_prefix = NULL;
}
