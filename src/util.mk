## Shared helpers used by every library: diagnostics, UAPI compat.
noinst_LIBRARIES += src/libsbutil.a
src_libsbutil_a_SOURCES = src/diag.c src/diag.h src/fdio.c src/fdio.h src/compat.h src/event.h
