/* Native frames with libunwind (python-frames.md §12).  Two paths:
 *  - the thread is blocked in a system call: /proc/PID/task/TID/syscall
 *    gives its stack and instruction pointers; memory comes from
 *    /proc/PID/mem and unwind tables from the ELF files (the _UPT_ helpers
 *    only read /proc/PID/maps and the files), so the thread is not stopped;
 *  - it runs: PTRACE_SEIZE + PTRACE_INTERRUPT, the stock ptrace accessors,
 *    detach.  Never used on a thread in a system call, which may be a
 *    seccomp notification wait that an interrupt would abort.
 *
 * libunwind is loaded with dlopen() on first use: python-sb links against
 * it only for --stack and --attach, and four shared libraries (it pulls in
 * liblzma) cost every sandboxed run ~0.15 ms of start-up. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "native.h"

#ifndef HAVE_LIBUNWIND

int sb_native_stack(pid_t pid, pid_t tid, struct sb_native_frame *f, size_t cap, size_t *n)
{
	*n = 0;
	return -ENOTSUP;
}

#else

#include <dlfcn.h>
#include <libunwind-ptrace.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* The functions used, by the names the headers' macros give them
 * (_Ux86_64_step for unw_step, ...). */
#define SB_STR_(x) #x
#define SB_STR(x) SB_STR_(x)

static struct {
	int (*init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
	int (*get_reg)(unw_cursor_t *, int, unw_word_t *);
	int (*get_proc_name)(unw_cursor_t *, char *, size_t, unw_word_t *);
	int (*step)(unw_cursor_t *);
	unw_addr_space_t (*create_addr_space)(unw_accessors_t *, int);
	void (*destroy_addr_space)(unw_addr_space_t);
	void *(*upt_create)(pid_t);
	void (*upt_destroy)(void *);
	unw_accessors_t *upt_accessors;
	bool ok;
} U;

static pthread_once_t u_once = PTHREAD_ONCE_INIT;

static void *u_open(const char *const *names, size_t n)
{
	void *h = NULL;

	/* Global: libunwind-ptrace leaves the symbols it takes from the
	 * others undeclared (no NEEDED entries), the program's link supplies
	 * them. */
	for (size_t i = 0; !h && i < n; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	return h;
}

#define U_OPEN(...) u_open((const char *const[]){ __VA_ARGS__ }, \
			   sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void u_load(void)
{
	void *gen, *pt;

	if (!U_OPEN("liblzma.so.5", "liblzma.so") || !(gen = U_OPEN("libunwind-x86_64.so.8", "libunwind-x86_64.so")) ||
	    !(pt = U_OPEN("libunwind-ptrace.so.0", "libunwind-ptrace.so")))
		return;
	/* POSIX: a function pointer goes through void * from dlsym(). */
	*(void **)&U.init_remote = dlsym(gen, SB_STR(unw_init_remote));
	*(void **)&U.get_reg = dlsym(gen, SB_STR(unw_get_reg));
	*(void **)&U.get_proc_name = dlsym(gen, SB_STR(unw_get_proc_name));
	*(void **)&U.step = dlsym(gen, SB_STR(unw_step));
	*(void **)&U.create_addr_space = dlsym(gen, SB_STR(unw_create_addr_space));
	*(void **)&U.destroy_addr_space = dlsym(gen, SB_STR(unw_destroy_addr_space));
	*(void **)&U.upt_create = dlsym(pt, "_UPT_create");
	*(void **)&U.upt_destroy = dlsym(pt, "_UPT_destroy");
	U.upt_accessors = dlsym(pt, "_UPT_accessors");
	U.ok = U.init_remote && U.get_reg && U.get_proc_name && U.step && U.create_addr_space &&
	       U.destroy_addr_space && U.upt_create && U.upt_destroy && U.upt_accessors;
	/* The handles stay open: the functions are used until exit. */
}

/* _UPT_find_proc_info hands its own argument (the UPT handle) back to
 * access_mem, so the registers and the memory descriptor travel in a
 * thread-local instead. */
struct regs_ctx {
	int memfd;
	unw_word_t sp, pc;
};

static __thread struct regs_ctx *tl_ctx;

static int regs_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	if (write || !tl_ctx)
		return -UNW_EINVAL;
	if (pread(tl_ctx->memfd, val, sizeof(*val), (off_t)addr) != (ssize_t)sizeof(*val))
		return -UNW_EINVAL;
	return 0;
}

static int regs_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	if (write || !tl_ctx)
		return -UNW_EBADREG;
	if (reg == UNW_REG_IP)
		*val = tl_ctx->pc;
	else if (reg == UNW_REG_SP)
		*val = tl_ctx->sp;
	else
		return -UNW_EBADREG;	/* unknown without stopping the thread */
	return 0;
}

static int regs_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int regs_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

/* The ptrace accessors' unwind-table and name lookups (they only read
 * /proc/PID/maps and the files) with our memory and register access. */
static unw_accessors_t regs_accessors(void)
{
	unw_accessors_t a = *U.upt_accessors;

	a.access_mem = regs_access_mem;
	a.access_reg = regs_access_reg;
	a.access_fpreg = regs_access_fpreg;
	a.resume = regs_resume;
	return a;
}

static void unwind(unw_addr_space_t as, void *upt, struct sb_native_frame *f, size_t cap, size_t *n)
{
	unw_cursor_t c;

	*n = 0;
	if (U.init_remote(&c, as, upt) < 0)
		return;
	do {
		unw_word_t ip = 0, off = 0;

		if (U.get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		f[*n].ip = ip;
		f[*n].name[0] = '\0';
		f[*n].off = 0;
		if (U.get_proc_name(&c, f[*n].name, sizeof(f[*n].name), &off) == 0)
			f[*n].off = off;
		else
			f[*n].name[0] = '\0';
		(*n)++;
	} while (*n < cap && U.step(&c) > 0);
}

/* "nr a0..a5 sp pc" for a thread in a system call, "running" otherwise. */
static int syscall_regs(pid_t pid, pid_t tid, unw_word_t *sp, unw_word_t *pc)
{
	char path[80], buf[512];
	unsigned long long v[9];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -EIO;
	buf[r] = '\0';
	if (sscanf(buf, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", (long long *)&v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
		return -EBUSY;	/* running, or blocked outside a system call */
	*sp = v[7];
	*pc = v[8];
	return 0;
}

static int unwind_blocked(pid_t pid, pid_t tid, unw_word_t sp, unw_word_t pc,
			  struct sb_native_frame *f, size_t cap, size_t *n)
{
	struct regs_ctx ctx = { .sp = sp, .pc = pc };
	unw_accessors_t acc = regs_accessors();
	char path[64];
	unw_addr_space_t as;
	void *upt;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	ctx.memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (ctx.memfd < 0)
		return -errno;
	as = U.create_addr_space(&acc, 0);
	upt = U.upt_create(tid);
	if (as && upt) {
		tl_ctx = &ctx;
		unwind(as, upt, f, cap, n);
		tl_ctx = NULL;
	}
	if (upt)
		U.upt_destroy(upt);
	if (as)
		U.destroy_addr_space(as);
	close(ctx.memfd);
	return as && upt ? 0 : -ENOMEM;
}

static int unwind_ptrace(pid_t tid, struct sb_native_frame *f, size_t cap, size_t *n)
{
	unw_addr_space_t as;
	void *upt;
	int status, rc = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 || waitpid(tid, &status, __WALL) < 0) {
		rc = -errno;
		goto out;
	}
	as = U.create_addr_space(U.upt_accessors, 0);
	upt = U.upt_create(tid);
	if (as && upt)
		unwind(as, upt, f, cap, n);
	else
		rc = -ENOMEM;
	if (upt)
		U.upt_destroy(upt);
	if (as)
		U.destroy_addr_space(as);
out:
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return rc;
}

int sb_native_stack(pid_t pid, pid_t tid, struct sb_native_frame *f, size_t cap, size_t *n)
{
	unw_word_t sp, pc;
	int rc;

	*n = 0;
	pthread_once(&u_once, u_load);
	if (!U.ok)
		return -ELIBACC;	/* built with it, not installed here */
	if (cap > SB_NATIVE_MAX_FRAMES)
		cap = SB_NATIVE_MAX_FRAMES;
	rc = syscall_regs(pid, tid, &sp, &pc);
	if (rc == 0)
		return unwind_blocked(pid, tid, sp, pc, f, cap, n);
	if (rc != -EBUSY)
		return rc;
	return unwind_ptrace(tid, f, cap, n);
}

#endif
