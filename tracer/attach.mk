## Attach mode: the ptrace backend (tracer/attach*.c, doc/attach.md).
## Its own library, linked before every other one (SB_LIBS must start with
## tracer/libsbattach.a): it calls the learner, the log, the policy, the
## socket-address printer (libsbsup) and the Python attribution (libsbtracer).
noinst_LIBRARIES += tracer/libsbattach.a
tracer_libsbattach_a_SOURCES = tracer/attach.h tracer/attach_int.h \
	tracer/attach.c tracer/attach_decode.c tracer/attach_judge.c tracer/attach_enforce.c

# The decoders, on this process's own memory; PID lists; the checks.
check_PROGRAMS += tests/unit/check_attach
TESTS += tests/unit/check_attach
tests_unit_check_attach_SOURCES = tests/unit/check_attach.c
tests_unit_check_attach_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_attach_LDADD = tracer/libsbattach.a $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)

# Runs sb_attach_run() from argv, so the tests do not depend on how main.c
# wires --attach (they use `python-sb --attach` once it is wired).
check_PROGRAMS += tests/unit/attach_driver
tests_unit_attach_driver_SOURCES = tests/unit/attach_driver.c
tests_unit_attach_driver_LDADD = tracer/libsbattach.a $(SB_LIBS) $(SB_EXT_LIBS)

ATTACH_TESTS = tests/integration/attach-trace.py tests/integration/attach-threads.py \
	tests/integration/attach-fork.py tests/integration/attach-policy.py \
	tests/integration/attach-learn.py tests/integration/attach-errors.py \
	tests/integration/attach-learn-imports.py
TESTS += $(ATTACH_TESTS)
EXTRA_DIST += $(ATTACH_TESTS) tests/integration/attachlib.py tests/targets/attach_loop.py \
	tests/targets/attach_imports/main.py tests/targets/attach_imports/attach_imports_local.py
# doc/attach.md is distributed by doc/doc.mk (doc/*.md).
