/* Splitting one libFuzzer input into typed fields, and the checks every
 * target shares.  Header-only: each target is one translation unit.
 *
 * Fixed-size fields come first and read as zero past the end of the input,
 * so that every input is a valid one; text fields follow, separated by NUL
 * bytes (a C string cannot hold one anyway), which keeps the mutator's
 * insertions and dictionary words inside one field. */
#ifndef SB_FUZZ_INPUT_H
#define SB_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fin {
	const uint8_t *p;
	size_t n;
};

static inline void fin_take(struct fin *f, void *dst, size_t len)
{
	size_t k = f->n < len ? f->n : len;

	memcpy(dst, f->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	f->p += k;
	f->n -= k;
}

static inline uint8_t fin_u8(struct fin *f)
{
	uint8_t v;

	fin_take(f, &v, sizeof(v));
	return v;
}

static inline uint16_t fin_u16(struct fin *f)
{
	uint16_t v;

	fin_take(f, &v, sizeof(v));
	return v;
}

static inline uint32_t fin_u32(struct fin *f)
{
	uint32_t v;

	fin_take(f, &v, sizeof(v));
	return v;
}

static inline uint64_t fin_u64(struct fin *f)
{
	uint64_t v;

	fin_take(f, &v, sizeof(v));
	return v;
}

/* The next text field (up to a NUL or the end) into dst, cut to cap - 1
 * bytes; returns its length in dst. */
static inline size_t fin_str(struct fin *f, char *dst, size_t cap)
{
	const uint8_t *nul = memchr(f->p, 0, f->n);
	size_t len = nul ? (size_t)(nul - f->p) : f->n, k = len < cap - 1 ? len : cap - 1;

	memcpy(dst, f->p, k);
	dst[k] = '\0';
	f->p += nul ? len + 1 : len;
	f->n -= nul ? len + 1 : len;
	return k;
}

/* A fuzz target found a broken promise: say which, then crash so libFuzzer
 * keeps the input. */
#define FUZZ_CHECK(cond)                                                                          \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

/* Every byte printable ASCII (the strace and short forms promise it). */
static inline bool fuzz_printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* No C0 control character and no DEL: one line of text, safe on a terminal
 * (UTF-8 above 0x7f is allowed). */
static inline bool fuzz_one_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

#endif
