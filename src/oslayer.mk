## Kernel layers (Landlock, namespaces, bwrap, firejail).
src_libsbsup_a_SOURCES += src/oslayer.h src/oslayer.c src/osl_int.h src/osl_input.c src/osl_probe.c \
	src/osl_describe.c src/landlock.h src/landlock.c src/unshare.c src/wrap_bwrap.c \
	src/wrap_firejail.c src/wrap_stub.c src/stub_main.c src/stub_main.h
src_libsbpolicy_a_SOURCES += src/policy_iter.c

check_PROGRAMS += tests/unit/check_oslayer
TESTS += tests/unit/check_oslayer
tests_unit_check_oslayer_SOURCES = tests/unit/check_oslayer.c
tests_unit_check_oslayer_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_oslayer_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)

# A driver for the integration tests: a policy, the layer, fork, exec; no
# supervisor (so the kernel layer alone is what refuses).
check_PROGRAMS += tests/unit/oslayer_run
tests_unit_oslayer_run_SOURCES = tests/unit/oslayer_run.c
tests_unit_oslayer_run_LDADD = $(SB_LIBS) $(SB_EXT_LIBS)

OSLAYER_TESTS = tests/integration/os-landlock-files.py tests/integration/os-landlock-net.py \
	tests/integration/os-landlock-selftest.py tests/integration/os-unshare.py \
	tests/integration/os-wrappers.py tests/integration/os-landlock-sb.py \
	tests/integration/os-unshare-sb.py tests/integration/os-bwrap-sb.py \
	tests/integration/os-firejail-sb.py
TESTS += $(OSLAYER_TESTS)
EXTRA_DIST += $(OSLAYER_TESTS) tests/integration/oslayer_util.py tests/integration/oslayer_sb_util.py
EXTRA_DIST += doc/os-layers.md
