/* _Py_DebugOffsets fixtures shared by the tracer's unit tests
 * (check_tracer.c, check_pymodules.c): the words after the cookie of
 * 3.13.0's and 3.14.0's .PyRuntime, and the blob built from them. */
#ifndef SB_TEST_PYDEBUG_FIXTURES_H
#define SB_TEST_PYDEBUG_FIXTURES_H

#include <stdint.h>
#include <string.h>

/* libpython3.13.so (3.13.0) .PyRuntime, the 72 words after the cookie. */
static const uint64_t dbg313_words[72] = {
	0x30d00f0, 0, 0x452b8, 608, 632, 0x2f998, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0,
	7768, 7760, 304, 0, 8, 16, 72, 152, 160, 232, 32, 80, 8, 0, 56, 72, 70, 208, 112, 120, 128, 136,
	68, 52, 96, 104, 200, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48, 32, 40, 24, 16, 32,
	16, 24, 40, 16, 32, 64, 32, 16, 40, 240, 200,
};

#define S 0x5e5e	/* sentinel in fields a 3.13-ordered parser would misread (the tests look for it) */

/* 3.14.0, from python-frames.md §4/§5 (offsets derived from 3.14 headers). */
static const uint64_t dbg314_words[94] = {
	0x30e00f0, 0,
	/* runtime_state */ 0x60000, 784, 808,
	/* interpreter_state */ 0x30000, 7280, 7272, 7344, S, 7400, 7664, 7648, 7656, 16, 7760, 0, 7776, 7768, S, S,
	/* thread_state */ 824, 0, 8, 16, 72, 152, 160, 232, 32,
	/* interpreter_frame */ 88, 8, 0, 56, 80, 74, S, S,
	/* code_object */ 216, 112, 120, 128, 136, 68, 52, 96, 104, 208, S,
	/* pyobject */ 16, 8,
	/* type_object */ 416, 24, 88, 168,
	/* tuple_object */ 32, 24, 16,
	/* list_object */ 40, 24, 16,
	/* set_object */ 200, S, S, S,
	/* dict_object */ 48, 32, 40,
	/* float_object */ 24, 16,
	/* long_object */ 32, 16, 24,
	/* bytes_object */ 40, 16, 32,
	/* unicode_object */ 64, 32, 16, 40,
	/* gc */ 240, 200,
	/* gen_object */ 128, S, S, S,
	/* llist_node */ S, S,
	/* debugger_support */ S, S, S, S, S, S,
};


static inline size_t make_blob(uint8_t *blob, const uint64_t *words, size_t n)
{
	memcpy(blob, "xdebugpy", 8);
	memcpy(blob + 8, words, n * 8);
	return 8 + n * 8;
}

#endif
