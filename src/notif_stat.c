/* Read-only metadata calls: the stat family, access, readlink, chdir, xattr
 * reads, inotify_add_watch.
 *
 * Each is decided on the copied, resolved path and then CONTINUEd: the kernel
 * re-reads the path from the target's memory, so a thread that rewrites the
 * buffer between our check and the kernel's lookup gets the call performed on
 * another path.  That is safe here because these calls return metadata only,
 * never content and never a descriptor: what a racing thread can learn is
 * listed in doc/supervisor.md (existence, type, size, times, owner, mode of a
 * file, a symlink's target text, extended attribute values, whether chdir
 * succeeds).  A later open of anything it found is judged on its own.
 * With Landlock on, reads are refused by the kernel for paths outside the
 * exposure (Landlock does not cover stat, access or readlink, so the note
 * above stays true).  Paths that do not exist, or that the policy refuses, are
 * answered by the supervisor itself (ENOENT) without reaching the kernel.
 *
 * inotify_add_watch is emulated instead: its events list names created in a
 * directory, which is more than metadata, so the watch is added by the
 * supervisor on the judged object through the target's own inotify instance.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup_priv.h"

#ifndef AT_EMPTY_PATH
# define AT_EMPTY_PATH 0x1000
#endif

struct meta_req {
	int dirfd;
	uint64_t pathp;		/* 0: no path (an fd-only form) */
	unsigned res;		/* SB_RES_* */
	unsigned access;
	bool need_dir;		/* chdir */
};

/* Decide and CONTINUE (or answer the refusal / the lookup error). */
static int meta_decide(struct sb_notif *n, const struct meta_req *m)
{
	char path[PATH_MAX];
	struct sb_path p;
	struct stat st;
	int rc;

	if (m->pathp) {
		/* ID_VALID in sb_path_resolve (SB_RES_UNCHECKED), before use. */
		rc = sb_notif_read_str_nv(n, m->pathp, path, sizeof(path));
		if (rc) {
			sb_notif_fail_resolve(n, rc);
			return 0;
		}
	} else {
		path[0] = '\0';
	}
	rc = sb_path_resolve(n, m->dirfd, path, m->res | SB_RES_UNCHECKED, &p);
	if (rc) {
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	if (p.fdobj)
		sb_notif_ev_path(n, p.canon, m->access);	/* the target's own pipe/socket */
	else if (sb_notif_check_meta(n, &p, m->access) ||
		 sb_notif_py_veto(n, SB_PYV_META, p.canon, sb_notif_implicit(n))) {
		sb_path_release(&p);
		return 0;
	}
	/* After the decision: ENOTDIR for a hidden file would say it exists. */
	if (m->need_dir && (fstat(p.objfd, &st) < 0 || !S_ISDIR(st.st_mode))) {
		sb_path_release(&p);
		sb_notif_fail(n, ENOTDIR);
		return 0;
	}
	sb_path_release(&p);
	/* CONTINUE: metadata only (see the top of this file). */
	sb_notif_continue(n);
	return 0;
}

static unsigned at_res(uint64_t flags, bool empty_ok)
{
	unsigned r = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : SB_RES_FOLLOW;

	if (empty_ok && (flags & AT_EMPTY_PATH))
		r |= SB_RES_EMPTY;
	return r;
}

int sb_handle_stat(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct meta_req m = { .dirfd = AT_FDCWD, .access = SB_ACC_READ };

	switch (d->nr) {
	case __SNR_stat:
	case __SNR_statfs:
		m.pathp = d->args[0];
		m.res = SB_RES_FOLLOW;
		break;
	case __SNR_lstat:
		m.pathp = d->args[0];
		m.res = 0;
		break;
	case __SNR_newfstatat:
		m.dirfd = (int)d->args[0];
		m.pathp = d->args[1];
		m.res = at_res(d->args[3], true);
		break;
	case __SNR_statx:
		m.dirfd = (int)d->args[0];
		m.pathp = d->args[1];
		m.res = at_res(d->args[2], true);
		break;
	default:
		return -ENOSYS;
	}
	return meta_decide(n, &m);
}

int sb_handle_access(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct meta_req m = { .dirfd = AT_FDCWD, .res = SB_RES_FOLLOW };
	uint64_t mode;

	switch (d->nr) {
	case __SNR_access:
		m.pathp = d->args[0];
		mode = d->args[1];
		break;
	case __SNR_faccessat:
		m.dirfd = (int)d->args[0];
		m.pathp = d->args[1];
		mode = d->args[2];
		break;
	case __SNR_faccessat2:
		m.dirfd = (int)d->args[0];
		m.pathp = d->args[1];
		mode = d->args[2];
		m.res = at_res(d->args[3], true);
		break;
	default:
		return -ENOSYS;
	}
	/* W_OK answers what a write would get: EACCES under expose-ro. */
	m.access = SB_ACC_READ | ((mode & W_OK) ? SB_ACC_WRITE : 0);
	return meta_decide(n, &m);
}

int sb_handle_readlink(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct meta_req m = { .dirfd = AT_FDCWD, .res = 0, .access = SB_ACC_READ };

	if (d->nr == __SNR_readlink) {
		m.pathp = d->args[0];
	} else {
		m.dirfd = (int)d->args[0];
		m.pathp = d->args[1];
		m.res = SB_RES_EMPTY;	/* readlinkat(fd, "") reads an O_PATH symlink */
	}
	return meta_decide(n, &m);
}

int sb_handle_chdir(struct sb_notif *n)
{
	struct meta_req m = { .dirfd = AT_FDCWD, .pathp = n->req->data.args[0], .res = SB_RES_FOLLOW,
			      .access = SB_ACC_READ, .need_dir = true };

	/* CONTINUE of chdir: a racing thread may move the cwd into a directory
	 * we would have refused; relative paths are resolved from the real cwd
	 * and judged by their canonical path, so that gains it nothing. */
	return meta_decide(n, &m);
}

int sb_handle_xattr_read(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	struct meta_req m = { .dirfd = AT_FDCWD, .pathp = d->args[0], .access = SB_ACC_READ };

	m.res = d->nr == __SNR_getxattr || d->nr == __SNR_listxattr ? SB_RES_FOLLOW : 0;
	return meta_decide(n, &m);
}

int sb_handle_inotify(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	uint32_t mask = (uint32_t)d->args[2];
	char path[PATH_MAX], proc[64];
	struct sb_path p;
	int rc, ifd, wd;

	rc = sb_notif_read_str(n, d->args[1], path, sizeof(path));
	if (rc == 0)
		rc = sb_path_resolve(n, AT_FDCWD, path, (mask & IN_DONT_FOLLOW) ? 0 : SB_RES_FOLLOW, &p);
	if (rc) {
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	if (!p.fdobj && sb_notif_check_path(n, &p, SB_ACC_READ)) {
		sb_path_release(&p);
		return 0;
	}
	ifd = sb_notif_getfd(n, (int)d->args[0]);
	if (ifd < 0) {
		sb_path_release(&p);
		sb_notif_fail_resolve(n, ifd);
		return 0;
	}
	/* The magic link lands on the pinned object itself (a symlink stays a
	 * symlink), so IN_DONT_FOLLOW has already been applied above. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p.objfd);
	wd = inotify_add_watch(ifd, proc, mask & ~(uint32_t)IN_DONT_FOLLOW);
	if (wd < 0)
		sb_notif_fail(n, errno);
	else
		sb_notif_return(n, wd);
	close(ifd);
	sb_path_release(&p);
	return 0;
}
