/* Kernel layers: selection from os-sandbox=, preparation, description and
 * the child-side entry points; see oslayer.h. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osl_int.h"

static const char *const kind_names[] = {
	[SB_OSL_NONE] = "none",
	[SB_OSL_LANDLOCK] = "landlock",
	[SB_OSL_UNSHARE] = "unshare",
	[SB_OSL_BWRAP] = "bwrap",
	[SB_OSL_FIREJAIL] = "firejail",
};

static const char *requested_name(enum sb_os_sandbox r)
{
	switch (r) {
	case SB_OS_AUTO: return "auto";
	case SB_OS_NONE: return "none";
	case SB_OS_SUBPROCESS: return "subprocess";
	case SB_OS_LANDLOCK: return "landlock";
	case SB_OS_UNSHARE: return "unshare";
	case SB_OS_BWRAP: return "bwrap";
	case SB_OS_FIREJAIL: return "firejail";
	case SB_OS_QEMU: return "qemu";
	}
	return "?";
}

/* ---- Landlock ------------------------------------------------------------- */

static const char *landlock_unavailable(int err, const char **hint)
{
	switch (err) {
	case -ENOSYS:
		*hint = "Landlock needs Linux >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y";
		return "this kernel has no Landlock";
	case -EOPNOTSUPP:
		*hint = "add landlock to the kernel's lsm= boot parameter "
			"(e.g. lsm=landlock,lockdown,yama,apparmor,bpf)";
		return "Landlock is built in but disabled at boot";
	case -EPERM:
	case -EACCES:
		*hint = "a container's seccomp profile blocks the landlock_* system calls: "
			"allow them, or run outside the container";
		return "the Landlock system calls are refused";
	default:
		*hint = "check dmesg and /sys/kernel/security/lsm";
		return "Landlock cannot be used";
	}
}

static int prepare_landlock(struct sb_oslayer *l, int abi, struct sb_diag *diag)
{
	struct sb_ll_input lin = {
		.paths = l->in.paths, .n_paths = l->in.n_paths,
		.bind = l->in.bind, .n_bind = l->in.n_bind,
		.connect = l->in.connect, .n_connect = l->in.n_connect,
		.exec_anywhere = l->in.exec_anywhere,
	};
	const char *failed = NULL;
	int rc = sb_ll_plan_new(&lin, abi, &l->ll);

	if (rc)
		sb_diag_error(diag, "", 0, "os-sandbox=landlock: cannot compute the rules: %s", strerror(-rc));
	l->abi = l->ll ? l->ll->abi : 0;
	if (rc)
		return rc;
	/* Once, here: the probe child and the program's child then only
	 * restrict themselves with it (each used to open every rule's path
	 * and add it, 70-odd rules, on the way to the program's start). */
	rc = sb_ll_ruleset_new(l->ll, &failed);
	if (rc < 0) {
		sb_diag_error(diag, "", 0, "os-sandbox=landlock cannot be applied: landlock: %s%s%s: %s",
			      failed ? "adding a rule for '" : "creating the ruleset", failed ? failed : "",
			      failed ? "'" : "", strerror(-rc));
		return rc;
	}
	l->ll_ruleset = rc;
	return 0;
}

/* ---- selection ---------------------------------------------------------------- */

static int select_kind(struct sb_oslayer *l, const struct sb_oslayer_args *a, int *abi,
		       struct sb_diag *diag)
{
	const char *why, *hint;

	if (a->mode != SB_MODE_ENFORCE) {
		/* Learning and audit must see every access reach the supervisor;
		 * upstream also learns without an OS layer. */
		l->kind = SB_OSL_NONE;
		l->why_none = strdup(a->mode == SB_MODE_LEARN
				     ? "learning runs under the supervisor alone, as upstream"
				     : "audit runs under the supervisor alone (it must see every access)");
		return l->why_none ? 0 : -ENOMEM;
	}
	switch (l->requested) {
	case SB_OS_NONE:
	case SB_OS_SUBPROCESS:
		l->kind = SB_OSL_NONE;
		if (asprintf(&l->why_none, "os-sandbox=%s: the supervisor alone", requested_name(l->requested)) < 0)
			return -ENOMEM;
		return 0;
	case SB_OS_QEMU:
		sb_diag_error(diag, "", 0, "os-sandbox=qemu is not available in this version. "
			      "Hint: use os-sandbox=landlock, unshare, bwrap or firejail");
		return -ENOTSUP;
	case SB_OS_AUTO:
	case SB_OS_LANDLOCK:
		*abi = a->abi ? a->abi : sb_ll_probe_abi();
		if (*abi >= 1) {
			l->kind = SB_OSL_LANDLOCK;
			return 0;
		}
		why = landlock_unavailable(*abi, &hint);
		if (l->requested == SB_OS_LANDLOCK) {
			sb_diag_error(diag, "", 0, "os-sandbox=landlock cannot be applied: %s (%s). Hint: %s",
				      why, strerror(-*abi), hint);
			return -ENOTSUP;
		}
		l->kind = SB_OSL_NONE;
		if (asprintf(&l->why_none, "os-sandbox=auto: %s (%s), the supervisor alone", why,
			     strerror(-*abi)) < 0)
			return -ENOMEM;
		sb_diag_warn(diag, "", 0, "os-sandbox=auto: %s; the supervisor alone enforces the policy. "
			     "Hint: %s", why, hint);
		return 0;
	case SB_OS_UNSHARE:
		l->kind = SB_OSL_UNSHARE;
		return 0;
	case SB_OS_BWRAP:
		l->kind = SB_OSL_BWRAP;
		return 0;
	case SB_OS_FIREJAIL:
		l->kind = SB_OSL_FIREJAIL;
		return 0;
	}
	return -EINVAL;
}

static int prepare_wrapper(struct sb_oslayer *l, const struct sb_oslayer_args *a, const char *cwd,
			   struct sb_diag *diag)
{
	const char *bin = l->kind == SB_OSL_BWRAP ? "bwrap" : "firejail";
	int rc;

	l->wrap_bin = osl_which(bin, a->path_env);
	if (!l->wrap_bin) {
		sb_diag_error(diag, "", 0, "os-sandbox=%s cannot be applied: '%s' is not installed. "
			      "Hint: apt-get install %s, or use os-sandbox=landlock",
			      bin, bin, l->kind == SB_OSL_BWRAP ? "bubblewrap" : "firejail");
		return -ENOTSUP;
	}
	l->self_exe = a->self_exe ? realpath(a->self_exe, NULL) : realpath("/proc/self/exe", NULL);
	l->python_exe = strdup(a->python_exe);
	if (!l->self_exe || !l->python_exe)
		return l->self_exe ? -ENOMEM : -errno;
	if (l->kind == SB_OSL_BWRAP)
		rc = osl_bwrap_opts(a->policy, &l->in, a->python_exe, l->self_exe, cwd, &l->wrap_opts, diag);
	else
		rc = osl_firejail_opts(a->policy, &l->in, a->python_exe, l->self_exe, cwd, &l->wrap_opts, diag);
	if (!rc && l->wrap_opts.oom)
		rc = -ENOMEM;
	return rc;
}

static int prepare(struct sb_oslayer *l, const struct sb_oslayer_args *a, int abi, struct sb_diag *diag)
{
	char cwdbuf[PATH_MAX];
	const char *cwd = a->cwd;
	int rc;

	if (!cwd && !(cwd = getcwd(cwdbuf, sizeof(cwdbuf))))
		return -errno;
	rc = osl_input_gather(a->policy, a->python_exe, &l->in);
	if (rc) {
		sb_diag_error(diag, "", 0, "os-sandbox=%s: cannot read the policy's exposures "
			      "and executables: %s", kind_names[l->kind], strerror(-rc));
		return rc;
	}
	switch (l->kind) {
	case SB_OSL_LANDLOCK:
		return prepare_landlock(l, abi, diag);
	case SB_OSL_UNSHARE:
		return osl_ns_new(a->policy, &l->in, a->python_exe, cwd, a->path_env, &l->ns, diag);
	case SB_OSL_BWRAP:
	case SB_OSL_FIREJAIL:
		return prepare_wrapper(l, a, cwd, diag);
	case SB_OSL_NONE:
		break;
	}
	return 0;
}

int sb_oslayer_new_ex(const struct sb_oslayer_args *a, struct sb_oslayer **out, struct sb_diag *diag)
{
	struct sb_oslayer *l;
	int abi = 0, rc;

	*out = NULL;
	if (!a->policy || !a->python_exe)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->requested = sb_policy_settings(a->policy)->os_sandbox;
	l->ll_ruleset = -1;
	l->mode = a->mode;
	l->flags = a->flags;
	rc = select_kind(l, a, &abi, diag);
	if (!rc && l->kind != SB_OSL_NONE)
		rc = prepare(l, a, abi, diag);
	if (!rc && !(a->flags & SB_OSL_F_NO_SELFTEST)) {
		if ((a->flags & SB_OSL_F_SELFTEST_IN_CHILD) && l->kind == SB_OSL_LANDLOCK)
			rc = osl_selftest_landlock_defer(l);
		else
			rc = sb_oslayer_selftest(l, diag);
	}
	if (rc) {
		sb_oslayer_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int sb_oslayer_new(const struct sb_policy *p, const char *python_exe, enum sb_mode mode,
		   struct sb_oslayer **out, struct sb_diag *diag)
{
	struct sb_oslayer_args a = { .policy = p, .python_exe = python_exe, .mode = mode };

	return sb_oslayer_new_ex(&a, out, diag);
}

void sb_oslayer_free(struct sb_oslayer *l)
{
	if (!l)
		return;
	sb_ll_plan_free(l->ll);
	if (l->ll_ruleset >= 0)
		close(l->ll_ruleset);
	osl_pending_free(l);
	osl_ns_free(l->ns);
	free(l->wrap_bin);
	osl_strv_free(&l->wrap_opts);
	free(l->self_exe);
	free(l->python_exe);
	osl_input_free(&l->in);
	free(l->why_none);
	osl_strv_free(&l->selftest);
	free(l);
}

enum sb_osl_kind sb_oslayer_kind(const struct sb_oslayer *l)
{
	return l ? l->kind : SB_OSL_NONE;
}

const char *sb_oslayer_name(const struct sb_oslayer *l)
{
	return kind_names[sb_oslayer_kind(l)];
}

int sb_oslayer_landlock_abi(const struct sb_oslayer *l)
{
	return l && l->kind == SB_OSL_LANDLOCK ? l->abi : 0;
}

/* Exec targets outside every read exposure get READ_FILE from Landlock only
 * (execve needs it): then Landlock lets a racing open read them. */
static bool exec_targets_exposed(const struct sb_oslayer *l)
{
	const struct osl_input *in = &l->in;

	for (size_t i = 0; i < in->exec_targets.n; i++) {
		bool found = false;

		for (size_t k = 0; k < in->n_paths && !found; k++)
			found = (in->paths[k].access & SB_ACC_READ) &&
				osl_path_under(in->exec_targets.v[i], in->paths[k].path);
		if (!found)
			return false;
	}
	return in->exec_dirs.n == 0;
}

bool sb_oslayer_enforces_fs(const struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_LANDLOCK || (l->flags & SB_OSL_F_TEST_NOOP))
		return false;
	return !(l->ll->gaps & SB_LL_GAP_RO_IN_RW) && l->in.n_ignores == 0 &&
	       l->in.protected_in_rw.n == 0 && exec_targets_exposed(l);
}

bool sb_oslayer_enforces_fs_read(const struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_LANDLOCK || (l->flags & SB_OSL_F_TEST_NOOP))
		return false;
	return l->in.n_ignores == 0 && exec_targets_exposed(l);
}

bool sb_oslayer_enforces_exec(const struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_LANDLOCK || (l->flags & SB_OSL_F_TEST_NOOP))
		return false;
	return (l->ll->handled_fs & SB_LL_FS_EXECUTE) && l->in.exec_dirs.n == 0;
}

/* ---- the child ------------------------------------------------------------------ */

/* Written only in a forked child, read there by sb_oslayer_child_error(). */
static struct {
	const char *stage;
	const char *path;
	int err;
} child_fail;

void osl_child_fail(const char *stage, const char *path, int err)
{
	child_fail.stage = stage;
	child_fail.path = path;
	child_fail.err = err;
}

int sb_oslayer_apply_child(const struct sb_oslayer *l)
{
	const char *failed = NULL;
	int rc;

	if (!l || l->kind != SB_OSL_LANDLOCK)
		return 0;
	if (l->flags & SB_OSL_F_TEST_NOOP) {
		osl_pending_child(l);	/* restricting nothing: the probe must say so */
		return 0;
	}
	if (l->ll_ruleset >= 0) {
		rc = sb_ll_restrict(l->ll_ruleset);
		if (rc)
			osl_child_fail("landlock: restricting", NULL, -rc);
		else
			osl_pending_child(l);
		return rc;
	}
	rc = sb_ll_apply(l->ll, &failed);
	if (rc)
		osl_child_fail(failed ? "landlock: adding a rule for" : "landlock: restricting", failed, -rc);
	return rc;
}

static size_t put(char *buf, size_t len, size_t at, const char *s)
{
	while (s && *s && at + 1 < len)
		buf[at++] = *s++;
	if (len)
		buf[at < len ? at : len - 1] = 0;
	return at;
}

size_t sb_oslayer_child_error(int rc, char *buf, size_t len)
{
	int err = child_fail.err ? child_fail.err : -rc;
	const char *name = strerrorname_np(err);
	size_t at = 0;

	at = put(buf, len, at, child_fail.stage ? child_fail.stage : "kernel layer");
	if (child_fail.path) {
		at = put(buf, len, at, " '");
		at = put(buf, len, at, child_fail.path);
		at = put(buf, len, at, "'");
	}
	at = put(buf, len, at, ": ");
	at = put(buf, len, at, name ? name : "error");
	return at;
}

int sb_oslayer_clone_flags(const struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_UNSHARE || (l->flags & SB_OSL_F_TEST_NOOP))
		return 0;
	return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
}

int sb_oslayer_before_clone(struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_UNSHARE || (l->flags & SB_OSL_F_TEST_NOOP))
		return 0;
	return osl_ns_before_clone(l->ns);
}

int sb_oslayer_after_clone(struct sb_oslayer *l, pid_t child, struct sb_diag *diag)
{
	if (!l || l->kind != SB_OSL_UNSHARE || (l->flags & SB_OSL_F_TEST_NOOP))
		return 0;
	return osl_ns_after_clone(l->ns, child, diag);
}

void sb_oslayer_spawn_done(struct sb_oslayer *l)
{
	if (l && l->kind == SB_OSL_UNSHARE)
		osl_ns_done(l->ns);
}

int sb_oslayer_setup_ns_child(const struct sb_oslayer *l)
{
	if (!l || l->kind != SB_OSL_UNSHARE || (l->flags & SB_OSL_F_TEST_NOOP))
		return 0;
	return osl_ns_setup_child(l->ns);
}

/* ---- self-test ------------------------------------------------------------------ */

int sb_oslayer_selftest_collect(struct sb_oslayer *l, struct sb_diag *diag)
{
	return l && l->pending ? osl_pending_collect(l, diag) : 0;
}

int sb_oslayer_selftest(const struct sb_oslayer *l, struct sb_diag *diag)
{
	struct sb_oslayer *m = (struct sb_oslayer *)l;	/* the outcome is recorded for describe */

	osl_strv_free(&m->selftest);
	switch (l->kind) {
	case SB_OSL_LANDLOCK:
		return osl_selftest_landlock(l, &m->selftest, diag);
	case SB_OSL_UNSHARE:
		return osl_selftest_unshare(l, &m->selftest, diag);
	case SB_OSL_BWRAP:
	case SB_OSL_FIREJAIL:
		return osl_selftest_wrapper(l, l->python_exe, &m->selftest, diag);
	case SB_OSL_NONE:
		break;
	}
	return 0;
}
