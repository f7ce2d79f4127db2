## Reading other processes: CPython frames, native unwinding, ptrace attach.
noinst_LIBRARIES += tracer/libsbtracer.a
tracer_libsbtracer_a_SOURCES = tracer/pyframes.h tracer/pyproc.h \
	tracer/mem.c tracer/mem.h tracer/elf.c tracer/sbelf.h \
	tracer/pyversion.c tracer/pyversion.h tracer/pydecode.c tracer/pydecode.h \
	tracer/pyruntime.c tracer/pyframes.c tracer/pyclassify.c tracer/pyloc.c \
	tracer/native.c tracer/native.h tracer/stackdump.c \
	tracer/pymodules.c tracer/pymodules.h

# Unit tests: decoders, debug-offset validation, the walker on forged memory.
check_PROGRAMS += tests/unit/check_tracer
TESTS += tests/unit/check_tracer
tests_unit_check_tracer_SOURCES = tests/unit/check_tracer.c tests/unit/pydebug_fixtures.h tests/unit/pyforge.h
tests_unit_check_tracer_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
# Only the tracer library: these tests must not wait for other areas to build.
tests_unit_check_tracer_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS) $(CHECK_LIBS)

# sys.modules read from outside (pymodules.c), on forged runtimes and a real one.
check_PROGRAMS += tests/unit/check_pymodules
TESTS += tests/unit/check_pymodules
tests_unit_check_pymodules_SOURCES = tests/unit/check_pymodules.c tests/unit/pydebug_fixtures.h tests/unit/pyforge.h
tests_unit_check_pymodules_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_pymodules_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS) $(CHECK_LIBS)

# Helper of the integration tests: prints a live process's stacks as JSON.
check_PROGRAMS += tests/unit/pystack_dump
tests_unit_pystack_dump_SOURCES = tests/unit/pystack_dump.c
tests_unit_pystack_dump_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS)

TRACER_TESTS = tests/integration/tracer-stacks.py tests/integration/tracer-classify.py \
	tests/integration/tracer-dump.py tests/integration/tracer-fuzz.py
TESTS += $(TRACER_TESTS)
EXTRA_DIST += $(TRACER_TESTS) tests/integration/tracer-common.py \
	tests/targets/sleepy.py tests/targets/exec_target.py tests/targets/import_target.py \
	tests/targets/pyfr_mods/slow_outer.py tests/targets/pyfr_mods/slow_inner.py \
	tests/targets/threads.py tests/targets/deep.py tests/targets/forker.py tests/targets/corrupt.py \
	tests/targets/reexec.py tests/targets/busy.py
# doc/attribution.md is distributed by doc/doc.mk (doc/*.md).
