/* execve, execveat: decided on the copied, resolved path, then CONTINUE.
 *
 * An exec cannot be emulated (the new image must replace the target), so the
 * kernel re-reads the path after our decision, and a thread that rewrites the
 * buffer in between gets another executable started.  What closes that race
 * is the kernel layer: with Landlock on (sb_oslayer_enforces_exec), EXECUTE is
 * granted only to the executables the policy may start, so a swapped path is
 * refused by the kernel itself (seccomp_unotify(2)'s condition for CONTINUE).
 * With the supervisor alone (os-sandbox=none) the race remains: the program
 * can start an executable that is exposed for reading but not allowed by
 * exec=; it runs under the same filter, so every file, network and process
 * call it makes is still decided here.  doc/supervisor.md says so.
 *
 * The interpreter's own first execve (the child finishing its spawn) is
 * always allowed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup_priv.h"

#ifndef AT_EXECVE_CHECK
# define AT_EXECVE_CHECK 0x10000
#endif

int sb_handle_exec(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	bool at = d->nr == __SNR_execveat;
	int dirfd = at ? (int)d->args[0] : AT_FDCWD;
	uint64_t flags = at ? d->args[4] : 0;
	const struct sb_rule_ref *hit = NULL;
	char path[PATH_MAX];
	struct sb_path p;
	struct stat st;
	int rc;

	if (sb_sup_first_exec(n->sup, (pid_t)n->req->pid)) {
		/* CONTINUE: the child is still our own spawn code, single-threaded,
		 * executing opts->python; no program code has run yet. */
		n->log = false;
		sb_notif_continue(n);
		return 0;
	}
	if (flags & ~(uint64_t)(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_EXECVE_CHECK)) {
		sb_notif_fail(n, EINVAL);
		return 0;
	}
	rc = sb_notif_read_str(n, d->args[at ? 1 : 0], path, sizeof(path));
	if (rc == 0)
		rc = sb_path_resolve(n, dirfd, path,
				     (flags & AT_SYMLINK_NOFOLLOW ? 0 : SB_RES_FOLLOW) |
					     (flags & AT_EMPTY_PATH ? SB_RES_EMPTY : 0),
				     &p);
	if (rc == -ENOENT && at && (flags & AT_EMPTY_PATH) && !path[0])
		rc = -EACCES;	/* fexecve of a deleted file or a memfd: no path to allow */
	if (rc) {
		if (rc == -EACCES)
			sb_notif_refuse(n, EACCES, NULL, NULL);
		else
			sb_notif_fail_resolve(n, rc);
		if (rc != -EACCES || n->mode == SB_MODE_ENFORCE)
			return 0;
		sb_notif_continue(n);	/* learning: see the CONTINUE note above */
		return 0;
	}
	snprintf(n->ev->path, sizeof(n->ev->path), "%s", p.canon);
	n->ev->access = SB_ACC_EXEC;
	if (p.fdobj || fstat(p.objfd, &st) < 0 || S_ISDIR(st.st_mode)) {
		sb_path_release(&p);
		sb_notif_fail(n, EACCES);
		return 0;
	}
	if (!sb_policy_check_exec(n->policy, p.canon, &hit)) {
		const char *tip = sb_policy_api_granted(n->policy, SB_API_PROCESS_EXEC) ? NULL
							  : "python-api=ALLOW:process-exec";

		n->ev->category = SB_API_PROCESS_EXEC;
		if (sb_notif_refuse(n, EACCES, hit, tip)) {
			sb_path_release(&p);
			return 0;
		}
	} else if (!hit) {
		/* No exec= rule names it: an exposed file only. */
		const struct sb_rule_ref *eh = NULL;

		if (sb_policy_check_path(n->policy, p.canon, p.len, SB_ACC_READ, &eh) != SB_PATH_ALLOW &&
		    sb_notif_refuse(n, EACCES, eh, NULL)) {
			sb_path_release(&p);
			return 0;
		}
	}
	n->ev->rule = hit ? hit : n->ev->rule;
	if (sb_notif_py_veto(n, SB_PYV_EXEC, p.canon, false)) {
		sb_path_release(&p);
		return 0;
	}
	sb_path_release(&p);
	/* CONTINUE: see the top of this file (Landlock EXECUTE closes the race). */
	sb_notif_continue(n);
	return 0;
}
