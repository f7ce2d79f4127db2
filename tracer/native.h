/* Native (C) frames of a thread, for `python-sb --stack PID --native`.
 * Built on libunwind; without it every call gives -ENOTSUP. */
#ifndef SB_TRACER_NATIVE_H
#define SB_TRACER_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_NATIVE_MAX_FRAMES 64

struct sb_native_frame {
	uint64_t ip;
	uint64_t off;		/* ip - start of name */
	char name[128];		/* "" when no symbol covers ip */
};

/* Unwind thread tid of process pid (tids as the caller sees them).  A thread
 * blocked in a system call is unwound from the registers in
 * /proc/PID/task/TID/syscall without stopping it (safe for a thread waiting
 * on a seccomp notification); a running one is stopped briefly with
 * PTRACE_SEIZE + PTRACE_INTERRUPT.  -ENOTSUP without libunwind. */
int sb_native_stack(pid_t pid, pid_t tid, struct sb_native_frame *f, size_t cap, size_t *n);

#endif
