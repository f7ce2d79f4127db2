## The python-sb command line: CPython-compatible splitting, config discovery,
## help text; its man page and shell completions.
noinst_LIBRARIES += src/libsbcli.a
src_libsbcli_a_SOURCES = src/cli.h src/cli.c src/cli_config.c src/cli_help.c

dist_man_MANS += doc/python-sb.1

# bash-completion loads a completion by the command's name: install the
# script as python-sb and python3-sb.
bashcompletiondir = $(datadir)/bash-completion/completions
bashcompletion_DATA = contrib/completion/python-sb contrib/completion/python3-sb
CLEANFILES += $(bashcompletion_DATA)
EXTRA_DIST += contrib/completion/python-sb.bash
contrib/completion/python-sb contrib/completion/python3-sb: contrib/completion/python-sb.bash
	$(AM_V_GEN)$(MKDIR_P) contrib/completion && cp $(srcdir)/contrib/completion/python-sb.bash $@
zshcompletiondir = $(datadir)/zsh/site-functions
dist_zshcompletion_DATA = contrib/completion/_python-sb

check_PROGRAMS += tests/unit/check_cli
TESTS += tests/unit/check_cli
tests_unit_check_cli_SOURCES = tests/unit/check_cli.c
tests_unit_check_cli_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_cli_CPPFLAGS = $(AM_CPPFLAGS) -DCLI_CASES='"$(abs_top_srcdir)/tests/unit/cli-cases.txt"'
# Only what the command line needs: other areas may be half-built meanwhile.
tests_unit_check_cli_LDADD = src/libsbcli.a src/libsbutil.a $(CHECK_LIBS)
EXTRA_DIST += tests/unit/cli-cases.txt

# Prints the split of its argv as JSON, for the CPython comparison test.
check_PROGRAMS += tests/unit/cli_split
tests_unit_cli_split_SOURCES = tests/unit/cli_split.c
tests_unit_cli_split_LDADD = src/libsbcli.a src/libsbutil.a $(CJSON_LIBS)

TESTS += tests/integration/cli-cpython-compare.py
EXTRA_DIST += tests/integration/cli-cpython-compare.py
