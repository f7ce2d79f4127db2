/* os-sandbox=bwrap: the bubblewrap command line from the policy (reference
 * §6.2 "bwrap", anchors §2.4).  The mount list is the one the unshare layer
 * builds (exposures, the interpreter's symlink chain and loader, the stub's
 * own files), so both layers show the program the same tree. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "osl_int.h"

bool osl_truthy(const char *v)
{
	return !*v || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "1") ||
	       !strcasecmp(v, "on");
}

bool osl_falsy(const char *v)
{
	return !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "0") ||
	       !strcasecmp(v, "off") || !strcasecmp(v, "none");
}

/* "--<key>" then the value's words (bwrap takes option arguments as
 * separate words: bwrap.bind=/a /b gives --bind /a /b). */
static void pass_through(struct osl_strv *opts, const char *key, const char *value)
{
	char *copy = strdup(value), *save = NULL;

	osl_strv_addf(opts, "--%s", key);
	if (!copy) {
		opts->oom = true;
		return;
	}
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		osl_strv_add(opts, w);
	free(copy);
}

static bool under_dev(const char *path)
{
	return osl_path_under(path, "/dev");
}

/* What bwrap's --dev creates. */
static bool bwrap_dev_node(const char *path)
{
	static const char *const nodes[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					     "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/console" };

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (!strcmp(path, nodes[i]))
			return true;
	return false;
}

static void add_mount(struct osl_strv *opts, const struct osl_mount *m)
{
	switch (m->kind) {
	case OSL_M_BIND_RO:
		osl_strv_add(opts, "--ro-bind");
		osl_strv_add(opts, m->path);
		osl_strv_add(opts, m->path);
		break;
	case OSL_M_BIND_RW:
		osl_strv_add(opts, "--bind");
		osl_strv_add(opts, m->path);
		osl_strv_add(opts, m->path);
		break;
	case OSL_M_DEVNODE:
		/* --dev provides the usual nodes; an exposed other one is bound. */
		if (!bwrap_dev_node(m->path)) {
			osl_strv_add(opts, "--dev-bind");
			osl_strv_add(opts, m->path);
			osl_strv_add(opts, m->path);
		}
		break;
	case OSL_M_SYMLINK:
		if (under_dev(m->path))
			break;	/* --dev makes /dev/fd, /dev/stdin, ... */
		osl_strv_add(opts, "--symlink");
		osl_strv_add(opts, m->target);
		osl_strv_add(opts, m->path);
		break;
	case OSL_M_TMPFS:
		if (!strcmp(m->path, "/dev")) {
			osl_strv_add(opts, "--dev");
			osl_strv_add(opts, "/dev");
		} else if (!under_dev(m->path)) {
			osl_strv_add(opts, "--tmpfs");
			osl_strv_add(opts, m->path);
		}
		break;
	case OSL_M_PROC:
		osl_strv_add(opts, "--proc");
		osl_strv_add(opts, m->path);
		break;
	case OSL_M_DIR:
		osl_strv_add(opts, "--dir");
		osl_strv_add(opts, m->path);
		break;
	}
}

int osl_bwrap_opts(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
		   const char *self_exe, const char *cwd, struct osl_strv *opts, struct sb_diag *diag)
{
	const struct sb_provider_param *pp;
	size_t npp = sb_policy_provider_params(p, &pp);
	const struct osl_mount *m;
	struct osl_strv extra = { 0 };
	struct osl_ns *ns = NULL;
	bool share_net = false;
	size_t nm;
	int rc;

	for (size_t i = 0; i < npp; i++) {
		if (strcmp(pp[i].provider, "bwrap"))
			continue;
		if (!strcmp(pp[i].key, "share-net") && osl_truthy(pp[i].value))
			share_net = true;
		if (!strcmp(pp[i].key, "unshare-net") && osl_falsy(pp[i].value))
			share_net = true;
	}
	if (in->net_needs_host && !share_net) {
		sb_diag_error(diag, "", 0, "os-sandbox=bwrap cannot be applied: net= rules allow hosts beyond "
			      "loopback, and bwrap runs the program with loopback only. Hint: add "
			      "bwrap.share-net=yes (the supervisor then filters every address), or use "
			      "os-sandbox=landlock");
		return -ENOTSUP;
	}
	rc = osl_self_files(self_exe, &extra);
	if (!rc)
		rc = osl_mounts_new(in, python_exe, cwd, &extra, &ns);
	if (rc) {
		sb_diag_error(diag, "", 0, "os-sandbox=bwrap: cannot prepare the mount list: %s", strerror(-rc));
		goto out;
	}
	osl_strv_add(opts, "--die-with-parent");
	osl_strv_add(opts, "--unshare-pid");
	osl_strv_add(opts, "--unshare-ipc");
	osl_strv_add(opts, "--unshare-uts");
	osl_strv_add(opts, "--unshare-cgroup-try");
	if (!share_net)
		osl_strv_add(opts, "--unshare-net");
	osl_strv_add(opts, "--hostname");
	osl_strv_add(opts, "python-sb");
	nm = osl_mounts(ns, &m);
	for (size_t i = 0; i < nm; i++)
		add_mount(opts, &m[i]);
	osl_strv_add(opts, "--chdir");
	osl_strv_add(opts, cwd);
	for (size_t i = 0; i < npp; i++)
		if (!strcmp(pp[i].provider, "bwrap") && strcmp(pp[i].key, "share-net") &&
		    strcmp(pp[i].key, "unshare-net"))
			pass_through(opts, pp[i].key, pp[i].value);
	rc = opts->oom ? -ENOMEM : 0;
out:
	osl_ns_free(ns);
	osl_strv_free(&extra);
	return rc;
}
