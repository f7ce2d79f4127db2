/* Calls that change the file system: emulated by the supervisor on the
 * resolved, checked objects, never CONTINUEd (SPEC §3): a checked-then-
 * continued rename or link would let a racing thread move a secret into an
 * exposed directory.
 *
 * Two shapes, both race-free:
 *   - a name in a directory (mkdir, unlink, rmdir, rename, link's new name,
 *     symlink, mknod): the parent is pinned by an O_PATH descriptor, the
 *     policy judges its canonical path plus the name, and the *at call acts
 *     on (parent descriptor, name);
 *   - an existing object (chmod, chown, truncate, utimes, xattrs, link's
 *     source): pinned by an O_PATH descriptor and changed through
 *     /proc/self/fd/N (or AT_EMPTY_PATH), which lands on that very object, a
 *     symlink staying a symlink.
 * Creations run under the target's umask (sb_umask_begin).  Device nodes are
 * never created.  The active policy files, and directories holding them, are
 * never renamed, removed, replaced or linked (sb_policy_check_path says
 * PROTECTED for the files themselves).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "sup_priv.h"

#define SB_NR_FCHMODAT2 452

/* ---- helpers ------------------------------------------------------------------ */

static int read_path(struct sb_notif *n, uint64_t addr, char *buf)
{
	int rc = sb_notif_read_str(n, addr, buf, PATH_MAX);

	if (rc)
		sb_notif_fail_resolve(n, rc);
	return rc;
}

/* Answer the result of the supervisor's own call. */
static void answer(struct sb_notif *n, long rc)
{
	if (rc < 0)
		sb_notif_fail(n, errno);
	else
		sb_notif_return(n, 0);
}

/* "x/." or "x/.." as a name to create or remove: the kernel's answer, once
 * the directory itself may be seen. */
static int dot_last(struct sb_notif *n, int dirfd, const char *path, int err)
{
	struct sb_path p;
	int rc = sb_path_resolve(n, dirfd, path, SB_RES_FOLLOW, &p);

	if (rc)
		sb_notif_fail_resolve(n, rc);
	else if (!sb_notif_check_path(n, &p, SB_ACC_WRITE))
		sb_notif_fail(n, err);
	sb_path_release(&p);
	return 0;
}

/* The kernel looks a name up before it asks whether the directory may be
 * written: removing a name that is not there fails with ENOENT, creating
 * one that is there with EEXIST, whoever the caller (os_helper.unlink()
 * and the like count on it).  Where the policy keeps the directory
 * read-only, it may be listed, so the name's existence is no secret: give
 * the kernel's answer, as bare, rather than a refusal.  Enforce mode only
 * (learning and audit perform the call).  `lookup_err` is ENOENT (the call
 * removes the name), EEXIST (it creates it) or 0. */
static bool kernel_answers_first(struct sb_notif *n, const struct sb_path *p, int lookup_err)
{
	struct stat st;
	bool there;

	if (!lookup_err || n->mode != SB_MODE_ENFORCE ||
	    sb_policy_check_path(n->policy, p->canon, p->len, SB_ACC_WRITE, NULL) != SB_PATH_READ_ONLY)
		return false;
	there = fstatat(p->parentfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (there != (lookup_err == EEXIST))
		return false;
	sb_notif_ev_path(n, p->canon, SB_ACC_WRITE);
	n->ev->err = lookup_err;
	sb_notif_fail(n, lookup_err);
	return true;
}

/* Resolve (parent, name) for a change and judge it as a write.  Returns 0
 * when the caller may act, 1 when the notification is answered. */
static int name_for_write(struct sb_notif *n, int dirfd, const char *path, struct sb_path *p, int dot_err,
			  int lookup_err)
{
	int rc = sb_path_resolve(n, dirfd, path, SB_RES_PARENT, p);

	if (rc) {
		if (p->dot_last)
			dot_last(n, dirfd, path, dot_err);
		else
			sb_notif_fail_resolve(n, rc);
		return 1;
	}
	if (kernel_answers_first(n, p, lookup_err))
		return 1;
	if (sb_notif_check_path(n, p, SB_ACC_WRITE))
		return 1;
	if (sb_sup_holds_policy_file(n->sup, p->canon, p->len) && sb_notif_refuse(n, EACCES, NULL, NULL))
		return 1;
	return 0;
}

/* Resolve an existing object for a change and judge it as a write.
 * Descriptor objects (a pipe) are the target's own: no path to judge. */
static int object_for_write(struct sb_notif *n, int dirfd, const char *path, unsigned res, struct sb_path *p)
{
	int rc = sb_path_resolve(n, dirfd, path, res, p);

	if (rc) {
		sb_notif_fail_resolve(n, rc);
		return 1;
	}
	if (p->fdobj) {
		sb_notif_ev_path(n, p->canon, SB_ACC_WRITE);
		return 0;
	}
	return sb_notif_check_path(n, p, SB_ACC_WRITE) ? 1 : 0;
}

static void proc_fd(char *buf, size_t cap, int fd)
{
	snprintf(buf, cap, "/proc/self/fd/%d", fd);
}

/* ---- a name in a directory ---------------------------------------------------- */

int sb_handle_mkdir(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	bool at = d->nr == __SNR_mkdirat;
	int dirfd = at ? (int)d->args[0] : AT_FDCWD;
	mode_t mode = (mode_t)d->args[at ? 2 : 1];
	char path[PATH_MAX];
	struct sb_path p;

	if (read_path(n, d->args[at ? 1 : 0], path))
		return 0;
	if (name_for_write(n, dirfd, path, &p, EEXIST, EEXIST) == 0) {
		int rc = sb_umask_begin(n);

		if (rc)
			sb_notif_fail_resolve(n, rc);
		else
			answer(n, mkdirat(p.parentfd, p.name, mode & 07777));
		sb_umask_end();
	}
	sb_path_release(&p);
	return 0;
}

int sb_handle_unlink(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int dirfd = AT_FDCWD, flags = 0;
	uint64_t pathp = d->args[0];
	char path[PATH_MAX];
	struct sb_path p;

	if (d->nr == __SNR_unlinkat) {
		dirfd = (int)d->args[0];
		pathp = d->args[1];
		flags = (int)d->args[2];
		if (flags & ~AT_REMOVEDIR) {
			sb_notif_fail(n, EINVAL);
			return 0;
		}
	} else if (d->nr == __SNR_rmdir) {
		flags = AT_REMOVEDIR;
	}
	if (read_path(n, pathp, path))
		return 0;
	if (name_for_write(n, dirfd, path, &p, flags ? EINVAL : EISDIR, ENOENT) == 0)
		answer(n, unlinkat(p.parentfd, p.name, flags));
	sb_path_release(&p);
	return 0;
}

int sb_handle_rename(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int odir = AT_FDCWD, ndir = AT_FDCWD;
	uint64_t op = d->args[0], np = d->args[1];
	unsigned flags = 0;
	char opath[PATH_MAX], npath[PATH_MAX];
	struct sb_path from, to;
	char fromcanon[PATH_MAX];
	unsigned fromacc;

	if (d->nr != __SNR_rename) {
		odir = (int)d->args[0];
		op = d->args[1];
		ndir = (int)d->args[2];
		np = d->args[3];
		flags = d->nr == __SNR_renameat2 ? (unsigned)d->args[4] : 0;
	}
	if (read_path(n, op, opath) || read_path(n, np, npath))
		return 0;
	sb_path_init(&to);
	/* Both ends are writes; the event names the source.  A racing thread
	 * cannot swap either end: the call acts on the judged (parent, name)
	 * pairs. */
	if (name_for_write(n, odir, opath, &from, EBUSY, ENOENT) == 0) {
		snprintf(fromcanon, sizeof(fromcanon), "%s", from.canon);
		fromacc = n->ev->access;
		if (name_for_write(n, ndir, npath, &to, EBUSY, 0) == 0) {
			sb_notif_ev_path(n, fromcanon, fromacc);
			answer(n, syscall(SYS_renameat2, from.parentfd, from.name, to.parentfd, to.name, flags));
		}
	}
	sb_path_release(&from);
	sb_path_release(&to);
	return 0;
}

int sb_handle_link(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int odir = AT_FDCWD, ndir = AT_FDCWD, flags = 0;
	uint64_t op = d->args[0], np = d->args[1];
	char opath[PATH_MAX], npath[PATH_MAX], proc[64], srccanon[PATH_MAX];
	struct sb_path from, to;
	unsigned res;

	if (d->nr == __SNR_linkat) {
		odir = (int)d->args[0];
		op = d->args[1];
		ndir = (int)d->args[2];
		np = d->args[3];
		flags = (int)d->args[4];
		if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) {
			sb_notif_fail(n, EINVAL);
			return 0;
		}
	}
	if (read_path(n, op, opath) || read_path(n, np, npath))
		return 0;
	/* SB_RES_ANON: an O_TMPFILE gets its first name this way (through
	 * /proc/self/fd/N or AT_EMPTY_PATH); it is judged by the directory it
	 * was made in, and the kernel links no other unlinked file. */
	res = SB_RES_ANON | (flags & AT_SYMLINK_FOLLOW ? SB_RES_FOLLOW : 0) | (flags & AT_EMPTY_PATH ? SB_RES_EMPTY : 0);
	sb_path_init(&to);
	/* The source needs write access too: a new name for a read-only file in
	 * a writable directory would make it writable. */
	if (object_for_write(n, odir, opath, res, &from) == 0) {
		snprintf(srccanon, sizeof(srccanon), "%s", from.canon);
		if (from.fdobj) {
			sb_notif_fail(n, ENOENT);	/* pipes and sockets have no name to link */
		} else if (name_for_write(n, ndir, npath, &to, EEXIST, EEXIST) == 0) {
			sb_notif_ev_path(n, srccanon, SB_ACC_WRITE);
			proc_fd(proc, sizeof(proc), from.objfd);
			answer(n, linkat(AT_FDCWD, proc, to.parentfd, to.name, AT_SYMLINK_FOLLOW));
		}
	}
	sb_path_release(&from);
	sb_path_release(&to);
	return 0;
}

int sb_handle_symlink(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	bool at = d->nr == __SNR_symlinkat;
	char target[PATH_MAX], path[PATH_MAX];
	struct sb_path p;

	/* The target text is not resolved: a symlink grants nothing, every
	 * later use of it is resolved and judged. */
	if (read_path(n, d->args[0], target) || read_path(n, d->args[at ? 2 : 1], path))
		return 0;
	if (name_for_write(n, at ? (int)d->args[1] : AT_FDCWD, path, &p, EEXIST, EEXIST) == 0)
		answer(n, symlinkat(target, p.parentfd, p.name));
	sb_path_release(&p);
	return 0;
}

int sb_handle_mknod(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	bool at = d->nr == __SNR_mknodat;
	mode_t mode = (mode_t)d->args[at ? 2 : 1];
	dev_t dev = (dev_t)d->args[at ? 3 : 2];
	char path[PATH_MAX];
	struct sb_path p;

	if (read_path(n, d->args[at ? 1 : 0], path))
		return 0;
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		/* A device node in an exposed directory would expose the device. */
		sb_notif_fail(n, EPERM);
		return 0;
	}
	if (name_for_write(n, at ? (int)d->args[0] : AT_FDCWD, path, &p, EEXIST, EEXIST) == 0) {
		int rc = sb_umask_begin(n);

		if (rc)
			sb_notif_fail_resolve(n, rc);
		else
			answer(n, mknodat(p.parentfd, p.name, mode, dev));
		sb_umask_end();
	}
	sb_path_release(&p);
	return 0;
}

/* ---- an existing object -------------------------------------------------------- */

int sb_handle_chmod(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int dirfd = AT_FDCWD;
	uint64_t pathp = 0, flags = 0;
	mode_t mode;
	char path[PATH_MAX] = "", proc[64];
	struct sb_path p;

	switch (d->nr) {
	case __SNR_chmod:
		pathp = d->args[0];
		mode = (mode_t)d->args[1];
		break;
	case __SNR_fchmod:
		dirfd = (int)d->args[0];
		mode = (mode_t)d->args[1];
		flags = AT_EMPTY_PATH;
		break;
	case __SNR_fchmodat:
		dirfd = (int)d->args[0];
		pathp = d->args[1];
		mode = (mode_t)d->args[2];
		break;
	default:	/* fchmodat2 */
		dirfd = (int)d->args[0];
		pathp = d->args[1];
		mode = (mode_t)d->args[2];
		flags = d->args[3];
		if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
			sb_notif_fail(n, EINVAL);
			return 0;
		}
		break;
	}
	if (pathp && read_path(n, pathp, path))
		return 0;
	if (object_for_write(n, dirfd, path,
			     (flags & AT_SYMLINK_NOFOLLOW ? 0 : SB_RES_FOLLOW) | (flags & AT_EMPTY_PATH ? SB_RES_EMPTY : 0),
			     &p) == 0) {
		if (p.fdobj) {
			answer(n, fchmod(p.objfd, mode & 07777));
		} else {
			/* Through the magic link: the pinned object (a symlink gets
			 * EOPNOTSUPP, as from fchmodat2 with AT_SYMLINK_NOFOLLOW). */
			proc_fd(proc, sizeof(proc), p.objfd);
			answer(n, chmod(proc, mode & 07777));
		}
	}
	sb_path_release(&p);
	return 0;
}

int sb_handle_chown(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int dirfd = AT_FDCWD;
	uint64_t pathp = 0, flags = 0;
	uid_t uid;
	gid_t gid;
	char path[PATH_MAX] = "";
	struct sb_path p;

	switch (d->nr) {
	case __SNR_chown:
	case __SNR_lchown:
		pathp = d->args[0];
		uid = (uid_t)d->args[1];
		gid = (gid_t)d->args[2];
		flags = d->nr == __SNR_lchown ? AT_SYMLINK_NOFOLLOW : 0;
		break;
	case __SNR_fchown:
		dirfd = (int)d->args[0];
		uid = (uid_t)d->args[1];
		gid = (gid_t)d->args[2];
		flags = AT_EMPTY_PATH;
		break;
	default:	/* fchownat */
		dirfd = (int)d->args[0];
		pathp = d->args[1];
		uid = (uid_t)d->args[2];
		gid = (gid_t)d->args[3];
		flags = d->args[4];
		if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
			sb_notif_fail(n, EINVAL);
			return 0;
		}
		break;
	}
	if (pathp && read_path(n, pathp, path))
		return 0;
	if (object_for_write(n, dirfd, path,
			     (flags & AT_SYMLINK_NOFOLLOW ? 0 : SB_RES_FOLLOW) | (flags & AT_EMPTY_PATH ? SB_RES_EMPTY : 0),
			     &p) == 0)
		answer(n, fchownat(p.objfd, "", uid, gid, AT_EMPTY_PATH));
	sb_path_release(&p);
	return 0;
}

int sb_handle_truncate(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int64_t len = (int64_t)d->args[1];
	char path[PATH_MAX], proc[64];
	struct sb_path p;
	struct stat st;

	if (read_path(n, d->args[0], path))
		return 0;
	if (object_for_write(n, AT_FDCWD, path, SB_RES_FOLLOW, &p) == 0) {
		if (len < 0 || fstat(p.objfd, &st) < 0 || !S_ISREG(st.st_mode)) {
			sb_notif_fail(n, len >= 0 && S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
		} else {
			int fd;

			proc_fd(proc, sizeof(proc), p.objfd);
			fd = open(proc, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (fd < 0) {
				sb_notif_fail(n, errno);
			} else {
				answer(n, ftruncate(fd, len));
				close(fd);
			}
		}
	}
	sb_path_release(&p);
	return 0;
}

/* The times argument of utime/utimes/futimesat/utimensat as timespec[2]
 * (NULL: now). */
static int read_times(struct sb_notif *n, uint64_t addr, struct timespec ts[2], bool *now)
{
	const struct seccomp_data *d = &n->req->data;
	int rc;

	*now = addr == 0;
	if (*now)
		return 0;
	if (d->nr == __SNR_utimensat)
		return sb_notif_read(n, addr, ts, 2 * sizeof(struct timespec));
	if (d->nr == __SNR_utime) {
		struct utimbuf ub;

		rc = sb_notif_read(n, addr, &ub, sizeof(ub));
		ts[0] = (struct timespec){ ub.actime, 0 };
		ts[1] = (struct timespec){ ub.modtime, 0 };
		return rc;
	}
	{
		struct timeval tv[2];

		rc = sb_notif_read(n, addr, tv, sizeof(tv));
		for (int i = 0; rc == 0 && i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
		}
		return rc;
	}
}

int sb_handle_utimes(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	int dirfd = AT_FDCWD, flags = 0;
	uint64_t pathp, timesp;
	struct timespec ts[2];
	char path[PATH_MAX] = "";
	struct sb_path p;
	bool now;
	int rc;

	if (d->nr == __SNR_utime || d->nr == __SNR_utimes) {
		pathp = d->args[0];
		timesp = d->args[1];
	} else {
		dirfd = (int)d->args[0];
		pathp = d->args[1];
		timesp = d->args[2];
		flags = d->nr == __SNR_utimensat ? (int)d->args[3] : 0;
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
			sb_notif_fail(n, EINVAL);
			return 0;
		}
	}
	rc = read_times(n, timesp, ts, &now);
	if (rc) {
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	/* utimensat(fd, NULL, ...) is futimens: the descriptor itself. */
	if (pathp && read_path(n, pathp, path))
		return 0;
	if (!pathp)
		flags |= AT_EMPTY_PATH;
	if (object_for_write(n, dirfd, path,
			     (flags & AT_SYMLINK_NOFOLLOW ? 0 : SB_RES_FOLLOW) | (flags & AT_EMPTY_PATH ? SB_RES_EMPTY : 0),
			     &p) == 0)
		answer(n, utimensat(p.objfd, "", now ? NULL : ts, AT_EMPTY_PATH));
	sb_path_release(&p);
	return 0;
}

int sb_handle_xattr_write(struct sb_notif *n)
{
	const struct seccomp_data *d = &n->req->data;
	bool by_fd = d->nr == __SNR_fsetxattr || d->nr == __SNR_fremovexattr;
	bool set = d->nr == __SNR_setxattr || d->nr == __SNR_lsetxattr || d->nr == __SNR_fsetxattr;
	bool nofollow = d->nr == __SNR_lsetxattr || d->nr == __SNR_lremovexattr;
	char path[PATH_MAX] = "", name[XATTR_NAME_MAX + 1], proc[64];
	char *value = NULL;
	size_t size = set ? (size_t)d->args[3] : 0;
	struct sb_path p;
	int rc;

	if (!by_fd && read_path(n, d->args[0], path))
		return 0;
	rc = sb_notif_read_str(n, d->args[1], name, sizeof(name));
	if (rc == 0 && size > XATTR_SIZE_MAX)
		rc = -E2BIG;
	/* xattr writes are rare: the value may take the heap. */
	if (rc == 0 && set && !(value = malloc(size ? size : 1)))
		rc = -ENOMEM;
	if (rc == 0 && set)
		rc = sb_notif_read(n, d->args[2], value, size);
	if (rc) {
		free(value);
		sb_notif_fail_resolve(n, rc == -ENAMETOOLONG ? -ERANGE : rc);
		return 0;
	}
	if (object_for_write(n, by_fd ? (int)d->args[0] : AT_FDCWD, path,
			     by_fd ? SB_RES_EMPTY : (nofollow ? 0 : SB_RES_FOLLOW), &p) == 0) {
		struct stat st;

		if (p.fdobj) {
			answer(n, set ? fsetxattr(p.objfd, name, value, size, (int)d->args[4])
				      : fremovexattr(p.objfd, name));
		} else if (fstat(p.objfd, &st) == 0 && S_ISLNK(st.st_mode)) {
			sb_notif_fail(n, EPERM);	/* user xattrs never live on symlinks */
		} else {
			proc_fd(proc, sizeof(proc), p.objfd);
			answer(n, set ? setxattr(proc, name, value, size, (int)d->args[4]) : removexattr(proc, name));
		}
	}
	free(value);
	sb_path_release(&p);
	return 0;
}

int sb_handle_chroot(struct sb_notif *n)
{
	/* A new root would make every later path mean something else to the
	 * policy: refused in enforce mode, whatever the directory. */
	n->ev->category = SB_API_PRIVILEGES;
	if (sb_notif_read_str(n, n->req->data.args[0], n->ev->path, sizeof(n->ev->path)) != 0)
		n->ev->path[0] = '\0';	/* shown only: nothing is decided by it */
	sb_copy_str(n->ev->name, sizeof(n->ev->name), "a new root would change what every path means; no rule allows chroot");
	if (sb_notif_refuse(n, EPERM, NULL, NULL))
		return 0;
	/* Learning: the kernel runs it (register and path checks are its own);
	 * from now on paths are resolved inside the target's new root. */
	sb_sup_root_changed(n->sup);
	sb_notif_continue(n);
	return 0;
}
