/* One escaper for hostile strings (see jsonesc.h). */
#include "config.h"

#include <string.h>

#include "jsonesc.h"

static const char hex[] = "0123456789abcdef";

size_t sb_utf8_seq(const unsigned char *s, uint32_t *cp)
{
	unsigned c = s[0];
	uint32_t dummy;

	if (!cp)
		cp = &dummy;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf && (s[1] & 0xc0) == 0x80) {
		*cp = ((c & 0x1fu) << 6) | (s[1] & 0x3fu);
		return 2;
	}
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
			return 0;
		*cp = ((c & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		*cp = ((c & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
		return 4;
	}
	return 0;
}

/* u->tmp = prefix then two hex digits of c. */
static void put_hex(struct sb_esc_unit *u, const char *prefix, unsigned c)
{
	size_t n = strlen(prefix);

	memcpy(u->tmp, prefix, n);
	u->tmp[n] = hex[(c >> 4) & 15];
	u->tmp[n + 1] = hex[c & 15];
	u->tmp[n + 2] = '\0';
	u->s = u->tmp;
	u->n = n + 2;
}

void sb_esc_byte(unsigned char c, struct sb_esc_unit *u)
{
	put_hex(u, "\\x", c);
}

static void put_text(struct sb_esc_unit *u, const char *text)
{
	u->s = text;
	u->n = strlen(text);
}

/* A one-byte character c in `mode`; false when it stays as it is. */
static int escape_ascii(unsigned c, enum sb_esc_mode mode, struct sb_esc_unit *u)
{
	if (mode == SB_ESC_TEXT)
		return 0;
	if (c == '\\') {
		put_text(u, "\\\\");
		return 1;
	}
	if (mode == SB_ESC_JSON && c == '"') {
		put_text(u, "\\\"");
		return 1;
	}
	if (mode == SB_ESC_QUOTED && c == '\'') {
		put_text(u, "\\'");
		return 1;
	}
	if (c >= 0x20 && c != 0x7f)
		return 0;
	if (mode == SB_ESC_QUOTED)
		put_hex(u, "\\x", c);
	else if (c == '\n')
		put_text(u, "\\n");
	else if (c == '\t')
		put_text(u, "\\t");
	else if (c == '\r')
		put_text(u, "\\r");
	else
		put_hex(u, "\\u00", c);
	return 1;
}

size_t sb_esc_next(const char *s, enum sb_esc_mode mode, struct sb_esc_unit *u)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!*p) {
		u->s = "";
		u->n = 0;
		return 0;
	}
	n = sb_utf8_seq(p, NULL);
	if (n == 0) {
		put_hex(u, mode == SB_ESC_JSON ? "\\\\x" : "\\x", *p);
		return 1;
	}
	if (n > 1 || !escape_ascii(*p, mode, u)) {
		u->s = s;
		u->n = n;
	}
	return n;
}
