/* The supervisor core (SPEC §3): spawn, the notification workers, dispatch,
 * answers, the blocking-call interrupter and the event ring.
 *
 * Threads:
 *   - the caller's thread waits for the program (and reaps the orphans it
 *     adopts as a subreaper), then tears everything down;
 *   - workers: one at a time (the receiver) waits in RECV, decides (reading
 *     the caller's Python stack when a decision or a refusal needs it:
 *     sup_attr.c) and answers on the same thread (SPEC §9: the common
 *     decision never changes threads); the others are parked.  A receiver
 *     blocked in a call (FIFO open, blocking connect) for 200 µs, or busy
 *     with one decision for 50 ms, loses the role to a parked worker, or a
 *     new one (the interrupter watches);
 *   - the interrupter watches blocked requests: target gone or signal
 *     pending, the blocked worker gets SB_SIG_INTR and its call EINTR;
 *   - the event thread hands events to opts->on_event in order.
 * Fail closed: every answer starts as EPERM; a handler that fails refuses.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "notif_net.h"
#include "oslayer.h"
#include "pyframes.h"
#include "sup_priv.h"
#include "thread.h"

#define SB_NR_MAX 1024			/* dispatch table size (x86_64 tops at ~470) */
#define SB_RING 256			/* events in flight (~9 KiB each) */
#define SB_WORKERS_MAX 64
#define SB_WORKERS_DEFAULT 2
#define SB_BLOCK_MAX SB_WORKERS_MAX
#define SB_TGID_CACHE 1024
#define SB_INTR_PERIOD_NS (20 * 1000 * 1000)
#define SB_EV_PERIOD_NS (5 * 1000 * 1000)	/* event thread's polling period */
/* Periods with nothing to do before the event thread and the interrupter
 * sleep until woken (about 100 ms): an idle program (a server waiting for
 * its next request) costs no wake-ups, a busy one no futex per call. */
#define SB_EV_QUIET_ROUNDS 20
#define SB_INTR_QUIET_ROUNDS 5
#define SB_STALL_NS (50ull * 1000 * 1000)	/* a decision this long hands the role on */
#define SB_HANDOVER_NS (200ull * 1000)		/* the same for a blocking call */

enum { SB_BLK_FREE = 0, SB_BLK_WAITING, SB_BLK_GONE, SB_BLK_SIGNAL };

struct sb_blk {
	int state;
	pthread_t thread;
	__u64 id;
	pid_t tid;
};

#define SB_FOREIGN_MAX 64

struct sb_sup {
	const struct sb_run_opts *o;
	struct sb_child child;
	pid_t self;
	uint32_t arch;
	atomic_bool stopping;
	atomic_bool first_exec_done;
	atomic_bool same_root;
	const struct sb_syscall_row *dispatch[SB_NR_MAX];
	char **policy_files;		/* owned, canonical */
	size_t n_policy_files;

	pthread_mutex_t wlock;		/* workers */
	pthread_cond_t wcond;
	pthread_t workers[SB_WORKERS_MAX];
	bool wlive[SB_WORKERS_MAX];
	unsigned n_workers, n_base;
	/* One worker at a time waits in RECV (the receiver); the others park
	 * on rcond.  The listener wakes every thread waiting on it for each
	 * notification, and each extra waiter costs the trapped call a wake-up
	 * and a context switch (doc/supervisor.md §6). */
	pthread_cond_t rcond;
	bool receiver_taken;
	unsigned n_parked;
	atomic_uint recv_gen;		/* bumped each time the role changes hands */
	_Atomic uint64_t busy_since;	/* the receiver's decision began (0: receiving) */
	atomic_bool busy_blocking;	/* ... and it is in a blocking call */
	atomic_bool intr_asleep;	/* the interrupter waits for a decision to watch */

	pthread_mutex_t blk_lock;	/* blocking calls */
	pthread_cond_t blk_cond;
	struct sb_blk blk[SB_BLOCK_MAX];
	unsigned n_blk;
	pthread_t interrupter;
	bool have_interrupter;

	pthread_mutex_t ev_lock;	/* events */
	pthread_cond_t ev_nonempty, ev_nonfull;
	struct sb_event *ring;		/* owned, SB_RING slots */
	size_t ev_head, ev_count;
	bool ev_stop, ev_waiting, ev_asleep;	/* asleep: only a push wakes it */
	unsigned long ev_lost;
	pthread_t ev_thread;
	bool have_ev_thread;

	_Atomic uint64_t tgid_cache[SB_TGID_CACHE];
	struct sb_pyctx *py;		/* owned: Python attribution */

	/* Children python-sb already had when it started (a shell's job before
	 * `exec python-sb`): our children too, but not the sandbox's.  A slot
	 * is cleared when we reap that pid, so a reused pid is not mistaken. */
	_Atomic pid_t foreign[SB_FOREIGN_MAX];
	bool foreign_overflow;		/* more than fit: adopted orphans are not trusted */
};

/* The running supervisor's child, for sb_supervise_signal (one run at a time). */
static atomic_int g_child_pidfd = -1;
static int g_sig_intr;

static void sb_intr_handler(int sig)
{
	(void)sig;	/* only there to make the blocked call fail with EINTR */
}

void sb_supervise_signal(int sig)
{
	int fd = atomic_load(&g_child_pidfd);

	if (fd >= 0)
		syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

/* ---- decision latency (bench/python-sb-latency only) ---------------------------- */

#ifdef SB_BENCH_LATENCY
/* make bench builds this variant (never installed): the time from RECV's
 * return to the answer (SEND, or ADDFD with SEND) of every notification, in
 * 100 ns steps, written to $SB_BENCH_LATENCY_FILE when the run ends.  That is
 * SPEC §9's per-decision latency; bench/run.py reads it.  A second histogram
 * leaves out the time spent in the emulated call itself where it may block
 * (a connect, a FIFO open, between sb_notif_block_begin and _end): the
 * decision alone.  Per system call: how many, and their decision time. */
#define SB_LAT_STEP_NS 100
#define SB_LAT_BUCKETS 2000	/* the last one holds everything from 200 us */
#define SB_LAT_NRS 512	/* x86_64 system call numbers; the rest in the last */
static _Atomic unsigned long lat_hist[SB_LAT_BUCKETS], lat_dhist[SB_LAT_BUCKETS], lat_nr[SB_LAT_NRS],
	lat_nr_ns[SB_LAT_NRS];
static __thread struct timespec lat_t0, lat_b0;
static __thread int lat_cur_nr;
static __thread long lat_blocked;
static __thread bool lat_open;

static long lat_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static void lat_add(_Atomic unsigned long *hist, long ns)
{
	long b = ns / SB_LAT_STEP_NS;

	atomic_fetch_add(&hist[b < 0 ? 0 : b >= SB_LAT_BUCKETS ? SB_LAT_BUCKETS - 1 : b], 1);
}

static void lat_start(int nr)
{
	lat_cur_nr = nr < 0 || nr >= SB_LAT_NRS ? SB_LAT_NRS - 1 : nr;
	atomic_fetch_add(&lat_nr[lat_cur_nr], 1);
	clock_gettime(CLOCK_MONOTONIC, &lat_t0);
	lat_blocked = 0;
	lat_open = true;
}

static void lat_block_begin(void)
{
	clock_gettime(CLOCK_MONOTONIC, &lat_b0);
}

static void lat_block_end(void)
{
	lat_blocked += lat_since(&lat_b0);
}

static void lat_stop(void)
{
	long ns;

	if (!lat_open)
		return;
	lat_open = false;
	ns = lat_since(&lat_t0);
	atomic_fetch_add(&lat_nr_ns[lat_cur_nr], (unsigned long)(ns - lat_blocked));
	lat_add(lat_hist, ns);
	lat_add(lat_dhist, ns - lat_blocked);
}

static void lat_write(void)
{
	const char *path = getenv("SB_BENCH_LATENCY_FILE");
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "step_ns %d\n", SB_LAT_STEP_NS);
	for (int i = 0; i < SB_LAT_BUCKETS; i++)
		if (lat_hist[i])
			fprintf(f, "%d %lu\n", i, lat_hist[i]);
	for (int i = 0; i < SB_LAT_BUCKETS; i++)
		if (lat_dhist[i])
			fprintf(f, "d %d %lu\n", i, lat_dhist[i]);
	for (int i = 0; i < SB_LAT_NRS; i++)
		if (lat_nr[i])
			fprintf(f, "nr %d %lu %lu\n", i, lat_nr[i], lat_nr_ns[i]);
	fclose(f);
}
#else
static inline void lat_start(int nr)
{
	(void)nr;
}

static inline void lat_block_begin(void)
{
}

static inline void lat_block_end(void)
{
}

static inline void lat_stop(void)
{
}

static inline void lat_write(void)
{
}
#endif

/* ---- answers -------------------------------------------------------------------- */

void sb_notif_return(struct sb_notif *n, int64_t val)
{
	n->resp->error = 0;
	n->resp->val = val;
	n->resp->flags = 0;
}

void sb_notif_fail(struct sb_notif *n, int err)
{
	n->resp->error = -err;
	n->resp->val = 0;
	n->resp->flags = 0;
	n->ev->err = err;
}

void sb_notif_continue(struct sb_notif *n)
{
	n->resp->error = 0;
	n->resp->val = 0;
	n->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
}

int sb_notif_addfd_send(struct sb_notif *n, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a = {
		.id = n->req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (__u32)fd,
		.newfd = 0,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int rc;

	lat_stop();
	rc = ioctl(n->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);

	if (rc >= 0) {
		n->sent = true;
		return rc;
	}
	rc = errno;
	if (rc == ENOENT) {
		n->sent = true;	/* the target went away (or a signal restarted it) */
		return -ENOENT;
	}
	/* The target stays blocked until we answer (seccomp_unotify(2)): answer
	 * with the error, never with CONTINUE.  RLIMIT_NOFILE shows as EMFILE. */
	sb_notif_fail(n, rc == EBADF || rc == EMFILE ? EMFILE : rc);
	return -rc;
}

bool sb_notif_refuse(struct sb_notif *n, int err, const struct sb_rule_ref *rule, const char *tip)
{
	n->ev->rule = rule;
	if (tip)
		sb_copy_str(n->ev->tip, sizeof(n->ev->tip), tip);
	if (n->mode == SB_MODE_ENFORCE) {
		n->ev->verdict = SB_DENIED;
		sb_notif_fail(n, err);
		return true;	/* attributed in handle(), before the answer */
	}
	n->ev->verdict = SB_WOULD_DENY;
	n->ev->err = err;
	/* Now: the handler goes on and answers (an ADDFD sends at once). */
	sb_notif_attribute_would_deny(n);
	return false;
}

/* ---- services for handlers ---------------------------------------------------- */

/* The thread group of `tid`, from a small cache checked with tgkill(tgid,
 * tid, 0), which succeeds only when tid is a thread of tgid: one system call
 * instead of parsing /proc/TID/status.  Not validated against the request. */
static int tgid_of(struct sb_sup *s, pid_t tid, pid_t *tgid)
{
	uint64_t v = atomic_load_explicit(&s->tgid_cache[tid % SB_TGID_CACHE], memory_order_relaxed);
	pid_t cand = (pid_t)(v >> 32) == tid ? (pid_t)(uint32_t)v : tid;
	struct sb_proc_ids ids;
	int rc;

	if (syscall(SYS_tgkill, cand, tid, 0) != 0 && errno != EPERM) {
		rc = sb_proc_status(tid, &ids);
		if (rc)
			return rc;
		cand = ids.tgid;
		v = ((uint64_t)(uint32_t)tid << 32) | (uint32_t)cand;
		atomic_store_explicit(&s->tgid_cache[tid % SB_TGID_CACHE], v, memory_order_relaxed);
	}
	*tgid = cand;
	return 0;
}

int sb_notif_tgid(struct sb_notif *n, pid_t *tgid)
{
	int rc;

	if (n->tgid > 0) {
		*tgid = n->tgid;
		return 0;
	}
	rc = tgid_of(n->sup, (pid_t)n->req->pid, tgid);
	if (rc == 0)
		rc = sb_notif_valid(n);	/* tid still the target's, tgid still right */
	if (rc == 0)
		n->tgid = *tgid;
	return rc;
}

bool sb_sup_first_exec(struct sb_sup *s, pid_t tid)
{
	bool expected = false;

	if (tid != s->child.pid)
		return false;
	return atomic_compare_exchange_strong(&s->first_exec_done, &expected, true);
}

static bool is_foreign(struct sb_sup *s, pid_t pid)
{
	for (unsigned i = 0; i < SB_FOREIGN_MAX; i++)
		if (atomic_load_explicit(&s->foreign[i], memory_order_relaxed) == pid)
			return true;
	return false;
}

static void forget_foreign(struct sb_sup *s, pid_t pid)
{
	for (unsigned i = 0; i < SB_FOREIGN_MAX; i++) {
		pid_t want = pid;

		atomic_compare_exchange_strong(&s->foreign[i], &want, 0);
	}
}

/* Do we have no child at all (ECHILD)?  One system call, where a scan of
 * /proc reads every process of the machine.  WNOWAIT: nothing is reaped;
 * __WALL: clone children too, as wait_child() and kill_leftovers() reap. */
static bool no_children(void)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD;
}

/* Before the spawn: every child we have now is not part of the sandbox. */
static void note_foreign_children(struct sb_sup *s)
{
	DIR *d;
	struct dirent *de;
	unsigned n = 0;

	if (no_children())
		return;		/* the usual case: nothing to note */
	d = opendir("/proc");
	if (!d) {
		s->foreign_overflow = true;	/* unknown: trust no adopted orphan */
		return;
	}
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), pp;

		if (pid <= 0 || pid == s->self || sb_proc_ppid(pid, &pp) != 0 || pp != s->self)
			continue;
		if (n == SB_FOREIGN_MAX)
			s->foreign_overflow = true;
		else
			atomic_store(&s->foreign[n++], pid);
	}
	closedir(d);
}

bool sb_sup_in_sandbox(struct sb_sup *s, pid_t pid)
{
	pid_t p = pid;

	if (pid <= 0 || pid == s->self)
		return false;
	/* Up the parent chain: the child, or an orphan of the tree that we
	 * adopted as subreaper (we have no other children while supervising). */
	for (int hops = 0; hops < 4096; hops++) {
		pid_t pp;

		if (p == s->child.pid)
			return true;
		if (sb_proc_ppid(p, &pp))
			return false;
		if (pp == s->self)	/* adopted orphan, or a child we had before */
			return !s->foreign_overflow && !is_foreign(s, p);
		if (pp <= 1)
			return false;
		p = pp;
	}
	return false;
}

struct sb_pyctx *sb_sup_py(struct sb_sup *s)
{
	return s->py;
}

bool sb_sup_kernel_fs(const struct sb_sup *s)
{
	return s->o->kernel_enforces_fs;
}

bool sb_sup_kernel_fs_read(const struct sb_sup *s)
{
	return s->o->kernel_enforces_fs || s->o->kernel_enforces_fs_read;
}

bool sb_sup_kernel_truncate(const struct sb_sup *s)
{
	/* The layer uses the best ABI the kernel has; TRUNCATE came with 3. */
	return s->o->kernel_enforces_fs && sb_oslayer_landlock_abi(s->o->oslayer) >= 3;
}

bool sb_sup_same_root(const struct sb_sup *s)
{
	return atomic_load(&s->same_root);
}

void sb_sup_root_changed(struct sb_sup *s)
{
	atomic_store(&s->same_root, false);
}

bool sb_sup_holds_policy_file(const struct sb_sup *s, const char *canon, size_t len)
{
	for (size_t i = 0; i < s->n_policy_files; i++) {
		const char *f = s->policy_files[i];

		if (strncmp(f, canon, len) == 0 && (f[len] == '/' || (len == 1 && canon[0] == '/')))
			return true;
	}
	return false;
}

void sb_notif_ev_path(struct sb_notif *n, const char *canon, unsigned access)
{
	sb_copy_str(n->ev->path, sizeof(n->ev->path), canon);
	n->ev->access = access;
}

const struct sb_syscall_row *sb_notif_row(const struct sb_notif *n)
{
	int nr = n->req->data.nr;

	return nr >= 0 && nr < SB_NR_MAX ? n->sup->dispatch[nr] : NULL;
}

bool sb_notif_own_pid(struct sb_notif *n, pid_t pid)
{
	struct sb_proc_ids ids;
	pid_t tgid;

	if (!sb_sup_same_root(n->sup)) {
		/* A layer's pid namespace: its /proc speaks in its own ids. */
		if (sb_proc_status((pid_t)n->req->pid, &ids) || sb_notif_valid(n))
			return false;
		return pid == ids.ns_tgid || pid == ids.ns_tid;
	}
	if (sb_notif_tgid(n, &tgid))
		return false;
	return pid == tgid || pid == (pid_t)n->req->pid || syscall(SYS_tgkill, tgid, pid, 0) == 0;
}

/* /proc/PID/... of the target's own process: what the interpreter reads about
 * itself (status, maps, the fd/ listing).  Magic links (fd/N, cwd, root, exe)
 * were replaced by their objects during resolution, so nothing here reaches a
 * file; writes only to a thread's comm (thread names). */
static bool own_proc(struct sb_notif *n, const char *canon, unsigned access)
{
	const char *slash;
	char *end;
	long pid;

	if (strncmp(canon, "/proc/", 6) != 0)
		return false;
	pid = strtol(canon + 6, &end, 10);
	if (end == canon + 6 || (*end && *end != '/') || pid <= 0)
		return false;
	if (access & (SB_ACC_WRITE | SB_ACC_EXEC)) {
		slash = strrchr(end, '/');
		if (access & SB_ACC_EXEC || !slash || strcmp(slash, "/comm") != 0)
			return false;
	}
	return sb_notif_own_pid(n, (pid_t)pid);
}

/* Directories on the way to an exposure: "/home" when ~/proj is exposed. */
static bool leads_to_exposure(const struct sb_policy *pol, const char *canon, size_t len)
{
	const struct sb_expose *e;
	size_t n = sb_policy_exposures(pol, &e);

	for (size_t i = 0; i < n; i++) {
		const char *x = e[i].path;

		if (len == 1 && canon[0] == '/')
			return true;
		if (strncmp(x, canon, len) == 0 && x[len] == '/')
			return true;
	}
	return false;
}

bool sb_notif_path_visible(struct sb_notif *n, const char *canon, size_t len)
{
	if (n->mode != SB_MODE_ENFORCE || own_proc(n, canon, SB_ACC_READ))
		return true;
	return sb_policy_check_path(n->policy, canon, len, SB_ACC_READ, NULL) == SB_PATH_ALLOW ||
	       leads_to_exposure(n->policy, canon, len);
}

static bool check_path(struct sb_notif *n, const struct sb_path *p, unsigned access, bool meta)
{
	const struct sb_rule_ref *hit = NULL;
	enum sb_path_verdict v;

	sb_notif_ev_path(n, p->canon, access);
	if (own_proc(n, p->canon, access))
		return false;
	v = sb_policy_check_path(n->policy, p->canon, p->len, access, &hit);
	n->ev->rule = hit;
	if (v == SB_PATH_NOT_EXPOSED && meta && !(access & SB_ACC_WRITE) && p->objfd >= 0 &&
	    leads_to_exposure(n->policy, p->canon, p->len)) {
		struct stat st;

		/* Metadata of a directory leading to an exposure (its name is in
		 * the policy anyway); listing it still needs an expose rule. */
		if (fstat(p->objfd, &st) == 0 && S_ISDIR(st.st_mode))
			return false;
	}
	switch (v) {
	case SB_PATH_ALLOW:
		return false;
	case SB_PATH_NOT_EXPOSED:
	case SB_PATH_IGNORED:
		return sb_notif_refuse(n, ENOENT, hit, NULL);
	case SB_PATH_READ_ONLY:
	case SB_PATH_PROTECTED:
		return sb_notif_refuse(n, EACCES, hit, NULL);
	}
	return sb_notif_refuse(n, EACCES, hit, NULL);
}

bool sb_notif_check_path(struct sb_notif *n, const struct sb_path *p, unsigned access)
{
	return check_path(n, p, access, false);
}

bool sb_notif_check_meta(struct sb_notif *n, const struct sb_path *p, unsigned access)
{
	return check_path(n, p, access, true);
}

void sb_notif_fail_resolve(struct sb_notif *n, int rc)
{
	if (rc == -ESRCH)
		rc = -ENOENT;	/* the target is gone: the answer goes nowhere */
	sb_notif_fail(n, rc < 0 ? -rc : EPERM);
}

/* This worker has its own fs_struct (cwd, root, umask). */
static __thread bool tl_private_fs;

int sb_umask_begin(struct sb_notif *n)
{
	mode_t m;
	int rc;

	if (!tl_private_fs)
		return -ENOTSUP;	/* a shared umask would race: refuse the creation */
	rc = sb_notif_umask(n, &m);
	if (rc)
		return rc;
	/* Workers have their own fs_struct (unshare(CLONE_FS) at start), so the
	 * umask is this thread's alone and the kernel applies it exactly as for
	 * the target, default ACLs included. */
	umask(m);
	return 0;
}

void sb_umask_end(void)
{
	umask(077);
}

/* A pthread_cond_timedwait deadline `ns` from now. */
static struct timespec deadline_in(long ns)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ns;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* ---- the blocking-call registry and the interrupter ----------------------------- */

static int spawn_worker(struct sb_sup *s);

/* Is this worker the receiver, of which generation?  The role changes hands
 * by bumping s->recv_gen, so a receiver that lost it (to the stall watchdog)
 * finds out after its decision. */
static __thread bool tl_receiver;
static __thread unsigned tl_gen;

static bool still_receiver(struct sb_sup *s)
{
	return tl_receiver && atomic_load(&s->recv_gen) == tl_gen;
}

/* Give up the role of generation `gen` (if it is still current): a parked
 * worker takes over receiving, or a new one is started when none is parked. */
static void receiver_release(struct sb_sup *s, unsigned gen)
{
	bool spawn = false;

	pthread_mutex_lock(&s->wlock);
	if (s->receiver_taken && atomic_load(&s->recv_gen) == gen) {
		atomic_fetch_add(&s->recv_gen, 1);
		atomic_store(&s->busy_since, 0);
		atomic_store(&s->busy_blocking, false);
		s->receiver_taken = false;
		spawn = s->n_parked == 0;
		if (!spawn)
			pthread_cond_signal(&s->rcond);
	}
	pthread_mutex_unlock(&s->wlock);
	if (spawn)
		spawn_worker(s);
}

/* Become the receiver, parked until the role is free.  Returns false when
 * the worker should leave instead: shutdown, or it is an extra worker
 * (started for a blocking call) and others are there to take the role. */
static bool receiver_take(struct sb_sup *s)
{
	bool ok = false;

	tl_receiver = false;
	pthread_mutex_lock(&s->wlock);
	for (;;) {
		if (atomic_load(&s->stopping))
			break;
		if (!s->receiver_taken) {
			s->receiver_taken = true;
			tl_gen = atomic_load(&s->recv_gen);
			tl_receiver = ok = true;
			break;
		}
		if (s->n_workers > s->n_base)
			break;
		s->n_parked++;
		pthread_cond_wait(&s->rcond, &s->wlock);
		s->n_parked--;
	}
	pthread_mutex_unlock(&s->wlock);
	return ok;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The receiver's decision has taken too long: the role goes to another
 * worker, so the program's other threads are still served.  A blocking call
 * (FIFO open, blocking connect or send) gets SB_HANDOVER_NS: handing the
 * role on at once cost each such call 5-7 µs, and most are over long before
 * (a loopback connect takes ~10 µs).  A decision that blocks where nothing
 * said it would (a device or a hung network file system behind an open)
 * gets SB_STALL_NS. */
static void receiver_watchdog(struct sb_sup *s)
{
	unsigned gen = atomic_load(&s->recv_gen);
	uint64_t since = atomic_load(&s->busy_since);
	uint64_t limit = atomic_load(&s->busy_blocking) ? SB_HANDOVER_NS : SB_STALL_NS;

	if (since && mono_ns() - since > limit)
		receiver_release(s, gen);
}

int sb_notif_block_begin(struct sb_notif *n)
{
	struct sb_sup *s = n->sup;
	bool receiving = still_receiver(s);
	int rc = -EAGAIN;

	/* Before the registration wakes the interrupter, which then watches
	 * for SB_HANDOVER_NS (receiver_watchdog). */
	if (receiving)
		atomic_store(&s->busy_blocking, true);
	pthread_mutex_lock(&s->blk_lock);
	/* Keep workers for everything else: past this many waiting calls the
	 * next one fails with EAGAIN instead of stalling the program. */
	for (unsigned i = 0; s->n_blk < SB_BLOCK_MAX - 2 && i < SB_BLOCK_MAX; i++) {
		if (s->blk[i].state != SB_BLK_FREE)
			continue;
		s->blk[i] = (struct sb_blk){ SB_BLK_WAITING, pthread_self(), n->req->id, (pid_t)n->req->pid };
		n->blk = i + 1;
		s->n_blk++;
		pthread_cond_signal(&s->blk_cond);
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&s->blk_lock);
	if (rc && receiving)
		atomic_store(&s->busy_blocking, false);
	if (rc == 0)
		lat_block_begin();
	return rc;
}

int sb_notif_block_end(struct sb_notif *n)
{
	struct sb_sup *s = n->sup;
	int state;

	if (!n->blk)
		return 0;
	lat_block_end();
	pthread_mutex_lock(&s->blk_lock);
	state = s->blk[n->blk - 1].state;
	s->blk[n->blk - 1].state = SB_BLK_FREE;
	s->n_blk--;
	pthread_mutex_unlock(&s->blk_lock);
	n->blk = 0;
	if (state == SB_BLK_GONE || sb_notif_valid(n))
		return -ENOENT;
	return state == SB_BLK_SIGNAL ? -EINTR : 0;
}

/* Should the blocked request `b` stop waiting? */
static int blk_check(struct sb_sup *s, const struct sb_blk *b)
{
	__u64 id = b->id;
	struct sb_proc_ids ids;

	if (ioctl(s->child.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0)
		return SB_BLK_GONE;
	/* With WAIT_KILLABLE_RECV the target ignores non-fatal signals until we
	 * answer: a pending, unblocked signal (Ctrl-C) ends the wait with EINTR
	 * so its handler runs now. */
	if (sb_proc_status(b->tid, &ids) == 0 && (ids.sig_pending & ~ids.sig_blocked))
		return SB_BLK_SIGNAL;
	return SB_BLK_WAITING;
}

static void wake_interrupter(struct sb_sup *s)
{
	pthread_mutex_lock(&s->blk_lock);
	pthread_cond_signal(&s->blk_cond);
	pthread_mutex_unlock(&s->blk_lock);
}

static void *interrupter_main(void *arg)
{
	struct sb_sup *s = arg;
	const struct timespec period = { 0, SB_INTR_PERIOD_NS };
	const struct timespec soon = { 0, SB_HANDOVER_NS / 2 };
	unsigned quiet = 0;

	pthread_mutex_lock(&s->blk_lock);
	while (!atomic_load(&s->stopping)) {
		receiver_watchdog(s);
		if (s->n_blk == 0) {
			struct timespec until = deadline_in(SB_INTR_PERIOD_NS);

			if (atomic_load(&s->busy_since))
				quiet = 0;
			if (++quiet <= SB_INTR_QUIET_ROUNDS) {
				pthread_cond_timedwait(&s->blk_cond, &s->blk_lock, &until);
				continue;
			}
			/* Nothing to watch: a decision that begins (busy_since,
			 * then intr_asleep, both seq_cst: one side sees the
			 * other), a blocking call or the stop wakes us. */
			atomic_store(&s->intr_asleep, true);
			if (!atomic_load(&s->busy_since) && !atomic_load(&s->stopping))
				pthread_cond_wait(&s->blk_cond, &s->blk_lock);
			atomic_store(&s->intr_asleep, false);
			quiet = 0;
			continue;
		}
		quiet = 0;
		for (unsigned i = 0; i < SB_BLOCK_MAX; i++) {
			struct sb_blk *b = &s->blk[i];
			int st;

			if (b->state == SB_BLK_FREE)
				continue;
			st = b->state == SB_BLK_WAITING ? blk_check(s, b) : b->state;
			b->state = st;
			/* Repeated each period: the signal may land just before the
			 * worker enters its blocking call. */
			if (st != SB_BLK_WAITING)
				pthread_kill(b->thread, g_sig_intr);
		}
		pthread_mutex_unlock(&s->blk_lock);
		nanosleep(atomic_load(&s->busy_blocking) ? &soon : &period, NULL);
		pthread_mutex_lock(&s->blk_lock);
	}
	pthread_mutex_unlock(&s->blk_lock);
	return NULL;
}

/* ---- events ----------------------------------------------------------------------- */

/* Copy the used part of an event (the strings are mostly short; a whole
 * struct is ~9 KiB). */
static void ev_copy(struct sb_event *dst, const struct sb_event *src)
{
	memcpy(dst, src, offsetof(struct sb_event, path));
	sb_copy_str(dst->path, sizeof(dst->path), src->path);
	dst->addr = src->addr;
	dst->proto = src->proto;
	dst->dir = src->dir;
	dst->category = src->category;
	sb_copy_str(dst->name, sizeof(dst->name), src->name);
	dst->rule = src->rule;
	sb_copy_str(dst->tip, sizeof(dst->tip), src->tip);
	sb_copy_str(dst->pyloc, sizeof(dst->pyloc), src->pyloc);
	dst->from_eval = src->from_eval;
	sb_copy_str(dst->importing, sizeof(dst->importing), src->importing);
	sb_copy_str(dst->stack, sizeof(dst->stack), src->stack);
	dst->cause = src->cause;
}

static void ev_push(struct sb_sup *s, const struct sb_event *ev)
{
	if (!s->o->on_event)
		return;
	pthread_mutex_lock(&s->ev_lock);
	while (s->ev_count == SB_RING) {
		/* Learning and audit lose nothing (the worker waits); enforce mode
		 * keeps every refusal and drops allowed events under a burst. */
		if (s->o->mode == SB_MODE_ENFORCE && ev->verdict == SB_ALLOWED) {
			s->ev_lost++;
			pthread_mutex_unlock(&s->ev_lock);
			return;
		}
		if (s->ev_waiting)
			pthread_cond_signal(&s->ev_nonempty);
		pthread_cond_wait(&s->ev_nonfull, &s->ev_lock);
	}
	ev_copy(&s->ring[(s->ev_head + s->ev_count) % SB_RING], ev);
	s->ev_count++;
	/* The event thread polls the ring every SB_EV_PERIOD; waking it (a
	 * futex call) only when the ring fills up, or after a quiet spell put
	 * it to sleep, keeps the deciding path free of it. */
	if (s->ev_waiting && (s->ev_asleep || s->ev_count >= SB_RING / 2))
		pthread_cond_signal(&s->ev_nonempty);
	pthread_mutex_unlock(&s->ev_lock);
}

static void *event_main(void *arg)
{
	struct sb_sup *s = arg;
	unsigned quiet = 0;

	pthread_mutex_lock(&s->ev_lock);
	for (;;) {
		const struct sb_event *ev;

		if (s->ev_count == 0) {
			struct timespec until;

			if (s->ev_stop)
				break;
			s->ev_waiting = true;
			if (++quiet <= SB_EV_QUIET_ROUNDS) {
				until = deadline_in(SB_EV_PERIOD_NS);
				pthread_cond_timedwait(&s->ev_nonempty, &s->ev_lock, &until);
			} else {
				s->ev_asleep = true;	/* ev_push() wakes us, under ev_lock */
				pthread_cond_wait(&s->ev_nonempty, &s->ev_lock);
				s->ev_asleep = false;
				quiet = 0;
			}
			s->ev_waiting = false;
			continue;
		}
		quiet = 0;
		/* Producers never touch the head slot while it is counted. */
		ev = &s->ring[s->ev_head];
		pthread_mutex_unlock(&s->ev_lock);
		s->o->on_event(ev, s->o->event_data);
		pthread_mutex_lock(&s->ev_lock);
		s->ev_head = (s->ev_head + 1) % SB_RING;
		s->ev_count--;
		pthread_cond_broadcast(&s->ev_nonfull);
	}
	pthread_mutex_unlock(&s->ev_lock);
	return NULL;
}

static void notice(struct sb_sup *s, const struct sb_notif *n)
{
	const struct sb_event *ev = n->ev;
	char buf[2 * PATH_MAX + 1024];
	int len;

	if (s->o->notice_fd < 0)
		return;
	if (ev->verdict != SB_DENIED && !(s->o->mode == SB_MODE_AUDIT && ev->verdict == SB_WOULD_DENY))
		return;
	/* A bytecode-cache write: still in the JSON log, only the terminal is
	 * spared. */
	if (sb_event_bytecode_write(ev) || !sb_pyctx_first_notice(s->py, n->tgid > 0 ? n->tgid : ev->tid, ev))
		return;
	len = sb_event_to_notice(ev, buf, sizeof(buf));
	/* A closed stderr changes nothing: the refusal itself stands. */
	if (len > 0 && write(s->o->notice_fd, buf, (size_t)len) < 0)
		return;
}

/* ---- one notification ---------------------------------------------------------- */

static void ev_start(struct sb_event *ev, const struct seccomp_notif *req, const struct sb_syscall_row *row)
{
	clock_gettime(CLOCK_REALTIME, &ev->ts);
	ev->pid = ev->tid = (pid_t)req->pid;
	ev->nr = req->data.nr;
	ev->comm[0] = '\0';	/* the event thread names it, off the hot path */
	sb_copy_str(ev->syscall, sizeof(ev->syscall), row && row->name[0] ? row->name : "?");
	ev->kind = row && row->kind >= 0 ? (enum sb_event_kind)row->kind : SB_EV_PATH;
	ev->verdict = SB_ALLOWED;
	ev->err = 0;
	ev->access = 0;
	ev->path[0] = '\0';
	memset(&ev->addr, 0, sizeof(ev->addr));
	ev->proto = ev->dir = 0;
	ev->category = -1;
	ev->name[0] = '\0';
	ev->rule = NULL;
	ev->tip[0] = '\0';
	ev->pyloc[0] = '\0';
	ev->from_eval = false;
	ev->importing[0] = '\0';
	ev->stack[0] = '\0';
	ev->cause = SB_CAUSE_POLICY;
}

/* A refused open, connect or exec: tell the agent why before the program
 * sees the error, so it can raise RuleFileNotFoundError & co. with this text
 * (never blocks; a dropped note leaves the plain OSError). */
static void explain_to_agent(struct sb_sup *s, const struct sb_notif *n)
{
	const struct sb_syscall_row *row = sb_notif_row(n);
	const struct sb_event *ev = n->ev;
	char text[PATH_MAX + 1024];
	struct sb_proc_ids ids;

	if (!s->o->agent || ev->verdict != SB_DENIED || ev->cause == SB_CAUSE_IMPORT || !row)
		return;
	if (!(ev->kind == SB_EV_PATH && row->handler == sb_handle_open) && ev->kind != SB_EV_NET &&
	    ev->kind != SB_EV_UNIX && ev->kind != SB_EV_EXEC)
		return;
	if (sb_event_refusal_text(ev, text, sizeof(text)) <= 0)
		return;
	/* The agent knows its threads by their id in its own pid namespace
	 * (a layer's); this is the refusal path only. */
	if (sb_proc_status(ev->tid, &ids) == 0 && ids.ns_tid > 0 && ids.ns_tid != ev->tid) {
		pid_t tid = ev->tid;

		n->ev->tid = ids.ns_tid;
		(void)sb_agent_refusal(s->o->agent, n->ev, text);
		n->ev->tid = tid;
		return;
	}
	(void)sb_agent_refusal(s->o->agent, ev, text);
}

static void handle(struct sb_sup *s, const struct seccomp_notif *req, struct sb_event *ev,
		   struct sb_pystack *stk)
{
	const struct sb_syscall_row *row = req->data.nr >= 0 && req->data.nr < SB_NR_MAX ? s->dispatch[req->data.nr] : NULL;
	struct seccomp_notif_resp resp = { .id = req->id, .val = 0, .error = -EPERM, .flags = 0 };
	struct sb_notif n = {
		.listener = s->child.listener, .req = req, .resp = &resp, .policy = s->o->policy,
		.mode = s->o->mode, .sup = s, .ev = ev, .sent = false, .log = true,
		.pidfd = -1, .tgid = 0, .blk = 0, .stk = stk, .attr = 0,
	};
	int rc;

	ev_start(ev, req, row);
	/* Unknown call or foreign shape (the filter kills other architectures,
	 * so this is a table/filter mismatch): refuse. */
	if (!row || !row->handler || req->data.arch != s->arch) {
		n.log = false;
		rc = -ENOSYS;
#ifdef SB_TEST_WIDEN
	} else if (getenv("SB_TEST_WIDEN")) {
		/* Test-only binary (tests/progs/python-sb-widen, never installed):
		 * every decision widened to CONTINUE, so tests can show what the
		 * kernel layer refuses on its own (issue 7). */
		sb_notif_continue(&n);
		n.log = false;
		rc = 0;
#endif
	} else if ((row->handler == sb_handle_connect || row->handler == sb_handle_sendto) &&
		   sb_notif_py_veto_net(&n)) {
		rc = 0;	/* code from eval may not use the network */
	} else {
		rc = row->handler(&n);
	}
	if (rc < 0 && !n.sent) {
		resp.error = -EPERM;
		resp.val = 0;
		resp.flags = 0;
	}
	if (n.blk)
		sb_notif_block_end(&n);
	if (n.log && !n.sent && ev->verdict == SB_DENIED) {
		/* The target still waits for this answer: who asked, then why.
		 * Not for the import system caching bytecode where nothing may
		 * be written when no log or report will show where: it is never
		 * printed, the interpreter goes on without, and reading the stack
		 * (the first read scans the interpreter's symbols) would be the
		 * dearest part of each module a read-only tree imports. */
		if (!(s->o->refusals_only && sb_event_bytecode_write(ev)))
			sb_notif_attribute(&n);
		explain_to_agent(s, &n);
	}
	if (n.log && !n.sent)
		notice(s, &n);
	lat_stop();
	/* ENOENT from SEND: the target was killed, or a signal restarted the
	 * call (SA_RESTART) and a new notification follows: nothing to do. */
	if (!n.sent)
		(void)ioctl(s->child.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	if (n.sent && n.log)
		notice(s, &n);
	if (n.pidfd >= 0)
		close(n.pidfd);
	/* With a sync wake-up the target runs on this CPU once we wait again:
	 * whatever is done here delays it, so nothing nobody reads. */
	if (n.log && ev->verdict == SB_ALLOWED && s->o->refusals_only)
		return;
	if (n.tgid > 0)
		ev->pid = n.tgid;
	else if (n.log && s->o->on_event && tgid_of(s, ev->tid, &ev->pid) != 0)
		ev->pid = ev->tid;
	if (n.log)
		ev_push(s, ev);
}

/* ---- workers ------------------------------------------------------------------------- */

struct worker_arg {
	struct sb_sup *s;
	unsigned slot;
};

static void worker_loop(struct sb_sup *s, unsigned slot)
{
	struct pollfd pfd[1] = { { s->child.listener, POLLIN, 0 } };
	struct seccomp_notif req;
	struct sb_event *ev = malloc(sizeof(*ev));
	struct sb_pystack *stk = malloc(sizeof(*stk));

	if (!ev || !stk) {
		free(ev);
		free(stk);
		return;
	}
	for (;;) {
		if (!still_receiver(s) && !receiver_take(s))
			break;
		if (atomic_load(&s->stopping))
			break;
		/* Wait in RECV itself (no poll first: one system call and one
		 * wake-up less per notification, and the sync wake-up hands the
		 * target's CPU straight to this thread).  stop_workers()
		 * interrupts it with g_sig_intr (EINTR). */
		memset(&req, 0, sizeof(req));	/* RECV needs a zeroed request */
		if (ioctl(s->child.listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			int err = errno;

			/* EINTR: the shutdown kick.  ENOENT: a target died or
			 * was signalled after waking us, or the filter has no
			 * users left (RECV then fails at once: the listener
			 * polls POLLHUP).  Anything else: wait as poll did. */
			if (err != EINTR && poll(pfd, 1, err == ENOENT ? 0 : -1) > 0 &&
			    (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)))
				break;
			continue;
		}
		lat_start(req.data.nr);
		atomic_store(&s->busy_since, mono_ns());
		if (atomic_load(&s->intr_asleep))
			wake_interrupter(s);	/* the first decision after a quiet spell */
		handle(s, &req, ev, stk);
		if (still_receiver(s)) {
			atomic_store(&s->busy_since, 0);
			atomic_store(&s->busy_blocking, false);
		}
	}
	if (still_receiver(s)) {
		/* Leaving (shutdown or the listener's end): let a parked
		 * worker find that out too. */
		tl_receiver = false;
		pthread_mutex_lock(&s->wlock);
		atomic_fetch_add(&s->recv_gen, 1);
		s->receiver_taken = false;
		pthread_cond_signal(&s->rcond);
		pthread_mutex_unlock(&s->wlock);
	}
	free(ev);
	free(stk);
	(void)slot;
}

static void *worker_main(void *arg)
{
	struct worker_arg wa = *(struct worker_arg *)arg;
	struct sb_sup *s = wa.s;
	sigset_t set;

	free(arg);
	sigfillset(&set);
	sigdelset(&set, g_sig_intr);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	/* A private cwd/umask: emulated creations use the target's umask.
	 * Without it the worker still serves, and creations are refused. */
	tl_private_fs = unshare(CLONE_FS) == 0;
	if (tl_private_fs)
		umask(077);
	worker_loop(s, wa.slot);
	pthread_mutex_lock(&s->wlock);
	s->wlive[wa.slot] = false;
	s->n_workers--;
	pthread_cond_broadcast(&s->wcond);
	pthread_mutex_unlock(&s->wlock);
	return NULL;
}

static int spawn_worker(struct sb_sup *s)
{
	struct worker_arg *wa;
	pthread_attr_t attr;
	int rc = -EAGAIN;

	pthread_mutex_lock(&s->wlock);
	if (atomic_load(&s->stopping))
		goto out;
	for (unsigned i = 0; i < SB_WORKERS_MAX; i++) {
		if (s->wlive[i])
			continue;
		wa = malloc(sizeof(*wa));
		if (!wa) {
			rc = -ENOMEM;
			break;
		}
		*wa = (struct worker_arg){ s, i };
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = -pthread_create(&s->workers[i], &attr, worker_main, wa);
		pthread_attr_destroy(&attr);
		if (rc) {
			free(wa);
			break;
		}
		s->wlive[i] = true;
		s->n_workers++;
		break;
	}
out:
	pthread_mutex_unlock(&s->wlock);
	return rc;
}

static void stop_workers(struct sb_sup *s)
{
	struct timespec until;

	atomic_store(&s->stopping, true);
	pthread_mutex_lock(&s->wlock);
	while (s->n_workers > 0) {
		/* Workers sit in NOTIF_RECV: interrupt them, again until
		 * they are gone (a signal may land just before the call). */
		for (unsigned i = 0; i < SB_WORKERS_MAX; i++)
			if (s->wlive[i])
				pthread_kill(s->workers[i], g_sig_intr);
		pthread_cond_broadcast(&s->rcond);	/* parked ones */
		until = deadline_in(SB_INTR_PERIOD_NS);
		pthread_cond_timedwait(&s->wcond, &s->wlock, &until);
	}
	pthread_mutex_unlock(&s->wlock);
}

/* ---- setup and teardown --------------------------------------------------------------- */

static int build_dispatch(struct sb_sup *s)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];
		int nr = sb_syscall_row_nr(r);

		if (!r->handler || nr < 0)
			continue;
		if (nr >= SB_NR_MAX)
			return -ERANGE;
		s->dispatch[nr] = r;
	}
	return 0;
}

static int load_policy_files(struct sb_sup *s)
{
	const char *const *files;
	size_t n = sb_policy_files(s->o->policy, &files);

	s->policy_files = calloc(n ? n : 1, sizeof(char *));
	if (!s->policy_files)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char *c = realpath(files[i], NULL);

		if (!c && !(c = strdup(files[i])))
			return -ENOMEM;
		s->policy_files[s->n_policy_files++] = c;
	}
	return 0;
}

static void sup_free(struct sb_sup *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_policy_files; i++)
		free(s->policy_files[i]);
	free(s->policy_files);
	free(s->ring);
	sb_pyctx_free(s->py);
	if (s->child.listener >= 0)
		close(s->child.listener);
	if (s->child.pidfd >= 0)
		close(s->child.pidfd);
	pthread_mutex_destroy(&s->wlock);
	pthread_cond_destroy(&s->wcond);
	pthread_cond_destroy(&s->rcond);
	pthread_mutex_destroy(&s->blk_lock);
	pthread_cond_destroy(&s->blk_cond);
	pthread_mutex_destroy(&s->ev_lock);
	pthread_cond_destroy(&s->ev_nonempty);
	pthread_cond_destroy(&s->ev_nonfull);
	free(s);
}

static struct sb_sup *sup_new(const struct sb_run_opts *o)
{
	struct sb_sup *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = o;
	s->self = getpid();
	s->arch = SB_ARCH_NATIVE;
	s->child.listener = s->child.pidfd = -1;
	atomic_init(&s->same_root, true);
	pthread_mutex_init(&s->wlock, NULL);
	pthread_cond_init(&s->wcond, NULL);
	pthread_cond_init(&s->rcond, NULL);
	pthread_mutex_init(&s->blk_lock, NULL);
	pthread_cond_init(&s->blk_cond, NULL);
	pthread_mutex_init(&s->ev_lock, NULL);
	pthread_cond_init(&s->ev_nonempty, NULL);
	pthread_cond_init(&s->ev_nonfull, NULL);
	s->ring = calloc(SB_RING, sizeof(struct sb_event));
	if (!s->ring || build_dispatch(s) || load_policy_files(s) || sb_pyctx_new(o, &s->py)) {
		sup_free(s);
		return NULL;
	}
	note_foreign_children(s);
	return s;
}

static void detect_root(struct sb_sup *s)
{
	char path[64];
	struct statx a, b;

	/* The mount, not only the inode: firejail keeps the host's root
	 * directory in a mount namespace of its own, whose root is another
	 * mount (another id) of the same inode; resolving from our root there
	 * would look past what the layer hides. */
	snprintf(path, sizeof(path), "/proc/%d/root", (int)s->child.pid);
	if (statx(AT_FDCWD, path, 0, STATX_INO | STATX_MNT_ID, &a) != 0 ||
	    statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &b) != 0 || !(a.stx_mask & b.stx_mask & STATX_MNT_ID) ||
	    a.stx_mnt_id != b.stx_mnt_id || a.stx_dev_major != b.stx_dev_major ||
	    a.stx_dev_minor != b.stx_dev_minor || a.stx_ino != b.stx_ino)
		atomic_store(&s->same_root, false);
}

static int start_threads(struct sb_sup *s)
{
	int n = s->o->workers > 0 ? s->o->workers : SB_WORKERS_DEFAULT, rc;

	if (n > SB_WORKERS_MAX / 2)
		n = SB_WORKERS_MAX / 2;
	if (s->o->on_event) {
		rc = sb_thread_start(&s->ev_thread, 0, event_main, s);
		if (rc)
			return rc;
		s->have_ev_thread = true;
	}
	rc = sb_thread_start(&s->interrupter, 0, interrupter_main, s);
	if (rc)
		return rc;
	s->have_interrupter = true;
	s->n_base = (unsigned)n;
	for (int i = 0; i < n; i++) {
		rc = spawn_worker(s);
		if (rc)
			return rc;
	}
	return 0;
}

static int install_intr_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sb_intr_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: the blocked call must fail with EINTR */
	g_sig_intr = SIGRTMIN + 3;
	return sigaction(g_sig_intr, &sa, NULL) < 0 ? -errno : 0;
}

/* SIGKILL whatever is left of the tree once the program has exited: every
 * child we still have is a sandboxed orphan, and nothing would supervise it
 * after we return (its notified calls would get ENOSYS). */
static void kill_leftovers(struct sb_sup *s)
{
	for (;;) {
		DIR *d;
		struct dirent *de;
		unsigned killed = 0;
		pid_t p;

		/* The program reaped, no child left: the tree is gone. */
		if (no_children())
			break;
		d = opendir("/proc");

		while (d && (de = readdir(d))) {
			pid_t pid = (pid_t)atoi(de->d_name), pp;

			/* A child of ours cannot be reused before we reap it; the
			 * children we had before the run are not the sandbox's. */
			if (pid > 0 && pid != s->self && sb_proc_ppid(pid, &pp) == 0 && pp == s->self &&
			    !is_foreign(s, pid)) {
				kill(pid, SIGKILL);
				killed++;
			}
		}
		if (d)
			closedir(d);
		if (!killed)
			break;	/* the tree is gone (only children we had before remain) */
		/* Each exit may hand us its own children: scan again after it. */
		p = waitpid(-1, NULL, __WALL);
		if (p > 0) {
			sb_pyctx_exited(s->py, p);
			forget_foreign(s, p);
		}
		if (p < 0 && errno != EINTR)
			break;	/* ECHILD */
	}
}

/* Wait for the program, reaping the orphans we adopt on the way. */
static int wait_child(struct sb_sup *s, int *wstatus)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, __WALL);

		if (p > 0) {
			sb_pyctx_exited(s->py, p);
			forget_foreign(s, p);
		}
		if (p == s->child.pid) {
			*wstatus = st;
			return 0;
		}
		if (p < 0 && errno != EINTR)
			return -errno;
	}
}

/* The threads are up and the child waits in its execve: run to the end. */
static int run(struct sb_sup *s, int *wstatus)
{
	int rc, wrc;

	atomic_store(&g_child_pidfd, s->child.pidfd);
	/* Wake the receiving worker on this CPU (6.6); older kernels: EINVAL. */
	ioctl(s->child.listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	detect_root(s);
	rc = start_threads(s);
	if (rc)
		kill(s->child.pid, SIGKILL);	/* nobody would answer its execve */
	wrc = wait_child(s, wstatus);
	atomic_store(&g_child_pidfd, -1);
	kill_leftovers(s);
	stop_workers(s);
	if (s->have_interrupter) {
		pthread_mutex_lock(&s->blk_lock);
		pthread_cond_broadcast(&s->blk_cond);
		pthread_mutex_unlock(&s->blk_lock);
		pthread_join(s->interrupter, NULL);
	}
	if (s->have_ev_thread) {
		pthread_mutex_lock(&s->ev_lock);
		s->ev_stop = true;
		pthread_cond_signal(&s->ev_nonempty);
		pthread_mutex_unlock(&s->ev_lock);
		pthread_join(s->ev_thread, NULL);
	}
	return rc ? rc : wrc;
}

int sb_supervise(const struct sb_run_opts *o, int *wstatus)
{
	struct sb_filter f = { NULL, 0 };
	struct sb_sup *s;
	int rc, was_subreaper = 0;

	*wstatus = 0;
	s = sup_new(o);
	if (!s)
		return -ENOMEM;
	rc = install_intr_handler();
	if (rc == 0)
		rc = sb_filter_build(o->policy, o->mode, &f);
	if (rc)
		goto out;
	/* Orphans of the tree come to us, so the tree stays ours to judge
	 * (kill), to read (Yama's descendant rule) and to end. */
	prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	rc = sb_spawn(o, &f, &s->child);
	sb_filter_free(&f);
	if (rc == 0)
		rc = run(s, wstatus);
	prctl(PR_SET_CHILD_SUBREAPER, was_subreaper);
	lat_write();
out:
	sup_free(s);
	return rc;
}
