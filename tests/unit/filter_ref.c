/* The reference for tests/unit/check_filter.c: the filter as python-sb built
 * it with libseccomp 2.5 until src/filter.c got its own BPF emitter, kept
 * line for line (names resolved by libseccomp, rules added row by row,
 * exported with the binary-tree optimizer).  Test code only. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "filter_ref.h"

#define SB_CLONE_NS_FLAGS                                                                    \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
	 CLONE_NEWPID | CLONE_NEWNET)

int sb_ref_row_nr(const struct sb_syscall_row *row)
{
	int nr;

	if (!row->name[0])
		return row->nr;
	nr = seccomp_syscall_resolve_name(row->name);
	if (nr == __NR_SCMP_ERROR)
		nr = row->nr;	/* newer than libseccomp: the unified number */
	return nr >= 0 ? nr : -1;
}

static int add_notify_unless_fd(scmp_filter_ctx ctx, int nr, const struct sb_syscall_row *r)
{
	struct scmp_arg_cmp no_empty = { (unsigned)r->b, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0 };
	struct scmp_arg_cmp neg_fd = { (unsigned)r->a, SCMP_CMP_MASKED_EQ, 0x80000000u, 0x80000000u };
	int rc;

	rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &no_empty);
	if (rc == 0)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &neg_fd);
	return rc;
}

static int add_clone(scmp_filter_ctx ctx, int nr, bool notify_threads, bool notify_procs)
{
	int rc = 0;

	for (unsigned bit = 0; bit < 32 && rc == 0; bit++) {
		unsigned long long m = 1ull << bit;

		if (SB_CLONE_NS_FLAGS & m)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, m, m));
	}
	if (rc == 0 && notify_threads)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	if (rc == 0 && notify_procs)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	return rc;
}

static bool notify_api(const struct sb_policy *p, enum sb_mode mode, int cat)
{
	return mode != SB_MODE_ENFORCE || !sb_policy_api_granted(p, (enum sb_api_category)cat);
}

static int add_row(scmp_filter_ctx ctx, const struct sb_policy *p, enum sb_mode mode,
		   const struct sb_syscall_row *r)
{
	int nr = sb_ref_row_nr(r);

	if (nr < 0)
		return 0;
	switch (r->action) {
	case SB_FA_NOTIFY:
		return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	case SB_FA_NOTIFY_UNLESS_FD:
		return add_notify_unless_fd(ctx, nr, r);
	case SB_FA_NOTIFY_IF_SET: {
		struct scmp_arg_cmp set = { (unsigned)r->a, SCMP_CMP_NE, 0, 0 };

		return seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr, 1, &set);
	}
	case SB_FA_API:
		return notify_api(p, mode, r->val) ? seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0) : 0;
	case SB_FA_CLONE:
		return add_clone(ctx, nr, notify_api(p, mode, SB_API_THREADS),
				 notify_api(p, mode, SB_API_PROCESS_EXEC));
	case SB_FA_ERRNO:
		if (!r->name[0]) {
			for (int i = r->nr; i <= r->a; i++) {
				int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)r->val), i, 0);

				if (rc)
					return rc;
			}
			return 0;
		}
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)r->val), nr, 0);
	case SB_FA_ERRNO_IF: {
		struct scmp_arg_cmp eq = { (unsigned)r->a, SCMP_CMP_MASKED_EQ, 0xffffffffull, r->b };

		return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned)r->val), nr, 1, &eq);
	}
	case SB_FA_ERRNO_IF_NE: {
		struct scmp_arg_cmp cmp[2] = {
			{ (unsigned)(r->a & 0xff), SCMP_CMP_MASKED_EQ, 0xffffffffull, r->b },
			{ (unsigned)((r->a >> 8) & 0xff), SCMP_CMP_NE, (unsigned long long)(r->a >> 16), 0 },
		};

		return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned)r->val), nr, 2, cmp);
	}
	}
	return -EINVAL;
}

static int export_bpf(scmp_filter_ctx ctx, struct sb_filter *out)
{
	int fd = (int)syscall(SYS_memfd_create, "sb-filter", MFD_CLOEXEC);
	struct stat st;
	void *buf = NULL;
	int rc;

	if (fd < 0)
		return -errno;
	rc = seccomp_export_bpf(ctx, fd);
	if (rc)
		goto out;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		rc = -E2BIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		rc = -EIO;
		goto out;
	}
	out->insns = buf;
	out->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

int sb_ref_filter_build_rows(const struct sb_syscall_row *rows, size_t n, const struct sb_policy *p,
			     enum sb_mode mode, struct sb_filter *out)
{
	scmp_filter_ctx ctx;
	int rc = 0;

	out->insns = NULL;
	out->len = 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = add_row(ctx, p, mode, &rows[i]);
	if (rc == 0)
		rc = export_bpf(ctx, out);
	seccomp_release(ctx);
	return rc < 0 ? rc : (rc ? -EINVAL : 0);
}

int sb_ref_filter_build(const struct sb_policy *p, enum sb_mode mode, struct sb_filter *out)
{
	return sb_ref_filter_build_rows(sb_syscall_rows, sb_syscall_nrows, p, mode, out);
}
