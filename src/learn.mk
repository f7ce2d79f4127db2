## Learning, audit, the JSON decision log, policy drift.
noinst_LIBRARIES += src/libsblearn.a
src_libsblearn_a_SOURCES = src/learn.h src/learn_int.h src/log.h src/drift.h \
	src/learn.c src/learn_store.c src/learn_gen.c src/learn_gen_eval.c src/learn_write.c \
	src/learn_journal.c src/learn_audit.c src/log.c src/drift.c

# Module lists the learner classifies python-import= lines with
# (installed as $(pkgdatadir)/rules/..., read from the source tree uninstalled).
nobase_dist_pkgdata_DATA += rules/stdlib-modules.txt rules/dangerous-modules.txt \
	rules/deprecated-modules.txt

check_PROGRAMS += tests/unit/check_learn tests/unit/check_log
TESTS += tests/unit/check_learn tests/unit/check_log
tests_unit_check_learn_SOURCES = tests/unit/check_learn.c
tests_unit_check_learn_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_learn_CPPFLAGS = $(AM_CPPFLAGS) \
	-DLEARN_DATA='"$(abs_top_srcdir)/tests/unit/learn-data"' \
	-DRULES_DIR='"$(abs_top_srcdir)/rules"'
tests_unit_check_learn_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)
tests_unit_check_log_SOURCES = tests/unit/check_log.c
tests_unit_check_log_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_log_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/learn-data/hosts tests/unit/learn-data/existing.py-sandboxes \
	tests/unit/learn-data/existing.expected tests/unit/learn-data/nomarkers.py-sandboxes \
	tests/unit/learn-data/nomarkers.expected tests/unit/learn-data/withexec.py-sandboxes \
	tests/unit/learn-data/withexec.expected tests/unit/learn-data/learnline.py-sandboxes

LEARN_ITESTS = tests/integration/learn-new-file.py tests/integration/learn-relearn.py \
	tests/integration/learn-lock.py tests/integration/learn-endings.py \
	tests/integration/learn-roundtrip.py tests/integration/learn-diff.py \
	tests/integration/learn-bytecode.py
TESTS += $(LEARN_ITESTS)
EXTRA_DIST += $(LEARN_ITESTS) tests/integration/learnlib.py
