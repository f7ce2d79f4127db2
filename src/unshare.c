/* os-sandbox=unshare: user, mount, pid, net, ipc and uts namespaces built
 * natively (no unshare(1), no bwrap).
 *
 * The parent turns the policy into an explicit list of operations (mkdir,
 * bind read-only or writable, symlink, tmpfs, proc, device node), sorted so
 * that a directory is mounted before what is mounted inside it.  The cloned
 * child maps its ids, builds the fresh root from that list on a tmpfs with
 * the host's root reachable under /oldroot, pivots into it and drops the
 * host's root, brings up loopback, and keeps pid 1 as a small init.  Every
 * step is a system call on prepared strings: no allocation after the clone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "osl_int.h"

#ifndef P_PIDFD
# define P_PIDFD 3
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
# define MOUNT_ATTR_RDONLY 0x1
# define MOUNT_ATTR_NOSUID 0x2
# define MOUNT_ATTR_NODEV 0x4
#endif

struct sb_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

enum ns_op_kind { OP_MKDIR, OP_MKFILE, OP_BIND, OP_SETATTR, OP_SYMLINK, OP_TMPFS, OP_PROC };

/* One system call of the child, on prepared strings. */
struct ns_op {
	enum ns_op_kind kind;
	char *dst;		/* "/newroot/..." */
	char *src;		/* "/oldroot/..." (bind), link text, tmpfs options */
	uint64_t attr;		/* OP_SETATTR: MOUNT_ATTR_* to set, recursively */
	mode_t mode;
};

struct osl_ns {
	char staging[32];	/* a directory of the host where the staging tmpfs goes */
	char uid_map[32], gid_map[32];
	struct ns_op *ops;
	size_t n_ops, cap_ops;
	struct osl_mount *ents;	/* kept for describe */
	size_t n_ents, cap_ents;
	char *cwd;
	/* Host network through slirp4netns (net= rules beyond loopback). */
	char *slirp;			/* the binary, NULL when loopback only */
	bool host_loopback;		/* unshare.host-loopback=yes: 10.0.2.2 reaches the host's 127.0.0.1 */
	int sync_rd, sync_wr;		/* the child waits on sync_rd until the network is up */
	int exit_wr;			/* slirp4netns exits when this closes */
	int slirp_pidfd;		/* a pidfd: the supervisor may reap it first (kill_leftovers) */
};

#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

/* ---- the plan (parent) ----------------------------------------------------------- */

static int add_entry(struct osl_ns *ns, const char *path, enum osl_mount_kind kind, bool is_dir, const char *target)
{
	struct osl_mount *e;

	for (size_t i = 0; i < ns->n_ents; i++)
		if (ns->ents[i].kind == kind && !strcmp(ns->ents[i].path, path))
			return 0;	/* the runtime's /dev/null and the minimal /dev's */
	if (ns->n_ents == ns->cap_ents) {
		size_t ncap = ns->cap_ents ? ns->cap_ents * 2 : 32;
		struct osl_mount *n = realloc(ns->ents, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ns->ents = n;
		ns->cap_ents = ncap;
	}
	e = &ns->ents[ns->n_ents];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	e->target = target ? strdup(target) : NULL;
	if (!e->path || (target && !e->target)) {
		free(e->path);
		free(e->target);
		return -ENOMEM;
	}
	e->kind = kind;
	e->is_dir = is_dir;
	ns->n_ents++;
	return 0;
}

/* Is `path` visible through a bind entry already (same or wider)? */
static bool bound(const struct osl_ns *ns, const char *path)
{
	for (size_t i = 0; i < ns->n_ents; i++)
		if ((ns->ents[i].kind == OSL_M_BIND_RO || ns->ents[i].kind == OSL_M_BIND_RW) &&
		    osl_path_under(path, ns->ents[i].path))
			return true;
	return false;
}

/* Fold "." and ".." lexically in an absolute path, in place. */
static void normalize(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		size_t n = strcspn(in, "/");

		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (out > p && *--out != '/')
				;
			in += n;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = 0;
}

/* Make `path` reachable as spelled: recreate each symlink on the way that no
 * bind already shows, then bind the final file (`kind`: read-only or
 * writable). */
static int add_chain_kind(struct osl_ns *ns, const char *path, enum osl_mount_kind kind)
{
	char cur[PATH_MAX], next[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int rc;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -ENAMETOOLONG;
	for (int hops = 0; hops < 40; hops++) {
		size_t i = 1;
		bool swapped = false;

		normalize(cur);
		while (!swapped) {
			size_t end = i + strcspn(cur + i, "/");
			char save = cur[end];
			ssize_t n;

			cur[end] = 0;
			if (lstat(cur, &st) < 0)
				return -errno;
			if (S_ISLNK(st.st_mode)) {
				n = readlink(cur, link, sizeof(link) - 1);
				if (n < 0)
					return -errno;
				link[n] = 0;
				if (!bound(ns, cur) && (rc = add_entry(ns, cur, OSL_M_SYMLINK, false, link)))
					return rc;
				char *slash = strrchr(cur, '/');

				*slash = 0;
				cur[end] = save;
				if (snprintf(next, sizeof(next), "%s/%s%s", link[0] == '/' ? "" : (cur[0] ? cur : ""),
					     link, cur + end) >= (int)sizeof(next))
					return -ENAMETOOLONG;
				memcpy(cur, next, sizeof(cur));
				swapped = true;
				break;
			}
			cur[end] = save;
			if (!save)
				break;
			i = end + 1;
		}
		if (!swapped) {
			if (kind == OSL_M_BIND_RO && bound(ns, cur))
				return 0;
			return add_entry(ns, cur, kind, S_ISDIR(st.st_mode), NULL);
		}
	}
	return -ELOOP;
}

static int add_chain(struct osl_ns *ns, const char *path)
{
	return add_chain_kind(ns, path, OSL_M_BIND_RO);
}

static int add_specials(struct osl_ns *ns, const char *cwd)
{
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty" };
	static const char *const links[][2] = {
		{ "/dev/fd", "/proc/self/fd" }, { "/dev/stdin", "/proc/self/fd/0" },
		{ "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
	};
	char path[64];
	int rc = 0;

	rc = add_entry(ns, "/proc", OSL_M_PROC, true, NULL);
	if (!rc && !bound(ns, "/dev")) {
		rc = add_entry(ns, "/dev", OSL_M_TMPFS, true, "mode=0755,size=64k");
		for (size_t i = 0; !rc && i < sizeof(devs) / sizeof(devs[0]); i++) {
			snprintf(path, sizeof(path), "/dev/%s", devs[i]);
			if (access(path, F_OK) == 0)
				rc = add_entry(ns, path, OSL_M_DEVNODE, false, NULL);
		}
		for (size_t i = 0; !rc && i < sizeof(links) / sizeof(links[0]); i++)
			rc = add_entry(ns, links[i][0], OSL_M_SYMLINK, false, links[i][1]);
		if (!rc)
			rc = add_entry(ns, "/dev/shm", OSL_M_TMPFS, true, "mode=1777");
	}
	/* The cwd exists (maybe empty) so relative paths fail with ENOENT as
	 * outside an exposure, not because the directory vanished. */
	if (!rc && !bound(ns, cwd))
		rc = add_entry(ns, cwd, OSL_M_DIR, true, NULL);
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct osl_mount *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->kind - (int)y->kind;
}

static bool is_bind(const struct osl_mount *m)
{
	return m->kind == OSL_M_BIND_RO || m->kind == OSL_M_BIND_RW;
}

/* A bind inside a bind of the same kind shows nothing new (the CA stores
 * inside an exposed /etc): drop it, on the sorted list. */
static void drop_redundant(struct osl_ns *ns)
{
	size_t w = 0;

	for (size_t i = 0; i < ns->n_ents; i++) {
		const struct osl_mount *e = &ns->ents[i], *outer = NULL;

		for (size_t k = 0; k < w && is_bind(e); k++)
			if (is_bind(&ns->ents[k]) && osl_path_under(e->path, ns->ents[k].path))
				outer = &ns->ents[k];	/* sorted: the last one is the deepest */
		if (outer && outer->kind == e->kind) {
			free(ns->ents[i].path);
			free(ns->ents[i].target);
			continue;
		}
		ns->ents[w++] = ns->ents[i];
	}
	ns->n_ents = w;
}

static int push_op(struct osl_ns *ns, enum ns_op_kind kind, const char *path, const char *src,
		   bool src_is_host, uint64_t attr, mode_t mode)
{
	struct ns_op *op;

	if (ns->n_ops == ns->cap_ops) {
		size_t ncap = ns->cap_ops ? ns->cap_ops * 2 : 64;
		struct ns_op *n = realloc(ns->ops, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ns->ops = n;
		ns->cap_ops = ncap;
	}
	op = &ns->ops[ns->n_ops];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->attr = attr;
	op->mode = mode;
	if (asprintf(&op->dst, NEWROOT "%s", strcmp(path, "/") ? path : "") < 0)
		return -ENOMEM;
	if (src && (src_is_host ? asprintf(&op->src, OLDROOT "%s", strcmp(src, "/") ? src : "")
				: asprintf(&op->src, "%s", src)) < 0) {
		free(op->dst);
		return -ENOMEM;
	}
	ns->n_ops++;
	return 0;
}

/* mkdir -p of the parents of `path` (EEXIST is fine in the child). */
static int push_parents(struct osl_ns *ns, const char *path)
{
	char buf[PATH_MAX];
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = strchr(buf + 1, '/'); s && !rc; s = strchr(s + 1, '/')) {
		*s = 0;
		rc = push_op(ns, OP_MKDIR, buf, NULL, false, 0, 0755);
		*s = '/';
	}
	return rc;
}

static int emit_entry(struct osl_ns *ns, const struct osl_mount *e)
{
	const uint64_t harden = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int rc = strcmp(e->path, "/") ? push_parents(ns, e->path) : 0;

	if (rc)
		return rc;
	switch (e->kind) {
	case OSL_M_BIND_RO:
	case OSL_M_BIND_RW:
	case OSL_M_DEVNODE:
		if (strcmp(e->path, "/"))
			rc = push_op(ns, e->is_dir ? OP_MKDIR : OP_MKFILE, e->path, NULL, false, 0,
				     e->is_dir ? 0755 : 0644);
		if (!rc)
			rc = push_op(ns, OP_BIND, e->path, e->path, true, 0, 0);
		if (!rc)
			rc = push_op(ns, OP_SETATTR, e->path, NULL, false,
				     e->kind == OSL_M_DEVNODE ? MOUNT_ATTR_NOSUID
				     : e->kind == OSL_M_BIND_RO ? harden | MOUNT_ATTR_RDONLY : harden, 0);
		return rc;
	case OSL_M_SYMLINK:
		return push_op(ns, OP_SYMLINK, e->path, e->target, false, 0, 0);
	case OSL_M_TMPFS:
		rc = push_op(ns, OP_MKDIR, e->path, NULL, false, 0, 0755);
		return rc ? rc : push_op(ns, OP_TMPFS, e->path, e->target, false, 0, 0);
	case OSL_M_PROC:
		rc = push_op(ns, OP_MKDIR, e->path, NULL, false, 0, 0555);
		return rc ? rc : push_op(ns, OP_PROC, e->path, NULL, false, 0, 0);
	case OSL_M_DIR:
		return push_op(ns, OP_MKDIR, e->path, NULL, false, 0, 0755);
	}
	return -EINVAL;
}

static const char *pick_staging(void)
{
	static const char *const cands[] = { "/tmp", "/mnt", "/var/tmp", "/run" };
	struct stat st;

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (stat(cands[i], &st) == 0 && S_ISDIR(st.st_mode))
			return cands[i];
	return NULL;
}

/* Is `path` its own canonical spelling (no symlink on the way)? */
static bool canonical(const char *path)
{
	char *real = realpath(path, NULL);
	bool same = real && !strcmp(real, path);

	free(real);
	return same;
}

static int add_exposures(struct osl_ns *ns, const struct osl_input *in)
{
	for (size_t i = 0; i < in->n_paths; i++) {
		const struct sb_ll_in_path *p = &in->paths[i];
		struct stat st;
		int rc;

		if (!(p->access & (SB_ACC_READ | SB_ACC_WRITE)))
			continue;	/* exec targets come as symlink chains below */
		if (stat(p->path, &st) < 0)
			continue;	/* nothing to show */
		/* Spelled through a symlink (/etc/localtime): a bind would
		 * follow it inside the staging root, so the chain is recreated
		 * and its target bound. */
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) && !canonical(p->path)) {
			rc = add_chain_kind(ns, p->path, (p->access & SB_ACC_WRITE) ? OSL_M_BIND_RW : OSL_M_BIND_RO);
			if (rc)
				return rc;
			continue;
		}
		/* A device node (the runtime's /dev/null) must keep working:
		 * bound without nodev, as the minimal /dev binds its own. */
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			rc = add_entry(ns, p->path, OSL_M_DEVNODE, false, NULL);
		else
			rc = add_entry(ns, p->path, (p->access & SB_ACC_WRITE) ? OSL_M_BIND_RW : OSL_M_BIND_RO,
				       S_ISDIR(st.st_mode), NULL);
		if (rc)
			return rc;
	}
	/* The policy files stay read-only inside writable exposures: a read-only
	 * bind over each file (which also makes it impossible to rename or unlink). */
	for (size_t i = 0; i < in->protected_in_rw.n; i++) {
		int rc = add_entry(ns, in->protected_in_rw.v[i], OSL_M_BIND_RO, false, NULL);

		if (rc)
			return rc;
	}
	return 0;
}

int osl_mounts_new(const struct osl_input *in, const char *python_exe, const char *cwd,
		   const struct osl_strv *extra, struct osl_ns **out)
{
	struct osl_ns *ns = calloc(1, sizeof(*ns));
	int rc;

	*out = NULL;
	if (!ns)
		return -ENOMEM;
	ns->sync_rd = ns->sync_wr = ns->exit_wr = ns->slirp_pidfd = -1;
	ns->cwd = strdup(cwd);
	if (!ns->cwd) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = add_exposures(ns, in);
	if (!rc)
		rc = add_chain(ns, python_exe);
	for (size_t i = 0; !rc && i < in->exec_spellings.n; i++)
		rc = add_chain(ns, in->exec_spellings.v[i]);
	for (size_t i = 0; !rc && extra && i < extra->n; i++)
		rc = add_chain(ns, extra->v[i]);
	if (!rc)
		rc = add_specials(ns, ns->cwd);
	if (rc)
		goto fail;
	qsort(ns->ents, ns->n_ents, sizeof(*ns->ents), cmp_entry);
	drop_redundant(ns);
	*out = ns;
	return 0;
fail:
	osl_ns_free(ns);
	return rc;
}

size_t osl_mounts(const struct osl_ns *ns, const struct osl_mount **out)
{
	*out = ns->ents;
	return ns->n_ents;
}

/* unshare.* parameters: upstream passed them to unshare(1); the native layer
 * knows host-loopback only and says so about the others. */
static bool read_params(const struct sb_policy *p, struct sb_diag *diag)
{
	const struct sb_provider_param *pp;
	size_t n = sb_policy_provider_params(p, &pp);
	bool host_loopback = false;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(pp[i].provider, "unshare"))
			continue;
		if (!strcmp(pp[i].key, "host-loopback"))
			host_loopback = osl_truthy(pp[i].value);
		else
			sb_diag_warn(diag, pp[i].ref ? pp[i].ref->file : "", pp[i].ref ? pp[i].ref->line : 0,
				     "unshare.%s is ignored: the unshare layer is built in and knows only "
				     "unshare.host-loopback", pp[i].key);
	}
	return host_loopback;
}

int osl_ns_new(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
	       const char *cwd, const char *path_env, struct osl_ns **out, struct sb_diag *diag)
{
	const char *staging = pick_staging();
	struct osl_ns *ns = NULL;
	char *slirp = NULL;
	int rc;

	*out = NULL;
	if (in->net_needs_host && !(slirp = osl_which("slirp4netns", path_env))) {
		sb_diag_error(diag, "", 0, "os-sandbox=unshare cannot be applied: net= rules allow hosts "
			      "beyond loopback, and the namespace has loopback only without slirp4netns. "
			      "Hint: apt-get install slirp4netns, or use os-sandbox=landlock");
		return -ENOTSUP;
	}
	if (!staging) {
		free(slirp);
		return -ENOENT;
	}
	rc = osl_mounts_new(in, python_exe, cwd, NULL, &ns);
	if (rc) {
		free(slirp);
		sb_diag_error(diag, "", 0, "os-sandbox=unshare: cannot prepare the mount list: %s", strerror(-rc));
		return rc;
	}
	ns->slirp = slirp;
	ns->host_loopback = read_params(p, diag);
	snprintf(ns->staging, sizeof(ns->staging), "%s", staging);
	snprintf(ns->uid_map, sizeof(ns->uid_map), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(ns->gid_map, sizeof(ns->gid_map), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	for (size_t i = 0; !rc && i < ns->n_ents; i++)
		rc = emit_entry(ns, &ns->ents[i]);
	if (rc) {
		osl_ns_free(ns);
		return rc;
	}
	*out = ns;
	return 0;
}

void osl_ns_free(struct osl_ns *ns)
{
	if (!ns)
		return;
	osl_ns_done(ns);
	free(ns->slirp);
	for (size_t i = 0; i < ns->n_ops; i++) {
		free(ns->ops[i].dst);
		free(ns->ops[i].src);
	}
	for (size_t i = 0; i < ns->n_ents; i++) {
		free(ns->ents[i].path);
		free(ns->ents[i].target);
	}
	free(ns->ops);
	free(ns->ents);
	free(ns->cwd);
	free(ns);
}

int osl_ns_describe(const struct osl_ns *ns, struct osl_strv *lines)
{
	static const char *const what[] = {
		[OSL_M_BIND_RO] = "read-only", [OSL_M_BIND_RW] = "writable", [OSL_M_DEVNODE] = "device",
		[OSL_M_SYMLINK] = "symlink", [OSL_M_TMPFS] = "tmpfs", [OSL_M_PROC] = "proc", [OSL_M_DIR] = "empty dir",
	};

	for (size_t i = 0; i < ns->n_ents; i++) {
		const struct osl_mount *m = &ns->ents[i];

		if (m->kind == OSL_M_SYMLINK)
			osl_strv_addf(lines, "%s -> %s", m->path, m->target);
		else
			osl_strv_addf(lines, "%s (%s)", m->path, what[m->kind]);
	}
	return lines->oom ? -ENOMEM : 0;
}

/* ---- the child (system calls only) ---------------------------------------------------- */

static int fail(const char *stage, const char *path)
{
	int err = errno;

	osl_child_fail(stage, path, err);
	return -err;
}

static int write_file(const char *path, const char *text, bool missing_ok)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return missing_ok && errno == ENOENT ? 0 : fail("unshare: opening", path);
	if (write(fd, text, len) != (ssize_t)len) {
		int rc = fail("unshare: writing", path);

		close(fd);
		return rc;
	}
	close(fd);
	return 0;
}

static int run_op(const struct ns_op *op)
{
	struct sb_mount_attr attr = { .attr_set = op->attr };
	int fd;

	switch (op->kind) {
	case OP_MKDIR:
		if (mkdir(op->dst, op->mode) < 0 && errno != EEXIST)
			return fail("unshare: mkdir", op->dst);
		return 0;
	case OP_MKFILE:
		fd = open(op->dst, O_CREAT | O_RDONLY | O_CLOEXEC, op->mode);
		if (fd < 0)
			return fail("unshare: creating", op->dst);
		close(fd);
		return 0;
	case OP_BIND:
		/* Recursive: in a user namespace a bind of a mount with locked
		 * submounts must take them along. */
		if (mount(op->src, op->dst, NULL, MS_BIND | MS_REC, NULL) < 0)
			return fail("unshare: binding", op->src);
		return 0;
	case OP_SETATTR:
		if (syscall(SYS_mount_setattr, AT_FDCWD, op->dst, AT_RECURSIVE | AT_SYMLINK_NOFOLLOW,
			    &attr, sizeof(attr)) < 0)
			return fail("unshare: mount_setattr", op->dst);
		return 0;
	case OP_SYMLINK:
		if (symlink(op->src, op->dst) < 0 && errno != EEXIST)
			return fail("unshare: symlink", op->dst);
		return 0;
	case OP_TMPFS:
		if (mount("tmpfs", op->dst, "tmpfs", MS_NOSUID | MS_NODEV, op->src) < 0)
			return fail("unshare: tmpfs on", op->dst);
		return 0;
	case OP_PROC:
		if (mount("proc", op->dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return fail("unshare: mounting proc on", op->dst);
		return 0;
	}
	errno = EINVAL;
	return fail("unshare: operation", op->dst);
}

static int map_ids(const struct osl_ns *ns)
{
	int rc = write_file("/proc/self/setgroups", "deny", true);

	if (!rc)
		rc = write_file("/proc/self/uid_map", ns->uid_map, false);
	if (!rc)
		rc = write_file("/proc/self/gid_map", ns->gid_map, false);
	return rc;
}

/* A tmpfs with the new root and the host's root side by side. */
static int enter_staging(const struct osl_ns *ns)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail("unshare: making mounts private", "/");
	if (mount("tmpfs", ns->staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return fail("unshare: staging tmpfs on", ns->staging);
	if (chdir(ns->staging) < 0)
		return fail("unshare: chdir", ns->staging);
	if (mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
		return fail("unshare: mkdir", ns->staging);
	if (mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return fail("unshare: root tmpfs", NEWROOT);
	if (syscall(SYS_pivot_root, ".", "oldroot") < 0)
		return fail("unshare: pivot_root", ns->staging);
	if (chdir("/") < 0)
		return fail("unshare: chdir", "/");
	return 0;
}

static int leave_staging(const struct osl_ns *ns)
{
	struct sb_mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };

	/* The root itself holds only mount points: read-only, not recursive. */
	if (syscall(SYS_mount_setattr, AT_FDCWD, NEWROOT, 0, &ro, sizeof(ro)) < 0)
		return fail("unshare: read-only root", NEWROOT);
	if (umount2(OLDROOT, MNT_DETACH) < 0)
		return fail("unshare: detaching the host root", OLDROOT);
	if (chdir(NEWROOT) < 0)
		return fail("unshare: chdir", NEWROOT);
	/* pivot_root(".", ".") stacks the staging tmpfs over the new root;
	 * detaching it leaves the new root alone. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return fail("unshare: pivot_root", NEWROOT);
	if (umount2(".", MNT_DETACH) < 0)
		return fail("unshare: detaching the staging tmpfs", ns->staging);
	if (chdir(ns->cwd) < 0 && chdir("/") < 0)
		return fail("unshare: chdir", ns->cwd);
	return 0;
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (s < 0)
		return fail("unshare: socket for", "lo");
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		rc = fail("unshare: reading the flags of", "lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (!rc && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		rc = fail("unshare: bringing up", "lo");
	close(s);
	return rc;
}

/* slirp4netns joins our namespaces from the parent once the ids are
 * mapped; the mounts wait until the network is up. */
static int wait_network(const struct osl_ns *ns)
{
	char b = 0;
	ssize_t n;

	close(ns->sync_wr);
	do
		n = read(ns->sync_rd, &b, 1);
	while (n < 0 && errno == EINTR);
	close(ns->sync_rd);
	if (n != 1 || b != 'N') {
		errno = n < 0 ? errno : ENETDOWN;
		return fail("unshare: waiting for slirp4netns", NULL);
	}
	return 0;
}

/* pid 1 of the namespace: forward signals to the program, reap orphans,
 * leave with the program's status.  Never returns. */
static void __attribute__((noreturn)) run_init(pid_t prog, const sigset_t *all)
{
	/* The program has its own copies: holding the spawn's pipes, the
	 * agent's channel or stdout open here would only delay their EOF. */
	if (syscall(SYS_close_range, 0, ~0U, 0) < 0)
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(all, &si), st;
		pid_t w;

		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/* A terminal's signal reaches the whole foreground group,
			 * the program included: forward only those sent to us. */
			if (si.si_code != SI_KERNEL)
				kill(prog, sig);
			continue;
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == prog)
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
}

static int fork_init(void)
{
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &old) < 0)
		return fail("unshare: blocking signals", NULL);
	/* A raw clone: glibc's fork() runs atfork handlers that take locks a
	 * thread of the parent may have held when it cloned us. */
	pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return fail("unshare: forking the program from pid 1", NULL);
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			return fail("unshare: PR_SET_PDEATHSIG", NULL);
		return 0;
	}
	run_init(pid, &all);
}

int osl_ns_setup_child(const struct osl_ns *ns)
{
	int rc;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return fail("unshare: PR_SET_PDEATHSIG", NULL);
	rc = map_ids(ns);
	if (!rc && ns->slirp)
		rc = wait_network(ns);
	if (!rc)
		rc = enter_staging(ns);
	for (size_t i = 0; !rc && i < ns->n_ops; i++)
		rc = run_op(&ns->ops[i]);
	if (!rc)
		rc = leave_staging(ns);
	if (!rc)
		rc = loopback_up();
	if (!rc && sethostname("python-sb", 9) < 0)
		rc = fail("unshare: sethostname", NULL);
	return rc ? rc : fork_init();
}

/* ---- the host network through slirp4netns (parent) ---------------------------------- */

int osl_ns_before_clone(struct osl_ns *ns)
{
	int fds[2];

	if (!ns->slirp)
		return 0;
	osl_ns_done(ns);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	ns->sync_rd = fds[0];
	ns->sync_wr = fds[1];
	return 0;
}

static int start_slirp(struct osl_ns *ns, pid_t child, int ready_wr, int exit_rd)
{
	char pid[16], userns[64], ready[32], exitfd[32];
	char *argv[12];
	size_t n = 0;
	pid_t p;

	snprintf(pid, sizeof(pid), "%d", (int)child);
	snprintf(userns, sizeof(userns), "--userns-path=/proc/%d/ns/user", (int)child);
	snprintf(ready, sizeof(ready), "--ready-fd=%d", ready_wr);
	snprintf(exitfd, sizeof(exitfd), "--exit-fd=%d", exit_rd);
	argv[n++] = ns->slirp;
	argv[n++] = "--configure";
	argv[n++] = "--mtu=65520";
	argv[n++] = ready;
	argv[n++] = exitfd;
	argv[n++] = userns;
	/* 10.0.2.2 would otherwise reach every service on the host's loopback. */
	if (!ns->host_loopback)
		argv[n++] = "--disable-host-loopback";
	argv[n++] = pid;
	argv[n++] = "tap0";
	argv[n] = NULL;
	p = fork();
	if (p < 0)
		return -errno;
	if (p == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* Its chatter is not the program's output.  Only the two pipe
		 * ends survive the exec (the rest is close-on-exec). */
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
		    fcntl(ready_wr, F_SETFD, 0) < 0 || fcntl(exit_rd, F_SETFD, 0) < 0)
			_exit(127);
		execv(ns->slirp, argv);
		_exit(127);
	}
	/* Kept as a pidfd: once the supervisor, as a subreaper that kills
	 * and reaps every child it has left, got to it first, the pid may name
	 * another process. */
	ns->slirp_pidfd = (int)syscall(SYS_pidfd_open, p, 0);
	if (ns->slirp_pidfd < 0) {
		int err = -errno;

		kill(p, SIGKILL);	/* still ours: not reaped yet */
		waitpid(p, NULL, 0);
		return err;
	}
	return 0;
}

int osl_ns_after_clone(struct osl_ns *ns, pid_t child, struct sb_diag *diag)
{
	int ready[2] = { -1, -1 }, ex[2] = { -1, -1 }, rc = 0;
	struct pollfd pfd;
	char b = 0;

	if (!ns->slirp)
		return 0;
	close(ns->sync_rd);
	ns->sync_rd = -1;
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	rc = start_slirp(ns, child, ready[1], ex[0]);
	if (rc)
		goto out;
	close(ready[1]);
	ready[1] = -1;
	ns->exit_wr = ex[1];
	ex[1] = -1;
	pfd.fd = ready[0];
	pfd.events = POLLIN;
	/* A generous bound: slirp4netns is up in milliseconds, a hang is a bug. */
	rc = poll(&pfd, 1, 30000);
	if (rc <= 0 || read(ready[0], &b, 1) != 1 || b != '1') {
		sb_diag_error(diag, "", 0, "os-sandbox=unshare: slirp4netns did not bring the network up "
			      "(%s). Hint: it needs /dev/net/tun and user namespaces", rc == 0 ? "time-out" :
			      "it exited");
		rc = -ENETDOWN;
		goto out;
	}
	rc = write(ns->sync_wr, "N", 1) == 1 ? 0 : -errno;
out:
	for (size_t i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (ex[i] >= 0)
			close(ex[i]);
	}
	close(ns->sync_wr);
	ns->sync_wr = -1;
	return rc;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

void osl_ns_done(struct osl_ns *ns)
{
	siginfo_t si;

	close_fd(&ns->sync_rd);
	close_fd(&ns->sync_wr);
	close_fd(&ns->exit_wr);	/* tells slirp4netns to go ... */
	if (ns->slirp_pidfd >= 0) {
		/* ... and so does this, should it linger; ESRCH/ECHILD when it
		 * was reaped already. */
		syscall(SYS_pidfd_send_signal, ns->slirp_pidfd, SIGTERM, NULL, 0);
		while (waitid((idtype_t)P_PIDFD, (id_t)ns->slirp_pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
		close_fd(&ns->slirp_pidfd);
	}
}

bool osl_ns_host_network(const struct osl_ns *ns)
{
	return ns && ns->slirp;
}

bool osl_ns_host_loopback(const struct osl_ns *ns)
{
	return ns && ns->slirp && ns->host_loopback;
}
