/* Test-only LD_PRELOAD object for `make check-valgrind` (never installed).
 *
 * Debian 12's valgrind (3.19) has no wrapper for seccomp(2), pidfd_open,
 * pidfd_getfd, pidfd_send_signal, openat2, the landlock calls or
 * mount_setattr: it answers them ENOSYS, and python-sb cannot supervise
 * anything without them.  This object interposes libc's syscall(), the only
 * way python-sb makes those calls, and performs exactly these numbers on the
 * real CPU through
 * VALGRIND_NON_SIMD_CALL1; every other number goes to libc's syscall() and
 * so through valgrind as usual.
 *
 * Two more gaps of valgrind 3.19, same treatment:
 *  - ptrace(PTRACE_GET_SYSCALL_INFO) (--attach): valgrind passes it to the
 *    kernel but does not know that the kernel writes the struct, so every
 *    field read afterwards would be "uninitialised".  After the call the
 *    bytes the kernel wrote (the return value, at most the size asked for)
 *    are marked defined, which is what a valgrind wrapper would do.
 *  - setrlimit(RLIMIT_NOFILE) (limit-nofile=, in the spawn's pre-exec
 *    child): valgrind refuses any change of that hard limit with EPERM, as
 *    it reserves descriptors of its own.  The child only execs the
 *    interpreter afterwards, natively, so the limit is set natively too.
 *
 * What memcheck therefore does not see: whether the arguments of these few
 * calls are defined (they only read memory: a path, a struct open_how, a BPF
 * program, a landlock attribute) and the descriptors they return (python-sb
 * runs with --track-fds=no).  No call of this set blocks for long except an
 * openat2 of a FIFO without O_NONBLOCK, which would hold valgrind's lock:
 * tests that do that are not in the valgrind set (tests/valgrind/README.md).
 *
 * Outside valgrind the object only forwards to libc.  Under valgrind its
 * constructor takes its own path out of LD_PRELOAD, so neither python-sb nor
 * the interpreter it starts sees it, and execve() drops the LD_PRELOAD that
 * valgrind would leave behind empty; python-sb-vg runs valgrind.bin, not
 * Debian's wrapper script, which would add LD_LIBRARY_PATH=/usr/lib/debug
 * and GLIBCXX_FORCE_NEW to the program's environment.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

#ifndef SYS_pidfd_send_signal
# define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif
#ifndef SYS_openat2
# define SYS_openat2 437
#endif
#ifndef SYS_pidfd_getfd
# define SYS_pidfd_getfd 438
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif
#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef SYS_landlock_create_ruleset
# define SYS_landlock_create_ruleset 444
# define SYS_landlock_add_rule 445
# define SYS_landlock_restrict_self 446
#endif

struct native_call {
	long nr;
	long a[6];
	long ret;	/* the kernel's answer: >= 0 or -errno */
};

/* Valgrind 3.19 answers these ENOSYS (its "unhandled syscall"). */
static int valgrind_lacks(long nr)
{
	switch (nr) {
	case SYS_seccomp:
	case SYS_pidfd_send_signal:
	case SYS_pidfd_open:
	case SYS_openat2:
	case SYS_pidfd_getfd:
	case SYS_landlock_create_ruleset:
	case SYS_landlock_add_rule:
	case SYS_landlock_restrict_self:
	case SYS_mount_setattr:
		return 1;
	default:
		return 0;
	}
}

/* Runs natively (valgrind's tid first): a raw syscall instruction, no libc
 * (errno lives in the client's TLS, not reachable from here). */
static long run_native(long tid, void *arg)
{
	struct native_call *c = arg;
	register long r10 __asm__("r10") = c->a[3];
	register long r8 __asm__("r8") = c->a[4];
	register long r9 __asm__("r9") = c->a[5];
	long ret;

	(void)tid;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(c->nr), "D"(c->a[0]), "S"(c->a[1]), "d"(c->a[2]), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	c->ret = ret;
	return 0;
}

static long native(long nr, const long a[6]);
long syscall(long nr, ...);

long syscall(long nr, ...)
{
	static long (*next)(long, ...);
	struct native_call c;
	va_list ap;

	memset(&c, 0, sizeof(c));
	c.nr = nr;
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		c.a[i] = va_arg(ap, long);
	va_end(ap);
	if (RUNNING_ON_VALGRIND && valgrind_lacks(nr))
		return native(nr, c.a);
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(nr, c.a[0], c.a[1], c.a[2], c.a[3], c.a[4], c.a[5]);
}

/* The kernel's answer, or -1 and errno. */
static long native(long nr, const long a[6])
{
	struct native_call c;

	memset(&c, 0, sizeof(c));
	c.nr = nr;
	memcpy(c.a, a, sizeof(c.a));
	VALGRIND_NON_SIMD_CALL1(run_native, &c);
	if (c.ret < 0 && c.ret > -4096) {
		errno = (int)-c.ret;
		return -1;
	}
	return c.ret;
}

int setrlimit(__rlimit_resource_t res, const struct rlimit *rl)
{
	static int (*next)(__rlimit_resource_t, const struct rlimit *);

	if (RUNNING_ON_VALGRIND && res == RLIMIT_NOFILE) {
		const long a[6] = { 0, RLIMIT_NOFILE, (long)rl, 0, 0, 0 };

		return (int)native(SYS_prlimit64, a);
	}
	if (!next)
		next = (int (*)(__rlimit_resource_t, const struct rlimit *))dlsym(RTLD_NEXT, "setrlimit");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(res, rl);
}

long ptrace(enum __ptrace_request req, ...)
{
	static long (*next)(enum __ptrace_request, ...);
	va_list ap;
	pid_t pid;
	void *addr, *data;
	long ret;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (!next)
		next = (long (*)(enum __ptrace_request, ...))dlsym(RTLD_NEXT, "ptrace");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	ret = next(req, pid, addr, data);
	if (RUNNING_ON_VALGRIND && (int)req == PTRACE_GET_SYSCALL_INFO && ret > 0 && data)
		VALGRIND_MAKE_MEM_DEFINED(data, (size_t)ret < (size_t)addr ? (size_t)ret : (size_t)addr);
	return ret;
}

/* Valgrind takes its own preloads out of LD_PRELOAD at an execve it does
 * not follow, but leaves the variable behind, empty: the interpreter would
 * see an LD_PRELOAD it never had.  Drop the entry when nothing else is in
 * it.  No allocation: this runs in the spawn's pre-exec child. */
static int only_valgrind_preloads(const char *v)
{
	while (*v) {
		size_t n = strcspn(v, ": ");

		if (n && !(memmem(v, n, "/vgpreload_", 11)))
			return 0;
		v += n;
		v += strspn(v, ": ");
	}
	return 1;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	static int (*next)(const char *, char *const[], char *const[]);
	static char *clean[4096];
	char *const *env = envp;

	if (!next)
		next = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (RUNNING_ON_VALGRIND && envp) {
		size_t i, n = 0;

		for (i = 0; envp[i] && n < sizeof(clean) / sizeof(clean[0]) - 1; i++)
			if (strncmp(envp[i], "LD_PRELOAD=", 11) || !only_valgrind_preloads(envp[i] + 11))
				clean[n++] = envp[i];
		clean[n] = NULL;
		if (!envp[i])
			env = clean;
	}
	return next(path, argv, env);
}

/* Take our own entry (whatever its spelling, by file name) out of
 * LD_PRELOAD, in place: the environment python-sb passes on must not
 * carry it. */
__attribute__((constructor)) static void forget_preload(void)
{
	char *v = getenv("LD_PRELOAD"), *out, *tok, *save = NULL, *copy;

	/* Natively this runs in valgrind's own launcher first, which must
	 * pass the variable on to the program it starts. */
	if (!RUNNING_ON_VALGRIND || !v || !strstr(v, "sb-vg-shim"))
		return;
	copy = strdup(v);
	if (!copy)
		return;
	out = v;
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (strstr(tok, "sb-vg-shim.so"))
			continue;
		if (out != v)
			*out++ = ':';
		memcpy(out, tok, strlen(tok));
		out += strlen(tok);
	}
	*out = '\0';
	free(copy);
	if (!*v)
		unsetenv("LD_PRELOAD");
}
