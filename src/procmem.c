/* Reading the target: its memory (process_vm_readv, no per-process descriptor
 * to cache or to go stale), its descriptors (pidfd_getfd) and its /proc
 * status.  Every read of target memory is followed by
 * SECCOMP_IOCTL_NOTIF_ID_VALID before the bytes are used (seccomp_unotify(2)):
 * the thread may have died and its TID been reused, or a signal may have
 * abandoned the call.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sup_priv.h"

int sb_notif_valid(struct sb_notif *n)
{
	__u64 id = n->req->id;

	if (ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
		return 0;
	return -ENOENT;
}

/* sysconf() is a call into libc per use; the page size never changes. */
static size_t page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

static ssize_t read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote[2];
	size_t first = page_size() - (size_t)(addr % page_size());
	unsigned long nr = 1;

	/* process_vm_readv transfers whole iovec elements only: split at the
	 * page boundary so a string that ends just before an unmapped page is
	 * still read. */
	remote[0].iov_base = (void *)(uintptr_t)addr;
	remote[0].iov_len = len;
	if (first < len) {
		remote[0].iov_len = first;
		remote[1].iov_base = (void *)(uintptr_t)(addr + first);
		remote[1].iov_len = len - first;
		nr = 2;
	}
	return process_vm_readv(tid, &local, 1, remote, nr, 0);
}

int sb_notif_read_nv(struct sb_notif *n, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t got;

	if (len == 0)
		return 0;
	got = process_vm_readv(n->req->pid, &local, 1, &remote, 1, 0);
	if (got < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	if ((size_t)got != len)
		return -EFAULT;
	return 0;
}

int sb_notif_read(struct sb_notif *n, uint64_t addr, void *buf, size_t len)
{
	int rc = sb_notif_read_nv(n, addr, buf, len);

	return rc ? rc : sb_notif_valid(n);
}

/* Most paths are short: read their first SB_STR_FIRST bytes (never past the
 * end of their page: one page to pin), then the rest only when no NUL was
 * found there.  Reading to the end of the page instead copied 2 KiB on
 * average, a quarter of a worker's time at start-up (perf, import-heavy). */
#define SB_STR_FIRST 256

int sb_notif_read_str_nv(struct sb_notif *n, uint64_t addr, char *buf, size_t cap)
{
	size_t first = page_size() - (size_t)(addr % page_size());
	ssize_t got, more;
	char *nul;

	if (addr == 0 || cap == 0)
		return -EFAULT;
	if (first > SB_STR_FIRST)
		first = SB_STR_FIRST;
	if (first > cap)
		first = cap;
	got = read_mem(n->req->pid, addr, buf, first);
	if (got < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	nul = memchr(buf, '\0', (size_t)got);
	if (!nul && (size_t)got == first && first < cap) {
		more = read_mem(n->req->pid, addr + first, buf + first, cap - first);
		if (more > 0)
			got += more;
		nul = memchr(buf + first, '\0', (size_t)got - first);
	}
	if (!nul)
		return (size_t)got == cap ? -ENAMETOOLONG : -EFAULT;
	return 0;
}

int sb_notif_read_str(struct sb_notif *n, uint64_t addr, char *buf, size_t cap)
{
	int rc = sb_notif_read_str_nv(n, addr, buf, cap);

	return rc ? rc : sb_notif_valid(n);
}

/* ---- the target's descriptors ----------------------------------------------- */

/* Each worker keeps the thread pidfds (PIDFD_THREAD) of the last threads it
 * served, so that a loop of connects or sends does not open and close one per
 * call.  Per worker (thread-local), because a pidfd shared between workers
 * could be closed by one while another uses its number, which the next open
 * may have given to a different process's pidfd.  Reuse is safe against tid
 * reuse: a pidfd pins its thread's struct pid, not the number; when that
 * thread has died, pidfd_getfd through it fails (ESRCH) even if the tid now
 * names another thread, and a live thread keeps its tid (a non-leader exec
 * moves the leader's struct pid, and with it the leader's tid, to the execing
 * thread).  So a pidfd_getfd that succeeds through the pidfd cached for tid T
 * reached the live thread T; ID_VALID afterwards says T is still the thread
 * of this request.  Only thread pidfds are kept: a process pidfd (kernels
 * before 6.9) would stay valid after the thread left its process. */
#define PIDFD_CACHE 8

struct pidfd_slot {
	pid_t tid;	/* 0: empty */
	int fd;
};

static __thread struct pidfd_slot tl_pidfds[PIDFD_CACHE];
static __thread unsigned tl_pidfd_next;
static pthread_key_t pidfd_key;
static pthread_once_t pidfd_once = PTHREAD_ONCE_INIT;

/* At a worker's exit: its cached pidfds go with it. */
static void pidfd_cache_drop(void *unused)
{
	(void)unused;
	for (unsigned i = 0; i < PIDFD_CACHE; i++) {
		if (tl_pidfds[i].tid)
			close(tl_pidfds[i].fd);
		tl_pidfds[i].tid = 0;
	}
}

static void pidfd_key_new(void)
{
	if (pthread_key_create(&pidfd_key, pidfd_cache_drop))
		pidfd_key = (pthread_key_t)-1;
}

static struct pidfd_slot *pidfd_cached(pid_t tid)
{
	for (unsigned i = 0; i < PIDFD_CACHE; i++)
		if (tl_pidfds[i].tid == tid)
			return &tl_pidfds[i];
	return NULL;
}

/* Keep `fd` (a validated thread pidfd of tid); false when it cannot be kept
 * (no thread-exit hook to close it), and then the caller owns it. */
static bool pidfd_keep(pid_t tid, int fd)
{
	struct pidfd_slot *s;

	pthread_once(&pidfd_once, pidfd_key_new);
	if (pidfd_key == (pthread_key_t)-1 || pthread_setspecific(pidfd_key, tl_pidfds))
		return false;
	s = &tl_pidfds[tl_pidfd_next++ % PIDFD_CACHE];
	if (s->tid)
		close(s->fd);
	*s = (struct pidfd_slot){ tid, fd };
	return true;
}

/* A fresh pidfd for the calling thread (6.9: PIDFD_THREAD), else for its
 * process (*thread false): both reach the shared descriptor table. */
static int pidfd_new(struct sb_notif *n, bool *thread)
{
	int fd;

	*thread = true;
	fd = (int)syscall(SYS_pidfd_open, n->req->pid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL) {
		pid_t tgid;
		int rc = sb_notif_tgid(n, &tgid);

		if (rc)
			return rc;
		*thread = false;
		fd = (int)syscall(SYS_pidfd_open, tgid, 0);
	}
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	return fd;
}

/* pidfd_getfd through the worker's cached pidfd of the thread: the new fd,
 * -errno, or 1 when none is cached or its thread is gone. */
static int getfd_cached(struct sb_notif *n, int fd)
{
	struct pidfd_slot *s = pidfd_cached((pid_t)n->req->pid);
	int ours;

	if (!s)
		return 1;
	ours = (int)syscall(SYS_pidfd_getfd, s->fd, fd, 0);
	if (ours >= 0)
		return ours;
	if (errno != ESRCH)
		return -errno;
	close(s->fd);	/* a dead thread: its tid may be someone else's now */
	s->tid = 0;
	return 1;
}

/* The pidfd is taken before ID_VALID: a pidfd opened for a tid that was
 * reused meanwhile, or a cached one, can only have reached the thread that
 * waits for this request if ID_VALID still holds afterwards (a request dies
 * with its thread).  The check also covers target memory read before. */
int sb_notif_getfd(struct sb_notif *n, int fd)
{
	int pidfd = n->pidfd, ours = 1;
	bool fresh = false, thread = false;

	if (pidfd < 0)
		ours = getfd_cached(n, fd);
	if (ours == 1) {
		if (pidfd < 0) {
			pidfd = pidfd_new(n, &thread);
			if (pidfd < 0)
				return pidfd;
			fresh = true;
		}
		ours = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (ours < 0)
			ours = -errno;
	}
	if (ours >= 0 && sb_notif_valid(n)) {
		close(ours);
		ours = -ENOENT;
	}
	if (fresh) {
		if (ours < 0)
			close(pidfd);	/* not known to be the thread's */
		else if (!thread || !pidfd_keep((pid_t)n->req->pid, pidfd))
			n->pidfd = pidfd;	/* closed with the request */
	}
	return ours;
}

/* ---- /proc ------------------------------------------------------------------- */

static uint64_t hex64(const char *s)
{
	return strtoull(s, NULL, 16);
}

/* Last number of a tab-separated list ("NStgid:\t41\t1"). */
static pid_t last_num(const char *s)
{
	const char *p = s + strlen(s);

	while (p > s && (p[-1] == '\n' || p[-1] == ' ' || p[-1] == '\t'))
		p--;
	while (p > s && isdigit((unsigned char)p[-1]))
		p--;
	return (pid_t)atol(p);
}

static void status_line(struct sb_proc_ids *o, const char *key, const char *val)
{
	if (strcmp(key, "Tgid") == 0)
		o->tgid = (pid_t)atol(val);
	else if (strcmp(key, "PPid") == 0)
		o->ppid = (pid_t)atol(val);
	else if (strcmp(key, "NStgid") == 0)
		o->ns_tgid = last_num(val);
	else if (strcmp(key, "NSpid") == 0)
		o->ns_tid = last_num(val);
	else if (strcmp(key, "Umask") == 0)
		o->umask = (mode_t)strtoul(val, NULL, 8);
	else if (strcmp(key, "SigPnd") == 0 || strcmp(key, "ShdPnd") == 0)
		o->sig_pending |= hex64(val);
	else if (strcmp(key, "SigBlk") == 0)
		o->sig_blocked = hex64(val);
	else if (strcmp(key, "Uid") == 0)
		sscanf(val, "%u %u", &o->uid, &o->euid);
}

int sb_proc_status(pid_t tid, struct sb_proc_ids *out)
{
	char path[64], buf[4096], *line, *save = NULL;
	ssize_t len;
	int fd;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 && errno == ESRCH ? -ESRCH : -EIO;
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		status_line(out, line, colon + 1 + strspn(colon + 1, " \t"));
	}
	if (out->tgid <= 0)
		return -EIO;
	if (out->ns_tgid <= 0)
		out->ns_tgid = out->tgid;
	if (out->ns_tid <= 0)
		out->ns_tid = tid;
	return 0;
}

int sb_proc_ppid(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -ESRCH;
	buf[len] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", ppid) != 1)
		return -EIO;
	return 0;
}

int sb_notif_umask(struct sb_notif *n, mode_t *mask)
{
	struct sb_proc_ids ids;
	int rc = sb_proc_status(n->req->pid, &ids);

	if (rc)
		return rc;
	/* The status file may belong to a process that reused the TID. */
	rc = sb_notif_valid(n);
	if (rc)
		return rc;
	*mask = ids.umask;
	return 0;
}
