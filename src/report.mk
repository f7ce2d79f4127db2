## --report=FILE (SARIF, JUnit XML, JSON), the MCP sample, the CI recipes and
## the user documentation's checks (issue 11).
src_libsblearn_a_SOURCES += src/report.c src/report.h

check_PROGRAMS += tests/unit/check_report
TESTS += tests/unit/check_report
tests_unit_check_report_SOURCES = tests/unit/check_report.c
tests_unit_check_report_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_report_CPPFLAGS = $(AM_CPPFLAGS) \
	-DREPORT_VALIDATOR='"$(abs_top_srcdir)/tests/integration/report-validate.py"'
tests_unit_check_report_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)

REPORT_ITESTS = tests/integration/report-audit.py tests/integration/mcp-complete.py \
	tests/integration/mcp-partial.py tests/integration/doc-options.py
TESTS += $(REPORT_ITESTS)
EXTRA_DIST += $(REPORT_ITESTS) tests/integration/report-validate.py tests/integration/mcp-lib.py \
	tests/integration/report-suite/test_report_suite.py

# The MCP server sample and the CI recipes are shipped as documentation.
EXTRA_DIST += contrib/samples/mcp-server/README.md contrib/samples/mcp-server/server.py \
	contrib/samples/mcp-server/tools.py contrib/samples/mcp-server/.py-sandboxes \
	contrib/samples/mcp-server/.py-sandboxes-partial \
	contrib/ci/README.md contrib/ci/github-actions.yml contrib/ci/gitlab-ci.yml
