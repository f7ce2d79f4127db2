/* Location-table and str decoders; see pydecode.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "pydecode.h"

/* Objects/locations.md: an entry starts with a byte that has bit 7 set;
 * bits 3-6 are the kind of entry, bits 0-2 the length in code units - 1. */
enum {
	LT_NONE = 15,		/* no location */
	LT_LONG = 14,		/* svarint line delta, 3 varints */
	LT_NO_COLUMNS = 13,	/* svarint line delta */
	LT_ONE_LINE2 = 12,	/* line += 2, 2 bytes of columns */
	LT_ONE_LINE0 = 10,	/* line += 0..2: codes 10, 11, 12 */
};

#define LT_MAX_VARINT_BYTES 6	/* 36 bits: more is a forged table */

/* Read a varint at buf[*pos]; false when it does not end inside buf or is
 * malformed (a continuation byte with the entry-start bit set). */
static bool lt_varint(const uint8_t *buf, size_t len, size_t *pos, uint32_t *out)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < LT_MAX_VARINT_BYTES; i++) {
		uint8_t b;
		if (*pos >= len)
			return false;
		b = buf[(*pos)++];
		if (b & 0x80)
			return false;
		v |= (uint64_t)(b & 0x3f) << (6 * i);
		if (!(b & 0x40)) {
			*out = v > INT32_MAX ? INT32_MAX : (uint32_t)v;
			return true;
		}
	}
	return false;
}

static bool lt_svarint(const uint8_t *buf, size_t len, size_t *pos, int32_t *out)
{
	uint32_t v;

	if (!lt_varint(buf, len, pos, &v))
		return false;
	*out = (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
	return true;
}

void sb_lt_init(struct sb_lt_state *st, int firstlineno)
{
	st->line = firstlineno;
	st->addr = 0;
	st->found = -1;
	st->done = false;
}

/* Parse the entry at buf[pos].  0: complete (*next, *delta, *units set);
 * 1: incomplete (needs more bytes); -1: malformed. */
static int lt_entry(const uint8_t *buf, size_t len, size_t pos, size_t *next, int32_t *delta,
		    unsigned *units, bool *noloc)
{
	uint8_t first = buf[pos];
	unsigned code = (first >> 3) & 15;
	uint32_t skip;
	size_t p = pos + 1;

	if (!(first & 0x80))
		return -1;
	*units = (first & 7) + 1;
	*delta = 0;
	*noloc = false;
	if (code == LT_NONE) {
		*noloc = true;
	} else if (code == LT_LONG) {
		if (!lt_svarint(buf, len, &p, delta) || !lt_varint(buf, len, &p, &skip) ||
		    !lt_varint(buf, len, &p, &skip) || !lt_varint(buf, len, &p, &skip))
			goto short_or_bad;
	} else if (code == LT_NO_COLUMNS) {
		if (!lt_svarint(buf, len, &p, delta))
			goto short_or_bad;
	} else if (code >= LT_ONE_LINE0) {
		*delta = (int32_t)(code - LT_ONE_LINE0);
		p += 2;
	} else {
		p += 1;
	}
	if (p > len)
		return 1;
	*next = p;
	return 0;
short_or_bad:
	/* A varint that ran off the end may be complete in the next piece; one
	 * that hit an entry-start byte is malformed. */
	return p >= len ? 1 : -1;
}

size_t sb_lt_feed(struct sb_lt_state *st, const uint8_t *buf, size_t len, int64_t idx, bool last)
{
	size_t pos = 0;

	while (!st->done && pos < len) {
		size_t next;
		int32_t delta;
		unsigned units;
		bool noloc;
		int rc = lt_entry(buf, len, pos, &next, &delta, &units, &noloc);

		if (rc == 1 && !last)
			return pos;
		if (rc != 0) {
			st->done = true;
			st->found = -1;
			return len;
		}
		/* Saturate: a forged table must not overflow the line counter. */
		if ((delta > 0 && st->line > INT32_MAX - delta) || (delta < 0 && st->line < INT32_MIN - delta))
			st->line = delta > 0 ? INT32_MAX : INT32_MIN;
		else
			st->line += delta;
		if (idx >= st->addr && idx < st->addr + units) {
			st->done = true;
			st->found = noloc || st->line < 0 ? -1 : st->line;
			return next;
		}
		st->addr += units;
		pos = next;
	}
	if (last && !st->done) {
		st->done = true;
		st->found = -1;
	}
	return pos;
}

int sb_linetable_line(const uint8_t *tab, size_t len, int firstlineno, int64_t idx)
{
	struct sb_lt_state st;

	if (idx < 0)
		return firstlineno;
	sb_lt_init(&st, firstlineno);
	sb_lt_feed(&st, tab, len, idx, true);
	return st.found;
}

int sb_str_shape(uint32_t state, struct sb_str_shape *out)
{
	/* interned 0-1, kind 2-4, compact 5, ascii 6 (3.11-3.14 default builds) */
	out->kind = (state >> 2) & 7;
	out->compact = (state >> 5) & 1;
	out->ascii = (state >> 6) & 1;
	if (out->kind != 1 && out->kind != 2 && out->kind != 4)
		return -EINVAL;
	if (out->ascii && (out->kind != 1 || !out->compact))
		return -EINVAL;
	return 0;
}

static size_t utf8_put(uint32_t c, char *out, size_t room)
{
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff ||
	    c == 0x2028 || c == 0x2029)
		c = '?';
	if (c < 0x80) {
		if (room < 1)
			return 0;
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		if (room < 2)
			return 0;
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (room < 3)
			return 0;
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (room < 4)
		return 0;
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

size_t sb_str_to_utf8(const void *data, size_t nchars, unsigned kind, char *out, size_t cap)
{
	const uint8_t *p = data;
	size_t o = 0;

	if (cap == 0)
		return 0;
	for (size_t i = 0; i < nchars; i++) {
		uint32_t c;
		size_t w;

		if (kind == 1) {
			c = p[i];
		} else if (kind == 2) {
			uint16_t u;
			memcpy(&u, p + 2 * i, 2);
			c = u;
		} else if (kind == 4) {
			memcpy(&c, p + 4 * i, 4);
		} else {
			break;
		}
		w = utf8_put(c, out + o, cap - 1 - o);
		if (w == 0)
			break;
		o += w;
	}
	out[o] = '\0';
	return o;
}
