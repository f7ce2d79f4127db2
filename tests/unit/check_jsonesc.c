/* Unit tests of the escaper shared by the decision log and the reports
 * (src/jsonesc.c): every mode on control characters, quotes, backslashes,
 * valid UTF-8 and each kind of invalid UTF-8, and the units' boundaries.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jsonesc.h"

/* The whole of s escaped in `mode`. */
static void escape(const char *s, enum sb_esc_mode mode, char *out, size_t cap)
{
	struct sb_esc_unit u;
	size_t len = 0, took;

	while ((took = sb_esc_next(s, mode, &u)) > 0) {
		ck_assert_uint_lt(len + u.n, cap);
		memcpy(out + len, u.s, u.n);
		len += u.n;
		s += took;
	}
	out[len] = '\0';
}

static const struct {
	const char *in, *json, *quoted, *text;
} cases[] = {
	{ "", "", "", "" },
	{ "/tmp/plain.txt", "/tmp/plain.txt", "/tmp/plain.txt", "/tmp/plain.txt" },
	{ "a\"b", "a\\\"b", "a\"b", "a\"b" },
	{ "it's", "it's", "it\\'s", "it's" },
	{ "back\\slash", "back\\\\slash", "back\\\\slash", "back\\slash" },
	{ "l1\nl2\tt\rr", "l1\\nl2\\tt\\rr", "l1\\x0al2\\x09t\\x0dr", "l1\nl2\tt\rr" },
	{ "\x01\x1f\x7f", "\\u0001\\u001f\\u007f", "\\x01\\x1f\\x7f", "\x01\x1f\x7f" },
	{ "\x1b[31mred", "\\u001b[31mred", "\\x1b[31mred", "\x1b[31mred" },
	/* valid UTF-8: 2, 3 and 4 bytes, kept as they are */
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d",
	  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d" },
	/* a lone continuation byte, a Latin-1 byte */
	{ "a\x80z", "a\\\\x80z", "a\\x80z", "a\\x80z" },
	{ "\xe9t\xe9", "\\\\xe9t\\\\xe9", "\\xe9t\\xe9", "\\xe9t\\xe9" },
	/* overlong forms: C0/C1 never valid, E0 80..9F, F0 80..8F */
	{ "\xc0\xaf", "\\\\xc0\\\\xaf", "\\xc0\\xaf", "\\xc0\\xaf" },
	{ "\xe0\x80\xaf", "\\\\xe0\\\\x80\\\\xaf", "\\xe0\\x80\\xaf", "\\xe0\\x80\\xaf" },
	{ "\xf0\x80\x80\xaf", "\\\\xf0\\\\x80\\\\x80\\\\xaf", "\\xf0\\x80\\x80\\xaf", "\\xf0\\x80\\x80\\xaf" },
	/* a surrogate (U+D800), past U+10FFFF (F4 90), F5 and up */
	{ "\xed\xa0\x80", "\\\\xed\\\\xa0\\\\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", "\\\\xf4\\\\x90\\\\x80\\\\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80" },
	{ "\xf5\xff", "\\\\xf5\\\\xff", "\\xf5\\xff", "\\xf5\\xff" },
	/* truncated at the end of the string: no read past the NUL */
	{ "x\xe2\x82", "x\\\\xe2\\\\x82", "x\\xe2\\x82", "x\\xe2\\x82" },
	{ "x\xf0\x9f\x90", "x\\\\xf0\\\\x9f\\\\x90", "x\\xf0\\x9f\\x90", "x\\xf0\\x9f\\x90" },
	/* a quote after an invalid byte is still escaped */
	{ "\xff\"\\'", "\\\\xff\\\"\\\\'", "\\xff\"\\\\\\'", "\\xff\"\\'" },
};

START_TEST(test_modes)
{
	char out[256];

	escape(cases[_i].in, SB_ESC_JSON, out, sizeof(out));
	ck_assert_str_eq(out, cases[_i].json);
	escape(cases[_i].in, SB_ESC_QUOTED, out, sizeof(out));
	ck_assert_str_eq(out, cases[_i].quoted);
	escape(cases[_i].in, SB_ESC_TEXT, out, sizeof(out));
	ck_assert_str_eq(out, cases[_i].text);
}
END_TEST

/* Every single byte: one line in the JSON and quoted modes, and a JSON
 * string body that needs nothing more (no raw control, quote or lone
 * backslash). */
START_TEST(test_every_byte)
{
	for (unsigned c = 1; c < 256; c++) {
		char in[2] = { (char)c, 0 }, out[32];

		escape(in, SB_ESC_JSON, out, sizeof(out));
		for (const char *p = out; *p; p++) {
			ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "byte %u: raw control in %s", c, out);
			if (*p == '"')
				ck_assert_msg(p > out && p[-1] == '\\', "byte %u: bare quote", c);
			if (*p == '\\') {
				ck_assert_msg(strchr("\\\"ntru", p[1]) != NULL, "byte %u: bad escape %s", c, out);
				p++;
			}
		}
		escape(in, SB_ESC_QUOTED, out, sizeof(out));
		ck_assert_ptr_null(strchr(out, '\n'));
		ck_assert_ptr_null(strchr(out, '\r'));
		if (c == '\'')
			ck_assert_str_eq(out, "\\'");
	}
}
END_TEST

START_TEST(test_utf8_seq)
{
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} seqs[] = {
		{ "A", 1, 0x41 }, { "\x7f", 1, 0x7f }, { "\xc2\x80", 2, 0x80 }, { "\xdf\xbf", 2, 0x7ff },
		{ "\xe0\xa0\x80", 3, 0x800 }, { "\xed\x9f\xbf", 3, 0xd7ff }, { "\xef\xbf\xbf", 3, 0xffff },
		{ "\xf0\x90\x80\x80", 4, 0x10000 }, { "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
		{ "\xc1\xbf", 0, 0 }, { "\xed\xa0\x80", 0, 0 }, { "\xf4\x90\x80\x80", 0, 0 },
		{ "\xc2", 0, 0 }, { "\xe0\xa0", 0, 0 }, { "\x80", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		uint32_t cp = 0xdeadbeef;
		size_t n = sb_utf8_seq((const unsigned char *)seqs[i].s, &cp);

		ck_assert_uint_eq(n, seqs[i].len);
		if (n)
			ck_assert_uint_eq(cp, seqs[i].cp);
		ck_assert_uint_eq(sb_utf8_seq((const unsigned char *)seqs[i].s, NULL), seqs[i].len);
	}
}
END_TEST

START_TEST(test_units)
{
	struct sb_esc_unit u;
	const char *s = "\xe2\x82\xac\x01";

	/* A valid sequence is one unit pointing into the input. */
	ck_assert_uint_eq(sb_esc_next(s, SB_ESC_JSON, &u), 3);
	ck_assert_ptr_eq(u.s, s);
	ck_assert_uint_eq(u.n, 3);
	ck_assert_uint_eq(sb_esc_next(s + 3, SB_ESC_JSON, &u), 1);
	ck_assert_uint_eq(u.n, 6);
	ck_assert_int_eq(memcmp(u.s, "\\u0001", 6), 0);
	ck_assert_uint_eq(sb_esc_next(s + 4, SB_ESC_JSON, &u), 0);
	ck_assert_uint_eq(u.n, 0);
	for (unsigned c = 0; c < 256; c++) {
		char want[5];

		sb_esc_byte((unsigned char)c, &u);
		snprintf(want, sizeof(want), "\\x%02x", c);
		ck_assert_uint_eq(u.n, 4);
		ck_assert_int_eq(memcmp(u.s, want, 4), 0);
	}
}
END_TEST

static Suite *jsonesc_suite(void)
{
	Suite *s = suite_create("jsonesc");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_modes, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_every_byte);
	tcase_add_test(tc, test_utf8_seq);
	tcase_add_test(tc, test_units);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jsonesc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
