/* One escaper for the strings python-sb writes from hostile input (paths,
 * names, Python locations): the decision log's JSON lines and human lines
 * (src/log.c) and the reports (src/report.c).
 *
 * Every mode keeps valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF) as it is and shows each invalid byte as the four
 * characters \xHH (lower-case hex): text, not a \u00HH escape, which would
 * claim a Latin-1 character the program never wrote.
 *
 * The escaper works one unit at a time (a character, or one invalid byte)
 * and never allocates, so each caller keeps its own buffer's rules: the log
 * formats into a bounded buffer on the supervisor's hot path and cuts
 * terminal lines, the reports grow a heap buffer.
 */
#ifndef SB_JSONESC_H
#define SB_JSONESC_H

#include <stddef.h>
#include <stdint.h>

enum sb_esc_mode {
	/* Inside a JSON string: \" \\ \n \t \r; other control characters
	 * and DEL as \u00hh; an invalid byte as \\xHH (the text \xHH). */
	SB_ESC_JSON,
	/* Inside a single-quoted string on a terminal: \\ and \'; control
	 * characters, DEL and invalid bytes as \xHH.  One line, always. */
	SB_ESC_QUOTED,
	/* Plain text: only invalid bytes become \xHH (a string a JSON or XML
	 * writer escapes afterwards). */
	SB_ESC_TEXT,
};

/* One escaped unit; s and n say where its text is (inside `tmp` or inside
 * the input). */
struct sb_esc_unit {
	const char *s;
	size_t n;
	char tmp[8];
};

/* Length (1-4) of the valid UTF-8 sequence at s, its code point in *cp (cp
 * may be NULL); 0 when s[0] does not start one (s[0] != 0). */
size_t sb_utf8_seq(const unsigned char *s, uint32_t *cp);

/* The text \xHH for the byte c, whatever it is. */
void sb_esc_byte(unsigned char c, struct sb_esc_unit *u);

/* The escaped form of the unit at s in *u; returns how many input bytes it
 * took, 0 at the end of s. */
size_t sb_esc_next(const char *s, enum sb_esc_mode mode, struct sb_esc_unit *u);

#endif
