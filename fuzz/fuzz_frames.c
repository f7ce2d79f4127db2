/* libFuzzer target: the CPython frame walker (tracer/pyframes.c) on a forged
 * runtime.
 *
 * As tests/unit/check_tracer.c does, a fake CPython runtime (runtime state,
 * interpreter, a decoy thread state and ours, a data-stack chunk of frames,
 * code objects, str/bytes/tuple objects) is laid out in this process's own
 * memory with the 3.11, 3.12, 3.13 or 3.14 layout, or a layout parsed from
 * a patched 3.13 _Py_DebugOffsets blob, and read back through
 * /proc/self/mem exactly as a target is read.  The input then patches it:
 * each 13-byte record writes a value (zero, raw, a power of two, a pointer
 * into the fake runtime, to a frame, to itself, a kernel address, all ones)
 * of 1, 4 or 8 bytes at an offset inside one of the fake objects, either
 * before the first walk or between the first (cold caches) and the second
 * (warm caches: a code object replaced at the same address).
 *
 * Promises checked: sb_pyproc_stack returns 0 on readable memory whatever it
 * finds, and its result is bounded and printable (every frame's strings
 * NUL-terminated inside their fields, no control character, counts within
 * their bounds); listing the threads is bounded too.  libFuzzer's time-out
 * and RSS limit catch a walk that does not end or a bound that allocates. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "fuzz_pyblobs.h"
#include "mem.h"
#include "pydecode.h"
#include "pyframes.h"
#include "pyproc.h"
#include "pyversion.h"

#define ARENA_SIZE (512u << 10)
#define ARENA_ADDR UINT64_C(0x5e0000000000)
#define FK_MAX_FRAMES 1200
#define FK_MAX_OBJS 4096

struct fake {
	struct sb_pylayout l;
	uint8_t *a;
	size_t used;
	bool full;				/* an allocation did not fit: skip the input */
	uint64_t type_code, runtime, interp, tstate, decoy, cframe, chunk;
	uint64_t frames[FK_MAX_FRAMES];		/* outermost first, shims included */
	size_t nframes, chunk_used;
	uint64_t innermost;
	uint64_t objs[FK_MAX_OBJS];		/* every object, for the patches */
	size_t nobjs;
};

static uint8_t *arena;

static uint64_t fk_alloc(struct fake *f, size_t n)
{
	uint64_t at;

	f->used = (f->used + 15) & ~(size_t)15;
	if (f->full || n > ARENA_SIZE - f->used) {
		f->full = true;
		return (uintptr_t)f->a;	/* harmless scratch: the input is skipped */
	}
	at = (uintptr_t)(f->a + f->used);
	f->used += n;
	if (f->nobjs < FK_MAX_OBJS)
		f->objs[f->nobjs++] = at;
	return at;
}

/* Writes land inside the arena whatever the layout says. */
static void put(const struct fake *f, uint64_t addr, uint64_t off, const void *v, size_t n)
{
	uint64_t base = (uintptr_t)f->a;

	if (addr < base || off > ARENA_SIZE || addr - base > ARENA_SIZE - off ||
	    addr + off - base > ARENA_SIZE - n)
		return;
	memcpy(f->a + (addr - base) + off, v, n);
}

static void put64(const struct fake *f, uint64_t addr, uint64_t off, uint64_t v)
{
	put(f, addr, off, &v, 8);
}

static void put32(const struct fake *f, uint64_t addr, uint64_t off, uint32_t v)
{
	put(f, addr, off, &v, 4);
}

static uint64_t fk_str(struct fake *f, const char *s)
{
	size_t n = strlen(s);
	uint64_t o = fk_alloc(f, f->l.str_ascii_data + n + 1);

	put64(f, o, f->l.str_length, n);
	put32(f, o, f->l.str_state, (1u << 2) | (1u << 5) | (1u << 6));
	put(f, o, f->l.str_ascii_data, s, n + 1);
	return o;
}

static uint64_t fk_str_ucs2(struct fake *f, const uint16_t *s, size_t n)
{
	uint64_t o = fk_alloc(f, f->l.str_compact_data + 2 * n + 2);

	put64(f, o, f->l.str_length, n);
	put32(f, o, f->l.str_state, (2u << 2) | (1u << 5));
	put(f, o, f->l.str_compact_data, s, 2 * n);
	return o;
}

static uint64_t fk_bytes(struct fake *f, const uint8_t *b, size_t n)
{
	uint64_t o = fk_alloc(f, f->l.bytes_sval + n + 1);

	put64(f, o, f->l.bytes_size, n);
	put(f, o, f->l.bytes_sval, b, n);
	return o;
}

static uint64_t fk_tuple(struct fake *f, const uint64_t *items, size_t n)
{
	uint64_t o = fk_alloc(f, f->l.tuple_item + 8 * n);

	put64(f, o, f->l.tuple_size, n);
	for (size_t i = 0; i < n; i++)
		put64(f, o, f->l.tuple_item + 8 * i, items[i]);
	return o;
}

/* A PEP 657 table: unit 0 -> first, 1-2 -> first+1, 3-6 -> first+4; `big`:
 * 100 one-unit entries of +1 (200 bytes, too big to be cached inline). */
static uint64_t fk_linetable(struct fake *f, bool big)
{
	static const uint8_t small_tab[] = { 0xe8, 0x00, 0xd9, 0x04, 0x09, 0xeb, 0x06 };
	uint8_t tab[200];

	if (!big)
		return fk_bytes(f, small_tab, sizeof(small_tab));
	for (int i = 0; i < 100; i++) {
		tab[2 * i] = 0xe8;	/* no-columns entry, one unit */
		tab[2 * i + 1] = 0x02;	/* svarint +1 */
	}
	return fk_bytes(f, tab, sizeof(tab));
}

static uint64_t fk_code(struct fake *f, uint64_t file, const char *qual, int first, bool big_lt, uint64_t names)
{
	uint64_t o = fk_alloc(f, f->l.co_code_adaptive + 256);

	put64(f, o, f->l.ob_type, f->type_code);
	put64(f, o, f->l.co_filename, file);
	put64(f, o, f->l.co_qualname, fk_str(f, qual));
	put64(f, o, f->l.co_name, fk_str(f, qual));
	put64(f, o, f->l.co_linetable, fk_linetable(f, big_lt));
	put64(f, o, f->l.co_localsplusnames, names);
	put32(f, o, f->l.co_firstlineno, (uint32_t)first);
	return o;
}

static uint64_t tagged(const struct fake *f, uint64_t ref)
{
	return f->l.tag_mask ? ref | 1 : ref;	/* 3.14 deferred reference */
}

static void fk_frame_fields(struct fake *f, uint64_t fr, uint64_t code, int64_t idx, uint64_t prev, uint8_t owner)
{
	put64(f, fr, f->l.fr_code, code ? tagged(f, code) : 0);
	put64(f, fr, f->l.fr_previous, prev);
	put64(f, fr, f->l.fr_instr, code + f->l.co_code_adaptive + (uint64_t)(2 * idx));
	put(f, fr, f->l.fr_owner, &owner, 1);
}

/* Push a frame running `code` at unit idx; an `entry` frame was called
 * from C (3.11: is_entry; 3.12+: a shim frame below it). */
static void fk_push(struct fake *f, uint64_t code, int64_t idx, bool entry, uint64_t local0)
{
	uint64_t prev = f->innermost, fr;
	size_t stride = f->l.fr_size + 16;

	if (f->nframes + 2 > FK_MAX_FRAMES || f->chunk_used + stride > (size_t)FK_MAX_FRAMES * stride)
		return;
	if (entry && f->l.owner_shim) {
		uint64_t shim = fk_alloc(f, f->l.fr_size);	/* on the "C stack", not in the chunk */

		fk_frame_fields(f, shim, 0, 0, prev, (uint8_t)(f->l.tag_mask ? 4 : 3));
		f->frames[f->nframes++] = shim;
		prev = shim;
	}
	fr = f->chunk + 24 + f->chunk_used;
	f->chunk_used += stride;
	fk_frame_fields(f, fr, code, idx, prev, 0);
	if (f->l.fr_is_entry != SB_PYOFF_NONE) {
		uint8_t e = entry;
		put(f, fr, f->l.fr_is_entry, &e, 1);
	}
	put64(f, fr, f->l.fr_localsplus, local0 ? tagged(f, local0) : 0);
	f->frames[f->nframes++] = fr;
	f->innermost = fr;
}

/* The built-in 3.11/3.12 tables, the real 3.13/3.14 blobs, or a 3.13 blob
 * with a few words changed that the parser still accepts (a layout no
 * CPython has, which a forged runtime may claim). */
static int fk_layout(unsigned which, struct fin *in, struct sb_pylayout *l)
{
	uint8_t blob[8 + 94 * 8];
	uint64_t words[94];
	size_t nw = which == 4 ? 94 : 72;

	if (which == 0)
		return sb_pylayout_builtin(0x030b02f0, l);
	if (which == 1)
		return sb_pylayout_builtin(0x030c01f0, l);
	memcpy(words, which == 4 ? dbg314_words : dbg313_words, nw * 8);
	if (which == 3)
		for (int k = fin_u8(in) % 4; k > 0; k--) {
			uint8_t w = fin_u8(in);

			words[2 + w % 70] = fin_u16(in);
		}
	memcpy(blob, "xdebugpy", 8);
	memcpy(blob + 8, words, nw * 8);
	return sb_pylayout_from_debug_offsets(blob, 8 + nw * 8, 0, l);
}

/* Runtime, one interpreter, a decoy thread then ours, an empty chunk. */
static void fk_init(struct fake *f)
{
	const struct sb_pylayout *l = &f->l;
	size_t stride = l->fr_size + 16, size = 24 + (size_t)FK_MAX_FRAMES * stride;

	f->a = arena;
	memset(f->a, 0, ARENA_SIZE);
	f->used = 64;
	f->type_code = fk_alloc(f, 64);
	f->runtime = fk_alloc(f, l->rt_interpreters_head + 8);
	f->interp = fk_alloc(f, (l->is_threads_head > l->is_next ? l->is_threads_head : l->is_next) + 8);
	f->tstate = fk_alloc(f, SB_PYLAYOUT_MAX_TSTATE);
	f->decoy = fk_alloc(f, SB_PYLAYOUT_MAX_TSTATE);
	put64(f, f->runtime, l->rt_interpreters_head, f->interp);
	put64(f, f->interp, l->is_threads_head, f->decoy);
	put64(f, f->decoy, l->ts_next, f->tstate);
	put64(f, f->tstate, l->ts_prev, f->decoy);
	put64(f, f->decoy, l->ts_native_thread_id, (uint64_t)gettid() + 1);
	put64(f, f->tstate, l->ts_native_thread_id, (uint64_t)gettid());
	put64(f, f->tstate, l->ts_interp, f->interp);
	f->chunk = fk_alloc(f, size);
	put64(f, f->chunk, 8, size);
	put64(f, f->tstate, l->ts_datastack_chunk, f->chunk);
	if (l->ts_cframe != SB_PYOFF_NONE) {
		f->cframe = fk_alloc(f, 32);
		put64(f, f->tstate, l->ts_cframe, f->cframe);
	}
}

static void fk_finish(struct fake *f)
{
	if (f->cframe)
		put64(f, f->cframe, f->l.cframe_current_frame, f->innermost);
	else
		put64(f, f->tstate, f->l.ts_current_frame, f->innermost);
}

static void scenario(struct fake *f, unsigned which)
{
	static const uint16_t upath[] = { '/', 'a', 'p', 'p', '/', 'd', 0xef, 'r', 0x20ac, '.', 'p', 'y' };

	switch (which) {
	case 0: {
		/* main.py imports pkg.mod through _find_and_load. */
		uint64_t names = fk_tuple(f, (uint64_t[]){ fk_str(f, "name"), fk_str(f, "import_") }, 2);
		uint64_t c_main = fk_code(f, fk_str(f, "/app/main.py"), "<module>", 1, true, 0);
		uint64_t c_fal = fk_code(f, fk_str(f, "<frozen importlib._bootstrap>"), "_find_and_load", 1000,
					 false, names);
		uint64_t c_inner = fk_code(f, fk_str(f, "/app/pkg/mod.py"), "Cls.inner", 10, false, 0);

		fk_push(f, c_main, 80, true, 0);
		fk_push(f, c_fal, 0, false, fk_str(f, "pkg.mod"));
		fk_push(f, c_inner, 3, false, 0);
		break;
	}
	case 1: {
		/* exec() of a string from a function of a non-ASCII file. */
		uint64_t c_main = fk_code(f, fk_str(f, "/app/main.py"), "<module>", 1, false, 0);
		uint64_t c_run = fk_code(f, fk_str_ucs2(f, upath, 12), "run", 20, false, 0);
		uint64_t c_exec = fk_code(f, fk_str(f, "<string>"), "<module>", 1, false, 0);

		fk_push(f, c_main, 0, true, 0);
		fk_push(f, c_run, 3, false, 0);
		fk_push(f, c_exec, 1, true, 0);
		break;
	}
	default: {
		/* Deeper than the walk bound, library frames on top. */
		uint64_t c_user = fk_code(f, fk_str(f, "/app/deep.py"), "recurse", 5, false, 0);
		uint64_t c_lib = fk_code(f, fk_str(f, "/usr/lib/python3.11/json/decoder.py"), "decode", 300, true, 0);

		for (int i = 0; i < 1100; i++)
			fk_push(f, c_user, 3, false, 0);
		for (int i = 0; i < 40; i++)
			fk_push(f, c_lib, 0, i == 0, 0);
		break;
	}
	}
	fk_finish(f);
}

static void check_printable(const struct sb_pystack *s)
{
	FUZZ_CHECK(s->n <= SB_PYLOC_MAX_FRAMES);
	FUZZ_CHECK(s->depth <= SB_PY_MAX_WALK);
	FUZZ_CHECK(strnlen(s->importing, sizeof(s->importing)) < sizeof(s->importing));
	FUZZ_CHECK(fuzz_one_line(s->importing, strlen(s->importing)));
	for (size_t i = 0; i < s->n; i++) {
		const struct sb_pyframe *fr = &s->f[i];

		FUZZ_CHECK(strnlen(fr->file, sizeof(fr->file)) < sizeof(fr->file));
		FUZZ_CHECK(strnlen(fr->func, sizeof(fr->func)) < sizeof(fr->func));
		FUZZ_CHECK(fuzz_one_line(fr->file, strlen(fr->file)));
		FUZZ_CHECK(fuzz_one_line(fr->func, strlen(fr->func)));
		FUZZ_CHECK(fr->line >= -1);
	}
	FUZZ_CHECK(s->user_frame >= -1 && s->user_frame < (int)s->n);
	char loc[512];
	sb_pystack_format_loc(s, loc, sizeof(loc));
	FUZZ_CHECK(fuzz_one_line(loc, strlen(loc)));
}

/* One patch record: op, object, offset, value. */
static void patch(struct fake *f, struct fin *in, bool second, bool *any_second)
{
	uint8_t op = fin_u8(in);
	uint16_t obj = fin_u16(in), off = fin_u16(in);
	uint64_t val = fin_u64(in), v, at;

	if (((op & 0x20) != 0) != second) {
		*any_second |= (op & 0x20) != 0;
		return;
	}
	if (op & 0x40)
		at = (uintptr_t)f->a + 64 + ((uint64_t)off * 8 + (obj & 7)) % (f->used - 72);
	else
		at = f->objs[obj % f->nobjs] + off % 1024;
	switch (op & 7) {
	case 0: v = 0; break;
	case 1: v = val; break;
	case 2: v = UINT64_C(1) << (val % 64); break;
	case 3: v = (uintptr_t)f->a + 64 + val % (f->used - 64); break;
	case 4: v = f->nframes ? f->frames[val % f->nframes] + (val >> 32) % 16 : 0; break;
	case 5: v = at; break;	/* points at itself */
	case 6: v = UINT64_C(0xffff800000000000) + val % 4096; break;
	default: v = UINT64_MAX; break;
	}
	switch (op >> 3 & 3) {
	case 0: put(f, at, 0, &v, 1); break;
	case 1: { uint32_t w = (uint32_t)v; put(f, at, 0, &w, 4); break; }
	default: put64(f, at, 0, v); break;
	}
}

static struct sb_pyproc *fk_proc(const struct fake *f)
{
	struct sb_pyproc *p = calloc(1, sizeof(*p));

	if (!p || sb_mem_open(&p->mem, getpid()) != 0)
		abort();
	p->pid = getpid();
	p->lay = f->l;
	p->runtime = f->runtime;
	p->code_type = f->type_code;
	p->same_pidns = true;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

/* expect_n >= 0: the runtime is unpatched, the walk must find the
 * scenario (else the harness fuzzes nothing deeper than the thread list). */
static void walk_and_check(struct sb_pyproc *p, pid_t tid, int expect_n)
{
	struct sb_pystack s;
	uint64_t tstates[SB_PY_MAX_INTERPS];
	pid_t tids[SB_PY_MAX_INTERPS];
	size_t n = 0;
	int rc;

	rc = sb_pyproc_stack(p, tid, &s);
	FUZZ_CHECK(rc == 0);
	check_printable(&s);
	if (expect_n >= 0)
		FUZZ_CHECK(s.n == (size_t)expect_n);
	rc = sb_pyproc_list_threads(p, tstates, tids, SB_PY_MAX_INTERPS, &n);
	FUZZ_CHECK(rc <= 0 && n <= SB_PY_MAX_INTERPS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake f;
	struct fin in = { data, size }, again;
	uint8_t sel = fin_u8(&in);
	struct sb_pyproc *p;
	bool any_second = false;
	int expect;
	pid_t tid;

	if (!arena) {
		/* At a fixed address, so that an input naming raw addresses
		 * replays the same in another process. */
		arena = mmap((void *)ARENA_ADDR, ARENA_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (arena == MAP_FAILED && !(arena = aligned_alloc(4096, ARENA_SIZE)))
			abort();
	}
	memset(&f, 0, sizeof(f));
	if (fk_layout(sel % 5, &in, &f.l) != 0)
		return 0;
	fk_init(&f);
	scenario(&f, (sel >> 3) % 3);
	if (f.full)
		return 0;
	tid = sel & 0x80 ? gettid() + 1 : gettid();	/* ours, or the decoy's */
	expect = in.n || sel % 5 == 3 ? -1 : sel & 0x80 ? 0 : (sel >> 3) % 3 == 2 ? SB_PYLOC_MAX_FRAMES : 3;
	again = in;
	while (in.n)
		patch(&f, &in, false, &any_second);
	p = fk_proc(&f);
	walk_and_check(p, tid, expect);
	if (any_second) {
		while (again.n)
			patch(&f, &again, true, &any_second);
		walk_and_check(p, tid, -1);
	}
	sb_pyproc_free(p);
	return 0;
}
