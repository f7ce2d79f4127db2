## Network handlers of the supervisor (connect, bind, listen, sendto, sendmsg).
## src/notif_net.c judges, src/net_emul.c performs the call for the program,
## src/sockaddr.c decodes and prints addresses (also used by the attach backend).
src_libsbsup_a_SOURCES += src/notif_net.c src/notif_net.h src/net_emul.c src/net_emul.h \
	src/sockaddr.c src/sockaddr.h

check_PROGRAMS += tests/unit/check_sockaddr
TESTS += tests/unit/check_sockaddr
tests_unit_check_sockaddr_SOURCES = tests/unit/check_sockaddr.c
tests_unit_check_sockaddr_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_sockaddr_LDADD = $(SB_LIBS) $(SB_EXT_LIBS) $(CHECK_LIBS)

# Attack programs started by the sandboxed Python programs of the tests.
check_PROGRAMS += tests/progs/net_connect tests/progs/net_flip
tests_progs_net_connect_SOURCES = tests/progs/net_connect.c
tests_progs_net_flip_SOURCES = tests/progs/net_flip.c

NET_INTEGRATION_TESTS = \
	tests/integration/net-inet.py \
	tests/integration/net-unix.py \
	tests/integration/net-attacks.py \
	tests/integration/net-blocking.py
TESTS += $(NET_INTEGRATION_TESTS)
EXTRA_DIST += $(NET_INTEGRATION_TESTS) tests/integration/netlib.py doc/network.md
