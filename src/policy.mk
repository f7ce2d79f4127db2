## The policy language: parser, includes, ${}, every key, compiled lookups.
noinst_LIBRARIES += src/libsbpolicy.a
src_libsbpolicy_a_SOURCES = src/policy.h src/pol_int.h src/policy.c src/pol_util.c src/pol_lex.c \
	src/pol_settings.c src/pol_env.c src/pol_path.c src/pol_net.c src/pol_api.c src/pol_eval.c \
	src/pol_json.c src/pol_describe.c
nodist_src_libsbpolicy_a_SOURCES = src/python_api_table.h

# The python-api registry is data (rules/python-api.in); its C table is generated.
BUILT_SOURCES += src/python_api_table.h
src/pol_api.$(OBJEXT): src/python_api_table.h
CLEANFILES += src/python_api_table.h
EXTRA_DIST += rules/gen-python-api.sh
src/python_api_table.h: $(top_srcdir)/rules/python-api.in $(top_srcdir)/rules/gen-python-api.sh
	$(AM_V_GEN)$(MKDIR_P) src && \
	$(SHELL) $(top_srcdir)/rules/gen-python-api.sh $(top_srcdir)/rules/python-api.in > $@.tmp && mv $@.tmp $@

nobase_dist_pkgdata_DATA += rules/py-sandboxes.template rules/python-api.in rules/base/deny-intranet.profile

# Unit tests.
check_PROGRAMS += tests/unit/check_policy
TESTS += tests/unit/check_policy
tests_unit_check_policy_SOURCES = tests/unit/check_policy.c tests/unit/check_policy_paths.c \
	tests/unit/check_policy_net.c tests/unit/check_policy_keys.c tests/unit/check_policy_misc.c \
	tests/unit/check_policy.h
tests_unit_check_policy_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -DSB_TEST_SRCDIR='"$(abs_top_srcdir)"'
# Only the libraries it tests: a half-built library of another area must not stop it.
tests_unit_check_policy_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/policy-data

# Its fuzz target (fuzz/fuzz_policy.c) is built by fuzz/fuzz.mk with the others.
