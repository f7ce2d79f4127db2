/* Bytecode of the agent for the chosen interpreter (see agent.h).
 *
 * The sandbox grants the agent's directories read-only, so an interpreter
 * whose cache tag has no .pyc there compiles every agent module in memory
 * at every start: 30-40 ms, more than everything else python-sb adds.  One
 * compileall run outside the sandbox, before the program, fixes that for
 * every later start. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "child.h"
#include "landlock.h"
#include "runtime.h"

#define COMPILE_TIMEOUT_MS 30000

/* What every start with the agent imports: sitecustomize from the bootstrap,
 * the rest from the package directory.  tests/integration/agent-bytecode.py
 * compares this list with what an interpreter really loads. */
static const char *const startup_modules[] = {
	"pysandboxes/__init__.py",	  "pysandboxes/_agent.py",
	"pysandboxes/_bootstrap.py",	  "pysandboxes/_importstat.py",
	"pysandboxes/guards/__init__.py", "pysandboxes/guards/api.py",
	"pysandboxes/guards/dns.py",	  "pysandboxes/guards/imports.py",
};

enum pyc_state { PYC_CURRENT, PYC_STALE, PYC_STALE_LOCKED };

/* "cpython-312" for an interpreter of version "3.12".  Only a plain build
 * (python3.N, or a layout with lib/python3.N): a free-threaded python3.13t
 * has another tag, and guessing it wrong would compile at every start. */
static int cache_tag(const char *python, char *tag, size_t cap)
{
	char ver[16], real[PATH_MAX], *dot;
	const char *base;
	int rc;

	if (!realpath(python, real))
		return -errno;
	rc = sb_runtime_version(real, ver, sizeof(ver));
	if (rc)
		return rc;
	base = strrchr(real, '/') + 1;
	dot = strchr(ver, '.');
	if (!dot || ver[strspn(ver, "0123456789.")] || strchr(dot + 1, '.') ||
	    (strncmp(base, "python3.", 8) == 0 && strcmp(base + 6, ver) != 0))
		return -ENOENT;
	*dot = '\0';
	if (snprintf(tag, cap, "cpython-%s%s", ver, dot + 1) >= (int)cap)
		return -ENAMETOOLONG;
	return 0;
}

static uint32_t le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Does the .pyc at `pyc` match the source's stat as the interpreter checks
 * it (PEP 552: flags, then the source's mtime and size, both mod 2^32)?  A
 * hash-based .pyc is the interpreter's to validate: counted as current. */
static bool pyc_matches(const char *pyc, const struct stat *src)
{
	unsigned char h[16];
	ssize_t n;
	int fd = open(pyc, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h))
		return false;
	if (le32(h + 4) != 0)
		return true;
	return le32(h + 8) == (uint32_t)src->st_mtime && le32(h + 12) == (uint32_t)src->st_size;
}

/* Only a directory of the user's own: root running python-sb from a user's
 * source tree must not leave root's files there, which that user could not
 * remove. */
static bool may_write(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && st.st_uid == geteuid() &&
	       faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0;
}

/* The state of dir/rel's bytecode; a missing source counts as current
 * (nothing to compile). */
static enum pyc_state module_state(const char *dir, const char *rel, const char *tag)
{
	char src[PATH_MAX], cache[PATH_MAX], pyc[PATH_MAX];
	const char *slash = strrchr(rel, '/'), *stem = slash ? slash + 1 : rel;
	int sub = slash ? (int)(slash - rel) : 0;
	struct stat st;

	if (snprintf(src, sizeof(src), "%s/%s", dir, rel) >= (int)sizeof(src) ||
	    snprintf(cache, sizeof(cache), "%s/%.*s%s__pycache__", dir, sub, rel, slash ? "/" : "") >=
		    (int)sizeof(cache) ||
	    snprintf(pyc, sizeof(pyc), "%s/%.*s.%s.pyc", cache, (int)(strlen(stem) - 3), stem, tag) >=
		    (int)sizeof(pyc))
		return PYC_STALE_LOCKED;
	if (stat(src, &st) < 0)
		return PYC_CURRENT;
	if (pyc_matches(pyc, &st))
		return PYC_CURRENT;
	if (access(cache, F_OK) < 0)	/* compileall creates it in the source's directory */
		cache[strlen(cache) - strlen("__pycache__")] = '\0';
	return may_write(cache) ? PYC_STALE : PYC_STALE_LOCKED;
}

/* Some startup module lacks current bytecode that could be written. */
static bool compile_helps(const char *boot, const char *pkg, const char *tag)
{
	if (module_state(boot, "sitecustomize.py", tag) == PYC_STALE)
		return true;
	for (size_t i = 0; i < sizeof(startup_modules) / sizeof(*startup_modules); i++)
		if (module_state(pkg, startup_modules[i], tag) == PYC_STALE)
			return true;
	return false;
}

/* A Landlock ruleset that lets the compiler write only beneath the two
 * directories and refuses it TCP, abstract sockets and signals outside
 * itself; reads and execs stay free (the interpreter and its stdlib).
 * -errno when the kernel has no Landlock. */
static int compile_ruleset(char *boot, char *pkgdir)
{
	int abi = sb_ll_probe_abi();
	uint64_t write;

	if (abi < 0)
		return abi;
	write = sb_ll_fs_rights(abi) & SB_LL_FS_WRITE_RIGHTS;
	struct sb_ll_path_rule rules[2] = {
		{ .path = boot, .access = write, .is_dir = true },
		{ .path = pkgdir, .access = write, .is_dir = true },
	};
	struct sb_ll_plan plan = {
		.abi = abi,
		.handled_fs = write,
		.handled_net = sb_ll_net_rights(abi),
		.scoped = sb_ll_scopes(abi),
		.paths = rules,
		.n_paths = 2,
	};

	return sb_ll_ruleset_new(&plan, NULL);
}

/* Only async-signal-safe calls: python-sb may have started threads. */
static void __attribute__((noreturn)) compile_child(const char *python, char **argv, int ruleset,
						   int devnull)
{
	static char *const no_env[] = { NULL };
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(127);
	if (ruleset >= 0 && sb_ll_restrict(ruleset) < 0)
		_exit(127);
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	close_range(3, ~0U, 0);
	execve(python, argv, no_env);
	_exit(127);
}

static int run_compiler(const char *python, char *boot, char *pkgdir)
{
	/* -f: compileall alone trusts a .pyc whose header has the source's
	 * mtime, and a source rewritten within the second it was compiled
	 * keeps that mtime (only the size differs); the interpreter does check
	 * the size, and would compile that module at every start.  We get here
	 * only when a startup module is stale, so forcing is rare. */
	char *argv[] = { (char *)python, "-I", "-S", "-m", "compileall", "-q", "-f", pkgdir, boot, NULL };
	long long deadline = sb_now_ms() + COMPILE_TIMEOUT_MS;
	int ruleset = compile_ruleset(boot, pkgdir), devnull, status = 0, rc = 0;
	pid_t pid;

	/* Without Landlock (too old, or off at boot) the confinement is the
	 * empty environment and -I -S alone: still only the interpreter's own
	 * code runs. */
	if (ruleset < 0 && ruleset != -ENOSYS && ruleset != -EOPNOTSUPP)
		return ruleset;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		rc = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0)
		compile_child(python, argv, ruleset, devnull);
	rc = sb_child_reap(pid, deadline, false, &status);
	if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = -ECHILD;
out:
	if (devnull >= 0)
		close(devnull);
	if (ruleset >= 0)
		close(ruleset);
	return rc ? rc : 1;
}

int sb_agent_bytecode(const char *python)
{
	char tag[32], boot[PATH_MAX], pkgdir[PATH_MAX];
	const char *b, *p;
	int rc = sb_agent_paths(&b, &p);

	if (!rc)
		rc = cache_tag(python, tag, sizeof(tag));
	if (rc)
		return rc;
	if (!compile_helps(b, p, tag))
		return 0;
	if (snprintf(boot, sizeof(boot), "%s", b) >= (int)sizeof(boot) ||
	    snprintf(pkgdir, sizeof(pkgdir), "%s/pysandboxes", p) >= (int)sizeof(pkgdir))
		return -ENAMETOOLONG;
	return run_compiler(python, boot, pkgdir);
}
