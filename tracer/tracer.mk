## Reading other processes: CPython frames, native unwinding, ptrace attach.
noinst_LIBRARIES += tracer/libsbtracer.a
tracer_libsbtracer_a_SOURCES = tracer/pyframes.h
