/* open, openat, openat2, creat: emulated, never CONTINUEd (SPEC §3).
 *
 * The path is copied once and resolved by the supervisor to an O_PATH
 * descriptor (pathres.c); the policy judges that descriptor's canonical path;
 * the file is then opened *through that descriptor* (/proc/self/fd/N with the
 * target's flags), so what is opened is exactly what was judged, and the
 * result is injected with ADDFD + SECCOMP_ADDFD_FLAG_SEND (atomic: no
 * descriptor leaks into a target that a signal restarted).  Creations open
 * (parent directory, one name) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS and
 * O_NOFOLLOW, under the target's umask.  A FIFO without O_NONBLOCK is opened
 * as a blocking call (sb_notif_block_begin): other workers keep serving and
 * the target can be interrupted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sup_priv.h"

#ifndef __O_TMPFILE
# define __O_TMPFILE 020000000
#endif

/* What open/openat keep of their flags (the kernel's VALID_OPEN_FLAGS). */
#define SB_OPEN_FLAGS                                                                           \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |  \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |   \
	 O_SYNC | O_PATH | __O_TMPFILE)

#define SB_RESOLVE_FLAGS                                                                        \
	(RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH |       \
	 RESOLVE_IN_ROOT | RESOLVE_CACHED)

struct open_req {
	int dirfd;
	uint64_t flags;
	mode_t mode;
	uint64_t resolve;
	char path[PATH_MAX];
};

static bool is_tmpfile(uint64_t flags)
{
	return (flags & (__O_TMPFILE | O_DIRECTORY)) == (__O_TMPFILE | O_DIRECTORY);
}

static unsigned open_access(uint64_t flags, bool creating)
{
	unsigned acc = 0;

	if (flags & O_PATH)
		return SB_ACC_READ;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		acc = SB_ACC_READ;
		break;
	case O_WRONLY:
		acc = SB_ACC_WRITE;
		break;
	default:
		acc = SB_ACC_READ | SB_ACC_WRITE;
		break;
	}
	if ((flags & O_TRUNC) || creating || is_tmpfile(flags))
		acc |= SB_ACC_WRITE;
	return acc;
}

/* openat2's struct open_how: the first 24 bytes, anything beyond must be 0. */
static int read_how(struct sb_notif *n, uint64_t addr, uint64_t size, struct open_req *o)
{
	struct open_how how;
	unsigned char extra[256];
	int rc;

	if (size < sizeof(how))
		return -EINVAL;
	if (size > sizeof(how) + sizeof(extra))
		return -E2BIG;
	rc = sb_notif_read(n, addr, &how, sizeof(how));
	if (rc == 0 && size > sizeof(how))
		rc = sb_notif_read(n, addr + sizeof(how), extra, size - sizeof(how));
	if (rc)
		return rc;
	for (size_t i = 0; i < size - sizeof(how); i++)
		if (extra[i])
			return -E2BIG;
	/* openat2 refuses what open() would silently drop. */
	if ((how.flags & ~(uint64_t)SB_OPEN_FLAGS) || (how.resolve & ~(uint64_t)SB_RESOLVE_FLAGS) ||
	    how.mode > 07777 || (how.mode && !(how.flags & O_CREAT) && !is_tmpfile(how.flags)))
		return -EINVAL;
	o->flags = how.flags;
	o->mode = (mode_t)how.mode;
	o->resolve = how.resolve;
	return 0;
}

static int decode(struct sb_notif *n, struct open_req *o)
{
	const struct seccomp_data *d = &n->req->data;
	uint64_t pathp;
	int rc;

	o->dirfd = AT_FDCWD;
	o->resolve = 0;
	switch (d->nr) {
	case __SNR_open:
		pathp = d->args[0];
		o->flags = d->args[1];
		o->mode = (mode_t)d->args[2];
		break;
	case __SNR_creat:
		pathp = d->args[0];
		o->flags = O_CREAT | O_WRONLY | O_TRUNC;
		o->mode = (mode_t)d->args[1];
		break;
	case __SNR_openat:
		o->dirfd = (int)d->args[0];
		pathp = d->args[1];
		o->flags = d->args[2];
		o->mode = (mode_t)d->args[3];
		break;
	case __SNR_openat2:
		o->dirfd = (int)d->args[0];
		pathp = d->args[1];
		rc = read_how(n, d->args[2], d->args[3], o);
		if (rc)
			return rc;
		break;
	default:
		return -ENOSYS;
	}
	if (d->nr != __SNR_openat2) {
		o->flags = (o->flags & SB_OPEN_FLAGS) | O_LARGEFILE;
		o->mode &= 07777;
		if (!(o->flags & O_CREAT) && !is_tmpfile(o->flags))
			o->mode = 0;
	}
	/* Checked with ID_VALID by sb_path_resolve (SB_RES_UNCHECKED), once for
	 * the path and the cwd it is resolved from. */
	return sb_notif_read_str_nv(n, pathp, o->path, sizeof(o->path));
}

static int inject(struct sb_notif *n, int fd, uint64_t flags)
{
	/* On failure (EMFILE) the answer is already the error, never CONTINUE. */
	sb_notif_addfd_send(n, fd, flags & O_CLOEXEC);
	close(fd);
	return 0;
}

/* Reopen the judged object with the target's flags.  Blocking opens (a FIFO
 * without O_NONBLOCK) wait as a blocking call. */
static int reopen(struct sb_notif *n, const struct sb_path *p, const struct open_req *o)
{
	char proc[64];
	uint64_t fl = (o->flags & ~(uint64_t)(O_CREAT | O_NOFOLLOW | O_CLOEXEC)) | O_CLOEXEC | O_NOCTTY;
	struct stat st;
	int fd, err, brc;

	if (fstat(p->objfd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;	/* O_NOFOLLOW on a symlink */
	if ((o->flags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (S_ISDIR(st.st_mode) && ((o->flags & O_ACCMODE) != O_RDONLY || (o->flags & O_CREAT)))
		return -EISDIR;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p->objfd);
	if (!S_ISFIFO(st.st_mode) || (o->flags & O_NONBLOCK)) {
		fd = open(proc, (int)fl);
		return fd < 0 ? -errno : fd;
	}
	brc = sb_notif_block_begin(n);
	if (brc)
		return brc;
	fd = open(proc, (int)fl);
	err = errno;
	brc = sb_notif_block_end(n);
	/* An open that completed is delivered even if a signal came meanwhile
	 * (the target handles it on return); only a target gone drops it. */
	if (fd >= 0 && brc != -ENOENT)
		return fd;
	if (fd >= 0)
		close(fd);
	return brc ? brc : -err;
}

/* A new file (O_CREAT on a missing name, or O_TMPFILE in a directory). */
static int create(struct sb_notif *n, const struct sb_path *p, const struct open_req *o)
{
	struct open_how how = { .flags = (o->flags & ~(uint64_t)O_CLOEXEC) | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
				.mode = o->mode,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd, rc;

	rc = sb_umask_begin(n);
	if (rc)
		return rc;
	if (is_tmpfile(o->flags))
		fd = (int)syscall(SYS_openat2, p->objfd, ".", &how, sizeof(how));
	else
		fd = (int)syscall(SYS_openat2, p->parentfd, p->name, &how, sizeof(how));
	rc = fd < 0 ? -errno : fd;
	sb_umask_end();
	return rc;
}

/* openat2 with RESOLVE_* flags: the kernel's own resolution from the same
 * base decides which object is meant (RESOLVE_IN_ROOT changes what "/"
 * means); magic links are never followed by the supervisor. */
static int resolve_how(struct sb_notif *n, const struct open_req *o, struct sb_path *p)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (o->flags & (O_NOFOLLOW | O_DIRECTORY)),
				.resolve = o->resolve | RESOLVE_NO_MAGICLINKS };
	int base = AT_FDCWD, fd, rc;

	rc = sb_path_resolve(n, o->dirfd, NULL, SB_RES_EMPTY | SB_RES_UNCHECKED, p);
	if (rc)
		return rc;
	base = p->objfd;
	p->objfd = -1;
	fd = (int)syscall(SYS_openat2, base, o->path, &how, sizeof(how));
	rc = fd < 0 ? -errno : 0;
	close(base);
	if (rc)
		return rc;
	sb_path_release(p);
	p->objfd = fd;
	{
		char link[64];
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, p->canon, sizeof(p->canon) - 1);
		if (len <= 0 || p->canon[0] != '/' || strncmp(p->canon, "/proc/", 6) == 0)
			return -EXDEV;	/* /proc under RESOLVE_*: not emulated */
		p->canon[len] = '\0';
		p->len = (size_t)len;
	}
	return 0;
}

/* An open the kernel layer judges exactly as we did (sb_oslayer_enforces_fs:
 * Landlock holds the policy's very exposure, no ignore=, no policy file in
 * a writable exposure, no read-only exposure inside a writable one):
 *   - a plain path: no /proc, no magic link, nothing the slow walker took
 *     from the target (the kernel resolves those in the target's context,
 *     differently from ours);
 *   - not O_PATH (never checked by Landlock's file_open) nor O_TMPFILE
 *     (emulated as a creation; glibc's __O_TMPFILE includes O_DIRECTORY,
 *     hence is_tmpfile(), so that listings are kernel-backed too);
 *   - a read needs READ_FILE/READ_DIR, a write WRITE_FILE, a creation
 *     MAKE_REG on the directory (ABI 1); a truncation by O_TRUNC is judged
 *     only from ABI 3 (TRUNCATE), so before it O_TRUNC is emulated.
 * Enforce mode only: learn and audit must see what would be refused. */
static bool kernel_backed(struct sb_notif *n, const struct sb_path *p, const struct open_req *o)
{
	/* A read-only open needs only Landlock's read exposure to match ours
	 * (sb_oslayer_enforces_fs_read: a policy file or a read-only tree in
	 * a writable exposure widen writes only). */
	bool reads = !(open_access(o->flags, false) & SB_ACC_WRITE) && !(o->flags & (O_CREAT | O_TRUNC));

	if (!(reads ? sb_sup_kernel_fs_read(n->sup) : sb_sup_kernel_fs(n->sup)) || n->mode != SB_MODE_ENFORCE ||
	    p->fdobj || p->walked ||
	    (o->flags & O_PATH) || is_tmpfile(o->flags) || strncmp(p->canon, "/proc/", 6) == 0 ||
	    strcmp(p->canon, "/proc") == 0)
		return false;
	return !(o->flags & O_TRUNC) || sb_sup_kernel_truncate(n->sup);
}

/* Learning enforces nothing on opens (a refusal only becomes a rule to
 * write, sb_notif_refuse), so once the decision is recorded the kernel may
 * as well do the open: emulating it bought exactness of the recorded object
 * under a race, which a program could only use to leave an access out of
 * the rules it will be held to (a stricter policy), and cost each open an
 * ADDFD without the sync wake-up.  Audit keeps the emulation: its report must
 * name what the program really reached. */
static bool learning(const struct sb_notif *n)
{
	return n->mode == SB_MODE_LEARN;
}

static int open_existing(struct sb_notif *n, struct open_req *o, struct sb_path *p)
{
	int fd;

	/* Descriptor objects (a pipe behind /proc/self/fd/N) are the target's
	 * already; paths are judged with the access the flags ask for. */
	if (p->fdobj)
		sb_notif_ev_path(n, p->canon, open_access(o->flags, false));
	else if (sb_notif_check_path(n, p, open_access(o->flags, false)) ||
		 sb_notif_py_veto(n, SB_PYV_OPEN, p->canon, sb_notif_implicit(n)))
		return 0;
	if ((o->flags & O_CREAT) && (o->flags & O_EXCL)) {
		sb_notif_fail(n, EEXIST);
		return 0;
	}
	if (learning(n)) {
		/* CONTINUE: learning, see learning() above. */
		sb_notif_continue(n);
		return 0;
	}
	if (kernel_backed(n, p, o)) {
		/* CONTINUE: Landlock enforces this very exposure, so a path a
		 * racing thread swaps in after our check is refused by the
		 * kernel itself unless the policy would allow that access as
		 * well (seccomp_unotify(2)'s condition; SPEC §9): a read outside
		 * the read exposures, a write, creation or truncation outside
		 * the writable ones (tests/redteam: race_open, race_write). */
		sb_notif_continue(n);
		return 0;
	}
	if (o->flags & O_PATH) {
		/* ADDFD cannot pass O_PATH descriptors (fget refuses them), so
		 * O_PATH opens are decided and CONTINUEd.  Race-safe: an O_PATH
		 * descriptor gives no content.  Whatever a racing thread gets
		 * one to can only be stat'ed (metadata, as the stat family);
		 * every use that reaches content or changes something (openat
		 * from it, /proc/self/fd/N, fchdir then a relative open, linkat,
		 * fchmodat, execveat) is notified again and judged on the object
		 * the descriptor really names. */
		sb_notif_continue(n);
		return 0;
	}
	fd = reopen(n, p, o);
	if (fd < 0) {
		sb_notif_fail_resolve(n, fd);	/* EINTR: a signal is pending for the target */
		return 0;
	}
	return inject(n, fd, o->flags);
}

int sb_handle_open(struct sb_notif *n)
{
	struct open_req o;
	struct sb_path p;
	unsigned rf;
	int rc, fd;

	rc = decode(n, &o);
	if (rc) {
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	sb_path_init(&p);
	if (o.resolve) {
		rc = resolve_how(n, &o, &p);
		if (rc == 0)
			rc = open_existing(n, &o, &p);
		else
			sb_notif_fail_resolve(n, rc);
		sb_path_release(&p);
		return 0;
	}
	if (is_tmpfile(o.flags)) {
		rc = sb_path_resolve(n, o.dirfd, o.path, SB_RES_FOLLOW | SB_RES_UNCHECKED, &p);
		if (rc == 0 && !sb_notif_check_path(n, &p, SB_ACC_WRITE) &&
		    !sb_notif_py_veto(n, SB_PYV_OPEN, p.canon, sb_notif_implicit(n))) {
			fd = create(n, &p, &o);
			if (fd >= 0)
				inject(n, fd, o.flags);
			else
				sb_notif_fail_resolve(n, fd);
		} else if (rc) {
			sb_notif_fail_resolve(n, rc);
		}
		sb_path_release(&p);
		return 0;
	}
	/* O_CREAT|O_EXCL and O_NOFOLLOW do not follow a final symlink. */
	rf = (o.flags & O_NOFOLLOW) || ((o.flags & O_CREAT) && (o.flags & O_EXCL)) ? 0 : SB_RES_FOLLOW;
	rf |= SB_RES_UNCHECKED;
	rc = sb_path_resolve(n, o.dirfd, o.path, rf, &p);
#ifdef SB_TEST_WIDEN
	/* Test-only binary: a decision that hangs where nothing said it would
	 * block (tests/integration/sup-fifo.py, the stall watchdog). */
	if (rc == 0 && getenv("SB_TEST_STALL_PATH") && !strcmp(p.canon, getenv("SB_TEST_STALL_PATH")))
		nanosleep(&(struct timespec){ 2, 0 }, NULL);
#endif
	if (rc == 0) {
		rc = open_existing(n, &o, &p);
		sb_path_release(&p);
		return rc;
	}
	if (rc != -ENOENT || !(o.flags & O_CREAT)) {
		sb_notif_fail_resolve(n, rc);
		return 0;
	}
	/* A new name: judged as a write to (parent, name); a racing thread that
	 * puts a symlink there makes the creation fail (O_NOFOLLOW), never
	 * follow it. */
	rc = sb_path_resolve(n, o.dirfd, o.path, SB_RES_PARENT | rf, &p);
	if (rc) {
		sb_notif_fail_resolve(n, p.dot_last ? -EISDIR : rc);
		sb_path_release(&p);
		return 0;
	}
	if (p.objfd >= 0) {
		/* It appeared meanwhile (or a dangling symlink was resolved). */
		rc = open_existing(n, &o, &p);
		sb_path_release(&p);
		return rc;
	}
	if (!sb_notif_check_path(n, &p, open_access(o.flags, true)) &&
	    !sb_notif_py_veto(n, SB_PYV_OPEN, p.canon, sb_notif_implicit(n))) {
		if (learning(n)) {
			/* CONTINUE: learning, see learning() above. */
			sb_notif_continue(n);
			sb_path_release(&p);
			return 0;
		}
		if (kernel_backed(n, &p, &o)) {
			/* CONTINUE of a creation the policy allows: the kernel
			 * creates the file itself (the target's umask, O_EXCL)
			 * and Landlock's MAKE_REG refuses a name a racing thread
			 * moves outside the writable exposures; a symlink put
			 * there meanwhile is followed by the kernel to a target
			 * Landlock judges the same way. */
			sb_notif_continue(n);
			sb_path_release(&p);
			return 0;
		}
		fd = create(n, &p, &o);
		if (fd >= 0)
			inject(n, fd, o.flags);
		else
			sb_notif_fail_resolve(n, fd);
	}
	sb_path_release(&p);
	return 0;
}
