/* A CPython runtime forged in the test's own memory, shared by the tracer's
 * unit tests (check_tracer.c, check_pymodules.c): objects are laid out in
 * an arena with the layout under test, and read back through /proc/self/mem
 * exactly as a target's are.  Each test keeps its own struct fake (what it
 * forges) around a struct fk_arena (where and how). */
#ifndef SB_TEST_PYFORGE_H
#define SB_TEST_PYFORGE_H

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"
#include "pydebug_fixtures.h"
#include "pyproc.h"
#include "pyversion.h"

struct fk_arena {
	struct sb_pylayout l;	/* the layout the objects follow */
	uint8_t *a;
	size_t used, size;
};

/* Zeroed, page-aligned; the first 64 bytes stay unused, so no object is
 * at the arena's address. */
static inline void fk_arena_init(struct fk_arena *ar, size_t size)
{
	ar->a = aligned_alloc(4096, size);
	ck_assert_ptr_nonnull(ar->a);
	memset(ar->a, 0, size);
	ar->size = size;
	ar->used = 64;
}

static inline uint64_t fk_alloc(struct fk_arena *ar, size_t n)
{
	ar->used = (ar->used + 15) & ~(size_t)15;
	ck_assert_uint_le(ar->used + n, ar->size);
	uint64_t at = (uintptr_t)(ar->a + ar->used);
	ar->used += n;
	return at;
}

static inline void put64(uint64_t addr, uint32_t off, uint64_t v)
{
	memcpy((void *)(uintptr_t)(addr + off), &v, sizeof(v));
}

static inline void put32(uint64_t addr, uint32_t off, uint32_t v)
{
	memcpy((void *)(uintptr_t)(addr + off), &v, sizeof(v));
}

/* A compact ASCII str. */
static inline uint64_t fk_str(struct fk_arena *ar, const char *s)
{
	size_t n = strlen(s);
	uint64_t o = fk_alloc(ar, ar->l.str_ascii_data + n + 1);

	put64(o, ar->l.str_length, n);
	put32(o, ar->l.str_state, (1u << 2) | (1u << 5) | (1u << 6));	/* kind 1, compact, ascii */
	memcpy((void *)(uintptr_t)(o + ar->l.str_ascii_data), s, n + 1);
	return o;
}

/* which: 0 = 3.11, 1 = 3.12 (built-in layouts), 2 = 3.13, 3 = 3.14 (from
 * the _Py_DebugOffsets blob, left in blob: *blen bytes, 0 for the others). */
static inline void fk_layout(int which, struct sb_pylayout *l, uint8_t *blob, size_t *blen)
{
	*blen = 0;
	switch (which) {
	case 0:
		ck_assert_int_eq(sb_pylayout_builtin(0x030b02f0, l), 0);
		break;
	case 1:
		ck_assert_int_eq(sb_pylayout_builtin(0x030c01f0, l), 0);
		break;
	case 2:
		*blen = make_blob(blob, dbg313_words, 72);
		ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, *blen, 0, l), 0);
		break;
	default:
		*blen = make_blob(blob, dbg314_words, 94);
		ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, *blen, 0, l), 0);
		break;
	}
}

/* This process, as the reader sees a target whose _PyRuntime is runtime. */
static inline struct sb_pyproc *fk_proc_new(const struct fk_arena *ar, uint64_t runtime)
{
	struct sb_pyproc *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->pid = getpid();
	ck_assert_int_eq(sb_mem_open(&p->mem, getpid()), 0);
	p->lay = ar->l;
	p->runtime = runtime;
	p->same_pidns = true;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

/* The arena as forged, for fk_corrupt() to start again from. */
static inline uint8_t *fk_snapshot(const struct fk_arena *ar)
{
	uint8_t *copy = malloc(ar->used);

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, ar->a, ar->used);
	return copy;
}

/* The pristine arena back, then 1-4 random words or bytes of its objects
 * overwritten with what a reader must survive: NULL, noise, pointers into
 * the arena, at themselves, at one of `targets`, into the kernel.  A single
 * target costs no draw (each test keeps the sequence it had). */
static inline void fk_corrupt(struct fk_arena *ar, const uint8_t *pristine, uint64_t (*draw)(void),
			      const uint64_t *targets, size_t n_targets)
{
	memcpy(ar->a, pristine, ar->used);
	for (int k = 1 + (int)(draw() % 4); k > 0; k--) {
		size_t off = 64 + draw() % (ar->used - 72);
		uint64_t v;

		switch (draw() % 8) {
		case 0: v = 0; break;
		case 1: v = draw(); break;
		case 2: v = UINT64_C(1) << (draw() % 63); break;
		case 3: v = (uintptr_t)(ar->a + 64 + draw() % (ar->used - 64)); break;
		case 4: v = n_targets == 1 ? targets[0] : targets[draw() % n_targets]; break;
		case 5: v = (uintptr_t)(ar->a + off); break;	/* points at itself */
		case 6: v = UINT64_C(0xffff800000000000) + draw() % 4096; break;
		default: v = (uint64_t)-1; break;
		}
		if (draw() & 1)
			memcpy(ar->a + (off & ~(size_t)7), &v, 8);
		else
			ar->a[off] = (uint8_t)v;
	}
}

#endif
