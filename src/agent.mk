## The C side of the agent channel (rules to the interpreter, events back).
src_libsbsup_a_SOURCES += src/agent.c src/agent.h src/agent_bytecode.c

# Where the installed python-sb lives: an executable found there uses the
# installed agent, any other (the build tree) the source tree's copy.
BUILT_SOURCES += src/agent-paths.h
CLEANFILES += src/agent-paths.h
src/agent-paths.h: Makefile
	$(AM_V_GEN)$(MKDIR_P) src && \
	printf '#define SB_AGENT_BINDIR "%s"\n' '$(bindir)' >$@-t && mv -f $@-t $@
# Also when a library is built alone (make src/libsbsup.a).
src/agent.$(OBJEXT) src/libsbsup_a-agent.$(OBJEXT): src/agent-paths.h

check_PROGRAMS += tests/unit/check_agent
TESTS += tests/unit/check_agent
tests_unit_check_agent_SOURCES = tests/unit/check_agent.c
tests_unit_check_agent_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -DRULES_DIR='"$(abs_top_srcdir)/rules"'
tests_unit_check_agent_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)

# The hostile interpreter of tests/integration/agent-bytecode.py.  Never
# built with sanitizers: it also runs as the program inside the sandbox,
# where LeakSanitizer's stop-the-world clone is refused.
check_PROGRAMS += tests/progs/fake_python
tests_progs_fake_python_SOURCES = tests/progs/fake_python.c
tests_progs_fake_python_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_progs_fake_python_LDFLAGS =
