/* libFuzzer target: the tracer's pure decoders on forged data copied out of
 * a target (tracer/pydecode.h, tracer/pyversion.h).
 *
 * Input: a mode byte, then the mode's fields.
 *   0  PEP 657 location table: firstlineno, code-unit index, a chunk size,
 *      then the table.  The one-shot decoder and the resumable one fed in
 *      chunks (as the remote reader copies a table) must agree, and the
 *      resumable one must never hold back more than one entry.
 *   1  str object: a PyASCIIObject state word, kind, output size, length,
 *      then the character data.  sb_str_shape only accepts shapes CPython
 *      builds; sb_str_to_utf8 writes valid UTF-8 with no control character
 *      (C0, DEL, C1, U+2028/9), NUL-terminated inside the exact buffer it
 *      was given, and a shorter buffer gives a prefix cut on a character.
 *   2  _Py_DebugOffsets: either raw bytes, or the real 3.13 / 3.14 blob with
 *      words overwritten from the input.  An accepted layout keeps every
 *      field the reader uses inside the bytes it reads (tstate, frame, code
 *      header, str, bytes, tuple headers).
 *   3  built-in layouts for any PY_VERSION_HEX. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "fuzz_pyblobs.h"
#include "pydecode.h"
#include "pyversion.h"

/* ---- location tables ---- */

static int fed_in_chunks(const uint8_t *tab, size_t len, int first, int64_t idx, size_t chunk)
{
	struct sb_lt_state st;
	uint8_t buf[64 + 32];
	size_t off = 0, have = 0;

	sb_lt_init(&st, first);
	while (!st.done && off < len) {
		size_t want = len - off < chunk ? len - off : chunk;
		size_t used;

		memcpy(buf + have, tab + off, want);
		off += want;
		have += want;
		used = sb_lt_feed(&st, buf, have, idx, off >= len);
		FUZZ_CHECK(used <= have);
		memmove(buf, buf + used, have - used);
		have -= used;
		/* One incomplete entry at most: 1 byte + 4 varints of 6 bytes. */
		FUZZ_CHECK(st.done || have <= 25);
	}
	if (!st.done)
		sb_lt_feed(&st, buf, have, idx, true);
	FUZZ_CHECK(st.done);
	return st.found;
}

static void do_linetable(struct fin *f)
{
	int first = (int32_t)fin_u32(f);
	int64_t idx = (int64_t)fin_u16(f) - 1;
	size_t chunk = 1 + fin_u8(f) % 64;
	size_t len = f->n;
	uint8_t *tab = malloc(len ? len : 1);	/* exact size: ASan sees over-reads */
	int one;

	if (!tab)
		abort();
	memcpy(tab, f->p, len);
	one = sb_linetable_line(tab, len, first, idx);
	if (idx < 0) {
		FUZZ_CHECK(one == first);
	} else {
		FUZZ_CHECK(one >= -1);
		FUZZ_CHECK(fed_in_chunks(tab, len, first, idx, chunk) == one);
	}
	free(tab);
}

/* ---- str objects ---- */

/* Length of the valid UTF-8 sequence at s, 0 if invalid (RFC 3629). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	size_t len;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v < 0xe000))
		return 0;
	*cp = v;
	return len;
}

static void check_clean_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = utf8_seq((const unsigned char *)s + i, n - i, &cp);

		FUZZ_CHECK(k > 0);
		FUZZ_CHECK(cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) && cp != 0x2028 && cp != 0x2029);
		i += k;
	}
}

static void do_str(struct fin *f)
{
	uint32_t state = fin_u32(f);
	unsigned kind = (unsigned[]){ 1, 2, 4, 3 }[fin_u8(f) % 4];
	size_t cap = fin_u16(f) % 1100, full_cap = 4 * 1024 + 1;
	size_t avail = f->n, nchars = fin_u16(f), len, full_len;
	struct sb_str_shape sh;
	char *out, *full;
	uint8_t *data;

	if (sb_str_shape(state, &sh) == 0) {
		FUZZ_CHECK(sh.kind == 1 || sh.kind == 2 || sh.kind == 4);
		FUZZ_CHECK(!sh.ascii || (sh.kind == 1 && sh.compact));
	}
	avail = f->n;
	if (kind != 3 && nchars > avail / kind)
		nchars = avail / kind;
	if (nchars > 1024)
		nchars = 1024;
	data = malloc(avail ? avail : 1);
	out = cap ? malloc(cap) : NULL;
	full = malloc(full_cap);
	if (!data || (cap && !out) || !full)
		abort();
	memcpy(data, f->p, avail);
	if (kind == 3)
		nchars = avail;	/* a bad kind must not read anything */
	full_len = sb_str_to_utf8(data, kind == 3 ? 0 : nchars, kind, full, full_cap);
	FUZZ_CHECK(full_len < full_cap && strlen(full) == full_len);
	check_clean_utf8(full, full_len);
	if (kind == 3) {
		len = sb_str_to_utf8(data, nchars, kind, out, cap);
		FUZZ_CHECK(len == 0 && (!cap || out[0] == '\0'));
	} else {
		len = sb_str_to_utf8(data, nchars, kind, out, cap);
		if (cap) {
			FUZZ_CHECK(len < cap && strlen(out) == len);
			FUZZ_CHECK(memcmp(out, full, len) == 0);
			/* Cut on a character: what follows in the full text starts one. */
			FUZZ_CHECK(len == full_len || ((unsigned char)full[len] & 0xc0) != 0x80);
			FUZZ_CHECK(len == full_len || len + 4 >= cap);
		} else {
			FUZZ_CHECK(len == 0);
		}
	}
	free(data);
	free(out);
	free(full);
}

/* ---- _Py_DebugOffsets ---- */


static void check_layout(const struct sb_pylayout *l)
{
	const uint32_t ts[] = { l->ts_prev, l->ts_next, l->ts_interp, l->ts_current_frame, l->ts_thread_id,
				l->ts_native_thread_id, l->ts_datastack_chunk, l->ts_cframe };
	const uint32_t fr8[] = { l->fr_previous, l->fr_code, l->fr_instr };
	const uint32_t fr1[] = { l->fr_owner, l->fr_is_entry };
	const uint32_t co8[] = { l->ob_type, l->co_filename, l->co_name, l->co_qualname, l->co_linetable,
				 l->co_localsplusnames };

	FUZZ_CHECK(l->ts_read <= SB_PYLAYOUT_MAX_TSTATE);
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		FUZZ_CHECK(ts[i] == SB_PYOFF_NONE || ts[i] + 8 <= l->ts_read);
	FUZZ_CHECK(l->fr_size <= SB_PYLAYOUT_MAX_FRAME && l->fr_localsplus <= l->fr_size);
	for (size_t i = 0; i < sizeof(fr8) / sizeof(fr8[0]); i++)
		FUZZ_CHECK(fr8[i] != SB_PYOFF_NONE && fr8[i] + 8 <= l->fr_size);
	for (size_t i = 0; i < sizeof(fr1) / sizeof(fr1[0]); i++)
		FUZZ_CHECK(fr1[i] == SB_PYOFF_NONE || fr1[i] + 1 <= l->fr_size);
	FUZZ_CHECK(l->co_code_adaptive <= SB_PYLAYOUT_MAX_CODE_HDR);
	for (size_t i = 0; i < sizeof(co8) / sizeof(co8[0]); i++)
		FUZZ_CHECK(co8[i] != SB_PYOFF_NONE && co8[i] + 8 <= l->co_code_adaptive);
	FUZZ_CHECK(l->co_firstlineno + 4 <= l->co_code_adaptive);
	FUZZ_CHECK(l->str_ascii_data <= 256 && l->str_length + 8 <= l->str_ascii_data &&
		   l->str_state + 4 <= l->str_ascii_data && l->str_compact_data <= 256 + 16);
	FUZZ_CHECK(l->bytes_sval <= 256 && l->bytes_size + 8 <= l->bytes_sval);
	FUZZ_CHECK(l->tuple_item <= 256 && l->tuple_size + 8 <= l->tuple_item);
	FUZZ_CHECK(l->minor >= 11 && l->minor <= 14 && sb_pyversion_minor(l->version) == l->minor);
}

static void do_debug_offsets(struct fin *f)
{
	uint8_t how = fin_u8(f);
	uint32_t py_version = (how & 4) ? fin_u32(f) : (how & 8) ? 0x030d00f0u + ((how & 16) ? 0x10000u : 0) : 0;
	size_t cap = SB_PY_DEBUG_OFFSETS_MAX, len;
	uint8_t *blob;
	struct sb_pylayout l;
	int rc;

	if (how & 3) {
		/* The real blob, words patched: the parser gets past the cookie
		 * and version checks and the validation is what is fuzzed. */
		bool v314 = how & 2;
		size_t nw = v314 ? 94 : 72;
		uint64_t words[94];

		memcpy(words, v314 ? dbg314_words : dbg313_words, nw * 8);
		while (f->n >= 2) {
			uint8_t w = fin_u8(f), sel = fin_u8(f);
			uint64_t v = sel & 1 ? fin_u64(f) : (uint64_t)fin_u16(f);

			words[2 + w % (nw - 2)] = sel & 2 ? words[2 + w % (nw - 2)] + (v & 0xff) : v;
		}
		len = 8 + nw * 8;
		if ((how & 0xe0) == 0xe0)
			len -= (how & 0x1f);	/* cut short */
		blob = malloc(len);
		if (!blob)
			abort();
		memcpy(blob, "xdebugpy", 8);
		memcpy(blob + 8, words, len - 8);
	} else {
		len = f->n < cap ? f->n : cap;
		blob = malloc(len ? len : 1);
		if (!blob)
			abort();
		memcpy(blob, f->p, len);
	}
	rc = sb_pylayout_from_debug_offsets(blob, len, py_version, &l);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ESTALE || rc == -ENOTSUP);
	if (rc == 0) {
		FUZZ_CHECK(l.from_debug_offsets && (l.minor == 13 || l.minor == 14));
		FUZZ_CHECK(!py_version || sb_pyversion_minor(py_version) == l.minor);
		check_layout(&l);
	}
	free(blob);
}

static void do_builtin(struct fin *f)
{
	uint32_t v = fin_u32(f);
	struct sb_pylayout l;
	int rc = sb_pylayout_builtin(v, &l);

	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (rc == 0) {
		FUZZ_CHECK(!l.from_debug_offsets && (l.minor == 11 || l.minor == 12) && l.version == v);
		check_layout(&l);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };

	switch (fin_u8(&f) % 4) {
	case 0:
		do_linetable(&f);
		break;
	case 1:
		do_str(&f);
		break;
	case 2:
		do_debug_offsets(&f);
		break;
	default:
		do_builtin(&f);
		break;
	}
	return 0;
}
