## The python-sb command line: CPython-compatible splitting, config discovery.
noinst_LIBRARIES += src/libsbcli.a
src_libsbcli_a_SOURCES = src/cli.h
