/* The _Py_DebugOffsets words of real interpreters (after the "xdebugpy"
 * cookie): the unit tests' fixtures, libpython3.13.so 3.13.0 and 3.14.0.
 * Seeds for the tracer targets. */
#ifndef SB_FUZZ_PYBLOBS_H
#define SB_FUZZ_PYBLOBS_H

#include "../tests/unit/pydebug_fixtures.h"

#endif
