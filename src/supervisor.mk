## The supervisor: spawn, seccomp filter, notification workers, handlers.
noinst_LIBRARIES += src/libsbsup.a
src_libsbsup_a_SOURCES = src/supervisor.h src/notif.h
