/* Resolving a path as the target would (SPEC §3 "Deciding without races").
 *
 * The result is an O_PATH descriptor pinning the object (or its parent
 * directory and a single name), and the object's canonical path read back
 * from the kernel (d_path through /proc/self/fd), never computed from the
 * string the target gave: the policy decides on what the descriptor is, and
 * the supervisor then acts on that descriptor, so a racing thread that
 * rewrites the path buffer or swaps a symlink changes nothing.
 *
 * Fast path: one openat2(O_PATH, RESOLVE_NO_MAGICLINKS) from the target's cwd,
 * dirfd or root.  It is exact except for what depends on *who* resolves:
 * /proc/self and /proc/thread-self (resolved by the supervisor they would name
 * the supervisor) and the magic links of /proc/PID (fd/N, cwd, root, exe).
 * Both show up as an ELOOP (magic links) or as a canonical path under /proc,
 * and then the slow walker resolves component by component, substituting the
 * target's ids for self/thread-self and taking the object a magic link names
 * from the target itself (pidfd_getfd for fd/N): so `/proc/self/fd/N` is
 * judged by what descriptor N really is, and `/proc/self/root/x` is `/x`.
 *
 * The target's root: when it is ours (the normal case) absolute paths are
 * resolved from our root; otherwise (chroot granted, a mount namespace of a
 * kernel layer) from /proc/TID/root with RESOLVE_IN_ROOT, and the canonical
 * paths lose the root's prefix.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sup_priv.h"

#define SB_MAXSYMLINKS 40

struct res {
	struct sb_notif *n;
	bool same_root;
	int rootfd;			/* owned, -1 when the root is ours */
	char rootpfx[PATH_MAX];		/* our spelling of the target's root, "" for "/" */
	size_t rootlen;
	struct sb_proc_ids ids;		/* for /proc/self, filled on demand */
	bool have_ids;
	bool checked;			/* ID_VALID done since the path was read */
	bool anon_ok;			/* SB_RES_ANON asked */
	bool anon;			/* the object is an unlinked regular file */
};

static int sys_openat2(int dirfd, const char *path, unsigned long long flags, unsigned long long resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .mode = 0, .resolve = resolve };
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void sb_path_init(struct sb_path *p)
{
	p->canon[0] = '\0';
	p->len = 0;
	p->objfd = -1;
	p->parentfd = -1;
	p->name[0] = '\0';
	p->fdobj = false;
	p->walked = false;
	p->dot_last = false;
	p->anon = false;
}

void sb_path_release(struct sb_path *p)
{
	close_fd(&p->objfd);
	close_fd(&p->parentfd);
}

static int res_init(struct res *r, struct sb_notif *n)
{
	char path[64];
	ssize_t len;

	r->n = n;
	r->rootfd = -1;
	r->rootpfx[0] = '\0';
	r->rootlen = 0;
	r->have_ids = false;
	r->checked = false;
	r->anon_ok = false;
	r->anon = false;
	r->same_root = sb_sup_same_root(n->sup);
	if (r->same_root)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)n->req->pid);
	r->rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->rootfd < 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->rootfd);
	len = readlink(path, r->rootpfx, sizeof(r->rootpfx) - 1);
	if (len <= 0 || r->rootpfx[0] != '/')
		return -EACCES;
	r->rootpfx[len] = '\0';
	r->rootlen = len == 1 ? 0 : (size_t)len;
	if (r->rootlen == 0)
		r->rootpfx[0] = '\0';
	r->checked = true;
	return sb_notif_valid(n);
}

static void res_fini(struct res *r)
{
	close_fd(&r->rootfd);
}

static int res_ids(struct res *r)
{
	int rc;

	if (r->have_ids)
		return 0;
	rc = sb_proc_status(r->n->req->pid, &r->ids);
	if (rc == 0)
		rc = sb_notif_valid(r->n);
	if (rc == 0)
		r->have_ids = true;
	return rc;
}

/* Our /proc/self/fd, opened once: reading a link through it skips the walk
 * of "/proc", "self" (itself a symlink) and our pid's "fd" on every
 * resolution that needs d_path (about a third of its cost).  The same
 * directory for every thread: they share one descriptor table.  -1 when it
 * cannot be opened (then the full path is used). */
static int self_fd_dir(void)
{
	static atomic_int dir = -1;
	int d = atomic_load(&dir), none = -1;

	if (d >= 0)
		return d;
	d = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return -1;
	if (!atomic_compare_exchange_strong(&dir, &none, d)) {
		close(d);	/* another worker was first */
		d = none;
	}
	return d;
}

/* The canonical path of `fd` in the target's view.  Returns 0 for a path,
 * 1 for a descriptor object ("pipe:[12]", "socket:[3]", "anon_inode:..."),
 * -ENOENT for a deleted file, -EACCES for an object outside the target's root. */
static int fd_canon(struct res *r, int fd, char *out, size_t *len)
{
	static const char deleted[] = " (deleted)";
	int dir = self_fd_dir();
	char link[64];
	ssize_t n;

	if (dir >= 0) {
		snprintf(link, sizeof(link), "%d", fd);
		n = readlinkat(dir, link, out, PATH_MAX - 1);
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, out, PATH_MAX - 1);
	}
	if (n <= 0)
		return -EIO;
	if (n >= PATH_MAX - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	if (out[0] != '/') {
		*len = (size_t)n;
		return 1;
	}
	if ((size_t)n > sizeof(deleted) - 1 && strcmp(out + n - (sizeof(deleted) - 1), deleted) == 0) {
		struct stat st;

		/* An unlinked regular file (O_TMPFILE, or removed while open) is
		 * an object only where the caller asked for one (SB_RES_ANON),
		 * named as the kernel shows it: its directory, and "#inode" for
		 * an O_TMPFILE.  Anything else deleted does not exist. */
		if (!r->anon_ok || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 0)
			return -ENOENT;
		n -= (ssize_t)(sizeof(deleted) - 1);
		out[n] = '\0';
		r->anon = true;
	}
	if (r->rootlen) {
		if (strncmp(out, r->rootpfx, r->rootlen) != 0 || (out[r->rootlen] && out[r->rootlen] != '/'))
			return -EACCES;
		memmove(out, out + r->rootlen, (size_t)n - r->rootlen + 1);
		n -= (ssize_t)r->rootlen;
		if (n == 0) {
			out[0] = '/';
			out[1] = '\0';
			n = 1;
		}
	}
	*len = (size_t)n;
	return 0;
}

/* The object a relative path starts from: the target's cwd or its dirfd. */
static int base_fd(struct res *r, int dirfd, int *out)
{
	char path[64];
	int fd, rc;

	if (dirfd != AT_FDCWD)
		return (fd = sb_notif_getfd(r->n, dirfd)) < 0 ? (fd == -EBADF ? -EBADF : fd) : (*out = fd, 0);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)r->n->req->pid);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	/* The cwd is the target's only while the request is alive. */
	rc = sb_notif_valid(r->n);
	if (rc) {
		close(fd);
		return rc;
	}
	r->checked = true;
	*out = fd;
	return 0;
}

static bool under_proc(const char *canon)
{
	return strncmp(canon, "/proc", 5) == 0 && (canon[5] == '\0' || canon[5] == '/');
}

/* ---- the slow walker ---------------------------------------------------------- */

struct walk {
	struct res *r;
	int cur;			/* owned O_PATH directory */
	char rest[2 * PATH_MAX];	/* what remains to walk */
	size_t pos;
	int links;
};

static int walk_root(struct walk *w)
{
	int fd = w->r->rootfd >= 0 ? dup(w->r->rootfd) : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close_fd(&w->cur);
	w->cur = fd;
	return 0;
}

/* Replace the walked prefix by `link` followed by what remains. */
static int walk_splice(struct walk *w, const char *link)
{
	size_t ll = strlen(link), rl = strlen(w->rest + w->pos);

	if (++w->links > SB_MAXSYMLINKS)
		return -ELOOP;
	if (ll + 1 + rl + 1 > sizeof(w->rest))
		return -ENAMETOOLONG;
	memmove(w->rest + ll + 1, w->rest + w->pos, rl + 1);
	memcpy(w->rest, link, ll);
	w->rest[ll] = '/';
	w->pos = 0;
	return link[0] == '/' ? walk_root(w) : 0;
}

/* Is `fd` the root of a procfs? */
static bool is_proc_root(int fd)
{
	struct statfs sfs;
	struct stat st;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC && fstat(fd, &st) == 0 &&
	       st.st_ino == 1;
}

static bool is_proc(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/* Parse "/proc/P[/task/T][/fd]" (the directory holding a magic link). */
static int parse_proc_dir(const char *dir, long *p, long *t, bool *fd)
{
	char *end;

	*t = -1;
	*fd = false;
	if (strncmp(dir, "/proc/", 6) != 0)
		return -EACCES;
	*p = strtol(dir + 6, &end, 10);
	if (end == dir + 6)
		return -EACCES;
	if (strncmp(end, "/task/", 6) == 0) {
		char *s = end + 6;

		*t = strtol(s, &end, 10);
		if (end == s)
			return -EACCES;
	}
	if (strcmp(end, "/fd") == 0)
		*fd = true;
	else if (*end)
		return -EACCES;
	return 0;
}

/* A magic link of /proc/PID: take the object it names from the target itself.
 * Only the target's own process (its thread group, by id) is accepted. */
static int walk_magic(struct walk *w, const char *comp, int *obj)
{
	char dir[PATH_MAX];
	size_t dlen;
	long p, t, num;
	bool fddir;
	char *end;
	int rc;

	rc = fd_canon(w->r, w->cur, dir, &dlen);
	if (rc)
		return rc < 0 ? rc : -EACCES;
	rc = parse_proc_dir(dir, &p, &t, &fddir);
	if (rc == 0)
		rc = res_ids(w->r);
	if (rc)
		return rc;
	if ((p != w->r->ids.ns_tgid && p != w->r->ids.ns_tid) ||
	    (t >= 0 && t != w->r->ids.ns_tgid && t != w->r->ids.ns_tid))
		return -EACCES;
	if (fddir) {
		num = strtol(comp, &end, 10);
		if (*end || num < 0 || num > INT_MAX)
			return -ENOENT;
		rc = sb_notif_getfd(w->r->n, (int)num);
		if (rc < 0)
			return rc == -EBADF ? -ENOENT : rc;
		*obj = rc;
		return 0;
	}
	if (strcmp(comp, "cwd") != 0 && strcmp(comp, "root") != 0 && strcmp(comp, "exe") != 0)
		return -EACCES;
	*obj = openat(w->cur, comp, O_PATH | O_CLOEXEC);
	if (*obj < 0)
		return -errno;
	rc = sb_notif_valid(w->r->n);
	if (rc)
		close_fd(obj);
	return rc;
}

/* Next component of w->rest, NUL-terminated in place; NULL at the end. */
static char *walk_next(struct walk *w, bool *last)
{
	char *s = w->rest + w->pos, *e;

	while (*s == '/')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, '/');
	if (e) {
		*e = '\0';
		w->pos = (size_t)(e + 1 - w->rest);
	} else {
		w->pos = (size_t)(s + strlen(s) - w->rest);
	}
	*last = w->rest[w->pos + strspn(w->rest + w->pos, "/")] == '\0';
	return s;
}

static int walk_dotdot(struct walk *w)
{
	struct stat a, b;
	int fd;

	/* Outside our own root the kernel does not know the target's root:
	 * stop there as it would. */
	if (w->r->rootfd >= 0 && fstat(w->cur, &a) == 0 && fstat(w->r->rootfd, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 0;
	fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close_fd(&w->cur);
	w->cur = fd;
	return 0;
}

/* One symlink met by the walker: ordinary (splice its text), /proc/self, or
 * a magic link (the object replaces the walk position). */
static int walk_link(struct walk *w, int nfd, const char *comp, bool last, int *obj, bool *fdobj)
{
	char link[PATH_MAX];
	ssize_t n;
	int rc, o = -1;

	if (is_proc(w->cur)) {
		if (is_proc_root(w->cur)) {
			if (strcmp(comp, "self") == 0 || strcmp(comp, "thread-self") == 0) {
				if ((rc = res_ids(w->r)))
					return rc;
				if (comp[0] == 's')
					snprintf(link, sizeof(link), "%d", (int)w->r->ids.ns_tgid);
				else
					snprintf(link, sizeof(link), "%d/task/%d", (int)w->r->ids.ns_tgid,
						 (int)w->r->ids.ns_tid);
				return walk_splice(w, link);
			}
		} else {
			size_t len;

			rc = walk_magic(w, comp, &o);
			if (rc)
				return rc;
			rc = fd_canon(w->r, o, link, &len);
			if (rc < 0 || (rc == 1 && !last)) {
				close(o);
				return rc < 0 ? rc : -ENOTDIR;
			}
			if (rc == 1 || last) {
				*obj = o;
				*fdobj = rc == 1;
				return 1;
			}
			close_fd(&w->cur);
			w->cur = o;
			return 0;
		}
	}
	n = readlinkat(nfd, "", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	return walk_splice(w, link);
}

/* Component by component from `basefd` (dup'ed) or the root. */
static int slow_open(struct res *r, int basefd, const char *path, bool follow, int *objfd, bool *fdobj)
{
	struct walk w = { .r = r, .cur = -1, .pos = 0, .links = 0 };
	bool last = false;
	char *comp;
	int rc = 0;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(w.rest, path);
	if (path[0] == '/' || basefd < 0)
		rc = walk_root(&w);
	else if ((w.cur = dup(basefd)) < 0)
		rc = -errno;
	while (rc == 0 && (comp = walk_next(&w, &last))) {
		struct stat st;
		int nfd;

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			rc = walk_dotdot(&w);
			continue;
		}
		nfd = sys_openat2(w.cur, comp, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
		if (nfd < 0) {
			rc = nfd;
			break;
		}
		if (fstat(nfd, &st) < 0) {
			rc = -errno;
			close(nfd);
			break;
		}
		if (S_ISLNK(st.st_mode) && (!last || follow)) {
			rc = walk_link(&w, nfd, comp, last, objfd, fdobj);
			close(nfd);
			if (rc == 1) {
				close_fd(&w.cur);
				return 0;
			}
			continue;
		}
		if (!last && !S_ISDIR(st.st_mode)) {
			close(nfd);
			rc = -ENOTDIR;
			break;
		}
		close_fd(&w.cur);
		w.cur = nfd;
	}
	if (rc) {
		close_fd(&w.cur);
		return rc;
	}
	/* The walk ended on a directory ("/", "a/.", "b/..") or on the object. */
	*objfd = w.cur;
	*fdobj = false;
	return 0;
}

/* ---- the fast path -------------------------------------------------------------- */

/* Returns 0 (object in *objfd), -errno, or 1: take the slow walker. */
static int fast_open(struct res *r, int basefd, const char *path, bool follow, int *objfd, char *canon,
		     size_t *len)
{
	unsigned long long fl = O_PATH | (follow ? 0 : O_NOFOLLOW);
	int fd, rc;

	if (r->same_root) {
		fd = sys_openat2(path[0] == '/' ? AT_FDCWD : basefd, path, fl, RESOLVE_NO_MAGICLINKS);
	} else if (path[0] == '/') {
		fd = sys_openat2(r->rootfd, path, fl, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	} else {
		return 1;	/* ".." must stop at the target's root, not at basefd */
	}
	/* ELOOP: a magic link, or a real loop the walker reports.  Any other
	 * error may come from our own /proc/self, met directly or through a
	 * symlink (/dev/fd -> /proc/self/fd, /etc/mtab), and says nothing of
	 * the target's: its threads, its descriptors (/proc/self/fd/300 when we
	 * have no descriptor 300), or, in another root, its pid namespace.  A
	 * path without symlinks never comes here (clean_open answered it), so
	 * the walker's cost falls on few failed lookups. */
	if (fd < 0)
		return 1;
	rc = fd_canon(r, fd, canon, len);
	if (rc == 0 && under_proc(canon))
		rc = 1;		/* /proc/self named the supervisor: walk again */
	if (rc) {
		close(fd);
		return rc;
	}
	*objfd = fd;
	return 0;
}

/* A path without "." or ".." components, empty components ("a//b") or a
 * trailing slash. */
static bool clean_path(const char *p)
{
	const char *c = p[0] == '/' ? p + 1 : p;

	if (!*c)
		return false;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t l = e ? (size_t)(e - c) : strlen(c);

		if (l == 0 || (c[0] == '.' && (l == 1 || (l == 2 && c[1] == '.'))))
			return false;
		if (!e)
			return true;
		c = e + 1;
	}
}

/* ---- top-level symlinks ("/bin" -> "usr/bin") ------------------------------------ */

/* On a merged-/usr system /bin, /lib and /sbin are symlinks, so every exec of
 * /bin/x and every library the dynamic loader opens from /lib missed the
 * clean case below: one openat2 failing with ELOOP, then an openat2 that
 * follows and a readlink of the result through /proc.  Instead, a first
 * component known to be a symlink is read (one readlink, on every call: the
 * cache below only says where to look, never what the link says) and put in
 * place of it, and the clean case goes on with that path.  Which first
 * components were symlinks (hash | 1) or not (hash, even) is remembered per
 * run; a stale or colliding entry costs time only, never exactness. */
#define TOP_SLOTS 16

static _Atomic uint64_t top_seen[TOP_SLOTS];
static atomic_uint top_next;

static uint64_t top_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
	return (h | 2) & ~(uint64_t)1;	/* never 0 (an empty slot) */
}

/* 1: a symlink, 0: not, -1: not seen. */
static int top_known(uint64_t h)
{
	for (unsigned i = 0; i < TOP_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&top_seen[i], memory_order_relaxed);

		if ((v & ~(uint64_t)1) == h)
			return (int)(v & 1);
	}
	return -1;
}

static void top_note(uint64_t h, bool link)
{
	uint64_t v = h | (link ? 1 : 0);

	for (unsigned i = 0; i < TOP_SLOTS; i++) {
		uint64_t old = atomic_load_explicit(&top_seen[i], memory_order_relaxed);

		if ((old & ~(uint64_t)1) == h) {
			atomic_store_explicit(&top_seen[i], v, memory_order_relaxed);
			return;
		}
	}
	atomic_store_explicit(&top_seen[atomic_fetch_add(&top_next, 1) % TOP_SLOTS], v, memory_order_relaxed);
}

/* `path` ("/top/rest", clean) with /top read as a symlink and replaced by
 * its target, into out (PATH_MAX).  0, or 1 when /top is no symlink, or
 * one whose target is not a clean path (".." and the like: the general path
 * knows). */
static int top_subst(const char *path, size_t toplen, char *out)
{
	char top[NAME_MAX + 2], link[PATH_MAX];
	size_t rest = strlen(path + 1 + toplen), at;
	ssize_t l;

	if (toplen > NAME_MAX)
		return 1;
	memcpy(top, path, toplen + 1);
	top[toplen + 1] = '\0';
	l = readlink(top, link, sizeof(link) - 1);
	if (l <= 0)
		return 1;
	link[l] = '\0';
	if (!clean_path(link) || link[l - 1] == '/')
		return 1;
	at = link[0] == '/' ? 0 : 1;	/* relative to "/", where the link is */
	if (at + (size_t)l + rest + 1 > PATH_MAX - 1)
		return 1;
	out[0] = '/';
	memcpy(out + at, link, (size_t)l);
	memcpy(out + at + (size_t)l, path + 1 + toplen, rest + 1);
	return 0;
}

/* out->canon holds a clean absolute path: open it if it meets no symlink.
 * For a first component seen to be a symlink, its target is put in first. */
static int clean_open_abs(unsigned flags, struct sb_path *out)
{
	unsigned long long fl = O_PATH | ((flags & SB_RES_FOLLOW) ? 0 : O_NOFOLLOW);
	const char *slash = strchr(out->canon + 1, '/');
	size_t toplen = slash ? (size_t)(slash - out->canon - 1) : 0;
	uint64_t h = toplen ? top_hash(out->canon + 1, toplen) : 0;
	int known = h ? top_known(h) : 0, fd;
	char sub[PATH_MAX];

	if (known == 1 && top_subst(out->canon, toplen, sub) != 0) {
		top_note(h, false);	/* no longer (a usable) one */
		return 1;
	}
	if (known == 1)
		memcpy(out->canon, sub, strlen(sub) + 1);
	if (under_proc(out->canon))
		return 1;	/* /proc/self would name the supervisor */
	fd = sys_openat2(AT_FDCWD, out->canon, fl, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd == -ELOOP && known == -1) {
		bool link = top_subst(out->canon, toplen, sub) == 0;

		top_note(h, link);
		if (link && !under_proc(sub)) {
			memcpy(out->canon, sub, strlen(sub) + 1);
			fd = sys_openat2(AT_FDCWD, out->canon, fl, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		}
	}
	if (fd == -ELOOP)
		return 1;
	if (fd < 0)
		return fd;
	out->objfd = fd;
	out->len = strlen(out->canon);
	return 0;
}

/* The quickest exact case: a clean absolute path (or the target's cwd and a
 * clean relative one) that meets no symlink names itself, so its canonical
 * path is the string and no readlink is needed: walking those names from
 * our root (the target's: same_root) is what d_path would spell back.  The
 * cwd is read as text (one readlink instead of open, openat2 from it, and
 * readlink of the result): if the target renames its cwd meanwhile, the
 * object found is still judged by its own canonical path.  A symlink as
 * the first component is followed by reading it (clean_open_abs).
 * Returns 0, -errno as the kernel gives it, or 1: a symlink, /proc, a
 * deleted or unreachable cwd: take the general path. */
static int clean_open(struct res *r, int dirfd, const char *path, unsigned flags, struct sb_path *out)
{
	char cwd[64];
	size_t pl = strlen(path), cl = 0;
	ssize_t n;
	int fd;

	if (!r->same_root || !clean_path(path))
		return 1;
	if (path[0] != '/') {
		if (dirfd != AT_FDCWD)
			return 1;
		snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)r->n->req->pid);
		n = readlink(cwd, out->canon, sizeof(out->canon) - 1);
		if (n <= 0 || n >= (ssize_t)sizeof(out->canon) - 1 || out->canon[0] != '/')
			return n < 0 && errno == ENOENT ? -ESRCH : 1;
		out->canon[n] = '\0';
		/* A deleted cwd reads "... (deleted)": the general path knows. */
		if (strstr(out->canon, " (deleted)"))
			return 1;
		/* The cwd is the target's only while the request is alive (and
		 * this checks the path bytes too: SB_RES_UNCHECKED). */
		fd = sb_notif_valid(r->n);
		if (fd)
			return fd;
		r->checked = true;
		cl = n == 1 ? 0 : (size_t)n;
		if (cl + 1 + pl >= sizeof(out->canon))
			return 1;
		out->canon[cl++] = '/';
	} else if ((flags & SB_RES_UNCHECKED) && !r->checked) {
		fd = sb_notif_valid(r->n);
		if (fd)
			return fd;
		r->checked = true;
	}
	if (pl >= sizeof(out->canon) - cl)
		return 1;
	memcpy(out->canon + cl, path, pl + 1);
	return clean_open_abs(flags, out);
}

/* An existing object: fd and canonical path (or descriptor-object text). */
static int open_obj(struct res *r, int basefd, const char *path, bool follow, struct sb_path *out)
{
	int rc = fast_open(r, basefd, path, follow, &out->objfd, out->canon, &out->len);

	if (rc != 1)
		return rc;
	out->walked = true;
	rc = slow_open(r, basefd, path, follow, &out->objfd, &out->fdobj);
	if (rc)
		return rc;
	rc = fd_canon(r, out->objfd, out->canon, &out->len);
	if (rc < 0) {
		close_fd(&out->objfd);
		return rc;
	}
	out->fdobj = rc == 1;
	return 0;
}

/* ---- parent mode ------------------------------------------------------------------ */

/* Split `path` into its directory part (into dir) and last name (into name),
 * dropping trailing slashes (reported in *slash). */
static int split_last(const char *path, char *dir, char *name, bool *slash)
{
	size_t len = strlen(path), end, start;

	while (len > 1 && path[len - 1] == '/')
		len--;
	*slash = len < strlen(path);
	end = len;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (end - start > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, path + start, end - start);
	name[end - start] = '\0';
	if (start == 0) {
		strcpy(dir, ".");
	} else {
		size_t dl = start;

		while (dl > 1 && path[dl - 1] == '/')
			dl--;
		memcpy(dir, path, dl);
		dir[dl] = '\0';
	}
	return 0;
}

static int resolve_parent(struct res *r, int basefd, const char *path, unsigned flags, struct sb_path *out)
{
	char dir[PATH_MAX], name[NAME_MAX + 1], cur[PATH_MAX], link[PATH_MAX];
	struct sb_path parent;
	bool slash;
	int base = basefd >= 0 ? dup(basefd) : -1, rc;

	if (basefd >= 0 && base < 0)
		return -errno;
	sb_copy_str(cur, sizeof(cur), path);
	for (int hops = 0;; hops++) {
		struct stat st;
		ssize_t n;

		if (hops > SB_MAXSYMLINKS) {
			rc = -ELOOP;
			break;
		}
		rc = split_last(cur, dir, name, &slash);
		if (rc)
			break;
		if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(cur, "/") == 0) {
			out->dot_last = true;
			rc = -EINVAL;
			break;
		}
		sb_path_init(&parent);
		rc = open_obj(r, base, dir, true, &parent);
		if (rc == 0 && parent.fdobj)
			rc = -ENOTDIR;
		if (rc) {
			sb_path_release(&parent);
			break;
		}
		if ((flags & SB_RES_FOLLOW) && fstatat(parent.objfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			/* open(O_CREAT) through a dangling symlink creates its target.
			 * /proc/self read here would name the supervisor. */
			if ((strcmp(name, "self") == 0 || strcmp(name, "thread-self") == 0) &&
			    is_proc_root(parent.objfd)) {
				if ((rc = res_ids(r))) {
					sb_path_release(&parent);
					break;
				}
				n = name[0] == 's' ? snprintf(link, sizeof(link), "%d", (int)r->ids.ns_tgid)
						   : snprintf(link, sizeof(link), "%d/task/%d", (int)r->ids.ns_tgid,
							      (int)r->ids.ns_tid);
			} else {
				n = readlinkat(parent.objfd, name, link, sizeof(link) - 1);
			}
			if (n < 0) {
				rc = -errno;
				sb_path_release(&parent);
				break;
			}
			link[n] = '\0';
			if ((size_t)n + 2 > sizeof(cur)) {
				rc = -ENAMETOOLONG;
				sb_path_release(&parent);
				break;
			}
			memcpy(cur, link, (size_t)n);
			strcpy(cur + n, slash ? "/" : "");
			close_fd(&base);
			base = parent.objfd;
			parent.objfd = -1;
			continue;
		}
		out->parentfd = parent.objfd;
		out->walked = parent.walked;	/* /proc/self/cwd/x: not kernel-backed */
		parent.objfd = -1;
		if (parent.len + 1 + strlen(name) >= sizeof(out->canon)) {
			rc = -ENAMETOOLONG;
			break;
		}
		snprintf(out->canon, sizeof(out->canon), "%s/%s", parent.len == 1 ? "" : parent.canon, name);
		out->len = strlen(out->canon);
		snprintf(out->name, sizeof(out->name), "%s%s", name, slash ? "/" : "");
		rc = sys_openat2(out->parentfd, name, O_PATH | O_NOFOLLOW,
				 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (rc >= 0)
			out->objfd = rc;
		rc = rc >= 0 || rc == -ENOENT ? 0 : rc;
		break;
	}
	close_fd(&base);
	return rc;
}

/* ---- errors that would tell too much ------------------------------------------------ */

/* Could this failed resolution have told the program something about an
 * object it may not see?  ENOTDIR on "/root/.bashrc/x" says /root/.bashrc
 * exists and is a file; ELOOP on "/root/l/x" that /root/l is a symlink loop.
 * The kernel layers do not hide this (path lookup is not an access), so the
 * supervisor does: the error stays only when the deepest prefix that still
 * resolves is visible to the program, otherwise the answer is ENOENT, the
 * same as for a name that does not exist. */
static bool error_tells(int rc)
{
	return rc < 0 && rc != -ENOENT && rc != -ESRCH && rc != -ENOMEM && rc != -EMFILE && rc != -ENFILE &&
	       rc != -ENAMETOOLONG && rc != -EFAULT;
}

static int hide_invisible(struct res *r, int basefd, const char *path, int rc)
{
	char prefix[PATH_MAX];
	size_t len = strnlen(path, sizeof(prefix));

	if (len >= sizeof(prefix))
		return rc;
	memcpy(prefix, path, len + 1);
	/* Longest prefix first: drop the last component (and its slashes) until
	 * one resolves; a path of only slashes is the root, which resolves. */
	for (unsigned tries = 0; tries < 64; tries++) {
		struct sb_path p;
		int prc;

		/* "a/b/" -> "a/b" (the object the slash demanded a directory
		 * of), else "a/b" -> "a". */
		if (len > 1 && prefix[len - 1] != '/')
			while (len > 0 && prefix[len - 1] != '/')
				len--;
		while (len > 1 && prefix[len - 1] == '/')
			len--;
		if (len == 0) {
			if (path[0] != '/')
				return rc;	/* the base itself: the program holds it */
			len = 1;
		}
		prefix[len] = '\0';
		sb_path_init(&p);
		prc = open_obj(r, basefd, prefix, true, &p);
		if (prc == 0) {
			bool visible = p.fdobj || sb_notif_path_visible(r->n, p.canon, p.len);

			sb_path_release(&p);
			return visible ? rc : -ENOENT;
		}
		sb_path_release(&p);
		if (prc == -ESRCH)
			return prc;
		if (len == 1)
			return -ENOENT;	/* not even the root: nothing to tell */
	}
	return -ENOENT;
}

/* A lookup that failed: hide what the error would tell, and have the log
 * and the notices name what was asked for, as given. */
static int failed_lookup(struct res *r, int dirfd, int *basefd, const char *path, unsigned flags, int rc,
			 struct sb_path *out)
{
	int vrc = 0;

	/* The path bytes decide what is hidden: they must be the target's. */
	if (error_tells(rc) && (flags & SB_RES_UNCHECKED) && !r->checked && (vrc = sb_notif_valid(r->n)) != 0)
		return vrc;
	if (error_tells(rc)) {
		sb_path_release(out);
		if (path[0] != '/' && *basefd < 0 && base_fd(r, dirfd, basefd) != 0)
			rc = -ENOENT;	/* the base is gone: nothing to tell either */
		else
			rc = hide_invisible(r, *basefd, path, rc);
	}
	if (rc != -ESRCH && r->n->ev && !r->n->ev->path[0])
		sb_copy_str(r->n->ev->path, sizeof(r->n->ev->path), path);
	return rc;
}

/* ---- entry points ------------------------------------------------------------------ */

int sb_path_resolve(struct sb_notif *n, int dirfd, const char *path, unsigned flags, struct sb_path *out)
{
	struct res r;
	int basefd = -1, rc;
	bool ready = false;

	sb_path_init(out);
	rc = res_init(&r, n);
	if (rc)
		goto out;
	ready = true;
	r.anon_ok = flags & SB_RES_ANON;
	if (!path || !path[0]) {
		if (!(flags & SB_RES_EMPTY) || (flags & SB_RES_PARENT)) {
			rc = -ENOENT;
			goto out;
		}
		rc = base_fd(&r, dirfd, &out->objfd);
		if (rc == 0 && (flags & SB_RES_UNCHECKED) && !r.checked)
			rc = sb_notif_valid(n);
		if (rc == 0) {
			rc = fd_canon(&r, out->objfd, out->canon, &out->len);
			out->fdobj = rc == 1;
			rc = rc == 1 ? 0 : rc;
		}
		goto out;
	}
	if (!(flags & SB_RES_PARENT)) {
		rc = clean_open(&r, dirfd, path, flags, out);
		if (rc != 1)
			goto out;
		rc = 0;
	}
	if (path[0] != '/') {
		rc = base_fd(&r, dirfd, &basefd);
		if (rc)
			goto out;
	}
	/* The path bytes are used from here on: they must be the target's. */
	if ((flags & SB_RES_UNCHECKED) && !r.checked) {
		rc = sb_notif_valid(n);
		if (rc)
			goto out;
	}
	if (flags & SB_RES_PARENT)
		rc = resolve_parent(&r, basefd, path, flags, out);
	else
		rc = open_obj(&r, basefd, path, flags & SB_RES_FOLLOW, out);
out:
	if (ready && path && path[0] && rc)
		rc = failed_lookup(&r, dirfd, &basefd, path, flags, rc, out);
	if (ready && !rc)
		out->anon = r.anon;
	close_fd(&basefd);
	res_fini(&r);
	if (rc)
		sb_path_release(out);
	return rc;
}

int sb_notif_resolve(struct sb_notif *n, int dirfd, const char *path, bool follow, char *out)
{
	struct sb_path p;
	int rc;

	rc = sb_path_resolve(n, dirfd, path, follow ? SB_RES_FOLLOW : 0, &p);
	if (rc == -ENOENT)
		rc = sb_path_resolve(n, dirfd, path, SB_RES_PARENT | (follow ? SB_RES_FOLLOW : 0), &p);
	if (rc == 0)
		memcpy(out, p.canon, p.len + 1);
	sb_path_release(&p);
	return rc;
}
