/* The seccomp filter (SPEC §3 "What the filter does"), compiled from the rows
 * of rules/syscalls.in into classic BPF in the parent (the child between fork
 * and execve may not allocate) and installed in the child with the raw
 * seccomp(2) call (libseccomp 2.5 cannot ask for
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV).
 *
 * Why our own emitter rather than libseccomp: start-up.  seccomp_init and its
 * attribute probing, ~200 rule adds, seccomp_export_bpf with the binary-tree
 * optimizer and a name lookup (a linear search) per row took about 1 ms of a
 * ~30 ms `python-sb -c pass` (median of the first call in a process, 2-core
 * machine: 1.0 ms, 0.8 ms when warm); this emitter takes 41 us (11.5 us warm),
 * and the names are resolved by the compiler.  We need one architecture and a
 * handful of argument tests; the program is small enough to read
 * (SB_FILTER_DUMP=1 tests/unit/check_filter prints it).
 *
 * x86_64 only, the one architecture we build for: the generated
 * src/syscall_table.h refuses to compile anywhere else, and takes its numbers
 * from <sys/syscall.h> (an unknown name does not compile, so no row is ever
 * skipped silently).  Arguments are read as two 32-bit halves, little-endian.
 *
 * The program has exactly the semantics of the one libseccomp 2.5 exported
 * from the same rows (tests/unit/check_filter.c runs both through a BPF
 * interpreter over every number 0..1100 and many argument vectors):
 *   - arch != AUDIT_ARCH_X86_64 (i386 through int 0x80 included): KILL_PROCESS;
 *   - nr >= 0x40000000, the x32 bit and every "negative" number: KILL_PROCESS,
 *     except nr == -1, which a tracer uses to skip a call: libseccomp's x86_64
 *     prologue lets it through to the table (gen_bpf.c), where no row names it;
 *   - a number no row names, up to 0x3fffffff: ALLOW;
 *   - a listed number: its rules in order, the first whose comparisons all
 *     hold gives the action, none: ALLOW.  The comparisons are libseccomp's:
 *     "!= 0" tests both 32-bit halves, a masked == with a mask of at most 32
 *     bits the low half only ((u32)arg == VAL).
 * Rows sharing a number must all be conditional and agree on the action
 * (sb_filter_build fails with -EINVAL otherwise): their order cannot matter
 * then, as in libseccomp, which merges them into one tree.  The one row with
 * mixed actions is clone: the namespace refusal (EPERM) is tested first, as in
 * libseccomp's tree, whose siblings sort by datum (every namespace bit is above
 * CLONE_THREAD).
 *
 * Layout: the prologue (arch, x32), then a binary search (jge) over the
 * intervals that partition 0..0x3fffffff, listed numbers and the gaps between
 * them, neighbours with the same unconditional action merged: read, write or
 * mmap cost ~13 instructions.  Each leaf ends in its own returns, so that its
 * length does not depend on where it lands and its jumps stay short; a search
 * node whose left subtree is longer than a jump offset (255) goes through ja.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sup_priv.h"
#include "syscall_table.h"

#define ROW(name, nr, act, a, b, val, handler, kind) { name, nr, act, a, b, val, handler, kind },
const struct sb_syscall_row sb_syscall_rows[] = { SB_SYSCALLS(ROW) };
#undef ROW
const size_t sb_syscall_nrows = sizeof(sb_syscall_rows) / sizeof(sb_syscall_rows[0]);

/* The comparison values of errno-if rows are 32-bit (the filter compares the
 * low half); numbers are resolved. */
#define CHECK(name, nr, act, a, b, val, handler, kind)                                        \
	_Static_assert((unsigned long long)(b) <= 0xffffffffull, "rules/syscalls.in: " name); \
	_Static_assert((nr) >= 0, "rules/syscalls.in: " name);
SB_SYSCALLS(CHECK)
#undef CHECK

/* Namespace flags of clone(2); CLONE_NEWTIME shares its bit with the exit
 * signal there and exists only for clone3, which is refused. */
#define SB_CLONE_NS_FLAGS                                                                    \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |        \
	 CLONE_NEWPID | CLONE_NEWNET)

#define SB_NR_X32 0x40000000u	/* __X32_SYSCALL_BIT */
#define SB_RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((uint32_t)(e) & SECCOMP_RET_DATA))
#define SB_ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args) + 8u * (uint32_t)(i))
#define SB_ARG_HI(i) (SB_ARG_LO(i) + 4u)
#define SB_PROLOGUE_LEN 7u

enum sb_cmp_op {
	SB_CMP_MASKED_EQ,	/* ((u32)arg & mask) == val */
	SB_CMP_ANY,		/* ((u32)arg & mask) != 0 */
	SB_CMP_NE64,		/* the 64-bit arg != val */
};

struct sb_cmp {
	enum sb_cmp_op op;
	unsigned arg;
	uint32_t mask, val;
};

/* All comparisons hold: action. */
struct sb_rule {
	uint32_t action;
	unsigned ncmp;
	struct sb_cmp cmp[2];
};

/* Numbers lo..hi: `action` when nrules is 0, else the first rule that holds,
 * else ALLOW.  len: instructions of its leaf. */
struct sb_span {
	uint32_t lo, hi, action;
	unsigned nrules, len;
	const struct sb_rule *rules;
};

struct sb_ent {
	uint32_t lo, hi;
	const struct sb_syscall_row *row;
};

/* Scratch of one build, one allocation sized by the table: a row makes at
 * most 3 rules (clone), a group of rows one span and the gap before it. */
struct sb_gen {
	struct sb_span *spans;
	struct sb_ent *ent;
	struct sb_rule *rules;
	size_t nent, nrules, nspans;
	const struct sb_syscall_row *rows;
	size_t nrows;
	const struct sb_policy *policy;
	enum sb_mode mode;
};

/* ---- from rows to spans ------------------------------------------------------------ */

/* Does the filter hand category `cat` to the supervisor?  In learn and audit
 * mode always (events); in enforce mode when the policy does not grant it, so
 * that the refusal carries a notice instead of a silent EPERM. */
static bool notify_api(const struct sb_gen *g, int cat)
{
	return g->mode != SB_MODE_ENFORCE || !sb_policy_api_granted(g->policy, (enum sb_api_category)cat);
}

static struct sb_rule *rule_push(struct sb_gen *g, uint32_t action)
{
	struct sb_rule *r = &g->rules[g->nrules++];

	*r = (struct sb_rule){ .action = action };
	return r;
}

static void rule_cmp(struct sb_rule *r, enum sb_cmp_op op, unsigned arg, uint32_t mask, uint32_t val)
{
	r->cmp[r->ncmp++] = (struct sb_cmp){ op, arg, mask, val };
}

static int clone_rules(struct sb_gen *g)
{
	size_t first = g->nrules;

	/* Any namespace flag: EPERM, before the CLONE_THREAD split. */
	rule_cmp(rule_push(g, SB_RET_ERRNO(EPERM)), SB_CMP_ANY, 0, SB_CLONE_NS_FLAGS, 0);
	if (notify_api(g, SB_API_THREADS))
		rule_cmp(rule_push(g, SECCOMP_RET_USER_NOTIF), SB_CMP_MASKED_EQ, 0, CLONE_THREAD, CLONE_THREAD);
	if (notify_api(g, SB_API_PROCESS_EXEC))
		rule_cmp(rule_push(g, SECCOMP_RET_USER_NOTIF), SB_CMP_MASKED_EQ, 0, CLONE_THREAD, 0);
	return (int)(g->nrules - first);
}

/* The argument indexes a row compares: 0..5, and two different ones in one
 * rule (libseccomp refused a rule comparing one argument twice). */
static bool row_args_ok(const struct sb_syscall_row *r)
{
	unsigned x = (unsigned)r->a & 0xff, y = ((unsigned)r->a >> 8) & 0xff;	/* errno-if-ne */

	switch (r->action) {
	case SB_FA_NOTIFY_UNLESS_FD:
		return r->a >= 0 && r->a <= 5 && r->b <= 5;
	case SB_FA_NOTIFY_IF_SET:
	case SB_FA_ERRNO_IF:
		return r->a >= 0 && r->a <= 5;
	case SB_FA_ERRNO_IF_NE:
		return r->a >= 0 && x <= 5 && y <= 5 && x != y;
	default:
		return true;
	}
}

/* Append the rules of row r for this run: returns how many, 0 for an
 * unconditional row (its verdict in *action), or -EINVAL. */
static int row_rules(struct sb_gen *g, const struct sb_syscall_row *r, uint32_t *action)
{
	uint32_t err = SB_RET_ERRNO(r->val);
	struct sb_rule *x;

	if (!row_args_ok(r))
		return -EINVAL;
	switch (r->action) {
	case SB_FA_NOTIFY:
		*action = SECCOMP_RET_USER_NOTIF;
		return 0;
	case SB_FA_API:
		*action = notify_api(g, r->val) ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
		return 0;
	case SB_FA_ERRNO:
		*action = err;
		return 0;
	case SB_FA_NOTIFY_UNLESS_FD:
		/* fstat() is newfstatat(fd, "", buf, AT_EMPTY_PATH): a third of an
		 * import's stat calls.  Passing it in-kernel lets a forged non-empty
		 * path with AT_EMPTY_PATH and a real dirfd stat anything: metadata
		 * only, see doc/supervisor.md. */
		rule_cmp(rule_push(g, SECCOMP_RET_USER_NOTIF), SB_CMP_MASKED_EQ, (unsigned)r->b, AT_EMPTY_PATH, 0);
		rule_cmp(rule_push(g, SECCOMP_RET_USER_NOTIF), SB_CMP_MASKED_EQ, (unsigned)r->a, 0x80000000u,
			 0x80000000u);
		return 2;
	case SB_FA_NOTIFY_IF_SET:
		rule_cmp(rule_push(g, SECCOMP_RET_USER_NOTIF), SB_CMP_NE64, (unsigned)r->a, 0, 0);
		return 1;
	case SB_FA_CLONE:
		return clone_rules(g);
	case SB_FA_ERRNO_IF:
		rule_cmp(rule_push(g, err), SB_CMP_MASKED_EQ, (unsigned)r->a, UINT32_MAX, (uint32_t)r->b);
		return 1;
	case SB_FA_ERRNO_IF_NE:
		/* Any upper bits in the second argument make it differ: refused,
		 * which is the safe side. */
		x = rule_push(g, err);
		rule_cmp(x, SB_CMP_MASKED_EQ, (unsigned)(r->a & 0xff), UINT32_MAX, (uint32_t)r->b);
		rule_cmp(x, SB_CMP_NE64, (unsigned)((r->a >> 8) & 0xff), 0, (uint32_t)(r->a >> 16));
		return 1;
	}
	return -EINVAL;
}

static void span_add(struct sb_gen *g, uint32_t lo, uint32_t hi, uint32_t action, const struct sb_rule *rules,
		     unsigned nrules)
{
	struct sb_span *p = g->nspans ? &g->spans[g->nspans - 1] : NULL;

	if (p && !p->nrules && !nrules && p->action == action && p->hi + 1 == lo) {
		p->hi = hi;	/* neighbours with one verdict: one leaf */
		return;
	}
	g->spans[g->nspans++] = (struct sb_span){ .lo = lo, .hi = hi, .action = action,
						  .nrules = nrules, .rules = rules };
}

/* The span of the n rows sharing the number e->lo. */
static int group_span(struct sb_gen *g, const struct sb_ent *e, size_t n)
{
	const struct sb_rule *first = &g->rules[g->nrules];
	uint32_t action = 0;
	unsigned total = 0;

	for (size_t i = 0; i < n; i++) {
		int k = row_rules(g, e[i].row, &action);

		if (k < 0)
			return k;
		/* Several rows: conditional ones agreeing on the action only,
		 * where libseccomp's merge order cannot change the verdict. */
		if (n > 1 && (k == 0 || e[i].hi != e[i].lo || e[i].row->action == SB_FA_CLONE))
			return -EINVAL;
		total += (unsigned)k;
	}
	for (unsigned i = 1; n > 1 && i < total; i++)
		if (first[i].action != first[0].action)
			return -EINVAL;
	span_add(g, e->lo, e->hi, action, total ? first : NULL, total);
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct sb_ent *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;	/* table order */
}

/* Partition 0..0x3fffffff into spans, in order. */
static int build_spans(struct sb_gen *g)
{
	uint32_t next = 0;	/* first number no span covers yet */

	for (size_t i = 0; i < g->nrows; i++) {
		const struct sb_syscall_row *r = &g->rows[i];
		long hi = r->name[0] ? r->nr : r->a;

		if (r->nr < 0 || hi < r->nr || hi >= (long)SB_NR_X32)
			return -EINVAL;
		g->ent[g->nent++] = (struct sb_ent){ (uint32_t)r->nr, (uint32_t)hi, r };
	}
	qsort(g->ent, g->nent, sizeof(g->ent[0]), ent_cmp);
	for (size_t i = 0, j; i < g->nent; i = j) {
		int rc;

		for (j = i + 1; j < g->nent && g->ent[j].lo == g->ent[i].lo;)
			j++;
		if (g->ent[i].lo < next)
			return -EINVAL;	/* inside a range */
		if (g->ent[i].lo > next)
			span_add(g, next, g->ent[i].lo - 1, SECCOMP_RET_ALLOW, NULL, 0);
		rc = group_span(g, &g->ent[i], j - i);
		if (rc)
			return rc;
		next = g->ent[i].hi + 1;
	}
	span_add(g, next, SB_NR_X32 - 1, SECCOMP_RET_ALLOW, NULL, 0);
	return 0;
}

/* ---- from spans to BPF ------------------------------------------------------------- */

struct sb_em {
	struct sock_filter *buf;	/* NULL: count only */
	unsigned pos;
	int acc;		/* the seccomp_data offset the accumulator holds, or -1 */
	int fail_acc;		/* the same on the fail edges of a rule: -2 none yet */
	bool far;		/* a conditional jump beyond 255 */
};

static void em_put(struct sb_em *e, uint16_t code, uint32_t k, unsigned jt, unsigned jf)
{
	if (jt > 255 || jf > 255)
		e->far = true;
	if (e->buf)
		e->buf[e->pos] = (struct sock_filter)BPF_JUMP(code, k, (uint8_t)jt, (uint8_t)jf);
	e->pos++;
}

/* The offset of a jump placed next to absolute instruction `to`. */
static unsigned em_to(const struct sb_em *e, unsigned to)
{
	return e->buf ? to - (e->pos + 1) : 0;
}

static void em_load(struct sb_em *e, uint32_t off)
{
	if (e->acc != (int)off)
		em_put(e, BPF_LD | BPF_W | BPF_ABS, off, 0, 0);
	e->acc = (int)off;
}

/* The next instruction is a jump to the next rule: note what the
 * accumulator holds there. */
static void em_fail_edge(struct sb_em *e)
{
	e->fail_acc = e->fail_acc == -2 || e->fail_acc == e->acc ? e->acc : -1;
}

/* Fall through when c holds, else jump to `fail`. */
static void emit_cmp(struct sb_em *e, const struct sb_cmp *c, unsigned fail)
{
	const uint16_t jeq = BPF_JMP | BPF_JEQ | BPF_K, jset = BPF_JMP | BPF_JSET | BPF_K;

	if (c->op == SB_CMP_NE64) {
		/* Fails only when the high half is 0 and the low half val. */
		em_load(e, SB_ARG_HI(c->arg));
		em_put(e, jeq, 0, 0, 2);
		em_put(e, BPF_LD | BPF_W | BPF_ABS, SB_ARG_LO(c->arg), 0, 0);
		e->acc = (int)SB_ARG_LO(c->arg);
		em_fail_edge(e);
		em_put(e, jeq, c->val, em_to(e, fail), 0);
		e->acc = -1;	/* high or low half, by the path */
		return;
	}
	em_load(e, SB_ARG_LO(c->arg));
	if (c->op == SB_CMP_ANY) {
		em_fail_edge(e);
		em_put(e, jset, c->mask, 0, em_to(e, fail));
	} else if (c->mask == UINT32_MAX) {
		em_fail_edge(e);
		em_put(e, jeq, c->val, 0, em_to(e, fail));
	} else if (c->val == 0) {
		em_fail_edge(e);
		em_put(e, jset, c->mask, em_to(e, fail), 0);
	} else if (c->val == c->mask && !(c->mask & (c->mask - 1))) {
		em_fail_edge(e);
		em_put(e, jset, c->mask, 0, em_to(e, fail));
	} else {
		em_put(e, BPF_ALU | BPF_AND | BPF_K, c->mask, 0, 0);
		e->acc = -1;
		em_fail_edge(e);
		em_put(e, jeq, c->val, 0, em_to(e, fail));
	}
}

static void emit_rule(struct sb_em *e, const struct sb_rule *r, unsigned fail)
{
	e->fail_acc = -2;
	for (unsigned i = 0; i < r->ncmp; i++)
		emit_cmp(e, &r->cmp[i], fail);
	em_put(e, BPF_RET | BPF_K, r->action, 0, 0);
	e->acc = e->fail_acc;	/* the next rule is reached by the fail edges only */
}

static void emit_leaf(struct sb_em *e, const struct sb_span *s)
{
	e->acc = -1;
	for (unsigned i = 0; i < s->nrules; i++) {
		struct sb_em dry = *e;

		dry.buf = NULL;
		emit_rule(&dry, &s->rules[i], 0);
		emit_rule(e, &s->rules[i], dry.pos);
	}
	em_put(e, BPF_RET | BPF_K, s->nrules ? SECCOMP_RET_ALLOW : s->action, 0, 0);
}

static unsigned tree_len(const struct sb_gen *g, size_t i, size_t j)
{
	size_t m = i + (j - i + 1) / 2;
	unsigned left;

	if (i == j)
		return g->spans[i].len;
	left = tree_len(g, i, m - 1);
	return 1 + (left > 255) + left + tree_len(g, m, j);
}

/* Binary search over spans i..j (the accumulator holds nr): jge the middle
 * span's start to the right half, else fall into the left one. */
static void emit_tree(struct sb_em *e, const struct sb_gen *g, size_t i, size_t j)
{
	size_t m = i + (j - i + 1) / 2;
	unsigned left;

	if (i == j) {
		emit_leaf(e, &g->spans[i]);
		return;
	}
	left = tree_len(g, i, m - 1);
	if (left <= 255) {
		em_put(e, BPF_JMP | BPF_JGE | BPF_K, g->spans[m].lo, left, 0);
	} else {
		em_put(e, BPF_JMP | BPF_JGE | BPF_K, g->spans[m].lo, 0, 1);
		em_put(e, BPF_JMP | BPF_JA, left, 0, 0);
	}
	emit_tree(e, g, i, m - 1);
	emit_tree(e, g, m, j);
}

static void emit_prologue(struct sb_em *e)
{
	em_put(e, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	em_put(e, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4);		/* to KILL */
	em_put(e, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	em_put(e, BPF_JMP | BPF_JGE | BPF_K, SB_NR_X32, 0, 3);			/* to the search */
	em_put(e, BPF_JMP | BPF_JEQ | BPF_K, UINT32_MAX, 0, 1);			/* -1: ALLOW */
	em_put(e, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	em_put(e, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
}

static int emit(const struct sb_gen *g, struct sb_filter *out)
{
	struct sb_em e = { .acc = -1 };
	unsigned len = SB_PROLOGUE_LEN + tree_len(g, 0, g->nspans - 1);

	if (len > BPF_MAXINSNS)
		return -E2BIG;
	e.buf = malloc(len * sizeof(*e.buf));
	if (!e.buf)
		return -ENOMEM;
	emit_prologue(&e);
	emit_tree(&e, g, 0, g->nspans - 1);
	if (e.far || e.pos != len) {
		free(e.buf);
		return -E2BIG;
	}
	out->insns = e.buf;
	out->len = (unsigned short)len;
	return 0;
}

static struct sb_gen *gen_new(const struct sb_syscall_row *rows, size_t n)
{
	struct sb_gen *g;

	if (n > SIZE_MAX / 256)
		return NULL;
	g = malloc(sizeof(*g) + (2 * n + 1) * sizeof(struct sb_span) + n * sizeof(struct sb_ent) +
		   3 * n * sizeof(struct sb_rule));
	if (!g)
		return NULL;
	*g = (struct sb_gen){ .rows = rows, .nrows = n };
	g->spans = (struct sb_span *)(g + 1);
	g->ent = (struct sb_ent *)(g->spans + 2 * n + 1);
	g->rules = (struct sb_rule *)(g->ent + n);
	return g;
}

int sb_filter_build_rows(const struct sb_syscall_row *rows, size_t n, const struct sb_policy *p,
			 enum sb_mode mode, struct sb_filter *out)
{
	struct sb_gen *g = gen_new(rows, n);
	int rc;

	out->insns = NULL;
	out->len = 0;
	if (!g)
		return -ENOMEM;
	g->policy = p;
	g->mode = mode;
	rc = build_spans(g);
	if (rc)
		goto out;
	for (size_t i = 0; i < g->nspans; i++) {
		struct sb_em dry = { .acc = -1 };

		emit_leaf(&dry, &g->spans[i]);
		g->spans[i].len = dry.pos;
	}
	rc = emit(g, out);
out:
	free(g);
	return rc;
}

int sb_filter_build(const struct sb_policy *p, enum sb_mode mode, struct sb_filter *out)
{
	return sb_filter_build_rows(sb_syscall_rows, sb_syscall_nrows, p, mode, out);
}

void sb_filter_free(struct sb_filter *f)
{
	free(f->insns);
	f->insns = NULL;
	f->len = 0;
}

int sb_filter_install(const struct sb_filter *f, bool killable)
{
	struct sock_fprog prog = { .len = f->len, .filter = f->insns };
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	long fd;

	if (killable)
		flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	return fd < 0 ? -errno : (int)fd;
}
