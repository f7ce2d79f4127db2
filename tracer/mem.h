/* Reading another process's memory (SPEC §6).  One wrapper, one error
 * mapping: callers see 0, -EFAULT (address not mapped, or not plausible),
 * -ESRCH (the process or its address space is gone) or -EPERM (no ptrace
 * read access).  The descriptor pins the address space that was current at
 * open time, so a later execve or pid reuse gives -ESRCH, never memory of
 * another program. */
#ifndef SB_TRACER_MEM_H
#define SB_TRACER_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sb_mem {
	pid_t pid;
	int fd;		/* owned: /proc/PID/mem, -1 when closed */
};

/* One element of a scattered read (sb_mem_readv). */
struct sb_mem_iov {
	uint64_t addr;
	void *buf;
	size_t len;
	int err;	/* out: 0 or -errno for this element */
};

int sb_mem_open(struct sb_mem *m, pid_t pid);
void sb_mem_close(struct sb_mem *m);

/* All-or-nothing read of len bytes at addr. */
int sb_mem_read(const struct sb_mem *m, uint64_t addr, void *buf, size_t len);

/* Read what is readable: *got receives the number of leading bytes read.
 * Returns 0 when at least one byte was read. */
int sb_mem_read_some(const struct sb_mem *m, uint64_t addr, void *buf, size_t len, size_t *got);

/* Several reads with as few system calls as possible (process_vm_readv,
 * falling back to one pread per element).  Returns 0, or -ESRCH/-EPERM when
 * nothing could be read at all; per-element results are in iov[i].err. */
int sb_mem_readv(const struct sb_mem *m, struct sb_mem_iov *iov, size_t n);

/* A user-space address that can hold len bytes (cheap filter before a
 * system call on a forged pointer). */
bool sb_mem_plausible(uint64_t addr, size_t len);

/* Typed read: the size comes from the destination. */
#define sb_mem_get(m, addr, dst) sb_mem_read((m), (addr), (dst), sizeof(*(dst)))

#endif
