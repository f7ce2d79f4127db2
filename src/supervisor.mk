## The supervisor: spawn, seccomp filter, notification workers, handlers.
noinst_LIBRARIES += src/libsbsup.a
src_libsbsup_a_SOURCES = src/supervisor.h src/notif.h src/sup_priv.h \
	src/supervisor.c src/spawn.c src/filter.c src/procmem.c src/pathres.c \
	src/notif_open.c src/notif_fs.c src/notif_stat.c src/notif_exec.c src/notif_proc.c \
	src/sup_attr.c src/runtime.c src/runtime.h
nodist_src_libsbsup_a_SOURCES = src/syscall_table.h
# Generated from rules/syscalls.in (rules/rules.mk); needed before any object
# of the library even when it is built alone.
$(src_libsbsup_a_OBJECTS): src/syscall_table.h

# Test programs: the driver runs the supervisor alone (no agent, no learner).
check_PROGRAMS += tests/progs/sup_driver
tests_progs_sup_driver_SOURCES = tests/progs/sup_driver.c
tests_progs_sup_driver_LDADD = src/libsbsup.a src/libsblearn.a tracer/libsbtracer.a src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS) -lm
# Attack programs run inside the sandbox by tests/integration/sup-*.py.  Never
# built with sanitizers: LeakSanitizer stops the world with ptrace and reads
# /proc of its parent, both refused inside the sandbox.
check_PROGRAMS += tests/progs/sup_attack tests/progs/sup_race tests/progs/sup_nest
tests_progs_sup_nest_SOURCES = tests/progs/sup_nest.c
tests_progs_sup_attack_SOURCES = tests/progs/sup_attack.c
tests_progs_sup_attack_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_progs_sup_attack_LDFLAGS =
tests_progs_sup_race_SOURCES = tests/progs/sup_race.c
tests_progs_sup_race_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -pthread
tests_progs_sup_race_LDFLAGS = -pthread

# Unit tests of the syscall table and the filter generation.
check_PROGRAMS += tests/unit/check_supervisor
TESTS += tests/unit/check_supervisor
tests_unit_check_supervisor_SOURCES = tests/unit/check_supervisor.c tests/unit/policy_text.h
tests_unit_check_supervisor_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_supervisor_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS) -lm
# The BPF emitter against the libseccomp builder it replaced (filter_ref.c).
check_PROGRAMS += tests/unit/check_filter
TESTS += tests/unit/check_filter
tests_unit_check_filter_SOURCES = tests/unit/check_filter.c tests/unit/filter_ref.c tests/unit/filter_ref.h \
	tests/unit/policy_text.h
tests_unit_check_filter_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_filter_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS) -lm

# Integration tests: the real python-sb on real Python programs.
SUP_TESTS = tests/integration/sup-basic.py tests/integration/sup-files.py \
	tests/integration/sup-process.py tests/integration/sup-bypass.py \
	tests/integration/sup-race.py tests/integration/sup-fifo.py \
	tests/integration/sup-threads.py tests/integration/sup-rlimit.py \
	tests/integration/sup-kill.py tests/integration/audit-race.py \
	tests/integration/sup-paths.py tests/integration/sup-idle.py \
	tests/integration/sup-hardening.py
TESTS += $(SUP_TESTS)
EXTRA_DIST += $(SUP_TESTS) tests/integration/sup_util.py

# Python attribution in the supervisor (src/sup_attr.c): locations, the
# python-import= and eval-origin refusals, the learner's comments, the notes
# that let the agent raise Rule...Error.
ATTR_TESTS = tests/integration/attr-location.py tests/integration/attr-import.py \
	tests/integration/attr-eval.py tests/integration/attr-learn.py tests/integration/attr-agent.py
TESTS += $(ATTR_TESTS)
EXTRA_DIST += $(ATTR_TESTS)
