/* Unit tests of tracer/: the location-table and str decoders, the
 * _Py_DebugOffsets parser and its validation, the built-in layouts, the
 * classifier, the ELF reader, the memory reader, and the frame walker run
 * on a forged CPython runtime built in this process's own memory (read back
 * through /proc/self/mem) for the 3.11, 3.12, 3.13 and 3.14 layouts, then
 * corrupted at random and adversarially: the walker must always terminate
 * with a bounded, printable result. */
#include "config.h"

#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem.h"
#include "pydecode.h"
#include "pyframes.h"
#include "pyproc.h"
#include "pyversion.h"
#include "sbelf.h"

/* ---- location tables ---- */

/* 3.11.2: co_linetable of sample() (firstlineno 2) and the line of each code unit */
static const uint8_t lt_real[] = {0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41,
0xd8, 0x07, 0x08, 0x88, 0x32, 0x82, 0x76, 0x80, 0x76, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00,
0x01, 0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d,
0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0x88, 0x01, 0xf0,
0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x0c, 0x00, 0x10, 0x11, 0xf0, 0x05, 0x02, 0x09, 0x1b,
0x88, 0x11, 0xd8, 0x09, 0x0a, 0xdd, 0x09, 0x0a, 0xf0, 0x05, 0x02, 0x09, 0x0c, 0xf0, 0x00, 0x02,
0x09, 0x0c, 0xe0, 0x16, 0x1a, 0xf0, 0x05, 0x00, 0x05, 0x06, 0xf0, 0x06, 0x05, 0x05, 0x0d, 0xdd,
0x0f, 0x16, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf1, 0x05, 0x02, 0x10, 0x0f, 0xf4, 0x00, 0x02,
0x10, 0x0f, 0xf0, 0x00, 0x02, 0x09, 0x0f, 0xf8, 0xf5, 0x06, 0x00, 0x0c, 0x15, 0xf0, 0x00, 0x01,
0x05, 0x0d, 0xf0, 0x00, 0x01, 0x05, 0x0d, 0xf0, 0x00, 0x01, 0x05, 0x0d, 0xd8, 0x08, 0x0c, 0x88,
0x04, 0xf0, 0x03, 0x01, 0x05, 0x0d, 0xf8, 0xf8, 0xf8, 0xe0, 0x0b, 0x0c, 0x80, 0x48};
static const int lt_real_lines[] = {2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 6, 6, 6, 6, 6, 6, 6,
6, 6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 8, 8, 14, 12, 12, 13, 14, 14, 14, 14, 14, 14,
12, 12, 14, 12, 15, 16, 16, 16, 16, 16, 16, 17, 18, 16, 16, 16, 16, 16, 16, 16, 16, -1, 19, 19, 19,
19, 19, 19, 19, 19, 19, 20, 20, 19, -1, -1, -1, 21, 21};
#define LT_REAL_FIRSTLINENO 2
/* 3.13.0: co_linetable of sample() (firstlineno 2) and the line of each code unit */
static const uint8_t lt_real313[] = {0x80, 0x00, 0xd8, 0x08, 0x09, 0x89, 0x05, 0x80, 0x41, 0xd8,
0x07, 0x08, 0x88, 0x32, 0x83, 0x76, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x94, 0x68, 0xf3, 0x03, 0x01,
0x0d, 0x20, 0xd9, 0x16, 0x1e, 0x90, 0x11, 0xf3, 0x03, 0x00, 0x0e, 0x0f, 0xd9, 0x16, 0x1e, 0xf0,
0x03, 0x00, 0x09, 0x0a, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x11,
0x88, 0x01, 0xf6, 0x0c, 0x00, 0x10, 0x11, 0xf0, 0x05, 0x00, 0x0a, 0x0b, 0xd8, 0x09, 0x0a, 0xdc,
0x09, 0x0a, 0xf1, 0x05, 0x02, 0x09, 0x0c, 0xe0, 0x16, 0x1a, 0xf0, 0x05, 0x00, 0x05, 0x06, 0xf0,
0x06, 0x05, 0x05, 0x0d, 0xdc, 0x0f, 0x16, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf3, 0x05, 0x02,
0x10, 0x0f, 0xf0, 0x00, 0x02, 0x09, 0x0f, 0xf9, 0xf2, 0x17, 0x01, 0x0d, 0x20, 0xf8, 0xf4, 0x1c,
0x00, 0x0c, 0x15, 0xf3, 0x00, 0x01, 0x05, 0x0d, 0xd8, 0x08, 0x0c, 0xd8, 0x0b, 0x0c, 0x80, 0x48,
0xf0, 0x05, 0x01, 0x05, 0x0d, 0xfa};
static const int lt_real313_lines[] = {2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6, 6,
6, 6, 5, 5, 5, 5, 6, 6, 6, 5, 5, 5, 5, 6, 6, 5, 5, 5, 8, 8, 14, 14, 14, 14, 14, 14, 14, 12, 13, 14,
14, 14, 14, 14, 12, 12, 14, 12, 15, 16, 16, 16, 16, 16, 17, 18, 16, 16, 16, 16, 16, -1, -1, 5, 5,
5, -1, 19, 19, 19, 19, 19, 19, 19, 19, 19, 20, 21, 21, 19, -1, -1, -1};
#define LT_REAL313_FIRSTLINENO 2

static void lt_reals(const uint8_t *tab, size_t len, const int *lines, size_t n, int first)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(sb_linetable_line(tab, len, first, (int64_t)i) == lines[i],
			      "unit %zu: got %d, want %d", i, sb_linetable_line(tab, len, first, (int64_t)i), lines[i]);
	ck_assert_int_eq(sb_linetable_line(tab, len, first, (int64_t)n), -1);
	ck_assert_int_eq(sb_linetable_line(tab, len, first, -1), first);
}

START_TEST(linetable_real_cpython)
{
	lt_reals(lt_real, sizeof(lt_real), lt_real_lines, sizeof(lt_real_lines) / sizeof(int), LT_REAL_FIRSTLINENO);
	lt_reals(lt_real313, sizeof(lt_real313), lt_real313_lines, sizeof(lt_real313_lines) / sizeof(int),
		 LT_REAL313_FIRSTLINENO);
}
END_TEST

/* A small encoder for the PEP 657 format, to build tables the tests need. */
struct lt_enc {
	uint8_t b[4096];
	size_t n;
	int lines[2048];	/* expected line of each code unit */
	size_t units;
	int line;
};

static void enc_varint(struct lt_enc *e, uint32_t v)
{
	while (v >= 64) {
		e->b[e->n++] = (uint8_t)(0x40 | (v & 63));
		v >>= 6;
	}
	e->b[e->n++] = (uint8_t)v;
}

static void enc_svarint(struct lt_enc *e, int v)
{
	enc_varint(e, v < 0 ? ((uint32_t)-v << 1) | 1 : (uint32_t)v << 1);
}

enum { E_SHORT, E_ONE, E_NOCOL, E_LONG, E_NONE };

static void enc(struct lt_enc *e, int kind, unsigned units, int delta)
{
	int code = kind == E_SHORT ? 3 : kind == E_ONE ? 10 + delta : kind == E_NOCOL ? 13 : kind == E_LONG ? 14 : 15;

	e->b[e->n++] = (uint8_t)(0x80 | (code << 3) | (units - 1));
	switch (kind) {
	case E_SHORT:
		e->b[e->n++] = 0x12;
		break;
	case E_ONE:
		e->b[e->n++] = 4;
		e->b[e->n++] = 9;
		break;
	case E_NOCOL:
		enc_svarint(e, delta);
		break;
	case E_LONG:
		enc_svarint(e, delta);
		enc_varint(e, 3);
		enc_varint(e, 1000);	/* a two-byte varint */
		enc_varint(e, 5);
		break;
	}
	if (kind != E_SHORT && kind != E_NONE) {
		int64_t line = (int64_t)e->line + delta;
		e->line = line > INT32_MAX ? INT32_MAX : line < INT32_MIN ? INT32_MIN : (int)line;
	}
	for (unsigned i = 0; i < units; i++)
		e->lines[e->units++] = kind == E_NONE ? -1 : e->line;
}

static const struct { int kind; unsigned units; int delta; } lt_script[] = {
	{ E_NOCOL, 1, 0 }, { E_SHORT, 3, 0 }, { E_ONE, 2, 1 }, { E_ONE, 8, 2 }, { E_NOCOL, 4, 100 },
	{ E_NONE, 2, 0 }, { E_LONG, 5, -37 }, { E_LONG, 1, 5000 }, { E_SHORT, 8, 0 }, { E_NOCOL, 2, -5063 },
	{ E_ONE, 1, 0 }, { E_NONE, 1, 0 }, { E_LONG, 3, 0 },
};

static void build_script(struct lt_enc *e, int first)
{
	memset(e, 0, sizeof(*e));
	e->line = first;
	for (size_t i = 0; i < sizeof(lt_script) / sizeof(lt_script[0]); i++)
		enc(e, lt_script[i].kind, lt_script[i].units, lt_script[i].delta);
}

START_TEST(linetable_all_entry_kinds)
{
	struct lt_enc e;

	build_script(&e, 40);
	lt_reals(e.b, e.n, e.lines, e.units, 40);
}
END_TEST

START_TEST(linetable_fed_in_pieces)
{
	struct lt_enc e;

	build_script(&e, 7);
	/* Every split point, as the remote reader's chunks would cut it. */
	for (size_t piece = 1; piece <= e.n; piece++) {
		for (size_t idx = 0; idx <= e.units; idx++) {
			struct sb_lt_state st;
			uint8_t buf[64];
			size_t off = 0, have = 0;

			sb_lt_init(&st, 7);
			while (!st.done && off < e.n) {
				size_t want = e.n - off < piece ? e.n - off : piece;
				memcpy(buf + have, e.b + off, want);
				off += want;
				have += want;
				size_t used = sb_lt_feed(&st, buf, have, (int64_t)idx, off >= e.n);
				ck_assert_uint_le(used, have);
				memmove(buf, buf + used, have - used);
				have -= used;
				ck_assert(st.done || have <= 32);	/* one incomplete entry at most */
			}
			ck_assert(st.done);
			ck_assert_int_eq(st.found, idx < e.units ? e.lines[idx] : -1);
		}
	}
}
END_TEST

START_TEST(linetable_truncated_and_malformed)
{
	struct lt_enc e;

	build_script(&e, 1);
	/* A truncated table answers for its complete entries, -1 beyond. */
	for (size_t cut = 0; cut < e.n; cut++)
		for (size_t idx = 0; idx < e.units; idx++) {
			int got = sb_linetable_line(e.b, cut, 1, (int64_t)idx);
			ck_assert(got == e.lines[idx] || got == -1);
		}
	/* No entry-start bit. */
	static const uint8_t bad1[] = { 0x00, 0x01 };
	ck_assert_int_eq(sb_linetable_line(bad1, sizeof(bad1), 5, 0), -1);
	/* A varint that never ends, and one that runs into the next entry. */
	static const uint8_t bad2[] = { 0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	ck_assert_int_eq(sb_linetable_line(bad2, sizeof(bad2), 5, 0), -1);
	static const uint8_t bad3[] = { 0xe8, 0x41, 0x80, 0x00 };
	ck_assert_int_eq(sb_linetable_line(bad3, sizeof(bad3), 5, 0), -1);
	/* Line deltas saturate instead of overflowing. */
	struct lt_enc big;
	memset(&big, 0, sizeof(big));
	for (int i = 0; i < 200; i++)
		enc(&big, E_NOCOL, 1, 1 << 30);
	ck_assert_int_ge(sb_linetable_line(big.b, big.n, INT32_MAX - 5, 199), -1);
	ck_assert_int_eq(sb_linetable_line(big.b, 0, 3, 0), -1);
	ck_assert_int_eq(sb_linetable_line(NULL, 0, 3, -1), 3);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

START_TEST(linetable_random_bytes)
{
	uint8_t buf[512];

	for (int round = 0; round < 20000; round++) {
		size_t len = rnd() % sizeof(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		int64_t idx = (int64_t)(rnd() % 600) - 1;
		int got = sb_linetable_line(buf, len, (int)(rnd() % 100000), idx);
		ck_assert_int_ge(got, -1);
	}
}
END_TEST

/* ---- str objects ---- */

START_TEST(str_shapes)
{
	struct sb_str_shape sh;

	ck_assert_int_eq(sb_str_shape((1u << 2) | (1u << 5) | (1u << 6), &sh), 0);
	ck_assert(sh.ascii && sh.compact && sh.kind == 1);
	ck_assert_int_eq(sb_str_shape((2u << 2) | (1u << 5), &sh), 0);
	ck_assert(!sh.ascii && sh.compact && sh.kind == 2);
	ck_assert_int_eq(sb_str_shape((4u << 2) | (1u << 5) | 3u, &sh), 0);	/* interned bits ignored */
	ck_assert_int_eq(sh.kind, 4);
	ck_assert_int_eq(sb_str_shape((1u << 2), &sh), 0);	/* legacy latin-1 */
	ck_assert(!sh.compact);
	ck_assert_int_eq(sb_str_shape(0, &sh), -EINVAL);		/* kind 0 */
	ck_assert_int_eq(sb_str_shape((3u << 2) | (1u << 5), &sh), -EINVAL);
	ck_assert_int_eq(sb_str_shape((2u << 2) | (1u << 5) | (1u << 6), &sh), -EINVAL);	/* ascii UCS2 */
	ck_assert_int_eq(sb_str_shape((1u << 2) | (1u << 6), &sh), -EINVAL);	/* ascii, not compact */
}
END_TEST

START_TEST(str_utf8_kinds)
{
	char out[64];
	static const uint8_t latin1[] = { 'c', 'a', 'f', 0xe9 };
	static const uint16_t ucs2[] = { 0x20ac, 'x', 0x00fc };
	static const uint32_t ucs4[] = { 0x1f600, 'a', 0x10ffff };

	ck_assert_uint_eq(sb_str_to_utf8(latin1, 4, 1, out, sizeof(out)), 5);
	ck_assert_str_eq(out, "caf\xc3\xa9");
	ck_assert_uint_eq(sb_str_to_utf8(ucs2, 3, 2, out, sizeof(out)), 6);
	ck_assert_str_eq(out, "\xe2\x82\xac" "x\xc3\xbc");
	ck_assert_uint_eq(sb_str_to_utf8(ucs4, 3, 4, out, sizeof(out)), 9);
	ck_assert_str_eq(out, "\xf0\x9f\x98\x80" "a\xf4\x8f\xbf\xbf");
}
END_TEST

START_TEST(str_utf8_hostile)
{
	char out[16];
	static const uint8_t ctl[] = { 'a', '\n', 'b', '\r', 0x1b, 0x7f, 0x85, 0 };
	static const uint16_t sur[] = { 0xd800, 0xdfff, 0x2028 };
	static const uint32_t huge[] = { 0x110000, 0xffffffff, 'z' };
	static const uint32_t wide[] = { 0x1f600, 0x1f600, 0x1f600, 0x1f600 };

	sb_str_to_utf8(ctl, sizeof(ctl), 1, out, sizeof(out));
	ck_assert_str_eq(out, "a?b?????");
	sb_str_to_utf8(sur, 3, 2, out, sizeof(out));
	ck_assert_str_eq(out, "???");
	sb_str_to_utf8(huge, 3, 4, out, sizeof(out));
	ck_assert_str_eq(out, "??z");
	/* Truncation keeps whole characters. */
	ck_assert_uint_eq(sb_str_to_utf8(wide, 4, 4, out, 10), 8);
	ck_assert_uint_eq(strlen(out), 8);
	ck_assert_uint_eq(sb_str_to_utf8(wide, 4, 4, out, 4), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(sb_str_to_utf8(wide, 4, 7, out, 16), 0);	/* bad kind */
	ck_assert_uint_eq(sb_str_to_utf8(wide, 4, 4, out, 0), 0);
}
END_TEST

START_TEST(str_utf8_random)
{
	uint8_t in[256];
	char out[64];

	for (int round = 0; round < 20000; round++) {
		unsigned kind = (unsigned[]){ 1, 2, 4 }[rnd() % 3];
		size_t n = rnd() % (sizeof(in) / kind);
		size_t cap = 1 + rnd() % sizeof(out);
		for (size_t i = 0; i < sizeof(in); i++)
			in[i] = (uint8_t)rnd();
		size_t len = sb_str_to_utf8(in, n, kind, out, cap);
		ck_assert_uint_lt(len, cap);
		ck_assert_uint_eq(strlen(out), len);
		for (size_t i = 0; i < len; i++)
			ck_assert((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
	}
}
END_TEST

/* ---- _Py_DebugOffsets ---- */

#include "pydebug_fixtures.h"
#include "pyforge.h"


START_TEST(debug_offsets_313)
{
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pylayout l;
	size_t len = make_blob(blob, dbg313_words, 72);

	ck_assert_uint_eq(len, 584);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0x030d00f0, &l), 0);
	ck_assert_int_eq(l.minor, 13);
	ck_assert(l.from_debug_offsets && !l.instr_is_prev);
	ck_assert_uint_eq(l.rt_interpreters_head, 632);
	ck_assert_uint_eq(l.is_next, 7264);
	ck_assert_uint_eq(l.is_threads_head, 7344);
	ck_assert_uint_eq(l.ts_current_frame, 72);
	ck_assert_uint_eq(l.ts_native_thread_id, 160);
	ck_assert_uint_eq(l.ts_cframe, SB_PYOFF_NONE);
	ck_assert_uint_eq(l.fr_size, 80);
	ck_assert_uint_eq(l.fr_code, 0);
	ck_assert_uint_eq(l.fr_previous, 8);
	ck_assert_uint_eq(l.fr_instr, 56);
	ck_assert_uint_eq(l.fr_owner, 70);
	ck_assert_uint_eq(l.fr_localsplus, 72);
	ck_assert_uint_eq(l.co_firstlineno, 68);
	ck_assert_uint_eq(l.co_code_adaptive, 200);
	ck_assert_uint_eq(l.co_qualname, 128);
	ck_assert_uint_eq(l.str_ascii_data, 40);
	ck_assert_uint_eq(l.str_compact_data, 56);
	ck_assert_uint_eq(l.tag_mask, 0);
	ck_assert_uint_eq(l.owner_shim, 3);
	/* Py_Version is optional; a different micro is fine, a different minor not. */
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0, &l), 0);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0x030d05f0, &l), 0);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0x030c01f0, &l), -ESTALE);
}
END_TEST

START_TEST(debug_offsets_314)
{
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pylayout l;
	size_t len = make_blob(blob, dbg314_words, 94);

	ck_assert_uint_eq(len, 760);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0x030e00f0, &l), 0);
	ck_assert_int_eq(l.minor, 14);
	ck_assert_uint_eq(l.rt_interpreters_head, 808);
	ck_assert_uint_eq(l.is_next, 7272);
	ck_assert_uint_eq(l.is_threads_head, 7344);
	ck_assert_uint_eq(l.ts_native_thread_id, 160);
	ck_assert_uint_eq(l.ts_datastack_chunk, 232);
	ck_assert_uint_eq(l.fr_size, 88);
	ck_assert_uint_eq(l.fr_localsplus, 80);
	ck_assert_uint_eq(l.fr_owner, 74);
	ck_assert_uint_eq(l.co_code_adaptive, 208);
	ck_assert_uint_eq(l.bytes_sval, 32);
	ck_assert_uint_eq(l.str_length, 16);
	ck_assert_uint_eq(l.tag_mask, 3);
	ck_assert_uint_eq(l.owner_shim, 3);
	/* Nothing a 3.13-ordered reading would pick up. */
	const uint32_t used[] = {
		l.rt_finalizing, l.rt_interpreters_head, l.is_next, l.is_threads_head, l.ts_next, l.ts_interp,
		l.ts_native_thread_id, l.ts_thread_id, l.ts_datastack_chunk, l.ts_current_frame, l.fr_size,
		l.fr_previous, l.fr_code, l.fr_instr, l.fr_owner, l.fr_localsplus, l.co_firstlineno,
		l.co_localsplusnames, l.co_filename, l.co_name, l.co_qualname, l.co_linetable,
		l.co_code_adaptive, l.ob_type, l.tuple_size, l.tuple_item, l.bytes_size, l.bytes_sval,
		l.str_length, l.str_state, l.str_ascii_data, l.str_compact_data,
	};
	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		ck_assert_uint_ne(used[i], S);
}
END_TEST

/* One validation rule per row: patch a word (index after the cookie), or
 * the cookie, and expect the parser's verdict. */
static const struct {
	const char *what;
	bool v314;
	int word;		/* -1: none */
	uint64_t value;
	size_t len;		/* 0: full blob */
	uint32_t py_version;
	int want;
} dbg_cases[] = {
	{ "good 3.13", false, -1, 0, 0, 0x030d00f0, 0 },
	{ "good 3.14", true, -1, 0, 0, 0x030e00f0, 0 },
	{ "free-threaded", false, 1, 1, 0, 0x030d00f0, -ENOTSUP },
	{ "3.15 layout unknown", false, 0, 0x030f00f0, 0, 0, -ENOTSUP },
	{ "3.12 has no debug offsets", false, 0, 0x030c00f0, 0, 0, -EINVAL },
	{ "python 4", false, 0, 0x040d00f0, 0, 0, -EINVAL },
	{ "version above u32", false, 0, UINT64_C(1) << 40, 0, 0, -EINVAL },
	{ "Py_Version disagrees", false, -1, 0, 0, 0x030e00f0, -ESTALE },
	{ "3.14 blob, 3.13 Py_Version", true, -1, 0, 0, 0x030d00f0, -ESTALE },
	{ "short blob", false, -1, 0, 300, 0, -EINVAL },
	{ "header only", false, -1, 0, 24, 0, -EINVAL },
	{ "tstate size over 1 MiB", false, 18, (1u << 20) + 8, 0, 0, -EINVAL },
	{ "tstate size zero", false, 18, 0, 0, 0, -EINVAL },
	{ "native_thread_id outside tstate", false, 24, 300, 0, 0, -EINVAL },
	{ "frame owner past frame size", false, 32, 80, 0, 0, -EINVAL },
	{ "frame larger than we read", false, 27, 4096, 0, 0, -EINVAL },
	{ "code header larger than we read", false, 42, 4096, 0, 0, -EINVAL },
	{ "filename past code header", false, 34, 300, 0, 0, -EINVAL },
	{ "interpreters_head outside runtime", false, 4, 0x452b8, 0, 0, -EINVAL },
	{ "datastack_chunk outside tstate", false, 25, 2000, 0, 0, -EINVAL },
	{ "3.14 frame size 2 MiB", true, 30, 2u << 20, 0, 0, -EINVAL },
	{ "3.14 owner outside frame", true, 35, 88, 0, 0, -EINVAL },
};

START_TEST(debug_offsets_validation)
{
	for (size_t i = 0; i < sizeof(dbg_cases) / sizeof(dbg_cases[0]); i++) {
		uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
		uint64_t words[94];
		struct sb_pylayout l;
		size_t n = dbg_cases[i].v314 ? 94 : 72, len;

		memcpy(words, dbg_cases[i].v314 ? dbg314_words : dbg313_words, n * 8);
		if (dbg_cases[i].word >= 0)
			words[dbg_cases[i].word] = dbg_cases[i].value;
		len = make_blob(blob, words, n);
		if (dbg_cases[i].len)
			len = dbg_cases[i].len;
		ck_assert_msg(sb_pylayout_from_debug_offsets(blob, len, dbg_cases[i].py_version, &l) == dbg_cases[i].want,
			      "%s: got %d", dbg_cases[i].what,
			      sb_pylayout_from_debug_offsets(blob, len, dbg_cases[i].py_version, &l));
	}
	/* Wrong cookie. */
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pylayout l;
	size_t len = make_blob(blob, dbg313_words, 72);
	blob[0] = 'X';
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0, &l), -EINVAL);
	/* A consistent tstate whose fields lie beyond the bytes we read of it. */
	uint64_t words[72];
	memcpy(words, dbg313_words, sizeof(words));
	words[18] = 4096;	/* thread_state.size */
	words[24] = 2048;	/* native_thread_id */
	len = make_blob(blob, words, 72);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0, &l), -EINVAL);
	words[24] = 160;
	len = make_blob(blob, words, 72);
	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0, &l), 0);
}
END_TEST

START_TEST(debug_offsets_random)
{
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pylayout l;

	for (int round = 0; round < 20000; round++) {
		bool v314 = rnd() & 1;
		uint64_t words[94];
		size_t n = v314 ? 94 : 72;
		memcpy(words, v314 ? dbg314_words : dbg313_words, n * 8);
		for (int k = 1 + (int)(rnd() % 3); k > 0; k--)
			words[2 + rnd() % (n - 2)] = rnd() % 4 == 0 ? rnd() : rnd() % 9000;
		size_t len = make_blob(blob, words, n);
		if (sb_pylayout_from_debug_offsets(blob, len, 0, &l) == 0) {
			/* Whatever was accepted keeps every read inside its bounds. */
			ck_assert_uint_le(l.ts_read, SB_PYLAYOUT_MAX_TSTATE);
			ck_assert_uint_le(l.fr_size, SB_PYLAYOUT_MAX_FRAME);
			ck_assert_uint_le(l.fr_owner + 1, l.fr_size);
			ck_assert_uint_le(l.fr_previous + 8, l.fr_size);
			ck_assert_uint_le(l.co_code_adaptive, SB_PYLAYOUT_MAX_CODE_HDR);
			ck_assert_uint_le(l.co_filename + 8, l.co_code_adaptive);
			ck_assert_uint_le(l.str_length + 8, l.str_ascii_data);
		}
	}
}
END_TEST

START_TEST(builtin_layouts)
{
	struct sb_pylayout l;

	ck_assert_int_eq(sb_pylayout_builtin(0x030b02f0, &l), 0);
	ck_assert_int_eq(l.minor, 11);
	ck_assert(l.instr_is_prev && !l.from_debug_offsets);
	ck_assert_uint_eq(l.ts_cframe, 56);
	ck_assert_uint_eq(l.cframe_current_frame, 8);
	ck_assert_uint_eq(l.ts_native_thread_id, 160);
	ck_assert_uint_eq(l.fr_code, 32);
	ck_assert_uint_eq(l.fr_previous, 48);
	ck_assert_uint_eq(l.fr_is_entry, 68);
	ck_assert_uint_eq(l.owner_shim, 0);
	ck_assert_uint_eq(l.co_code_adaptive, 184);
	ck_assert_uint_eq(l.str_ascii_data, 48);
	ck_assert_uint_eq(l.ts_read, 304);
	ck_assert_int_eq(sb_pylayout_builtin(0x030c01f0, &l), 0);
	ck_assert_uint_eq(l.is_threads_head, 72);
	ck_assert_uint_eq(l.ts_native_thread_id, 144);
	ck_assert_uint_eq(l.cframe_current_frame, 0);
	ck_assert_uint_eq(l.fr_owner, 70);
	ck_assert_uint_eq(l.owner_shim, 3);
	ck_assert_uint_eq(l.co_code_adaptive, 192);
	ck_assert_int_eq(sb_pylayout_builtin(0x030a0df0, &l), -ENOENT);	/* 3.10 */
	ck_assert_int_eq(sb_pylayout_builtin(0x030d00f0, &l), -ENOENT);	/* 3.13: debug offsets */
	ck_assert_int_eq(sb_pylayout_builtin(0x020712f0, &l), -ENOENT);
}
END_TEST

/* ---- classification ---- */

static const struct {
	const char *file, *qualname;
	unsigned want;
} class_cases[] = {
	{ "/home/u/app.py", "load", 0 },
	{ "/home/u/app.py", "<module>", SB_PYC_MODULE },
	{ "/usr/lib/python3.11/json/decoder.py", "JSONDecoder.decode", SB_PYC_LIBRARY },
	{ "/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py", "Thread.run", SB_PYC_LIBRARY },
	{ "/usr/lib64/python3.13t/os.py", "walk", SB_PYC_LIBRARY },
	{ "/home/u/venv/lib/python3.11/site-packages/req/api.py", "get", SB_PYC_LIBRARY },
	{ "/usr/lib/python3/dist-packages/apt/cache.py", "Cache", SB_PYC_LIBRARY },
	{ "/home/u/lib/python3stuff/app.py", "f", 0 },
	{ "/home/u/lib/python3.x/app.py", "f", 0 },
	{ "<frozen importlib._bootstrap>", "_find_and_load", SB_PYC_FROZEN | SB_PYC_LIBRARY | SB_PYC_FIND_AND_LOAD },
	{ "<frozen importlib._bootstrap>", "_call_with_frames_removed",
	  SB_PYC_FROZEN | SB_PYC_LIBRARY | SB_PYC_CALL_REMOVED },
	{ "<frozen importlib._bootstrap_external>", "_find_and_load", SB_PYC_FROZEN | SB_PYC_LIBRARY },
	{ "/tmp/x.py", "_find_and_load", 0 },
	{ "<frozen runpy>", "_run_code", SB_PYC_FROZEN | SB_PYC_LIBRARY | SB_PYC_RUN_CODE },
	{ "/usr/lib/python3.10/runpy.py", "_run_code", SB_PYC_LIBRARY | SB_PYC_RUN_CODE },
	{ "<string>", "<module>", SB_PYC_DYNFILE | SB_PYC_MODULE },
	{ "<string>", "__create_fn__.<locals>.__init__", SB_PYC_DYNFILE | SB_PYC_GENERATED },
	{ "<stdin>", "f", SB_PYC_DYNFILE },
	{ "<python-input-3>", "<module>", SB_PYC_DYNFILE | SB_PYC_MODULE },
	{ "__init__", "__init__", SB_PYC_SKIP },
	{ "/opt/sb/python/pysandboxes/agent.py", "hook", SB_PYC_LIBRARY },
	{ "/opt/sb/bootstrap/sitecustomize.py", "<module>", SB_PYC_LIBRARY | SB_PYC_MODULE },
	{ "/opt/sb/bootstrapper.py", "f", 0 },
	{ "", "", 0 },
};

START_TEST(classify_code)
{
	ck_assert_int_eq(sb_pyclassify_add_library_dir("/opt/sb/bootstrap//"), 0);
	for (size_t i = 0; i < sizeof(class_cases) / sizeof(class_cases[0]); i++)
		ck_assert_msg(sb_pyclassify_code(class_cases[i].file, class_cases[i].qualname) == class_cases[i].want,
			      "%s %s: 0x%x", class_cases[i].file, class_cases[i].qualname,
			      sb_pyclassify_code(class_cases[i].file, class_cases[i].qualname));
}
END_TEST

/* A stack described innermost first as "file|qualname|entry" rows. */
static void classify_rows(const char *const *rows, size_t n, struct sb_pystack *s, struct sb_pywalk *w)
{
	memset(s, 0, sizeof(*s));
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < n; i++) {
		char file[128], qual[96];
		int entry = 0;
		ck_assert_int_ge(sscanf(rows[i], "%127[^|]|%95[^|]|%d", file, qual, &entry), 2);
		w->item[i].flags = (uint16_t)sb_pyclassify_code(file, qual);
		w->item[i].entry = entry;
		w->item[i].file_hash = sb_pyhash(file);
		w->item[i].out = (int16_t)i;
		snprintf(s->f[i].file, sizeof(s->f[i].file), "%s", file);
		snprintf(s->f[i].func, sizeof(s->f[i].func), "%s", qual);
	}
	w->n = s->n = n;
	sb_pyclassify_stack(s, w);
}

#define ROWS(...) (const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *)

START_TEST(classify_stacks)
{
	struct sb_pystack s;
	struct sb_pywalk *w = calloc(1, sizeof(*w));

	/* exec(src) at app.py run(): the exec'd code and its function are eval code. */
	classify_rows(ROWS("<string>|f|0", "<string>|<module>|1", "/app/app.py|run|0", "/app/app.py|<module>|1"), &s, w);
	ck_assert(s.from_eval);
	ck_assert(s.f[0].flags & SB_PYFRAME_DYNAMIC && s.f[1].flags & SB_PYFRAME_DYNAMIC);
	ck_assert(!(s.f[2].flags & SB_PYFRAME_DYNAMIC));
	ck_assert_int_eq(s.user_frame, 2);
	/* exec of code compiled with a forged stdlib file name: caught by the shape. */
	classify_rows(ROWS("/usr/lib/python3.11/os.py|<module>|1", "/app/app.py|run|0", "/app/app.py|<module>|1"), &s, w);
	ck_assert(s.from_eval);
	ck_assert_int_eq(s.user_frame, 1);
	/* exec'd code calling a normal module function: stack is from eval, the function is not. */
	classify_rows(ROWS("/app/helper.py|g|0", "<string>|<module>|1", "/app/app.py|run|0", "/app/app.py|<module>|1"),
		      &s, w);
	ck_assert(s.from_eval);
	ck_assert(!(s.f[0].flags & SB_PYFRAME_DYNAMIC));
	ck_assert_int_eq(s.user_frame, 0);
	/* A function defined by exec, called later: only the file name tells. */
	classify_rows(ROWS("<string>|from_exec|0", "/app/app.py|later|0", "/app/app.py|<module>|1"), &s, w);
	ck_assert(s.from_eval);
	/* An import body is static code. */
	classify_rows(ROWS("/app/mod.py|<module>|1", "<frozen importlib._bootstrap>|_call_with_frames_removed|0",
			   "<frozen importlib._bootstrap>|_find_and_load|0", "/app/app.py|<module>|1"), &s, w);
	ck_assert(!s.from_eval);
	ck_assert_int_eq(s.user_frame, 0);
	/* python -m: runpy runs the main module. */
	classify_rows(ROWS("/app/app.py|main|0", "/app/app.py|<module>|1", "<frozen runpy>|_run_code|0",
			   "<frozen runpy>|_run_module_as_main|1"), &s, w);
	ck_assert(!s.from_eval);
	/* python -c: "<string>" is the main program, not eval code ... */
	classify_rows(ROWS("<string>|f|0", "<string>|<module>|1"), &s, w);
	ck_assert(!s.from_eval);
	ck_assert_int_eq(s.user_frame, 0);
	/* ... unless it runs exec itself. */
	classify_rows(ROWS("<string>|<module>|1", "<string>|<module>|1"), &s, w);
	ck_assert(s.from_eval);
	/* dataclasses' generated __init__ is benign stdlib code generation. */
	classify_rows(ROWS("/app/app.py|Config.__post_init__|0", "<string>|__create_fn__.<locals>.__init__|0",
			   "/app/app.py|<module>|1"), &s, w);
	ck_assert(!s.from_eval);
	/* exec called by the stdlib (site.py running a .pth line) is exempt. */
	classify_rows(ROWS("<string>|<module>|1", "/usr/lib/python3.11/site.py|addpackage|0",
			   "/usr/lib/python3.11/site.py|<module>|1"), &s, w);
	ck_assert(!s.from_eval);
	ck_assert_int_eq(s.user_frame, 0);	/* only non-library frame */
	/* Only library frames: no user frame. */
	classify_rows(ROWS("/usr/lib/python3.11/os.py|walk|0", "<frozen runpy>|_run_code|0"), &s, w);
	ck_assert_int_eq(s.user_frame, -1);
	free(w);
}
END_TEST

START_TEST(format_loc)
{
	struct sb_pystack s;
	char buf[64];

	memset(&s, 0, sizeof(s));
	sb_pystack_format_loc(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	s.n = 2;
	s.user_frame = 1;
	snprintf(s.f[0].file, sizeof(s.f[0].file), "<frozen os>");
	snprintf(s.f[1].file, sizeof(s.f[1].file), "app/tools.py");
	snprintf(s.f[1].func, sizeof(s.f[1].func), "fetch");
	s.f[1].line = 42;
	sb_pystack_format_loc(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "app/tools.py:42 in fetch()");
	s.f[1].line = -1;
	sb_pystack_format_loc(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "app/tools.py in fetch()");
	s.user_frame = -1;
	sb_pystack_format_loc(&s, buf, 8);
	ck_assert_str_eq(buf, "<frozen");
}
END_TEST

/* ---- memory and ELF readers ---- */

START_TEST(mem_reads)
{
	struct sb_mem m;
	static const char text[] = "remote memory";
	char buf[32];
	uint64_t here = (uintptr_t)text;

	ck_assert_int_eq(sb_mem_open(&m, getpid()), 0);
	ck_assert_int_eq(sb_mem_read(&m, here, buf, sizeof(text)), 0);
	ck_assert_str_eq(buf, text);
	ck_assert_int_eq(sb_mem_read(&m, 16, buf, 8), -EFAULT);
	ck_assert_int_eq(sb_mem_read(&m, UINT64_C(0xffff800000000000), buf, 8), -EFAULT);
	ck_assert_int_eq(sb_mem_read(&m, UINT64_MAX - 4, buf, 8), -EFAULT);

	char good2[8] = "second";
	struct sb_mem_iov iov[4] = {
		{ .addr = here, .buf = buf, .len = 6 },
		{ .addr = 8, .buf = buf + 8, .len = 8 },
		{ .addr = (uintptr_t)good2, .buf = buf + 16, .len = 7 },
		{ .addr = UINT64_C(0x7ffffffff000) - 8, .buf = buf + 24, .len = 8 },
	};
	ck_assert_int_eq(sb_mem_readv(&m, iov, 4), 0);
	ck_assert_int_eq(iov[0].err, 0);
	ck_assert(memcmp(buf, "remote", 6) == 0);
	ck_assert_int_eq(iov[1].err, -EFAULT);
	ck_assert_int_eq(iov[2].err, 0);
	ck_assert_str_eq(buf + 16, "second");
	ck_assert_int_eq(iov[3].err, -EFAULT);
	sb_mem_close(&m);
	ck_assert_int_eq(m.fd, -1);
	ck_assert_int_eq(sb_mem_open(&m, 0), -ESRCH);
}
END_TEST

START_TEST(mem_exited_process)
{
	struct sb_mem m;
	char buf[8];
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(sb_mem_open(&m, child), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The descriptor pins the old image: reads say "gone", not "bad address". */
	ck_assert_int_eq(sb_mem_read(&m, (uintptr_t)buf, buf, sizeof(buf)), -ESRCH);
	sb_mem_close(&m);
}
END_TEST

START_TEST(elf_python_binary)
{
	const char *path = "/usr/bin/python3.11";
	struct sb_elf_syms s;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;	/* not Debian: the integration tests cover real interpreters */
	ck_assert_int_eq(sb_elf_python_syms(fd, &s), 0);
	ck_assert(s.runtime && s.py_version && s.code_type);
	ck_assert_uint_eq(s.build_id_len, 20);
	/* Cached: same answer. */
	struct sb_elf_syms again;
	ck_assert_int_eq(sb_elf_python_syms(fd, &again), 0);
	ck_assert(again.runtime == s.runtime && again.py_version == s.py_version &&
		  again.code_type == s.code_type && again.type == s.type && again.load_vaddr == s.load_vaddr &&
		  again.build_id_len == s.build_id_len && memcmp(again.build_id, s.build_id, s.build_id_len) == 0);
	close(fd);
}
END_TEST

static int tmpfile_with(const void *data, size_t len)
{
	char path[] = "/tmp/check_tracer_elfXXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	return fd;
}

START_TEST(elf_hostile_files)
{
	struct sb_elf_syms s;
	int fd;

	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ck_assert_int_eq(sb_elf_python_syms(fd, &s), -ENOENT);
		close(fd);
	}
	fd = tmpfile_with("#!/bin/sh\n", 10);
	ck_assert_int_eq(sb_elf_python_syms(fd, &s), -ENOEXEC);
	close(fd);

	/* A header claiming 60000 program headers, and one with a huge section table. */
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 60000;
	eh.e_phoff = sizeof(eh);
	fd = tmpfile_with(&eh, sizeof(eh));
	ck_assert_int_eq(sb_elf_python_syms(fd, &s), -ENOEXEC);
	close(fd);

	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
	} f;
	memset(&f, 0, sizeof(f));
	f.eh = eh;
	f.eh.e_phnum = 1;
	f.ph.p_type = PT_LOAD;
	f.ph.p_align = 4096;
	f.eh.e_shoff = 1u << 30;
	f.eh.e_shentsize = sizeof(Elf64_Shdr);
	f.eh.e_shnum = 4000;
	fd = tmpfile_with(&f, sizeof(f));
	ck_assert_int_lt(sb_elf_python_syms(fd, &s), 0);
	close(fd);
}
END_TEST

/* ---- the walker on a runtime forged in this process ----
 * Objects are laid out with the layout under test in an arena; the walker
 * reads them back through /proc/self/mem exactly as it reads a target. */

#define ARENA_SIZE (512u << 10)
#define FK_MAX_FRAMES 1200

struct fake {
	struct fk_arena ar;
	uint64_t type_code, runtime, interp, tstate, decoy, cframe, chunk;
	uint64_t frames[FK_MAX_FRAMES];	/* outermost first, shims included */
	size_t nframes, chunk_used;
	uint64_t innermost;
};

static uint64_t fk_str_ucs2(struct fake *f, const uint16_t *s, size_t n)
{
	uint64_t o = fk_alloc(&f->ar, f->ar.l.str_compact_data + 2 * n + 2);

	put64(o, f->ar.l.str_length, n);
	put32(o, f->ar.l.str_state, (2u << 2) | (1u << 5));
	memcpy((void *)(uintptr_t)(o + f->ar.l.str_compact_data), s, 2 * n);
	return o;
}

static uint64_t fk_bytes(struct fake *f, const uint8_t *b, size_t n)
{
	uint64_t o = fk_alloc(&f->ar, f->ar.l.bytes_sval + n + 1);

	put64(o, f->ar.l.bytes_size, n);
	memcpy((void *)(uintptr_t)(o + f->ar.l.bytes_sval), b, n);
	return o;
}

static uint64_t fk_tuple(struct fake *f, const uint64_t *items, size_t n)
{
	uint64_t o = fk_alloc(&f->ar, f->ar.l.tuple_item + 8 * n);

	put64(o, f->ar.l.tuple_size, n);
	for (size_t i = 0; i < n; i++)
		put64(o, f->ar.l.tuple_item + 8 * (uint32_t)i, items[i]);
	return o;
}

/* Location table: unit 0 -> first, 1-2 -> first+1, 3-6 -> first+4; or,
 * `big`, 100 one-unit entries of +1 (200 bytes: not cached inline). */
static uint64_t fk_linetable(struct fake *f, int first, bool big)
{
	struct lt_enc e;

	memset(&e, 0, sizeof(e));
	e.line = first;
	if (big) {
		for (int i = 0; i < 100; i++)
			enc(&e, E_NOCOL, 1, 1);
	} else {
		enc(&e, E_NOCOL, 1, 0);
		enc(&e, E_ONE, 2, 1);
		enc(&e, E_NOCOL, 4, 3);
	}
	return fk_bytes(f, e.b, e.n);
}

static uint64_t fk_code(struct fake *f, uint64_t file, const char *qual, int first, bool big_lt, uint64_t names)
{
	uint64_t o = fk_alloc(&f->ar, f->ar.l.co_code_adaptive + 256);

	put64(o, f->ar.l.ob_type, f->type_code);
	put64(o, f->ar.l.co_filename, file);
	put64(o, f->ar.l.co_qualname, fk_str(&f->ar, qual));
	put64(o, f->ar.l.co_name, fk_str(&f->ar, qual));
	put64(o, f->ar.l.co_linetable, fk_linetable(f, first, big_lt));
	put64(o, f->ar.l.co_localsplusnames, names);
	put32(o, f->ar.l.co_firstlineno, (uint32_t)first);
	return o;
}

static uint64_t tagged(const struct fake *f, uint64_t ref)
{
	return f->ar.l.tag_mask ? ref | 1 : ref;	/* 3.14 deferred reference */
}

static void fk_frame_fields(struct fake *f, uint64_t fr, uint64_t code, int64_t idx, uint64_t prev, uint8_t owner)
{
	put64(fr, f->ar.l.fr_code, code ? tagged(f, code) : 0);
	put64(fr, f->ar.l.fr_previous, prev);
	put64(fr, f->ar.l.fr_instr, code + f->ar.l.co_code_adaptive + (uint64_t)(2 * idx));
	((uint8_t *)(uintptr_t)fr)[f->ar.l.fr_owner] = owner;
}

/* Push a frame running `code` at code unit idx on top of the stack; an
 * `entry` frame was called from C (3.11: is_entry; 3.12+: a shim below). */
static uint64_t fk_push(struct fake *f, uint64_t code, int64_t idx, bool entry, uint64_t local0)
{
	uint64_t prev = f->innermost, fr;
	size_t stride = f->ar.l.fr_size + 16;

	if (entry && f->ar.l.owner_shim) {
		uint64_t shim = fk_alloc(&f->ar, f->ar.l.fr_size);	/* on the "C stack", not in the chunk */
		fk_frame_fields(f, shim, 0, 0, prev, (uint8_t)(f->ar.l.tag_mask ? 4 : 3));
		f->frames[f->nframes++] = shim;
		prev = shim;
	}
	ck_assert_uint_le(24 + f->chunk_used + stride, 24 + (size_t)FK_MAX_FRAMES * stride);
	fr = f->chunk + 24 + f->chunk_used;
	f->chunk_used += stride;
	fk_frame_fields(f, fr, code, idx, prev, 0);
	if (f->ar.l.fr_is_entry != SB_PYOFF_NONE)
		((uint8_t *)(uintptr_t)fr)[f->ar.l.fr_is_entry] = entry;
	put64(fr, f->ar.l.fr_localsplus, local0 ? tagged(f, local0) : 0);
	f->frames[f->nframes++] = fr;
	f->innermost = fr;
	return fr;
}

/* Runtime, one interpreter, a decoy thread then ours, an empty chunk. */
static void fk_init(struct fake *f, int which)
{
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	const struct sb_pylayout *l;
	size_t blen;

	memset(f, 0, sizeof(*f));
	fk_layout(which, &f->ar.l, blob, &blen);
	l = &f->ar.l;
	fk_arena_init(&f->ar, ARENA_SIZE);
	f->type_code = fk_alloc(&f->ar, 64);
	f->runtime = fk_alloc(&f->ar, l->rt_interpreters_head + 8);
	f->interp = fk_alloc(&f->ar, (l->is_threads_head > l->is_next ? l->is_threads_head : l->is_next) + 8);
	f->tstate = fk_alloc(&f->ar, SB_PYLAYOUT_MAX_TSTATE);
	f->decoy = fk_alloc(&f->ar, SB_PYLAYOUT_MAX_TSTATE);
	put64(f->runtime, l->rt_interpreters_head, f->interp);
	put64(f->interp, l->is_threads_head, f->decoy);
	put64(f->decoy, l->ts_next, f->tstate);
	put64(f->tstate, l->ts_prev, f->decoy);
	put64(f->decoy, l->ts_native_thread_id, (uint64_t)gettid() + 1);
	put64(f->tstate, l->ts_native_thread_id, (uint64_t)gettid());
	put64(f->tstate, l->ts_interp, f->interp);
	size_t stride = l->fr_size + 16, size = 24 + (size_t)FK_MAX_FRAMES * stride;
	f->chunk = fk_alloc(&f->ar, size);
	put64(f->chunk, 8, size);
	put64(f->tstate, l->ts_datastack_chunk, f->chunk);
	if (l->ts_cframe != SB_PYOFF_NONE) {
		f->cframe = fk_alloc(&f->ar, 32);
		put64(f->tstate, l->ts_cframe, f->cframe);
	}
}

static void fk_finish(struct fake *f)
{
	if (f->cframe)
		put64(f->cframe, f->ar.l.cframe_current_frame, f->innermost);
	else
		put64(f->tstate, f->ar.l.ts_current_frame, f->innermost);
}

static struct sb_pyproc *fk_proc(const struct fake *f)
{
	struct sb_pyproc *p = fk_proc_new(&f->ar, f->runtime);

	p->code_type = f->type_code;
	return p;
}

/* Scenario "import": main.py <module> (big location table) imports
 * pkg.mod through _find_and_load; pkg/mod.py Cls.inner is running. */
static void fk_import_scenario(struct fake *f)
{
	uint64_t name = fk_str(&f->ar, "name"), import_ = fk_str(&f->ar, "import_");
	uint64_t names = fk_tuple(f, (uint64_t[]){ name, import_ }, 2);
	uint64_t c_main = fk_code(f, fk_str(&f->ar, "/app/main.py"), "<module>", 1, true, 0);
	uint64_t c_fal = fk_code(f, fk_str(&f->ar, "<frozen importlib._bootstrap>"), "_find_and_load", 1000, false,
				 names);
	uint64_t c_inner = fk_code(f, fk_str(&f->ar, "/app/pkg/mod.py"), "Cls.inner", 10, false, 0);

	fk_push(f, c_main, 80, true, 0);
	fk_push(f, c_fal, 0, false, fk_str(&f->ar, "pkg.mod"));
	fk_push(f, c_inner, 3, false, 0);
	fk_finish(f);
}

static void check_printable(const struct sb_pystack *s)
{
	ck_assert_uint_le(s->n, SB_PYLOC_MAX_FRAMES);
	ck_assert_uint_le(s->depth, SB_PY_MAX_WALK);
	ck_assert_uint_lt(strnlen(s->importing, sizeof(s->importing)), sizeof(s->importing));
	for (const char *c = s->importing; *c; c++)
		ck_assert((unsigned char)*c >= 0x20);
	for (size_t i = 0; i < s->n; i++) {
		ck_assert_uint_lt(strnlen(s->f[i].file, sizeof(s->f[i].file)), sizeof(s->f[i].file));
		ck_assert_uint_lt(strnlen(s->f[i].func, sizeof(s->f[i].func)), sizeof(s->f[i].func));
		for (const char *c = s->f[i].file; *c; c++)
			ck_assert((unsigned char)*c >= 0x20 && *c != 0x7f);
		for (const char *c = s->f[i].func; *c; c++)
			ck_assert((unsigned char)*c >= 0x20 && *c != 0x7f);
	}
	ck_assert(s->user_frame >= -1 && s->user_frame < (int)s->n);
}

START_TEST(walker_import)
{
	struct fake f;
	struct sb_pystack s;
	struct sb_pyproc *p;

	fk_init(&f, _i);
	fk_import_scenario(&f);
	p = fk_proc(&f);
	for (int round = 0; round < 2; round++) {	/* cold, then from the caches */
		ck_assert_int_eq(sb_pyproc_stack(p, gettid(), &s), 0);
		ck_assert_uint_eq(s.n, 3);
		ck_assert_str_eq(s.f[0].file, "/app/pkg/mod.py");
		ck_assert_str_eq(s.f[0].func, "Cls.inner");
		ck_assert_int_eq(s.f[0].line, 14);
		ck_assert_str_eq(s.f[1].func, "_find_and_load");
		ck_assert_int_eq(s.f[1].line, 1000);
		ck_assert(s.f[1].flags & SB_PYFRAME_LIBRARY);
		ck_assert_str_eq(s.f[2].file, "/app/main.py");
		ck_assert_int_eq(s.f[2].line, 82);
		ck_assert_str_eq(s.importing, "pkg.mod");
		ck_assert(!s.from_eval);
		ck_assert_int_eq(s.user_frame, 0);
		ck_assert_uint_eq(s.depth, 3);
	}
	/* Another thread of ours has no Python state. */
	ck_assert_int_eq(sb_pyproc_stack(p, gettid() + 2, &s), 0);
	ck_assert_uint_eq(s.n, 0);
	sb_pyproc_free(p);
	free(f.ar.a);
}
END_TEST

START_TEST(walker_exec_and_unicode)
{
	struct fake f;
	struct sb_pystack s;
	struct sb_pyproc *p;
	static const uint16_t path[] = { '/', 'a', 'p', 'p', '/', 'd', 0xef, 'r', 0x20ac, '.', 'p', 'y' };

	fk_init(&f, _i);
	uint64_t c_main = fk_code(&f, fk_str(&f.ar, "/app/main.py"), "<module>", 1, false, 0);
	uint64_t c_run = fk_code(&f, fk_str_ucs2(&f, path, 12), "run", 20, false, 0);
	uint64_t c_exec = fk_code(&f, fk_str(&f.ar, "<string>"), "<module>", 1, false, 0);
	fk_push(&f, c_main, 0, true, 0);
	fk_push(&f, c_run, 3, false, 0);
	fk_push(&f, c_exec, 1, true, 0);
	fk_finish(&f);
	p = fk_proc(&f);
	ck_assert_int_eq(sb_pyproc_stack(p, gettid(), &s), 0);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_str_eq(s.f[0].file, "<string>");
	ck_assert_int_eq(s.f[0].line, 2);
	ck_assert(s.f[0].flags & SB_PYFRAME_DYNAMIC);
	ck_assert_str_eq(s.f[1].file, "/app/d\xc3\xafr\xe2\x82\xac.py");
	ck_assert_int_eq(s.f[1].line, 24);
	ck_assert(s.from_eval);
	ck_assert_int_eq(s.user_frame, 1);
	ck_assert_str_eq(s.importing, "");
	sb_pyproc_free(p);
	free(f.ar.a);
}
END_TEST

START_TEST(walker_deep)
{
	struct fake f;
	struct sb_pystack s;
	struct sb_pyproc *p;

	fk_init(&f, _i);
	uint64_t c_user = fk_code(&f, fk_str(&f.ar, "/app/deep.py"), "recurse", 5, false, 0);
	uint64_t c_lib = fk_code(&f, fk_str(&f.ar, "/usr/lib/python3.11/json/decoder.py"), "decode", 300, false, 0);
	for (int i = 0; i < 1100; i++)
		fk_push(&f, c_user, 3, false, 0);
	for (int i = 0; i < 40; i++)
		fk_push(&f, c_lib, 0, false, 0);
	fk_finish(&f);
	p = fk_proc(&f);
	ck_assert_int_eq(sb_pyproc_stack(p, gettid(), &s), 0);
	check_printable(&s);
	ck_assert(s.truncated);
	ck_assert_uint_eq(s.depth, SB_PY_MAX_WALK);
	ck_assert_uint_eq(s.n, SB_PYLOC_MAX_FRAMES);
	/* 40 library frames on top: the first user frame replaces the last slot. */
	ck_assert_str_eq(s.f[30].func, "decode");
	ck_assert_str_eq(s.f[31].func, "recurse");
	ck_assert_int_eq(s.f[31].line, 9);
	ck_assert_uint_eq(s.elided, 40 - 31);
	ck_assert_int_eq(s.user_frame, 31);
	sb_pyproc_free(p);
	free(f.ar.a);
}
END_TEST

/* Adversarial patches of the import scenario; each must end with a bounded,
 * printable answer. */
enum patch {
	P_SELF_LOOP, P_TWO_CYCLE, P_HUGE_STR, P_HUGE_LINETABLE, P_HUGE_TUPLE, P_TSTATE_LOOP, P_INTERP_LOOP,
	P_NEWLINE_FILE, P_NOT_CODE, P_KERNEL_CODE, P_CHUNK_CYCLE, P_HUGE_CHUNK, P_ODD_INSTR, P_NAME_NOT_STR,
	P_COUNT
};

START_TEST(walker_adversarial)
{
	for (int patch = 0; patch < P_COUNT; patch++) {
		struct fake f;
		struct sb_pystack s;
		struct sb_pyproc *p;
		const struct sb_pylayout *l;

		fk_init(&f, _i);
		l = &f.ar.l;
		fk_import_scenario(&f);
		uint64_t inner = f.innermost, mid = f.frames[f.nframes - 2], code0, code1;
		memcpy(&code0, (void *)(uintptr_t)(inner + l->fr_code), 8);
		memcpy(&code1, (void *)(uintptr_t)(mid + l->fr_code), 8);
		code0 &= ~l->tag_mask;
		code1 &= ~l->tag_mask;
		uint64_t file0, lt_main, names1;
		memcpy(&file0, (void *)(uintptr_t)(code0 + l->co_filename), 8);
		memcpy(&names1, (void *)(uintptr_t)(code1 + l->co_localsplusnames), 8);
		uint64_t outer_code;
		memcpy(&outer_code, (void *)(uintptr_t)(f.frames[f.nframes - 3] + l->fr_code), 8);
		outer_code &= ~l->tag_mask;
		memcpy(&lt_main, (void *)(uintptr_t)(outer_code + l->co_linetable), 8);

		switch (patch) {
		case P_SELF_LOOP:
			put64(inner, l->fr_previous, inner);
			break;
		case P_TWO_CYCLE:
			put64(mid, l->fr_previous, inner);
			break;
		case P_HUGE_STR:
			put64(file0, l->str_length, UINT64_C(1) << 40);
			break;
		case P_HUGE_LINETABLE:
			put64(lt_main, l->bytes_size, UINT64_C(1) << 40);
			break;
		case P_HUGE_TUPLE:
			put64(names1, l->tuple_size, UINT64_C(1) << 40);
			break;
		case P_TSTATE_LOOP:
			put64(f.decoy, l->ts_next, f.decoy);
			break;
		case P_INTERP_LOOP:
			put64(f.interp, l->is_threads_head, 0);
			put64(f.interp, l->is_next, f.interp);
			break;
		case P_NEWLINE_FILE:
			((char *)(uintptr_t)file0)[l->str_ascii_data + 4] = '\n';
			break;
		case P_NOT_CODE:
			put64(code0, l->ob_type, f.type_code + 8);
			break;
		case P_KERNEL_CODE:
			put64(inner, l->fr_code, UINT64_C(0xffff880000001000));
			break;
		case P_CHUNK_CYCLE:
			put64(f.chunk, 0, f.chunk);
			put64(f.chunk, 8, 16);
			break;
		case P_HUGE_CHUNK:
			put64(f.chunk, 8, UINT64_C(1) << 40);
			break;
		case P_ODD_INSTR:
			put64(inner, l->fr_instr, code0 + l->co_code_adaptive + 7);	/* mid-unit: unit 3 */
			break;
		case P_NAME_NOT_STR:
			put64(mid, l->fr_localsplus, code0);
			break;
		}
		p = fk_proc(&f);
		ck_assert_int_eq(sb_pyproc_stack(p, gettid(), &s), 0);
		check_printable(&s);
		switch (patch) {
		case P_SELF_LOOP:
			ck_assert_uint_eq(s.depth, 1);
			break;
		case P_TWO_CYCLE:
			ck_assert_uint_le(s.depth, 8);
			break;
		case P_HUGE_STR:
			ck_assert(s.f[0].flags & SB_PYFRAME_UNREADABLE);
			ck_assert_int_eq(s.user_frame, 2);
			break;
		case P_HUGE_LINETABLE:
			/* decoded as far as memory is readable: the real entries come first */
			ck_assert(s.f[2].line == 82 || s.f[2].line == -1);
			break;
		case P_HUGE_TUPLE:
			/* the search is bounded to the first entries, "name" is one */
			ck_assert_str_eq(s.importing, "pkg.mod");
			break;
		case P_NAME_NOT_STR:
			ck_assert_str_eq(s.importing, "");
			break;
		case P_TSTATE_LOOP:
		case P_INTERP_LOOP:
			ck_assert_uint_eq(s.n, 0);
			break;
		case P_NEWLINE_FILE:
			ck_assert_str_eq(s.f[0].file, "/app?pkg/mod.py");
			break;
		case P_NOT_CODE:
			ck_assert_uint_eq(s.n, 2);
			break;
		case P_KERNEL_CODE:
			ck_assert(s.f[0].flags & SB_PYFRAME_UNREADABLE);
			break;
		case P_CHUNK_CYCLE:
		case P_HUGE_CHUNK:
			ck_assert_uint_eq(s.n, 3);
			ck_assert_int_eq(s.f[0].line, 14);
			break;
		case P_ODD_INSTR:
			ck_assert_int_eq(s.f[0].line, 14);
			break;
		}
		sb_pyproc_free(p);
		free(f.ar.a);
	}
}
END_TEST

START_TEST(walker_fuzz)
{
	struct fake f;
	struct sb_pystack s;
	struct sb_pyproc *p;
	uint8_t *pristine;

	fk_init(&f, _i);
	fk_import_scenario(&f);
	pristine = fk_snapshot(&f.ar);
	p = fk_proc(&f);
	rng_state = 0x1234567u + (uint64_t)_i;
	for (int round = 0; round < 1500; round++) {
		fk_corrupt(&f.ar, pristine, rnd, f.frames, f.nframes);
		ck_assert_int_eq(sb_pyproc_stack(p, gettid(), &s), 0);
		check_printable(&s);
	}
	sb_pyproc_free(p);
	free(pristine);
	free(f.ar.a);
}
END_TEST

/* ---- the per-pid cache ---- */

START_TEST(pyloc_not_python)
{
	char loc[64], imp[32];
	bool from_eval = true;

	/* This test program is not Python: unknown, twice (negative cache). */
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(sb_pyloc_for(getpid(), gettid(), loc, sizeof(loc), &from_eval, imp, sizeof(imp)), 0);
		ck_assert_str_eq(loc, "");
		ck_assert_str_eq(imp, "");
		ck_assert(!from_eval);
	}
	ck_assert_int_lt(sb_pyloc_for(999999999, 999999999, loc, sizeof(loc), &from_eval, NULL, 0), 0);
	sb_pyloc_forget(getpid());
	sb_pyloc_reset();
}
END_TEST

static Suite *tracer_suite(void)
{
	Suite *s = suite_create("tracer");
	TCase *t;

	t = tcase_create("decoders");
	tcase_add_test(t, linetable_real_cpython);
	tcase_add_test(t, linetable_all_entry_kinds);
	tcase_add_test(t, linetable_fed_in_pieces);
	tcase_add_test(t, linetable_truncated_and_malformed);
	tcase_add_test(t, linetable_random_bytes);
	tcase_add_test(t, str_shapes);
	tcase_add_test(t, str_utf8_kinds);
	tcase_add_test(t, str_utf8_hostile);
	tcase_add_test(t, str_utf8_random);
	suite_add_tcase(s, t);

	t = tcase_create("layouts");
	tcase_add_test(t, debug_offsets_313);
	tcase_add_test(t, debug_offsets_314);
	tcase_add_test(t, debug_offsets_validation);
	tcase_add_test(t, debug_offsets_random);
	tcase_add_test(t, builtin_layouts);
	suite_add_tcase(s, t);

	t = tcase_create("classify");
	tcase_add_test(t, classify_code);
	tcase_add_test(t, classify_stacks);
	tcase_add_test(t, format_loc);
	suite_add_tcase(s, t);

	t = tcase_create("readers");
	tcase_add_test(t, mem_reads);
	tcase_add_test(t, mem_exited_process);
	tcase_add_test(t, elf_python_binary);
	tcase_add_test(t, elf_hostile_files);
	tcase_add_test(t, pyloc_not_python);
	suite_add_tcase(s, t);

	/* loop index = layout: 3.11, 3.12, 3.13, 3.14 */
	t = tcase_create("walker");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, walker_import, 0, 4);
	tcase_add_loop_test(t, walker_exec_and_unicode, 0, 4);
	tcase_add_loop_test(t, walker_deep, 0, 4);
	tcase_add_loop_test(t, walker_adversarial, 0, 4);
	tcase_add_loop_test(t, walker_fuzz, 0, 4);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tracer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
