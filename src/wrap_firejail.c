/* os-sandbox=firejail: the firejail command line from the policy (reference
 * §6.2 "firejail", anchors §2.5).  Firejail hides by blacklisting and
 * whitelisting top-level directories rather than building a fresh root: a
 * top directory holding an exposure is whitelisted entry by entry (firejail
 * mounts a tmpfs over it), any other top directory is blacklisted.  For
 * firejail the directories of /usr are top directories too (/usr/bin,
 * /usr/lib): they cannot be whitelisted themselves, only what lies in them. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osl_int.h"

/* Top directories firejail manages itself or that must stay. */
static bool skip_top(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "proc") || !strcmp(name, "sys") ||
	       !strcmp(name, "dev");
}

/* Does `top` hold something the program may see (a bind or a link we
 * whitelist)?  The cwd alone (an empty directory) does not count. */
static bool holds_mount(const struct osl_mount *m, size_t n, const char *top)
{
	for (size_t i = 0; i < n; i++)
		if ((m[i].kind == OSL_M_BIND_RO || m[i].kind == OSL_M_BIND_RW || m[i].kind == OSL_M_SYMLINK) &&
		    osl_path_under(m[i].path, top))
			return true;
	return false;
}

/* Is `path` inside (or at) a bind of the list: exposed whole? */
static bool covered(const struct osl_mount *m, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if ((m[i].kind == OSL_M_BIND_RO || m[i].kind == OSL_M_BIND_RW) && osl_path_under(path, m[i].path))
			return true;
	return false;
}

/* The subdirectories of `dir`: blacklisted unless something is exposed
 * inside.  /run holds firejail's own state (/run/firejail), so only its
 * entries are hidden; /usr holds the interpreter, so only its directories
 * that hold no exposure (/usr/sbin, /usr/include, ...). */
static int hide_dirs(struct osl_strv *opts, const struct osl_mount *m, size_t n, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];
	struct stat st;
	int rc = 0;

	if (!d)
		return -errno;
	while (!rc && (de = readdir(d))) {
		bool top = !strcmp(dir, "/");

		if (top ? skip_top(de->d_name) : !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
					     !strcmp(de->d_name, "firejail"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", top ? "" : dir, de->d_name);
		/* Symlinks (merged /usr: /lib -> usr/lib) lead into directories
		 * handled on their own. */
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (top && !strcmp(de->d_name, "usr") && !covered(m, n, path) && holds_mount(m, n, path))
			rc = hide_dirs(opts, m, n, path);
		else if (holds_mount(m, n, path))
			continue;
		else if (top && !strcmp(de->d_name, "run"))
			rc = hide_dirs(opts, m, n, path);
		else
			osl_strv_addf(opts, "--blacklist=%s", path);
	}
	closedir(d);
	return rc;
}

/* A top directory as firejail counts them ("/etc", and "/usr/lib"): it
 * refuses to whitelist one ("invalid whitelist path"). */
static bool is_top_level(const char *path)
{
	if (!strncmp(path, "/usr/", 5))
		return path[5] && !strchr(path + 5, '/');
	return path[0] == '/' && !strchr(path + 1, '/');
}

/* Is `path` inside another bind of the list?  Whitelisting it would put a
 * tmpfs over the top directory and hide the outer exposure. */
static bool inside_bind(const struct osl_mount *m, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if ((m[i].kind == OSL_M_BIND_RO || m[i].kind == OSL_M_BIND_RW) && strcmp(m[i].path, path) &&
		    osl_path_under(path, m[i].path))
			return true;
	return false;
}

static void add_mount(struct osl_strv *opts, const struct osl_mount *all, size_t n, const struct osl_mount *m)
{
	bool whitelist = !is_top_level(m->path) && !inside_bind(all, n, m->path);

	if (osl_path_under(m->path, "/dev") || osl_path_under(m->path, "/proc") || osl_path_under(m->path, "/sys"))
		return;	/* --private-dev; firejail mounts its own /proc and refuses to whitelist in /sys */
	switch (m->kind) {
	case OSL_M_BIND_RO:
	case OSL_M_BIND_RW:
		if (whitelist)
			osl_strv_addf(opts, "--whitelist=%s", m->path);
		osl_strv_addf(opts, "--%s=%s", m->kind == OSL_M_BIND_RO ? "read-only" : "read-write", m->path);
		break;
	case OSL_M_SYMLINK:
		/* A whitelisted link takes its target along; top-level links stay. */
		if (whitelist)
			osl_strv_addf(opts, "--whitelist=%s", m->path);
		break;
	case OSL_M_DIR:
	case OSL_M_DEVNODE:
	case OSL_M_TMPFS:
	case OSL_M_PROC:
		break;
	}
}

int osl_firejail_opts(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
		      const char *self_exe, const char *cwd, struct osl_strv *opts, struct sb_diag *diag)
{
	const struct sb_provider_param *pp;
	size_t npp = sb_policy_provider_params(p, &pp), nm;
	const char *bridge = NULL;
	const struct osl_mount *m;
	struct osl_strv extra = { 0 };
	struct osl_ns *ns = NULL;
	int rc;

	for (size_t i = 0; i < npp; i++)
		if (!strcmp(pp[i].provider, "firejail") && !strcmp(pp[i].key, "net") && *pp[i].value)
			bridge = pp[i].value;
	if (in->net_needs_host && !bridge) {
		sb_diag_error(diag, "", 0, "os-sandbox=firejail cannot be applied: net= rules allow hosts "
			      "beyond loopback, and firejail runs the program with --net=none. Hint: add "
			      "firejail.net=<bridge> (e.g. firejail.net=br0), or use os-sandbox=landlock");
		return -ENOTSUP;
	}
	rc = osl_self_files(self_exe, &extra);
	if (!rc)
		rc = osl_mounts_new(in, python_exe, cwd, &extra, &ns);
	if (rc) {
		sb_diag_error(diag, "", 0, "os-sandbox=firejail: cannot prepare the file list: %s", strerror(-rc));
		goto out;
	}
	osl_strv_add(opts, "--quiet");
	osl_strv_add(opts, "--noprofile");
	osl_strv_add(opts, "--caps.drop=all");
	osl_strv_add(opts, "--nonewprivs");
	osl_strv_add(opts, "--nogroups");
	if (getuid() != 0)
		osl_strv_add(opts, "--noroot");
	/* Firejail's own namespace filter is outer; ours (installed by the
	 * stub) stays innermost and still needs seccomp(2), which it allows. */
	osl_strv_add(opts, "--restrict-namespaces");
	osl_strv_add(opts, "--protocol=unix,inet,inet6");
	osl_strv_add(opts, "--private-dev");
	osl_strv_add(opts, "--hostname=python-sb");
	osl_strv_add(opts, "--deterministic-shutdown");
	if (bridge)
		osl_strv_addf(opts, "--net=%s", bridge);
	else
		osl_strv_add(opts, "--net=none");
	nm = osl_mounts(ns, &m);
	for (size_t i = 0; i < nm; i++)
		add_mount(opts, m, nm, &m[i]);
	rc = hide_dirs(opts, m, nm, "/");
	if (rc)
		goto out;
	for (size_t i = 0; i < npp; i++) {
		if (strcmp(pp[i].provider, "firejail") || !strcmp(pp[i].key, "net"))
			continue;
		if (*pp[i].value)
			osl_strv_addf(opts, "--%s=%s", pp[i].key, pp[i].value);
		else
			osl_strv_addf(opts, "--%s", pp[i].key);
	}
	rc = opts->oom ? -ENOMEM : 0;
out:
	osl_ns_free(ns);
	osl_strv_free(&extra);
	return rc;
}
