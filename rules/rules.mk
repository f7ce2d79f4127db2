## Data, not code: templates, base profiles, syscall groups, registries.

# Implicit read-only essentials of every interpreter (src/runtime.c).
nobase_dist_pkgdata_DATA += rules/python-runtime.profile

# The supervisor's syscall groups: one table for the filter and the dispatch.
EXTRA_DIST += rules/syscalls.in rules/gen-syscalls.sh
BUILT_SOURCES += src/syscall_table.h
CLEANFILES += src/syscall_table.h
src/syscall_table.h: $(top_srcdir)/rules/syscalls.in $(top_srcdir)/rules/gen-syscalls.sh
	$(AM_V_GEN)$(MKDIR_P) src && \
	$(SHELL) $(top_srcdir)/rules/gen-syscalls.sh $(top_srcdir)/rules/syscalls.in > $@.tmp && mv $@.tmp $@

# Site-wide rules included by every learned file.
dist_sbconf_DATA += rules/global-py-sandboxes.profile

# eval-syntax groups: one list for the policy parser and the learner.
EXTRA_DIST += rules/eval-syntax-groups.in rules/gen-eval-groups.sh
BUILT_SOURCES += src/eval_groups.h
CLEANFILES += src/eval_groups.h
src/eval_groups.h: $(top_srcdir)/rules/eval-syntax-groups.in $(top_srcdir)/rules/gen-eval-groups.sh
	$(AM_V_GEN)$(MKDIR_P) src && \
	$(SHELL) $(top_srcdir)/rules/gen-eval-groups.sh $(top_srcdir)/rules/eval-syntax-groups.in > $@.tmp && mv $@.tmp $@
src/pol_eval.$(OBJEXT) src/learn_gen_eval.$(OBJEXT): src/eval_groups.h
