/* Red-team attacks in native code, loaded into the sandboxed interpreter with
 * ctypes (tests/redteam/attacks/): the same process the supervisor
 * watches, without any Python-level guard in the way.
 *
 * Every attack tries to get something the policy refuses and *prints what it
 * got* (file content, a marker line, a received descriptor's target): the
 * harness (tests/redteam/rt.py) decides by looking for the canaries in the
 * output, in the files, at its loopback listeners.  Nothing here judges the
 * outcome.  Each function returns 0; errors are printed for the log only.
 * "RT-UNSUPPORTED <what>" means the kernel lacks the feature: the harness
 * then checks the bare control and skips the attack when it cannot work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/inet_diag.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_native.h"


/* ---- output -------------------------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[4200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(1, line, (size_t)n);
}

static void say_err(const char *what)
{
	say("%s ERR %s", what, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
}

/* Print what a descriptor yields (the harness looks for canaries in it). */
static void show_fd(const char *what, int fd)
{
	char buf[4096];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		say_err(what);
		return;
	}
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] == '\0')
			buf[i] = ' ';
	say("%s READ %s", what, buf);
}

static void show_path(const char *what, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		say_err(what);
		return;
	}
	show_fd(what, fd);
	close(fd);
}

/* Create MARKER and say so: proof that code ran where it must not. */
static void plant(const char *marker, const char *who)
{
	int fd;

	say("RT-CHILD-RAN %s", who);
	if (!marker || !*marker)
		return;
	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, who, strlen(who));
		close(fd);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- io_uring: operations that would skip syscall entry ------------------------- */

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	uint8_t *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -1;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submit one prepared SQE and wait for its completion: its result. */
static int ring_run(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	int res;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

RT_API int rt_io_uring_read(const char *path)
{
	static char buf[4096];
	struct io_uring_sqe sqe;
	struct ring r;
	int fd, n;

	if (ring_setup(&r) < 0) {
		if (errno == ENOSYS && syscall(__NR_io_uring_setup, 0, NULL) < 0 && errno == ENOSYS)
			say("io_uring ERR ENOSYS");
		else
			say_err("io_uring");
		return 0;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t)path;
	sqe.open_flags = O_RDONLY;
	fd = ring_run(&r, &sqe);
	if (fd < 0) {
		say("io_uring openat ERR %d", fd);
		return 0;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (uint64_t)(uintptr_t)buf;
	sqe.len = sizeof(buf) - 1;
	n = ring_run(&r, &sqe);
	if (n < 0) {
		say("io_uring read ERR %d", n);
		return 0;
	}
	buf[n] = '\0';
	say("io_uring READ %s", buf);
	return 0;
}

/* ---- foreign system call ABIs --------------------------------------------------- */

/* Memory below 4 GiB: 32-bit ABIs truncate pointers. */
static char *low_page(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

RT_API int rt_x32_read(const char *path)
{
	char *low = low_page();
	long fd, n;

	if (!low)
		return say_err("x32 mmap"), 0;
	snprintf(low, 4096, "%s", path);
	/* x32 open (0x40000000 | 2) and read (0x40000000 | 0). */
	fd = syscall(0x40000000L | 2, low, O_RDONLY, 0);
	if (fd < 0) {
		if (errno == ENOSYS)
			say("RT-UNSUPPORTED x32");
		return say_err("x32 open"), 0;
	}
	n = syscall(0x40000000L | 0, fd, low + 4096, 4095);
	if (n < 0)
		return say_err("x32 read"), 0;
	low[4096 + n] = '\0';
	say("x32 READ %s", low + 4096);
	return 0;
}

RT_API int rt_int80_read(const char *path)
{
#if defined(__x86_64__)
	char *low = low_page();
	long fd, n;

	if (!low)
		return say_err("int80 mmap"), 0;
	snprintf(low, 4096, "%s", path);
	/* i386 open = 5, read = 3; arguments in ebx, ecx, edx. */
	__asm__ volatile("int $0x80" : "=a"(fd) : "a"(5L), "b"(low), "c"((long)O_RDONLY), "d"(0L)
			 : "memory", "r8", "r9", "r10", "r11");
	if (fd < 0) {
		if (fd == -ENOSYS)
			say("RT-UNSUPPORTED int80");
		say("int80 open ERR %ld", fd);
		return 0;
	}
	__asm__ volatile("int $0x80" : "=a"(n) : "a"(3L), "b"(fd), "c"(low + 4096), "d"(4095L)
			 : "memory", "r8", "r9", "r10", "r11");
	if (n < 0) {
		say("int80 read ERR %ld", n);
		return 0;
	}
	low[4096 + n] = '\0';
	say("int80 READ %s", low + 4096);
#else
	(void)path;
	say("RT-UNSUPPORTED int80 (not x86_64)");
#endif
	return 0;
}

/* ---- openat2 and handles --------------------------------------------------------- */

RT_API int rt_openat2(const char *dir, const char *rel, unsigned long long resolve)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = resolve };
	int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (d < 0)
		return say_err("openat2 dir"), 0;
	fd = (int)syscall(SYS_openat2, d, rel, &how, sizeof(how));
	close(d);
	if (fd < 0)
		return say_err("openat2"), 0;
	show_fd("openat2", fd);
	close(fd);
	return 0;
}

/* open_by_handle_at with a handle for the secret (computed by the harness,
 * which may: it is outside the sandbox), relative to an exposed file's mount. */
RT_API int rt_open_by_handle(const char *mount_path, const char *handle_hex, int handle_type)
{
	union { struct file_handle fh; unsigned char raw[sizeof(struct file_handle) + MAX_HANDLE_SZ]; } h;
	size_t n = strlen(handle_hex) / 2, off = offsetof(struct file_handle, f_handle);
	int mfd, fd;

	if (n > MAX_HANDLE_SZ)
		return say("open_by_handle ERR handle too long"), 0;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(handle_hex + 2 * i, "%2x", &v) != 1)
			return say("open_by_handle ERR bad handle"), 0;
		h.raw[off + i] = (unsigned char)v;
	}
	h.fh.handle_bytes = (unsigned)n;
	h.fh.handle_type = handle_type;
	mfd = open(mount_path, O_RDONLY | O_CLOEXEC);
	if (mfd < 0)
		return say_err("open_by_handle mount fd"), 0;
	fd = (int)syscall(SYS_open_by_handle_at, mfd, &h.fh, O_RDONLY);
	close(mfd);
	if (fd < 0)
		return say_err("open_by_handle_at"), 0;
	show_fd("open_by_handle_at", fd);
	close(fd);
	return 0;
}

/* ---- a nested seccomp listener that would CONTINUE everything -------------------- */

static int nested_listener = -1;

static void *nested_answer(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct pollfd p;

	(void)arg;
	for (int i = 0; i < 200; i++) {
		p.fd = __atomic_load_n(&nested_listener, __ATOMIC_ACQUIRE);
		if (p.fd < 0) {
			usleep(5000);
			continue;
		}
		p.events = POLLIN;
		if (poll(&p, 1, 20) <= 0)
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(p.fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)ioctl(p.fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return NULL;
}

RT_API int rt_seccomp_nested(const char *path, int via_prctl)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	pthread_t th;
	long fd;

	if (pthread_create(&th, NULL, nested_answer, NULL))
		return say_err("pthread_create"), 0;
	if (via_prctl) {
		/* prctl cannot ask for a listener: the filter would make every
		 * openat wait forever, so ask for an ALLOW-all one instead. */
		f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		fd = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	} else {
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	if (fd < 0)
		say_err(via_prctl ? "prctl_seccomp" : "seccomp_listener");
	else
		say("RT-NESTED-FILTER installed %ld", fd);
	if (fd > 0 && !via_prctl)
		__atomic_store_n(&nested_listener, (int)fd, __ATOMIC_RELEASE);
	show_path("nested open", path);
	pthread_join(th, NULL);
	return 0;
}

/* ---- personality, userfaultfd ---------------------------------------------------- */

RT_API int rt_personality(void)
{
	int before = personality(0xffffffff), rc;

	rc = personality(PER_LINUX | READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE);
	if (rc < 0)
		say_err("personality");
	say("PERSONA before=%#x after=%#x", (unsigned)before, (unsigned)personality(0xffffffff));
	if ((personality(0xffffffff) & (READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE)) != 0)
		say("RT-PERSONA-CHANGED");
	return 0;
}

RT_API int rt_userfaultfd(void)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0)
		say("RT-UFFD-FD syscall %ld", fd);
	else
		say_err("userfaultfd");
	fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		long u = ioctl((int)fd, _IO(0xAA, 0x00), O_CLOEXEC);	/* USERFAULTFD_IOC_NEW */

		if (u >= 0)
			say("RT-UFFD-FD dev %ld", u);
		else
			say_err("USERFAULTFD_IOC_NEW");
	} else {
		say_err("open /dev/userfaultfd");
	}
	return 0;
}

/* ---- executing what exec= does not list ------------------------------------------ */

static char *const *exec_argv(const char *prog, const char *marker)
{
	static char *argv[3];

	argv[0] = (char *)prog;
	argv[1] = (char *)marker;
	argv[2] = NULL;
	return argv;
}

/* memfd_create, copy an executable in, then exec the memfd (in place). */
RT_API int rt_exec_memfd(const char *src, const char *marker, int via_proc)
{
	char buf[65536], path[64];
	int in = open(src, O_RDONLY | O_CLOEXEC), mfd;
	ssize_t n;

	if (in < 0)
		return say_err("memfd source"), 0;
	mfd = (int)syscall(SYS_memfd_create, "rt", 0);
	if (mfd < 0)
		return say_err("memfd_create"), 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n)
			return say_err("memfd write"), 0;
	close(in);
	if (via_proc) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
		execve(path, exec_argv("rt_marker", marker), environ);
	} else {
		syscall(SYS_execveat, mfd, "", exec_argv("rt_marker", marker), environ, AT_EMPTY_PATH);
	}
	say_err("exec memfd");
	return 0;
}

RT_API int rt_vfork_exec(const char *prog, const char *marker)
{
	int st = 0;
	pid_t pid = vfork();

	if (pid == 0) {
		execve(prog, exec_argv(prog, marker), environ);
		_exit(127);
	}
	if (pid < 0)
		return say_err("vfork"), 0;
	waitpid(pid, &st, 0);
	say("vfork child status %#x", st);
	return 0;
}

static int child_fn(void *marker)
{
	plant(marker, "namespaced child");
	return 0;
}

/* clone3 and clone with namespace flags: the child must never run. */
RT_API int rt_clone_ns(const char *marker, int use_clone3)
{
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET;
	long pid;

	if (use_clone3) {
		struct clone_args a = { .flags = flags, .exit_signal = SIGCHLD };

		pid = syscall(SYS_clone3, &a, sizeof(a));
		if (pid == 0) {
			child_fn((void *)marker);
			_exit(0);
		}
	} else {
		static char stack[65536] __attribute__((aligned(16)));

		pid = clone(child_fn, stack + sizeof(stack), (int)flags | SIGCHLD, (void *)marker);
	}
	if (pid < 0)
		return say_err(use_clone3 ? "clone3" : "clone"), 0;
	waitpid((pid_t)pid, NULL, __WALL);
	return 0;
}

RT_API int rt_unshare(void)
{
	char before[64] = "", after[64] = "";

	(void)!readlink("/proc/self/ns/user", before, sizeof(before) - 1);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		say_err("unshare");
	(void)!readlink("/proc/self/ns/user", after, sizeof(after) - 1);
	if (strcmp(before, after))
		say("RT-NS-CHANGED %s -> %s", before, after);
	return 0;
}

/* ---- other processes' memory and control ---------------------------------------- */

static volatile int rt_flag;

/* Child A: waits up to 1 s for rt_flag to change under it. */
static void flag_watcher(const char *marker)
{
	double end = now() + 1;

	while (now() < end) {
		if (rt_flag != 0) {
			plant(marker, "sibling memory changed");
			_exit(0);
		}
		usleep(1000);
	}
	_exit(0);
}

/* Child B writes child A's rt_flag with ptrace (how=0) or process_vm_writev (1). */
static void flag_writer(pid_t a, int how)
{
	int one = 0x5a5a;

	usleep(100000);
	if (how == 0) {
		if (ptrace(PTRACE_ATTACH, a, NULL, NULL) < 0) {
			say_err("ptrace attach");
			_exit(0);
		}
		waitpid(a, NULL, __WALL);
		if (ptrace(PTRACE_POKEDATA, a, (void *)&rt_flag, (void *)(long)one) < 0)
			say_err("ptrace poke");
		ptrace(PTRACE_DETACH, a, NULL, NULL);
	} else {
		struct iovec l = { &one, sizeof(one) }, r = { (void *)&rt_flag, sizeof(one) };

		if (process_vm_writev(a, &l, 1, &r, 1, 0) < 0)
			say_err("process_vm_writev");
	}
	_exit(0);
}

RT_API int rt_poke_sibling(const char *marker, int how)
{
	pid_t a, b;

	rt_flag = 0;
	a = fork();
	if (a == 0)
		flag_watcher(marker);
	if (a < 0)
		return say_err("fork"), 0;
	b = fork();
	if (b == 0)
		flag_writer(a, how);
	if (b < 0)
		say_err("fork");
	else
		waitpid(b, NULL, 0);
	waitpid(a, NULL, 0);
	return 0;
}

/* Read another process's memory (the supervisor's environment). */
RT_API int rt_peek(int pid, unsigned long addr, unsigned long len, int how)
{
	static char buf[8192];
	size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	ssize_t got = -1;

	if (how == 0) {
		struct iovec l = { buf, n }, r = { (void *)addr, n };

		got = process_vm_readv(pid, &l, 1, &r, 1, 0);
	} else if (how == 1) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			got = pread(fd, buf, n, (off_t)addr);
			close(fd);
		}
	} else {
		if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0) {
			waitpid(pid, NULL, __WALL);
			for (got = 0; (size_t)got + sizeof(long) <= n; got += (ssize_t)sizeof(long)) {
				long w = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + (size_t)got), NULL);

				memcpy(buf + got, &w, sizeof(w));
			}
			ptrace(PTRACE_DETACH, pid, NULL, NULL);
		}
	}
	if (got < 0)
		return say_err("peek"), 0;
	for (ssize_t i = 0; i < got; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	buf[got] = '\0';
	say("peek READ %s", buf);
	return 0;
}

/* SIGIO's owner: the kernel signals whoever F_SETOWN names, no kill() call. */
RT_API int rt_fsetown_signal(int pid, int sig)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return say_err("pipe"), 0;
	if (fcntl(p[0], F_SETOWN, pid) < 0)
		say_err("F_SETOWN");
	if (fcntl(p[0], F_SETSIG, sig) < 0)
		say_err("F_SETSIG");
	if (fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) < 0)
		say_err("O_ASYNC");
	(void)!write(p[1], "x", 1);
	usleep(100000);
	close(p[0]);
	close(p[1]);
	say("fsetown done");
	return 0;
}

/* Fork up to MAX children that each live HOLD_MS; prints how many started. */
RT_API int rt_fork_bomb(int max, int hold_ms)
{
	int started = 0, err = 0;

	for (int i = 0; i < max; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			usleep((useconds_t)hold_ms * 1000);
			_exit(0);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		started++;
	}
	say("FORKS %d err=%s", started, err ? strerrorname_np(err) : "none");
	while (waitpid(-1, NULL, 0) > 0)
		;
	return 0;
}

/* N short-lived children, one at a time: each exits at once with status 7;
 * prints how many did not end that way. */
RT_API int rt_fork_many(int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int st = 0;
		pid_t pid = fork();

		if (pid == 0)
			_exit(7);
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
			bad++;
	}
	if (bad)
		say("RT-ANOMALY %d of %d children did not exit with status 7", bad, n);
	say("forked %d", n);
	return 0;
}

/* A child of the *supervisor* (CLONE_PARENT) that outlives the program and
 * later says so on the inherited stdout. */
RT_API int rt_clone_parent_linger(int delay_ms)
{
	long pid = syscall(SYS_clone, CLONE_PARENT, 0, 0, 0, 0);

	if (pid == 0) {
		usleep((useconds_t)delay_ms * 1000);
		say("RT-ORPHAN-ALIVE clone_parent");
		_exit(0);
	}
	if (pid < 0)
		say_err("clone(CLONE_PARENT)");
	return 0;
}
