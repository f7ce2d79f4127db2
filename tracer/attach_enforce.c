/* Attach mode: refusing a call through ptrace (--enforce).
 *
 * At the syscall-entry stop the call number is set to -1, which the kernel
 * skips (it runs no system call and leaves the return register alone); at
 * the syscall-exit stop the return register gets -errno.  On x86_64 the
 * return is also preset at entry, so that a tracee detached between the two
 * stops still sees the refusal rather than ENOSYS.
 *
 * This is best effort by nature (doc/attach.md): the decision was taken on
 * memory and descriptors another thread of the program can change between
 * our check and the kernel's lookup, and a call made while we are not
 * attached is not seen at all.  The supervisor's emulation has neither
 * hole; --enforce is for stopping a live process from reaching something
 * now, not for containing a hostile one.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "attach_int.h"

#if defined(__x86_64__)

bool sb_aenforce_supported(void)
{
	return true;
}

static int get_regs(pid_t tid, struct user_regs_struct *r)
{
	struct iovec io = { r, sizeof(*r) };

	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &io) < 0 ? -errno : 0;
}

static int set_regs(pid_t tid, struct user_regs_struct *r)
{
	struct iovec io = { r, sizeof(*r) };

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &io) < 0 ? -errno : 0;
}

int sb_aenforce_entry(pid_t tid, int err)
{
	struct user_regs_struct r;
	int rc = get_regs(tid, &r);

	if (rc)
		return rc;
	r.orig_rax = (unsigned long long)-1;
	r.rax = (unsigned long long)(long long)-err;
	return set_regs(tid, &r);
}

int sb_aenforce_exit(pid_t tid, int err)
{
	struct user_regs_struct r;
	int rc = get_regs(tid, &r);

	if (rc)
		return rc;
	r.rax = (unsigned long long)(long long)-err;
	return set_regs(tid, &r);
}

#elif defined(__aarch64__)

#ifndef NT_ARM_SYSTEM_CALL
# define NT_ARM_SYSTEM_CALL 0x404
#endif

bool sb_aenforce_supported(void)
{
	return true;
}

int sb_aenforce_entry(pid_t tid, int err)
{
	int nr = -1;
	struct iovec io = { &nr, sizeof(nr) };

	(void)err;	/* x0 holds the first argument until the exit stop */
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &io) < 0 ? -errno : 0;
}

int sb_aenforce_exit(pid_t tid, int err)
{
	struct user_regs_struct r;
	struct iovec io = { &r, sizeof(r) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &io) < 0)
		return -errno;
	r.regs[0] = (unsigned long long)(long long)-err;
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &io) < 0 ? -errno : 0;
}

#else

bool sb_aenforce_supported(void)
{
	return false;
}

int sb_aenforce_entry(pid_t tid, int err)
{
	(void)tid;
	(void)err;
	return -EOPNOTSUPP;
}

int sb_aenforce_exit(pid_t tid, int err)
{
	(void)tid;
	(void)err;
	return -EOPNOTSUPP;
}

#endif
