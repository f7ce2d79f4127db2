/* Network decisions: DENY first, implicit deny, v4/v6/mapped, ports,
 * protocols, directions; host names from a hosts-file fixture (no DNS). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check_policy.h"

#define TCP SB_PROTO_TCP
#define UDP SB_PROTO_UDP
#define IN SB_DIR_IN
#define OUT SB_DIR_OUT

static void use_hosts_fixture(void)
{
	tp_write("hosts", "# fixture\n"
			  "127.0.0.1\tlocalhost\n"
			  "::1 localhost\n"
			  "192.0.2.10 api.example.test api\n"
			  "192.0.2.11 api.example.test\n"
			  "2001:db8::10 v6only.test\n"
			  "# 198.51.100.1 commented.test\n"
			  "198.51.100.7 mixed.test  # trailing\n"
			  "192.0.2.80 example.com\n");
	tp.opts.hosts_path = tp_path("hosts");
}

static const char net_rules[] =
	"net=DENY|*|10.0.0.0/8|*|OUT\n"			/* 1 */
	"net=ALLOW|tcp|0.0.0.0/0|443|OUT\n"		/* 2 */
	"net=ALLOW|tcp|10.1.2.3|443|OUT\n"		/* 3 */
	"net=ALLOW|udp|127.0.0.1|53|OUT\n"		/* 4 */
	"net=ALLOW|tcp|API.example.test|8000-8080|OUT\n"	/* 5 */
	"net=ALLOW|tcp|*|9000|IN\n"			/* 6 */
	"net=ALLOW|tcp|::1|80,81|IN,OUT\n"		/* 7 */
	"net=ALLOW|tcp,udp|2001:db8::/32|5000-|*\n"	/* 8 */
	"net=DENY|tcp|2001:db8::dead|*|*\n"		/* 9 */
	"net=ALLOW|tcp|192.168.0.0/255.255.0.0|22|OUT\n"	/* 10 */
	"net=ALLOW|tcp|198.51.100.0/24||OUT\n"		/* 11 */
	"net=ALLOW|tcp|172.16.5.5/12|25|OUT\n"		/* 12 */
	"net=ALLOW|udp|v6only.test|123|OUT\n";		/* 13 */

static const struct {
	const char *addr;
	uint16_t port;
	unsigned proto, dir;
	enum sb_net_verdict verdict;
	unsigned line;
} net_cases[] = {
	{ "10.1.2.3", 443, TCP, OUT, SB_NET_DENY_RULE, 1 },
	{ "10.9.9.9", 53, UDP, OUT, SB_NET_DENY_RULE, 1 },
	{ "10.1.2.3", 443, TCP, IN, SB_NET_DENY_IMPLICIT, 0 },
	{ "8.8.8.8", 443, TCP, OUT, SB_NET_ALLOW, 2 },
	{ "8.8.8.8", 443, UDP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "8.8.8.8", 80, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "127.0.0.1", 53, UDP, OUT, SB_NET_ALLOW, 4 },
	{ "127.0.0.1", 53, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "192.0.2.10", 8000, TCP, OUT, SB_NET_ALLOW, 5 },
	{ "192.0.2.11", 8080, TCP, OUT, SB_NET_ALLOW, 5 },
	{ "192.0.2.11", 8081, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "192.0.2.12", 8000, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "0.0.0.0", 9000, TCP, IN, SB_NET_ALLOW, 6 },
	{ "::", 9000, TCP, IN, SB_NET_ALLOW, 6 },
	{ "0.0.0.0", 9000, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "::1", 80, TCP, IN, SB_NET_ALLOW, 7 },
	{ "::1", 81, TCP, OUT, SB_NET_ALLOW, 7 },
	{ "::1", 82, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "::1", 80, UDP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "2001:db8::1", 5000, UDP, IN, SB_NET_ALLOW, 8 },
	{ "2001:db8::1", 65535, TCP, OUT, SB_NET_ALLOW, 8 },
	{ "2001:db8::1", 4999, UDP, IN, SB_NET_DENY_IMPLICIT, 0 },
	{ "2001:db9::1", 5000, UDP, IN, SB_NET_DENY_IMPLICIT, 0 },
	{ "2001:db8::dead", 6000, TCP, OUT, SB_NET_DENY_RULE, 9 },
	{ "2001:db8::dead", 6000, UDP, OUT, SB_NET_ALLOW, 8 },
	{ "::ffff:10.1.2.3", 443, TCP, OUT, SB_NET_DENY_RULE, 1 },
	{ "::ffff:8.8.8.8", 443, TCP, OUT, SB_NET_ALLOW, 2 },
	{ "::ffff:8.8.8.8", 80, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "192.168.7.7", 22, TCP, OUT, SB_NET_ALLOW, 10 },
	{ "192.169.0.1", 22, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "198.51.100.9", 80, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "198.51.100.9", 0, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "172.20.0.1", 25, TCP, OUT, SB_NET_ALLOW, 12 },
	{ "172.32.0.1", 25, TCP, OUT, SB_NET_DENY_IMPLICIT, 0 },
	{ "2001:db8::10", 123, UDP, OUT, SB_NET_ALLOW, 13 },
	{ "2001:db8::10", 123, UDP, IN, SB_NET_DENY_IMPLICIT, 0 },	/* rule 13 is OUT, rule 8 starts at 5000 */
};

START_TEST(net_decisions)
{
	uint8_t addr[16];
	int family = strchr(net_cases[_i].addr, ':') ? AF_INET6 : AF_INET;
	const struct sb_rule_ref *hit = (void *)1;
	enum sb_net_verdict v, expect = net_cases[_i].verdict;


	use_hosts_fixture();
	ck_assert_int_eq(tp_load(net_rules), 0);
	ck_assert_int_eq(inet_pton(family, net_cases[_i].addr, addr), 1);
	v = sb_policy_check_net(tp.p, family, addr, net_cases[_i].port, net_cases[_i].proto, net_cases[_i].dir, &hit);
	ck_assert_msg(v == expect, "%s:%u verdict %d expected %d", net_cases[_i].addr, net_cases[_i].port, v, expect);
	if (net_cases[_i].line) {
		ck_assert_ptr_nonnull(hit);
		ck_assert_uint_eq(hit->line, net_cases[_i].line);
	} else {
		ck_assert_ptr_null(hit);
	}
}
END_TEST

START_TEST(net_no_rules_denies)
{
	uint8_t a[4] = { 127, 0, 0, 1 };

	ck_assert_int_eq(tp_load("port=1\n"), 0);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET, a, 80, TCP, OUT, NULL), SB_NET_DENY_IMPLICIT);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_UNIX, a, 80, TCP, OUT, NULL), SB_NET_DENY_IMPLICIT);
}
END_TEST

START_TEST(net_hosts_pinned)
{
	const struct sb_host *h;
	size_t n;
	char buf[64];

	use_hosts_fixture();
	ck_assert_int_eq(tp_load(net_rules), 0);
	n = sb_policy_hosts(tp.p, &h);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(h[0].name, "API.example.test");
	ck_assert_str_eq(h[0].source, "hosts file");
	ck_assert_uint_eq(h[0].n_addrs, 2);
	ck_assert_str_eq(inet_ntop(AF_INET, h[0].addrs[0].addr, buf, sizeof(buf)), "192.0.2.10");
	ck_assert_str_eq(inet_ntop(AF_INET, h[0].addrs[1].addr, buf, sizeof(buf)), "192.0.2.11");
	ck_assert_int_eq(h[1].addrs[0].family, AF_INET6);
}
END_TEST

START_TEST(net_localhost_sources)
{
	const struct sb_host *h;
	const struct sb_net_rule *r;
	uint8_t lo6[16] = { [15] = 1 };

	/* The fixture names localhost (v4 and v6), not ip6-localhost: built-in. */
	use_hosts_fixture();
	ck_assert_int_eq(tp_load("net=ALLOW|tcp|localhost|80|OUT\nnet=ALLOW|tcp|ip6-loopback|81|OUT\n"), 0);
	ck_assert_uint_eq(sb_policy_hosts(tp.p, &h), 2);
	ck_assert_str_eq(h[0].source, "hosts file");
	ck_assert_uint_eq(h[0].n_addrs, 2);
	ck_assert_str_eq(h[1].source, "built-in");
	ck_assert_uint_eq(sb_policy_net_rules(tp.p, &r), 3);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET6, lo6, 81, TCP, OUT, NULL), SB_NET_ALLOW);
}
END_TEST

START_TEST(net_builtin_localhost_v4_only)
{
	uint8_t lo4[4] = { 127, 0, 0, 1 }, lo6[16] = { [15] = 1 };

	/* No hosts file at all: localhost is 127.0.0.1 only, never ::1. */
	ck_assert_int_eq(tp_load("net=ALLOW|tcp|localhost|80|OUT\n"), 0);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET, lo4, 80, TCP, OUT, NULL), SB_NET_ALLOW);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET6, lo6, 80, TCP, OUT, NULL), SB_NET_DENY_IMPLICIT);
}
END_TEST

START_TEST(net_named_without_address)
{
	/* A hosts line naming the host with a bad address: no fallback, no DNS. */
	tp_write("hosts", "not-an-ip localhost\n");
	tp.opts.hosts_path = tp_path("hosts");
	ck_assert_int_eq(tp_load("net=DENY|tcp|localhost|80|OUT\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, ".py-sandboxes(1): In 'net=DENY|tcp|localhost|80|OUT', invalid network "
				      "specification. That does not resolve to any network.");
}
END_TEST

START_TEST(net_duplicates_removed)
{
	const struct sb_net_rule *r;

	ck_assert_int_eq(tp_load("net=ALLOW|tcp|1.2.3.4|80|OUT\nnet=ALLOW|TCP|1.2.3.4/32|80|OUT\n"
				 "net=ALLOW|tcp|1.2.3.4|80|IN\nnet=ALLOW|tcp|*|80|OUT\n"
				 "net=ALLOW|udp|1.2.3.4||OUT\nnet=ALLOW|udp|1.2.3.4||OUT\n"), 0);
	ck_assert_uint_eq(sb_policy_net_rules(tp.p, &r), 5);
	ck_assert_uint_eq(r[0].plen, 32);
	ck_assert_uint_eq(r[0].ref->line, 1);
	ck_assert_uint_eq(r[1].ref->line, 3);
	ck_assert_uint_eq(r[2].ref->line, 5);	/* empty port lists compare equal too */
	ck_assert_uint_eq(r[2].n_ports, 0);
	ck_assert_uint_eq(r[3].plen, 0);
	ck_assert_int_eq(r[3].family, AF_INET);
	ck_assert_int_eq(r[4].family, AF_INET6);
}
END_TEST

START_TEST(net_table_order)
{
	const struct sb_net_rule *r;
	size_t n;

	ck_assert_int_eq(tp_load("net=ALLOW|tcp|0.0.0.0/0|443|OUT\nnet=DENY|*|10.0.0.0/8|*|OUT\n"
				 "net=ALLOW|udp|1.1.1.1||OUT\nnet=DENY|tcp|10.1.0.0/16|22|*\n"), 0);
	n = sb_policy_net_rules(tp.p, &r);
	ck_assert_uint_eq(n, 4);
	ck_assert(r[0].deny && r[0].plen == 16);
	ck_assert(r[1].deny && r[1].plen == 8);
	ck_assert(!r[2].deny && r[2].plen == 32 && r[2].n_ports == 0);
	ck_assert(!r[3].deny && r[3].plen == 0);
	ck_assert_uint_eq(r[1].protos, TCP | UDP);
	ck_assert_uint_eq(r[0].dirs, IN | OUT);
	ck_assert_uint_eq(r[1].n_ports, 1);
	ck_assert_uint_eq(r[1].ports[0].lo, 0);
	ck_assert_uint_eq(r[1].ports[0].hi, 65535);
}
END_TEST

/* A name in the real /etc/hosts but not in the fixture goes to getaddrinfo,
 * which answers from the files source: no packet leaves the machine. */
START_TEST(net_getaddrinfo_path)
{
	const struct sb_host *h;
	FILE *f = fopen("/etc/hosts", "r");
	char line[512], name[256] = "";

	if (f) {
		while (!*name && fgets(line, sizeof(line), f)) {
			char ip[128], n1[256];
			if (line[0] != '#' && sscanf(line, "%127s %255s", ip, n1) == 2 && strchr(ip, '.') &&
			    strcmp(n1, "localhost"))
				snprintf(name, sizeof(name), "%s", n1);
		}
		fclose(f);
	}
	if (!*name)
		return;		/* nothing to resolve without DNS on this host */
	tp.opts.no_dns = false;
	snprintf(line, sizeof(line), "net=ALLOW|tcp|%s|80|OUT\n", name);
	ck_assert_int_eq(tp_load(line), 0);
	ck_assert_uint_eq(sb_policy_hosts(tp.p, &h), 1);
	ck_assert_str_eq(h[0].source, "DNS");
	ck_assert_uint_ge(h[0].n_addrs, 1);
}
END_TEST

/* rules/base/deny-intranet.profile: DENY lines win over a broad ALLOW. */
static const struct {
	const char *addr;
	enum sb_net_verdict verdict;
} intranet_cases[] = {
	{ "10.1.2.3", SB_NET_DENY_RULE },	{ "172.31.0.1", SB_NET_DENY_RULE },
	{ "192.168.1.1", SB_NET_DENY_RULE },	{ "169.254.169.254", SB_NET_DENY_RULE },
	{ "127.0.0.1", SB_NET_DENY_RULE },	{ "100.100.0.1", SB_NET_DENY_RULE },
	{ "fd00::1", SB_NET_DENY_RULE },	{ "fe80::1", SB_NET_DENY_RULE },
	{ "::1", SB_NET_DENY_RULE },		{ "::ffff:192.168.0.1", SB_NET_DENY_RULE },
	{ "8.8.8.8", SB_NET_ALLOW },		{ "2001:db8::1", SB_NET_ALLOW },
	{ "172.32.0.1", SB_NET_ALLOW },
};

START_TEST(net_deny_intranet_profile)
{
	uint8_t addr[16];
	int family = strchr(intranet_cases[_i].addr, ':') ? AF_INET6 : AF_INET;
	const struct sb_rule_ref *hit = NULL;

	ck_assert_int_eq(tp_load("include \"" SB_TEST_SRCDIR "/rules/base/deny-intranet.profile\"\n"
				 "net=ALLOW|tcp|*|443|OUT\n"), 0);
	ck_assert_int_eq(inet_pton(family, intranet_cases[_i].addr, addr), 1);
	ck_assert_int_eq(sb_policy_check_net(tp.p, family, addr, 443, TCP, OUT, &hit), intranet_cases[_i].verdict);
	if (intranet_cases[_i].verdict == SB_NET_ALLOW) {
		ck_assert_str_eq(hit->file, ".py-sandboxes");
	} else {
		/* Rule origins are canonical; a VPATH build spells the source
		 * directory with "..". */
		char want[PATH_MAX];

		ck_assert_ptr_nonnull(realpath(SB_TEST_SRCDIR "/rules/base/deny-intranet.profile", want));
		ck_assert_str_eq(hit->file, want);
	}
}
END_TEST

TCase *tcase_net(void)
{
	TCase *tc = tcase_create("net");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, net_decisions, 0, sizeof(net_cases) / sizeof(net_cases[0]));
	tcase_add_test(tc, net_no_rules_denies);
	tcase_add_test(tc, net_hosts_pinned);
	tcase_add_test(tc, net_localhost_sources);
	tcase_add_test(tc, net_builtin_localhost_v4_only);
	tcase_add_test(tc, net_named_without_address);
	tcase_add_test(tc, net_duplicates_removed);
	tcase_add_test(tc, net_table_order);
	tcase_add_test(tc, net_getaddrinfo_path);
	tcase_add_loop_test(tc, net_deny_intranet_profile, 0, sizeof(intranet_cases) / sizeof(intranet_cases[0]));
	return tc;
}
