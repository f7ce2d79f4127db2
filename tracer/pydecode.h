/* Pure decoders for data copied out of a CPython process: the PEP 657
 * location table and str objects.  No system calls, no allocation; every
 * input may be forged, so all work is bounded by the input length. */
#ifndef SB_TRACER_PYDECODE_H
#define SB_TRACER_PYDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Resumable location-table walk: feed the table in pieces (the reader copies
 * it out of the target in bounded chunks). */
struct sb_lt_state {
	int line;		/* running line number */
	int64_t addr;		/* code-unit index at the start of the next entry */
	int found;		/* line of the entry covering the index, once found */
	bool done;		/* found, or the table ended */
};

void sb_lt_init(struct sb_lt_state *st, int firstlineno);

/* Decode the complete entries of buf[0..len).  Returns the number of bytes
 * consumed; bytes of an incomplete last entry are left for the next call
 * (unless `last`: then the table is over).  Sets st->done when the entry
 * covering code unit `idx` was found (st->found: its line, -1 if it has no
 * location) or the table ended (st->found = -1). */
size_t sb_lt_feed(struct sb_lt_state *st, const uint8_t *buf, size_t len, int64_t idx, bool last);

/* One-shot form for a table held in memory.  idx < 0 (a frame not started
 * yet, 3.11/3.12) gives firstlineno.  -1: no line. */
int sb_linetable_line(const uint8_t *tab, size_t len, int firstlineno, int64_t idx);

/* PyASCIIObject.state bits (non-free-threaded builds 3.11-3.14). */
struct sb_str_shape {
	unsigned kind;		/* 1, 2 or 4 bytes per code point */
	bool compact, ascii;
};

/* -EINVAL when the state word is not a str any CPython builds. */
int sb_str_shape(uint32_t state, struct sb_str_shape *out);

/* Convert nchars code points of width `kind` to UTF-8 into out (cap bytes,
 * always NUL-terminated when cap > 0).  Control characters (C0, DEL, C1),
 * surrogates and values above U+10FFFF become '?': the result goes into log
 * lines and policy-file comments and must not be able to start a new line.
 * Truncates on a character boundary.  Returns the length written. */
size_t sb_str_to_utf8(const void *data, size_t nchars, unsigned kind, char *out, size_t cap);

#endif
