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

# Fuzzing: libFuzzer on the whole loader.  `./configure --enable-fuzz CC=clang`
# builds fuzz/fuzz_policy with the rest; `make fuzz` builds it with clang in
# any tree (fuzz/fuzz_policy-clang), without touching the configured CC.
EXTRA_DIST += fuzz/fuzz_policy.c fuzz/corpus
FUZZ_POLICY_SRCS = $(src_libsbpolicy_a_SOURCES:%.h=) src/diag.c fuzz/fuzz_policy.c
if FUZZ
noinst_PROGRAMS += fuzz/fuzz_policy
fuzz_fuzz_policy_SOURCES = fuzz/fuzz_policy.c
fuzz_fuzz_policy_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
fuzz_fuzz_policy_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer,address,undefined
fuzz_fuzz_policy_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
endif
FUZZ_CC = clang
FUZZ_SECONDS = 60
.PHONY: fuzz fuzz-run
fuzz: fuzz/fuzz_policy-clang
fuzz/fuzz_policy-clang: $(addprefix $(top_srcdir)/,$(FUZZ_POLICY_SRCS)) src/python_api_table.h
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang (apt-get install clang), or FUZZ_CC=..." >&2; exit 1; }
	$(AM_V_CCLD)$(MKDIR_P) fuzz && $(FUZZ_CC) -std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -I$(top_srcdir)/src -Isrc -I$(top_builddir) -DSB_DATADIR='"$(pkgdatadir)"' -DSB_SRCDIR='"$(abs_top_srcdir)"' \
	  $(CJSON_CFLAGS) $(addprefix $(top_srcdir)/,$(FUZZ_POLICY_SRCS)) $(CJSON_LIBS) -o $@
fuzz-run: fuzz/fuzz_policy-clang
	$(MKDIR_P) fuzz/corpus-work && cp -n $(top_srcdir)/fuzz/corpus/* fuzz/corpus-work/ 2>/dev/null; \
	./fuzz/fuzz_policy-clang -max_total_time=$(FUZZ_SECONDS) -max_len=4096 fuzz/corpus-work
CLEANFILES += fuzz/fuzz_policy-clang
