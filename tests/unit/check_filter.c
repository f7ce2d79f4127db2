/* Unit tests of the seccomp filter's BPF emitter (src/filter.c): for several
 * policies and modes, its program and the one libseccomp 2.5 built from the
 * same rows (tests/unit/filter_ref.c) go through a classic-BPF interpreter
 * over every syscall number 0..1100, x32 and foreign-architecture values and
 * many argument vectors, and must return the same thing every time.  The
 * same for a larger synthetic table (long jumps in the search); tables whose
 * verdict would depend on libseccomp's merge order are refused.  Then the
 * kernel itself runs the program once.
 *
 * SB_FILTER_DUMP=1 tests/unit/check_filter prints the program and how many
 * instructions a few common calls cost under both. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter_ref.h"
#include "policy_text.h"

/* ---- a classic-BPF interpreter (the subset seccomp accepts) ---------------- */

/* Run f on d like the kernel: false when the program is malformed (a jump
 * or a load out of bounds, an instruction seccomp refuses). */
static bool bpf_run(const struct sb_filter *f, const struct seccomp_data *d, uint32_t *ret, unsigned *steps)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	unsigned pc = 0, n = 0;

	while (pc < f->len) {
		const struct sock_filter *in = &f->insns[pc++];
		uint32_t k = in->k, src = BPF_SRC(in->code) == BPF_X ? x : k;

		n++;
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k % 4 || k > sizeof(*d) - 4)
				return false;
			memcpy(&a, (const char *)d + k, 4);
			continue;
		case BPF_LD | BPF_W | BPF_LEN: a = sizeof(*d); continue;
		case BPF_LDX | BPF_W | BPF_LEN: x = sizeof(*d); continue;
		case BPF_LD | BPF_IMM: a = k; continue;
		case BPF_LDX | BPF_IMM: x = k; continue;
		case BPF_LD | BPF_MEM: if (k >= BPF_MEMWORDS) return false; a = mem[k]; continue;
		case BPF_LDX | BPF_MEM: if (k >= BPF_MEMWORDS) return false; x = mem[k]; continue;
		case BPF_ST: if (k >= BPF_MEMWORDS) return false; mem[k] = a; continue;
		case BPF_STX: if (k >= BPF_MEMWORDS) return false; mem[k] = x; continue;
		case BPF_MISC | BPF_TAX: x = a; continue;
		case BPF_MISC | BPF_TXA: a = x; continue;
		case BPF_RET | BPF_K: *ret = k; *steps = n; return true;
		case BPF_RET | BPF_A: *ret = a; *steps = n; return true;
		case BPF_JMP | BPF_JA: pc += k; continue;
		case BPF_ALU | BPF_NEG: a = -a; continue;
		default:
			break;
		}
		switch (BPF_CLASS(in->code)) {
		case BPF_ALU:
			switch (BPF_OP(in->code)) {
			case BPF_ADD: a += src; continue;
			case BPF_SUB: a -= src; continue;
			case BPF_MUL: a *= src; continue;
			case BPF_DIV: if (!src) return false; a /= src; continue;
			case BPF_MOD: if (!src) return false; a %= src; continue;
			case BPF_AND: a &= src; continue;
			case BPF_OR: a |= src; continue;
			case BPF_XOR: a ^= src; continue;
			case BPF_LSH: a = src < 32 ? a << src : 0; continue;
			case BPF_RSH: a = src < 32 ? a >> src : 0; continue;
			}
			return false;
		case BPF_JMP: {
			bool t;

			switch (BPF_OP(in->code)) {
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return false;
			}
			pc += t ? in->jt : in->jf;
			continue;
		}
		}
		return false;
	}
	return false;	/* fell off the end */
}

static void bpf_dump(const struct sb_filter *f)
{
	for (unsigned pc = 0; pc < f->len; pc++) {
		const struct sock_filter *in = &f->insns[pc];

		if (in->code == (BPF_LD | BPF_W | BPF_ABS))
			printf("%4u  ld  [%u]\n", pc, in->k);
		else if (in->code == (BPF_RET | BPF_K))
			printf("%4u  ret %#x\n", pc, in->k);
		else if (in->code == (BPF_JMP | BPF_JA))
			printf("%4u  ja  %u\n", pc, pc + 1 + in->k);
		else if (BPF_CLASS(in->code) == BPF_JMP)
			printf("%4u  j%s %#x ? %u : %u\n", pc,
			       BPF_OP(in->code) == BPF_JEQ ? "eq " : BPF_OP(in->code) == BPF_JGE ? "ge " :
			       BPF_OP(in->code) == BPF_JGT ? "gt " : "set", in->k, pc + 1 + in->jt, pc + 1 + in->jf);
		else
			printf("%4u  op %#x k %#x\n", pc, in->code, in->k);
	}
}

/* ---- inputs ------------------------------------------------------------------ */


static const struct {
	const char *policy;
	enum sb_mode mode;
} cases[] = {
	{ "expose-ro=/tmp\n", SB_MODE_ENFORCE },
	{ "expose-ro=/tmp\n", SB_MODE_LEARN },
	{ "expose-ro=/tmp\n", SB_MODE_AUDIT },
	{ "python-api=ALLOW:threads\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:process-exec\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:process-control\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:privileges\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:threads\npython-api=ALLOW:process-exec\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:process-control\npython-api=ALLOW:privileges\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:*\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:*\n", SB_MODE_LEARN },
	{ "python-api=ALLOW:*\n", SB_MODE_AUDIT },
};

#define NS_ALL                                                                                \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
	 CLONE_NEWPID | CLONE_NEWNET)

/* Argument values around every comparison of the table: AT_EMPTY_PATH, the
 * sign bit of a descriptor, the errno-if values, each clone flag, upper
 * halves set.  Every single bit is added by fill_values(). */
static const uint64_t base_values[] = {
	0, 1, 2, 3, 8, 15, 16, 17, 22, 0x100, 0x800, 0x1000, 0x1100, 0xfff, 0x5412, 0x541c, 0x8901,
	0x8902, 0xffff, 0x7fffffff, 0x80000000, 0x80001000, 0xfffff000, 0xffffff9c, 0xffffffff,
	0x100000000, 0x100001000, 0x100000010, 0x100000008, 0x100000016, 0x180000000,
	0xffffffff00000000, 0xffffffff00000010, 0xffffffff00001000, 0xffffffff80000000,
	0xffffffffffffff9c, 0xffffffffffffffff, 0x8000000000000000,
	0x3d0f00,		/* pthread_create */
	0x1200011,		/* fork(): SIGCHLD | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID */
	CLONE_THREAD | CLONE_NEWUSER, CLONE_NEWNS | 17, NS_ALL, NS_ALL | CLONE_THREAD, 0x80,
	0x100010000, 0x100020000, 0x100000000 | 0x3d0f00, 0xffffffff00000000 | CLONE_NEWNET,
};
/* A smaller set for argument pairs. */
static const uint64_t pair_values[] = {
	0, 1, 2, 8, 15, 16, 22, 0x1000, 0x5412, 0x8901, 0x10000, 0x80000000, 0x80001000, 0xffffffff,
	0x100000000, 0x100000010, 0x100001000, 0xffffffffffffff9c, 0xffffffffffffffff,
	0x3d0f00, 0x1200011, CLONE_NEWNS | CLONE_THREAD, CLONE_NEWUSER, 0x100010000,
};
#define NPAIR (sizeof(pair_values) / sizeof(pair_values[0]))

static uint64_t values[sizeof(base_values) / sizeof(base_values[0]) + 64];
static size_t nvalues;

static void fill_values(void)
{
	nvalues = 0;
	for (size_t i = 0; i < sizeof(base_values) / sizeof(base_values[0]); i++)
		values[nvalues++] = base_values[i];
	for (unsigned b = 0; b < 64; b++)
		values[nvalues++] = 1ull << b;
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* ---- the comparison ---------------------------------------------------------- */

struct pair {
	const struct sb_filter *ours, *ref;
	unsigned long runs;
};

static void same(struct pair *p, const struct seccomp_data *d)
{
	uint32_t a = 0, b = 0;
	unsigned sa, sb;
	bool oka = bpf_run(p->ours, d, &a, &sa), okb = bpf_run(p->ref, d, &b, &sb);

	p->runs++;
	if (oka && okb && a == b)
		return;
	ck_abort_msg("nr %#x arch %#x args %#llx %#llx %#llx %#llx %#llx %#llx: ours %s%#x, libseccomp %s%#x",
		     (unsigned)d->nr, d->arch, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
		     (unsigned long long)d->args[2], (unsigned long long)d->args[3],
		     (unsigned long long)d->args[4], (unsigned long long)d->args[5], oka ? "" : "(malformed) ",
		     a, okb ? "" : "(malformed) ", b);
}

static void set_all(struct seccomp_data *d, uint64_t v)
{
	for (int i = 0; i < 6; i++)
		d->args[i] = v;
}

/* One argument at a time over every value, the others at a base. */
static void vary_one(struct pair *p, struct seccomp_data *d, const uint64_t *bases, size_t nbases)
{
	for (size_t b = 0; b < nbases; b++)
		for (int i = 0; i < 6; i++)
			for (size_t v = 0; v < nvalues; v++) {
				set_all(d, bases[b]);
				d->args[i] = values[v];
				same(p, d);
			}
}

/* Every pair of arguments over pair_values, then random vectors. */
static void vary_two(struct pair *p, struct seccomp_data *d)
{
	for (int i = 0; i < 6; i++)
		for (int j = i + 1; j < 6; j++)
			for (size_t v = 0; v < NPAIR; v++)
				for (size_t w = 0; w < NPAIR; w++) {
					set_all(d, 0);
					d->args[i] = pair_values[v];
					d->args[j] = pair_values[w];
					same(p, d);
				}
	for (int n = 0; n < 400; n++) {
		for (int i = 0; i < 6; i++) {
			uint64_t r = rnd();

			d->args[i] = r & 1 ? values[(r >> 8) % nvalues] : r & 2 ? rnd() : values[(r >> 8) % nvalues] |
				     (rnd() & 0xffffffff00000000ull);
		}
		same(p, d);
	}
}

enum depth { ALL_ARGS, ONE_ARG, FULL };

static void check_nr(struct pair *p, uint32_t arch, uint32_t nr, enum depth depth)
{
	static const uint64_t bases[] = { 0, ~0ull, 0x1000, 0xffffffff00000000ull };
	struct seccomp_data d = { .nr = (int)nr, .arch = arch, .instruction_pointer = 0x401000 };

	rnd_state = 0x9e3779b97f4a7c15ull ^ nr ^ ((uint64_t)arch << 32);
	for (size_t v = 0; v < nvalues; v++) {
		set_all(&d, values[v]);
		same(p, &d);
	}
	if (depth == ALL_ARGS)
		return;
	vary_one(p, &d, bases, depth == FULL ? sizeof(bases) / sizeof(bases[0]) : 2);
	if (depth == FULL)
		vary_two(p, &d);
}

/* Numbers whose arguments matter: the table's, and their neighbours. */
static void mark_listed(bool *listed, size_t n)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];
		long lo = sb_ref_row_nr(r), hi = r->name[0] ? lo : r->a;

		for (long k = lo - 1; lo >= 0 && k <= hi + 1; k++)
			if (k >= 0 && (size_t)k < n)
				listed[k] = true;
	}
}

static void build_both(int i, struct sb_policy **pol, struct sb_filter *ours, struct sb_filter *ref)
{
	*pol = policy_from_text(cases[i].policy);
	ck_assert_int_eq(sb_filter_build(*pol, cases[i].mode, ours), 0);
	ck_assert_int_eq(sb_ref_filter_build(*pol, cases[i].mode, ref), 0);
}

START_TEST(same_verdicts_native)
{
	static const uint32_t odd_nrs[] = {
		0x3fffffff, 0x40000000, 0x40000001, 0x40000000 | 39, 0x40000000 | 257, 0x40000000 | 56,
		0x400001ff, 0x4fffffff, 0x7fffffff, 0x80000000, 0xfffff000, 0xfffffffe, 0xffffffff, 0x10000,
		0xffff, 0x1000000,
	};
	struct sb_policy *pol;
	struct sb_filter ours, ref;
	struct pair p = { &ours, &ref, 0 };
	bool listed[1101] = { false };

	build_both(_i, &pol, &ours, &ref);
	fill_values();
	mark_listed(listed, 1101);
	for (uint32_t nr = 0; nr <= 1100; nr++)
		check_nr(&p, AUDIT_ARCH_X86_64, nr, listed[nr] ? FULL : ALL_ARGS);
	for (size_t i = 0; i < sizeof(odd_nrs) / sizeof(odd_nrs[0]); i++)
		check_nr(&p, AUDIT_ARCH_X86_64, odd_nrs[i], FULL);
	for (uint32_t nr = 0; nr <= 1100; nr++)		/* the x32 numbers of the table */
		check_nr(&p, AUDIT_ARCH_X86_64, 0x40000000 | nr, ALL_ARGS);
	ck_assert_uint_gt(p.runs, 1000000);
	sb_filter_free(&ours);
	sb_filter_free(&ref);
	sb_policy_free(pol);
}
END_TEST

START_TEST(same_verdicts_foreign_arch)
{
	static const uint32_t arches[] = {
		AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, AUDIT_ARCH_X86_64 & ~__AUDIT_ARCH_64BIT,
		AUDIT_ARCH_X86_64 ^ 1, 0, 0xffffffff,
	};
	struct sb_policy *pol;
	struct sb_filter ours, ref;
	struct pair p = { &ours, &ref, 0 };

	build_both(_i, &pol, &ours, &ref);
	fill_values();
	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++) {
		for (uint32_t nr = 0; nr <= 1100; nr += nr < 600 ? 1 : 7)
			check_nr(&p, arches[a], nr, ALL_ARGS);
		check_nr(&p, arches[a], 0x40000000 | 2, ALL_ARGS);
		check_nr(&p, arches[a], 0xffffffff, ALL_ARGS);
	}
	sb_filter_free(&ours);
	sb_filter_free(&ref);
	sb_policy_free(pol);
}
END_TEST

/* ---- other tables ---------------------------------------------------------- */

#define R(nr, act, a, b, val) { "sbtest", nr, act, a, b, val, NULL, -1 }
#define RANGE(lo, hi, e) { "", lo, SB_FA_ERRNO, hi, 0, e, NULL, -1 }

/* A larger table than ours, of every kind of row (names libseccomp does not
 * know: the reference takes the numbers), whose search needs long jumps. */
static size_t synthetic_table(struct sb_syscall_row *t)
{
	size_t n = 0;

	for (int nr = 0; nr < 420; nr++) {
		switch (nr % 7) {
		case 0:
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_ERRNO_IF_NE, (nr % 6) | (nr % 6 + 1) % 6 << 8 | (nr % 3) << 16,
							  (unsigned)nr, EPERM);
			break;
		case 1:
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_NOTIFY_IF_SET, nr % 6, 0, 0);
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_NOTIFY_IF_SET, (nr + 1) % 6, 0, 0);
			break;
		case 2:
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_NOTIFY_UNLESS_FD, nr % 4, 3, 0);
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_NOTIFY_IF_SET, 5, 0, 0);
			break;
		case 3:
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_ERRNO_IF, 1, (unsigned)nr, EACCES);
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_ERRNO_IF, 2, 0xffffff9c, EACCES);
			t[n++] = (struct sb_syscall_row)R(nr, SB_FA_ERRNO_IF_NE, 1 | 0 << 8 | 0 << 16, 0x1000, EACCES);
			break;
		case 4:
			t[n++] = (struct sb_syscall_row)R(nr, nr % 2 ? SB_FA_NOTIFY : SB_FA_ERRNO, 0, 0, ENOSYS);
			break;
		case 5:
			t[n++] = (struct sb_syscall_row)R(nr, nr % 3 ? SB_FA_CLONE : SB_FA_API, 0, 0, nr % 4);
			break;
		}
	}
	t[n++] = (struct sb_syscall_row)RANGE(500, 599, ENOSYS);
	t[n++] = (struct sb_syscall_row)RANGE(600, 600, EPERM);
	t[n++] = (struct sb_syscall_row)R(601, SB_FA_NOTIFY, 0, 0, 0);
	return n;
}

START_TEST(same_verdicts_synthetic)
{
	static struct sb_syscall_row t[1024];
	size_t n = synthetic_table(t);
	struct sb_policy *pol = policy_from_text(cases[_i].policy);
	struct sb_filter ours, ref;
	struct pair p = { &ours, &ref, 0 };
	bool far = false;

	ck_assert_int_eq(sb_filter_build_rows(t, n, pol, cases[_i].mode, &ours), 0);
	ck_assert_int_eq(sb_ref_filter_build_rows(t, n, pol, cases[_i].mode, &ref), 0);
	for (unsigned i = 0; i < ours.len; i++)
		far |= ours.insns[i].code == (BPF_JMP | BPF_JA);
	ck_assert_msg(far, "no long jump in a program of %u instructions", ours.len);
	fill_values();
	for (uint32_t nr = 0; nr <= 700; nr++)
		check_nr(&p, AUDIT_ARCH_X86_64, nr, ONE_ARG);
	sb_filter_free(&ours);
	sb_filter_free(&ref);
	sb_policy_free(pol);
}
END_TEST

/* Rows sharing a number whose verdict libseccomp's merge order could decide,
 * and numbers out of range, are refused. */
START_TEST(ambiguous_tables_refused)
{
	static const struct sb_syscall_row bad[][2] = {
		{ R(10, SB_FA_NOTIFY, 0, 0, 0), R(10, SB_FA_ERRNO_IF, 1, 5, EPERM) },
		{ R(10, SB_FA_NOTIFY, 0, 0, 0), R(10, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(10, SB_FA_ERRNO_IF, 1, 5, EPERM), R(10, SB_FA_ERRNO_IF, 1, 6, EACCES) },
		{ R(10, SB_FA_ERRNO_IF, 1, 5, EPERM), R(10, SB_FA_NOTIFY_IF_SET, 2, 0, 0) },
		{ R(10, SB_FA_CLONE, 0, 0, 0), R(10, SB_FA_NOTIFY_IF_SET, 2, 0, 0) },
		{ R(10, SB_FA_ERRNO_IF_NE, 2 | 2 << 8, 5, EPERM), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(10, SB_FA_ERRNO_IF_NE, 2 | 6 << 8, 5, EPERM), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(10, SB_FA_NOTIFY_IF_SET, 6, 0, 0), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(10, SB_FA_NOTIFY_UNLESS_FD, 0, 6, 0), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(10, SB_FA_API, 0, 0, SB_API_THREADS), R(10, SB_FA_NOTIFY_IF_SET, 2, 0, 0) },
		{ RANGE(10, 20, ENOSYS), R(15, SB_FA_NOTIFY, 0, 0, 0) },
		{ RANGE(10, 20, ENOSYS), R(10, SB_FA_ERRNO_IF, 1, 5, ENOSYS) },
		{ RANGE(20, 10, ENOSYS), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(0x40000000, SB_FA_NOTIFY, 0, 0, 0), R(30, SB_FA_NOTIFY, 0, 0, 0) },
		{ R(-1, SB_FA_NOTIFY, 0, 0, 0), R(30, SB_FA_NOTIFY, 0, 0, 0) },
	};
	static const struct sb_syscall_row good[] = {
		R(10, SB_FA_ERRNO_IF, 1, 5, EPERM), R(10, SB_FA_ERRNO_IF_NE, 0 | 1 << 8, 6, EPERM),
	};
	struct sb_policy *pol = policy_from_text("expose-ro=/tmp\n");
	struct sb_filter f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(sb_filter_build_rows(bad[i], 2, pol, SB_MODE_ENFORCE, &f) == -EINVAL, "table %zu", i);
		ck_assert_ptr_null(f.insns);
	}
	ck_assert_int_eq(sb_filter_build_rows(good, 2, pol, SB_MODE_ENFORCE, &f), 0);
	sb_filter_free(&f);
	sb_policy_free(pol);
}
END_TEST

/* The table's numbers now come from <sys/syscall.h>: they must be the ones
 * libseccomp resolved the names to. */
START_TEST(numbers_match_libseccomp)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];
		int nr;

		if (!r->name[0])
			continue;
		nr = seccomp_syscall_resolve_name(r->name);
		if (nr != __NR_SCMP_ERROR)
			ck_assert_msg(nr == r->nr, "%s: libseccomp says %d, <sys/syscall.h> %d", r->name, nr, r->nr);
	}
}
END_TEST

/* Common calls the table does not list stay a short walk: the prologue, the
 * binary search and the return. */
START_TEST(fast_path_is_short)
{
	static const struct {
		const char *name;
		int nr;
	} hot[] = {
		{ "read", SYS_read }, { "write", SYS_write }, { "close", SYS_close }, { "mmap", SYS_mmap },
		{ "futex", SYS_futex }, { "lseek", SYS_lseek }, { "getdents64", SYS_getdents64 },
		{ "openat", SYS_openat }, { "newfstatat", SYS_newfstatat },
	};
	struct sb_policy *pol;
	struct sb_filter ours, ref;
	bool dump = getenv("SB_FILTER_DUMP") != NULL;

	build_both(0, &pol, &ours, &ref);
	if (dump) {
		bpf_dump(&ours);
		printf("instructions: ours %u, libseccomp %u\n", ours.len, ref.len);
	}
	for (size_t i = 0; i < sizeof(hot) / sizeof(hot[0]); i++) {
		struct seccomp_data d = { .nr = hot[i].nr, .arch = AUDIT_ARCH_X86_64,
					  .args = { 3, 0, 0, 0x1000, 0, 0 } };
		uint32_t ra, rb;
		unsigned sa, sb;

		ck_assert(bpf_run(&ours, &d, &ra, &sa));
		ck_assert(bpf_run(&ref, &d, &rb, &sb));
		if (dump)
			printf("%-12s ours %2u steps, libseccomp %2u\n", hot[i].name, sa, sb);
		ck_assert_msg(sa <= 16, "%s takes %u instructions", hot[i].name, sa);
	}
	sb_filter_free(&ours);
	sb_filter_free(&ref);
	sb_policy_free(pol);
}
END_TEST

/* In a child: the kernel accepts the program and its verdicts are the
 * interpreter's.  The listener is closed at once, so a notified call fails
 * with ENOSYS instead of waiting. */
static int child_under_filter(const struct sb_filter *f, int out)
{
	struct stat st;
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 10;
	fd = sb_filter_install(f, false);
	if (fd < 0)
		return 11;
	close(fd);
	if (syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) != -1 || errno != EPERM)
		return 12;
	if (syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY) != -1 || errno != ENOSYS)
		return 13;
	if (syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 14;
	if (syscall(SYS_fcntl, 0, F_SETOWN, 0) != -1 || errno != EPERM)
		return 15;
	if (syscall(-1) != -1 || errno != ENOSYS)	/* a tracer's skip: let through */
		return 16;
	if (syscall(SYS_getppid) <= 0)
		return 17;
	if (syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */) != -1 || errno != EAFNOSUPPORT)
		return 20;
	if (syscall(SYS_newfstatat, out, "", &st, AT_EMPTY_PATH) != 0)	/* fstat(): in-kernel */
		return 21;
	if (syscall(SYS_newfstatat, AT_FDCWD, "/", &st, 0) != -1 || errno != ENOSYS)
		return 22;
	if (write(out, "ok", 2) != 2)
		return 18;
	syscall(0x40000000 | SYS_getpid);	/* x32: killed */
	return 19;
}

START_TEST(kernel_runs_it)
{
	struct sb_policy *pol = policy_from_text("expose-ro=/tmp\n");
	struct sb_filter f;
	char buf[4] = "";
	int st, pfd[2];
	pid_t pid;

	ck_assert_int_eq(sb_filter_build(pol, SB_MODE_ENFORCE, &f), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		_exit(child_under_filter(&f, pfd[1]));
	}
	close(pfd[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(read(pfd[0], buf, 3) == 2 && strcmp(buf, "ok") == 0, "child status %#x (exit %d)", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "child status %#x", st);
	close(pfd[0]);
	sb_filter_free(&f);
	sb_policy_free(pol);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("filter");
	TCase *t = tcase_create("equivalence");
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	/* A few seconds per policy on a loaded machine: no timing asserted. */
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, same_verdicts_native, 0, n);
	tcase_add_loop_test(t, same_verdicts_foreign_arch, 0, n);
	tcase_add_loop_test(t, same_verdicts_synthetic, 0, n);
	tcase_add_test(t, ambiguous_tables_refused);
	tcase_add_test(t, numbers_match_libseccomp);
	tcase_add_test(t, fast_path_is_short);
	tcase_add_test(t, kernel_runs_it);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
