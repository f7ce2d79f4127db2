/* The _Py_DebugOffsets words of real interpreters (after the "xdebugpy"
 * cookie), as in tests/unit/check_tracer.c: libpython3.13.so 3.13.0, and
 * 3.14.0 from python-frames.md §4/§5 (S marks fields a 3.13-ordered parser
 * would misread).  Seeds for the tracer targets. */
#ifndef SB_FUZZ_PYBLOBS_H
#define SB_FUZZ_PYBLOBS_H

#include <stdint.h>

static const uint64_t dbg313_words[72] = {
	0x30d00f0, 0, 0x452b8, 608, 632, 0x2f998, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0,
	7768, 7760, 304, 0, 8, 16, 72, 152, 160, 232, 32, 80, 8, 0, 56, 72, 70, 208, 112, 120, 128, 136,
	68, 52, 96, 104, 200, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48, 32, 40, 24, 16, 32,
	16, 24, 40, 16, 32, 64, 32, 16, 40, 240, 200,
};
#define S 0x5e5e
static const uint64_t dbg314_words[94] = {
	0x30e00f0, 0, 0x60000, 784, 808, 0x30000, 7280, 7272, 7344, S, 7400, 7664, 7648, 7656, 16, 7760,
	0, 7776, 7768, S, S, 824, 0, 8, 16, 72, 152, 160, 232, 32, 88, 8, 0, 56, 80, 74, S, S, 216, 112,
	120, 128, 136, 68, 52, 96, 104, 208, S, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 200, S,
	S, S, 48, 32, 40, 24, 16, 32, 16, 24, 40, 16, 32, 64, 32, 16, 40, 240, 200, 128, S, S, S, S, S, S,
	S, S, S, S, S,
};

#undef S

#endif
