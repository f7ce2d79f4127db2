## Shared helpers used by every library: diagnostics, UAPI compat, the
## escaper of hostile strings (the decision log and the reports).
noinst_LIBRARIES += src/libsbutil.a
src_libsbutil_a_SOURCES = src/diag.c src/diag.h src/fdio.c src/fdio.h src/compat.h src/event.h \
	src/jsonesc.c src/jsonesc.h src/thread.c src/thread.h src/child.c src/child.h

check_PROGRAMS += tests/unit/check_jsonesc
TESTS += tests/unit/check_jsonesc
tests_unit_check_jsonesc_SOURCES = tests/unit/check_jsonesc.c
tests_unit_check_jsonesc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_jsonesc_LDADD = src/libsbutil.a $(CHECK_LIBS)
