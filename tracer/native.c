/* Native frames with libunwind (python-frames.md §12).  Two paths:
 *  - the thread is blocked in a system call: /proc/PID/task/TID/syscall
 *    gives its stack and instruction pointers; memory comes from
 *    /proc/PID/mem and unwind tables from the ELF files (the _UPT_ helpers
 *    only read /proc/PID/maps and the files), so the thread is not stopped;
 *  - it runs: PTRACE_SEIZE + PTRACE_INTERRUPT, the stock ptrace accessors,
 *    detach.  Never used on a thread in a system call, which may be a
 *    seccomp notification wait that an interrupt would abort. */
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

#include <libunwind-ptrace.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

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

static unw_accessors_t regs_accessors = {
	.find_proc_info = _UPT_find_proc_info,
	.put_unwind_info = _UPT_put_unwind_info,
	.get_dyn_info_list_addr = _UPT_get_dyn_info_list_addr,
	.access_mem = regs_access_mem,
	.access_reg = regs_access_reg,
	.access_fpreg = regs_access_fpreg,
	.resume = regs_resume,
	.get_proc_name = _UPT_get_proc_name,
};

static void unwind(unw_addr_space_t as, void *upt, struct sb_native_frame *f, size_t cap, size_t *n)
{
	unw_cursor_t c;

	*n = 0;
	if (unw_init_remote(&c, as, upt) < 0)
		return;
	do {
		unw_word_t ip = 0, off = 0;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		f[*n].ip = ip;
		f[*n].name[0] = '\0';
		f[*n].off = 0;
		if (unw_get_proc_name(&c, f[*n].name, sizeof(f[*n].name), &off) == 0)
			f[*n].off = off;
		else
			f[*n].name[0] = '\0';
		(*n)++;
	} while (*n < cap && unw_step(&c) > 0);
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
	char path[64];
	unw_addr_space_t as;
	void *upt;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	ctx.memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (ctx.memfd < 0)
		return -errno;
	as = unw_create_addr_space(&regs_accessors, 0);
	upt = _UPT_create(tid);
	if (as && upt) {
		tl_ctx = &ctx;
		unwind(as, upt, f, cap, n);
		tl_ctx = NULL;
	}
	if (upt)
		_UPT_destroy(upt);
	if (as)
		unw_destroy_addr_space(as);
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
	as = unw_create_addr_space(&_UPT_accessors, 0);
	upt = _UPT_create(tid);
	if (as && upt)
		unwind(as, upt, f, cap, n);
	else
		rc = -ENOMEM;
	if (upt)
		_UPT_destroy(upt);
	if (as)
		unw_destroy_addr_space(as);
out:
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return rc;
}

int sb_native_stack(pid_t pid, pid_t tid, struct sb_native_frame *f, size_t cap, size_t *n)
{
	unw_word_t sp, pc;
	int rc;

	*n = 0;
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
