/* Implicit grants for the interpreter (see runtime.h). */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

#define SB_WHY "python runtime"

/* out = a b c d (each may be ""); -ENAMETOOLONG when it does not fit. */
static int cat4(char *out, const char *a, const char *b, const char *c, const char *d)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c), ld = strlen(d);

	if (la + lb + lc + ld + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc);
	memcpy(out + la + lb + lc, d, ld + 1);
	return 0;
}

/* Grant `path` if it exists: its canonical spelling, and the link spelling
 * too when the last component is a symlink (lstat and readlink judge that). */
static int grant(struct sb_policy *p, const char *path, unsigned access)
{
	char canon[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
	struct stat st;
	const char *slash;
	int rc;

	if (lstat(path, &st) < 0 || !realpath(path, canon))
		return 0;	/* absent here: nothing to grant */
	rc = sb_policy_grant(p, canon, access, SB_WHY);
	if (rc || !S_ISLNK(st.st_mode))
		return rc;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (!realpath(dir[0] ? dir : "/", canon))
		return 0;
	if (cat4(link, strcmp(canon, "/") ? canon : "", "/", slash + 1, ""))
		return -ENAMETOOLONG;
	return sb_policy_grant(p, link, access, SB_WHY);
}

static void dirname_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (len == 0 || len >= cap) {
		snprintf(out, cap, "%s", slash == path ? "/" : ".");
		return;
	}
	memcpy(out, path, len);
	out[len] = '\0';
}

/* The interpreter, each link of its chain, and the directories holding them. */
static int grant_chain(struct sb_policy *p, const char *python)
{
	char cur[PATH_MAX], next[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
	int rc = 0;

	snprintf(cur, sizeof(cur), "%s", python);
	for (int hops = 0; rc == 0 && hops < 40; hops++) {
		ssize_t n;

		dirname_of(cur, dir, sizeof(dir));
		rc = grant(p, dir, SB_ACC_READ);
		if (rc == 0)
			rc = grant(p, cur, SB_ACC_READ);
		n = readlink(cur, target, sizeof(target) - 1);
		if (rc || n < 0)
			break;
		target[n] = '\0';
		if (target[0] == '/')
			snprintf(next, sizeof(next), "%s", target);
		else if (cat4(next, dir, "/", target, ""))
			return -ENAMETOOLONG;
		snprintf(cur, sizeof(cur), "%s", next);
	}
	return rc;
}

/* "3.11" from "python3.11", else the lib/python3.N of the prefix that holds
 * the standard library (os.py). */
static int find_version(const char *real, const char *prefix, char *ver, size_t cap)
{
	const char *base = strrchr(real, '/');
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	base = base ? base + 1 : real;
	if (strncmp(base, "python", 6) == 0 && isdigit((unsigned char)base[6]) && strchr(base + 6, '.')) {
		snprintf(ver, cap, "%s", base + 6);
		ver[strspn(ver, "0123456789.")] = '\0';
		return 0;
	}
	if (cat4(path, prefix, "/lib", "", ""))
		return -ENOENT;
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, "python3.", 8) != 0)
			continue;
		if (cat4(path, prefix, "/lib/", de->d_name, "/os.py") == 0 && stat(path, &st) == 0) {
			snprintf(ver, cap, "%s", de->d_name + 6);
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	return -ENOENT;
}

/* prefix/lib/libpython* (a shared-library build: pyenv --enable-shared). */
static int grant_libpython(struct sb_policy *p, const char *prefix)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (cat4(path, prefix, "/lib", "", ""))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		if (strncmp(de->d_name, "libpython", 9) != 0)
			continue;
		if (cat4(path, prefix, "/lib/", de->d_name, "") == 0)
			rc = grant(p, path, SB_ACC_READ);
	}
	closedir(d);
	return rc;
}

/* sys.prefix-style directories, from the interpreter's real path. */
static int grant_prefix(struct sb_policy *p, const char *python)
{
	char real[PATH_MAX], bindir[PATH_MAX], prefix[PATH_MAX], ver[32], path[PATH_MAX], sub[64];
	/* {before version, after version} under the prefix. */
	static const char *const dirs[][2] = {
		{ "/lib/python", "" },			/* the standard library, lib-dynload */
		{ "/lib64/python", "" },		/* lib64 layouts */
		{ "/lib/python3/dist-packages", NULL },	/* Debian's site directory */
		{ "/local/lib/python", "/dist-packages" },	/* Debian's local site directory */
	};
	const char *pre;
	int rc = 0;

	if (!realpath(python, real))
		return -errno;
	dirname_of(real, bindir, sizeof(bindir));
	dirname_of(bindir, prefix, sizeof(prefix));
	if (find_version(real, prefix, ver, sizeof(ver)))
		return 0;	/* not a CPython layout we know: the chain grant stands */
	pre = strcmp(prefix, "/") ? prefix : "";
	for (size_t i = 0; rc == 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(sub, sizeof(sub), "%s%s", dirs[i][1] ? ver : "", dirs[i][1] ? dirs[i][1] : "");
		if (cat4(path, pre, dirs[i][0], sub, "") == 0)
			rc = grant(p, path, SB_ACC_READ);
	}
	/* Debian keeps sitecustomize.py there (linked from the stdlib). */
	if (rc == 0 && cat4(path, "/etc/python", ver, "", "") == 0)
		rc = grant(p, path, SB_ACC_READ);
	return rc ? rc : grant_libpython(p, prefix);
}

/* A virtual environment: bin/python's parent holds pyvenv.cfg. */
static int grant_venv(struct sb_policy *p, const char *python)
{
	char bindir[PATH_MAX], venv[PATH_MAX], path[PATH_MAX], real[PATH_MAX], ver[32], base[PATH_MAX];
	struct stat st;
	int rc;

	dirname_of(python, bindir, sizeof(bindir));
	dirname_of(bindir, venv, sizeof(venv));
	if (cat4(path, venv, "/pyvenv.cfg", "", "") || stat(path, &st) < 0)
		return 0;
	rc = grant(p, path, SB_ACC_READ);
	if (rc || !realpath(python, real))
		return rc;
	dirname_of(real, base, sizeof(base));
	dirname_of(base, base, sizeof(base));
	if (find_version(real, base, ver, sizeof(ver)))
		return 0;
	if (cat4(path, venv, "/lib/python", ver, "/site-packages"))
		return 0;
	return grant(p, path, SB_ACC_READ);
}

static int grant_profile(struct sb_policy *p, const char *profile)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen(profile, "re");
	int rc = 0;

	if (!f)
		return -errno;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *s = line, *path;
		unsigned access;

		s[strcspn(s, "#\n")] = '\0';
		s += strspn(s, " \t");
		if (!*s)
			continue;
		if (strncmp(s, "ro", 2) == 0 && (s[2] == ' ' || s[2] == '\t'))
			access = SB_ACC_READ;
		else if (strncmp(s, "rw", 2) == 0 && (s[2] == ' ' || s[2] == '\t'))
			access = SB_ACC_READ | SB_ACC_WRITE;
		else {
			rc = -EINVAL;
			break;
		}
		path = s + 2 + strspn(s + 2, " \t");
		path[strcspn(path, " \t")] = '\0';
		if (path[0] != '/') {
			rc = -EINVAL;
			break;
		}
		rc = grant(p, path, access);
	}
	fclose(f);
	return rc;
}

int sb_runtime_version(const char *real, char *ver, size_t cap)
{
	char bindir[PATH_MAX], prefix[PATH_MAX];

	if (!real || real[0] != '/')
		return -EINVAL;
	dirname_of(real, bindir, sizeof(bindir));
	dirname_of(bindir, prefix, sizeof(prefix));
	return find_version(real, prefix, ver, cap);
}

int sb_runtime_grants_from(struct sb_policy *p, const char *python, const char *profile)
{
	int rc;

	if (!python || python[0] != '/')
		return -EINVAL;
	rc = grant_chain(p, python);
	if (rc == 0)
		rc = grant_prefix(p, python);
	if (rc == 0)
		rc = grant_venv(p, python);
	if (rc == 0)
		rc = grant_profile(p, profile);
	return rc;
}

int sb_runtime_grants(struct sb_policy *p, const char *python)
{
	static const char *const where[] = {
		SB_DATADIR "/rules/python-runtime.profile",
		SB_SRCDIR "/rules/python-runtime.profile",
	};

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], R_OK) == 0)
			return sb_runtime_grants_from(p, python, where[i]);
	return -ENOENT;
}
