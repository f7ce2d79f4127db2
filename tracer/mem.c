/* Remote memory reads; see mem.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mem.h"

/* x86-64 and aarch64 user space ends below 2^56 even with 5-level paging;
 * anything above is a forged pointer and is refused without a system call. */
#define SB_MEM_USER_TOP (UINT64_C(1) << 56)
#define SB_MEM_IOV_BATCH 64

bool sb_mem_plausible(uint64_t addr, size_t len)
{
	if (addr < 4096 || len > SB_MEM_USER_TOP)
		return false;
	return addr < SB_MEM_USER_TOP - len;
}

static int mem_errno(int e)
{
	switch (e) {
	case ESRCH:
		return -ESRCH;
	case EPERM:
	case EACCES:
		return -EPERM;
	default:
		return -EFAULT;
	}
}

int sb_mem_open(struct sb_mem *m, pid_t pid)
{
	char path[64];

	m->pid = pid;
	m->fd = -1;
	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return errno == ENOENT ? -ESRCH : mem_errno(errno);
	return 0;
}

void sb_mem_close(struct sb_mem *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

int sb_mem_read_some(const struct sb_mem *m, uint64_t addr, void *buf, size_t len, size_t *got)
{
	size_t done = 0;

	*got = 0;
	if (len == 0)
		return 0;
	if (!sb_mem_plausible(addr, len))
		return -EFAULT;
	/* /proc/PID/mem may return short counts at mapping boundaries: go on
	 * until the buffer is full or the next byte is unreadable.  Each pass
	 * either makes progress or stops, so the loop is bounded by len. */
	while (done < len) {
		ssize_t r = pread(m->fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (done)
				break;
			return mem_errno(errno);
		}
		if (r == 0) {
			/* EOF: the address space has gone (exit, execve). */
			if (done)
				break;
			return -ESRCH;
		}
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

int sb_mem_read(const struct sb_mem *m, uint64_t addr, void *buf, size_t len)
{
	size_t got;
	int rc = sb_mem_read_some(m, addr, buf, len, &got);

	if (rc < 0)
		return rc;
	return got == len ? 0 : -EFAULT;
}

static void readv_fallback(const struct sb_mem *m, struct sb_mem_iov *iov, size_t n)
{
	for (size_t i = 0; i < n; i++)
		iov[i].err = sb_mem_read(m, iov[i].addr, iov[i].buf, iov[i].len);
}

/* One process_vm_readv over iov[0..n): elements before the first failing one
 * are done; that one is marked -EFAULT.  Returns the number of elements
 * consumed (≥ 1), or -errno when the call itself failed. */
static ssize_t readv_batch(const struct sb_mem *m, struct sb_mem_iov *iov, size_t n)
{
	struct iovec local[SB_MEM_IOV_BATCH], remote[SB_MEM_IOV_BATCH];
	size_t k = n < SB_MEM_IOV_BATCH ? n : SB_MEM_IOV_BATCH;
	ssize_t r;
	size_t i, sum = 0;

	if (k == 0)
		return -EINVAL;
	for (i = 0; i < k; i++) {
		local[i].iov_base = iov[i].buf;
		local[i].iov_len = iov[i].len;
		remote[i].iov_base = (void *)(uintptr_t)iov[i].addr;
		remote[i].iov_len = iov[i].len;
	}
	r = process_vm_readv(m->pid, local, k, remote, k, 0);
	if (r < 0)
		return -errno;
	for (i = 0; i < k; i++) {
		if (sum + iov[i].len > (size_t)r)
			break;
		sum += iov[i].len;
		iov[i].err = 0;
	}
	if (i < k) {
		iov[i].err = -EFAULT;
		i++;
	}
	return (ssize_t)i;
}

int sb_mem_readv(const struct sb_mem *m, struct sb_mem_iov *iov, size_t n)
{
	size_t i = 0, ok = 0;
	bool by_pid = false;

	while (i < n) {
		ssize_t r;

		if (!sb_mem_plausible(iov[i].addr, iov[i].len) || iov[i].len == 0) {
			iov[i].err = iov[i].len ? -EFAULT : 0;
			ok += iov[i].len == 0;
			i++;
			continue;
		}
		/* Keep implausible elements out of the batch: one bad pointer
		 * would otherwise cut the batch short at every call. */
		size_t k = 0;
		while (i + k < n && k < SB_MEM_IOV_BATCH && iov[i + k].len &&
		       sb_mem_plausible(iov[i + k].addr, iov[i + k].len))
			k++;
		r = readv_batch(m, iov + i, k);
		if (r <= 0) {
			if (r == -ESRCH && ok == 0 && i == 0)
				return -ESRCH;
			/* ENOSYS, EPERM under some LSMs: the descriptor may still
			 * work, it was opened with the same check. */
			readv_fallback(m, iov + i, k);
			r = (ssize_t)k;
		} else {
			by_pid = true;
		}
		for (size_t j = i; j < i + (size_t)r; j++)
			ok += iov[j].err == 0;
		i += (size_t)r;
	}
	/* process_vm_readv names the process by pid: if the descriptor's
	 * address space is gone now (execve, exit and pid reuse), what it read
	 * may belong to another program. */
	if (by_pid && ok) {
		char c;
		for (size_t j = 0; j < n; j++) {
			if (iov[j].err == 0 && iov[j].len) {
				int rc = sb_mem_read(m, iov[j].addr, &c, 1);
				if (rc == -ESRCH || rc == -EPERM)
					return rc;
				break;
			}
		}
	}
	if (ok == 0 && n > 0) {
		/* Tell a vanished process from a batch of bad pointers. */
		char c;
		int rc = sb_mem_read(m, iov[0].addr, &c, 1);
		if (rc == -ESRCH || rc == -EPERM)
			return rc;
	}
	return 0;
}
