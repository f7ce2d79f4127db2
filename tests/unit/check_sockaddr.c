/* Decoding and printing socket addresses (src/sockaddr.c), and the rtnetlink
 * request check.  Table-driven: each row is the bytes a program could pass
 * and what the supervisor must make of them. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sockaddr.h"

/* ---- address builders ------------------------------------------------------ */

struct raw {
	struct sockaddr_storage ss;
	size_t len;
};

static struct raw in4(const char *ip, unsigned port)
{
	struct raw r = { .len = sizeof(struct sockaddr_in) };
	struct sockaddr_in *s = (struct sockaddr_in *)&r.ss;
	s->sin_family = AF_INET;
	s->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &s->sin_addr), 1);
	return r;
}

static struct raw in6(const char *ip, unsigned port, size_t len)
{
	struct raw r = { .len = len };
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&r.ss;
	s->sin6_family = AF_INET6;
	s->sin6_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET6, ip, &s->sin6_addr), 1);
	return r;
}

/* AF_UNIX with `n` bytes of sun_path taken from `path` (NULs allowed). */
static struct raw un(const char *path, size_t n)
{
	struct raw r = { .len = offsetof(struct sockaddr_un, sun_path) + n };
	struct sockaddr_un *s = (struct sockaddr_un *)&r.ss;
	s->sun_family = AF_UNIX;
	memcpy(s->sun_path, path, n);
	return r;
}

static struct raw nl(unsigned pid, unsigned groups)
{
	struct raw r = { .len = sizeof(struct sockaddr_nl) };
	struct sockaddr_nl *s = (struct sockaddr_nl *)&r.ss;
	s->nl_family = AF_NETLINK;
	s->nl_pid = pid;
	s->nl_groups = groups;
	return r;
}

static struct raw fam(int family, size_t len)
{
	struct raw r = { .len = len };
	r.ss.ss_family = (sa_family_t)family;
	return r;
}

static struct raw truncated(struct raw r, size_t len)
{
	r.len = len;
	return r;
}

/* ---- one table for decode, short form and strace form ---------------------- */

struct row {
	const char *name;
	struct raw (*make)(void);
	enum sb_sa_kind kind;
	unsigned port;
	const char *shortform;
	const char *strace;
};

static struct raw r_v4(void) { return in4("1.2.3.4", 80); }
static struct raw r_v4_short(void) { return truncated(in4("127.0.0.1", 80), 15); }
static struct raw r_v4_long(void) { return truncated(in4("10.0.0.1", 443), 64); }
static struct raw r_v6(void) { return in6("::1", 8080, sizeof(struct sockaddr_in6)); }
static struct raw r_v6_rfc2133(void) { return in6("2001:db8::5", 53, SB_SIN6_LEN_RFC2133); }
static struct raw r_v6_short(void) { return in6("::1", 53, SB_SIN6_LEN_RFC2133 - 1); }
static struct raw r_mapped(void) { return in6("::ffff:127.0.0.1", 22, sizeof(struct sockaddr_in6)); }
static struct raw r_unix(void) { return un("/run/x.sock", 12); }
static struct raw r_unix_nonul(void) { return un("/tmp/s", 6); }
static struct raw r_unix_embedded(void) { return un("/tmp/a\0/etc/passwd", 19); }
static struct raw r_abstract(void) { return un("\0name", 5); }
static struct raw r_abstract_bin(void) { return un("\0a\0b\n", 5); }
static struct raw r_unnamed(void) { return un("", 0); }
static struct raw r_unix_toolong(void) { return truncated(un("/x", 2), sizeof(struct sockaddr_un) + 1); }
static struct raw r_netlink(void) { return nl(0, 0); }
static struct raw r_netlink_groups(void) { return nl(1234, 0x11); }
static struct raw r_netlink_short(void) { return truncated(nl(0, 0), 8); }
static struct raw r_unspec(void) { return fam(AF_UNSPEC, 4); }
static struct raw r_packet(void) { return fam(AF_PACKET, 4); }
static struct raw r_unknown(void) { return fam(250, 2); }
static struct raw r_one_byte(void) { return fam(AF_INET, 1); }
static struct raw r_empty(void) { return fam(AF_INET, 0); }

static const struct row rows[] = {
	{ "v4", r_v4, SB_SA_INET, 80, "1.2.3.4:80",
	  "{sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"1.2.3.4\")}" },
	{ "v4 short", r_v4_short, SB_SA_INVALID, 0, "AF_INET(malformed)",
	  "{sa_family=AF_INET, sa_data=\"\\0P\\177\\0\\0\\1\\0\\0\\0\\0\\0\\0\\0\"}" },
	{ "v4 long", r_v4_long, SB_SA_INET, 443, "10.0.0.1:443",
	  "{sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"10.0.0.1\")}" },
	{ "v6", r_v6, SB_SA_INET6, 8080, "[::1]:8080",
	  "{sa_family=AF_INET6, sin6_port=htons(8080), sin6_flowinfo=htonl(0), "
	  "inet_pton(AF_INET6, \"::1\", &sin6_addr), sin6_scope_id=0}" },
	{ "v6 rfc2133", r_v6_rfc2133, SB_SA_INET6, 53, "[2001:db8::5]:53",
	  "{sa_family=AF_INET6, sin6_port=htons(53), sin6_flowinfo=htonl(0), "
	  "inet_pton(AF_INET6, \"2001:db8::5\", &sin6_addr)}" },
	{ "v6 short", r_v6_short, SB_SA_INVALID, 0, "AF_INET6(malformed)", NULL },
	{ "v4-mapped", r_mapped, SB_SA_INET6, 22, "[::ffff:127.0.0.1]:22",
	  "{sa_family=AF_INET6, sin6_port=htons(22), sin6_flowinfo=htonl(0), "
	  "inet_pton(AF_INET6, \"::ffff:127.0.0.1\", &sin6_addr), sin6_scope_id=0}" },
	{ "unix", r_unix, SB_SA_UNIX_PATH, 0, "unix:/run/x.sock",
	  "{sa_family=AF_UNIX, sun_path=\"/run/x.sock\"}" },
	{ "unix no NUL", r_unix_nonul, SB_SA_UNIX_PATH, 0, "unix:/tmp/s",
	  "{sa_family=AF_UNIX, sun_path=\"/tmp/s\"}" },
	{ "unix embedded NUL", r_unix_embedded, SB_SA_UNIX_PATH, 0, "unix:/tmp/a",
	  "{sa_family=AF_UNIX, sun_path=\"/tmp/a\"}" },
	{ "abstract", r_abstract, SB_SA_UNIX_ABSTRACT, 0, "unix:@name",
	  "{sa_family=AF_UNIX, sun_path=@\"name\"}" },
	{ "abstract binary", r_abstract_bin, SB_SA_UNIX_ABSTRACT, 0, "unix:@a\\x00b\\x0a",
	  "{sa_family=AF_UNIX, sun_path=@\"a\\0b\\n\"}" },
	{ "unnamed", r_unnamed, SB_SA_UNIX_UNNAMED, 0, "unix:<unnamed>", "{sa_family=AF_UNIX}" },
	{ "unix too long", r_unix_toolong, SB_SA_INVALID, 0, "AF_UNIX(malformed)", NULL },
	{ "netlink", r_netlink, SB_SA_NETLINK, 0, "netlink:pid=0",
	  "{sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}" },
	{ "netlink groups", r_netlink_groups, SB_SA_NETLINK, 0, "netlink:pid=1234,groups=0x11",
	  "{sa_family=AF_NETLINK, nl_pid=1234, nl_groups=00000011}" },
	{ "netlink short", r_netlink_short, SB_SA_INVALID, 0, "AF_NETLINK(malformed)", NULL },
	{ "unspec", r_unspec, SB_SA_UNSPEC, 0, "AF_UNSPEC", "{sa_family=AF_UNSPEC, sa_data=\"\\0\\0\"}" },
	{ "packet", r_packet, SB_SA_OTHER, 0, "AF_PACKET", "{sa_family=AF_PACKET, sa_data=\"\\0\\0\"}" },
	{ "unknown family", r_unknown, SB_SA_OTHER, 0, "family 250",
	  "{sa_family=0xfa /* AF_??? */, sa_data=\"\"}" },
	{ "one byte", r_one_byte, SB_SA_INVALID, 0, "<no address>", "\"\\2\"" },
	{ "empty", r_empty, SB_SA_INVALID, 0, "<no address>", "\"\"" },
};

START_TEST(sockaddr_decode_table)
{
	const struct row *r = &rows[_i];
	struct raw raw = r->make();
	struct sb_sa a;

	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert_msg(a.kind == r->kind, "%s: kind %d, want %d", r->name, a.kind, r->kind);
	ck_assert_msg(a.port == r->port, "%s: port %u", r->name, a.port);
}
END_TEST

START_TEST(sockaddr_short_table)
{
	const struct row *r = &rows[_i];
	struct raw raw = r->make();
	char buf[256];
	size_t n = sb_sa_short(&raw.ss, raw.len, buf, sizeof(buf));

	ck_assert_msg(strcmp(buf, r->shortform) == 0, "%s: '%s', want '%s'", r->name, buf, r->shortform);
	ck_assert_uint_eq(n, strlen(buf));
}
END_TEST

START_TEST(sockaddr_strace_table)
{
	const struct row *r = &rows[_i];
	struct raw raw = r->make();
	char buf[512];

	if (!r->strace)
		return;
	sb_sa_format(&raw.ss, raw.len, buf, sizeof(buf));
	ck_assert_msg(strcmp(buf, r->strace) == 0, "%s: '%s', want '%s'", r->name, buf, r->strace);
}
END_TEST

/* The decoded paths, byte for byte (embedded NULs, abstract names). */
START_TEST(sockaddr_unix_paths)
{
	struct raw raw = r_unix_embedded();
	struct sb_sa a;

	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert_uint_eq(a.path_len, 6);
	ck_assert_str_eq(a.path, "/tmp/a");

	raw = r_abstract_bin();
	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert_uint_eq(a.path_len, 4);
	ck_assert_mem_eq(a.path, "a\0b\n", 4);

	/* a full sun_path without NUL: 108 bytes, as the kernel takes it */
	char full[SB_SUN_PATH_MAX];
	memset(full, 'x', sizeof(full));
	full[0] = '/';
	raw = un(full, sizeof(full));
	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert_int_eq(a.kind, SB_SA_UNIX_PATH);
	ck_assert_uint_eq(a.path_len, SB_SUN_PATH_MAX);
	ck_assert_uint_eq(strlen(a.path), SB_SUN_PATH_MAX);
}
END_TEST

START_TEST(sockaddr_v4mapped)
{
	struct raw raw = r_mapped();
	struct in_addr v4;
	struct sb_sa a;

	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert(sb_sa_v4mapped(&a, &v4));
	ck_assert_uint_eq(ntohl(v4.s_addr), 0x7f000001);
	raw = r_v6();
	sb_sa_decode(&raw.ss, raw.len, &a);
	ck_assert(!sb_sa_v4mapped(&a, NULL));
}
END_TEST

/* Truncation keeps a NUL-terminated prefix and reports the needed size. */
START_TEST(sockaddr_truncation)
{
	struct raw raw = r_v6();
	char small[10], big[256];
	size_t need = sb_sa_format(&raw.ss, raw.len, small, sizeof(small));

	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	sb_sa_format(&raw.ss, raw.len, big, sizeof(big));
	ck_assert_uint_eq(need, strlen(big));
	ck_assert(strncmp(small, big, sizeof(small) - 1) == 0);
	ck_assert_uint_eq(sb_sa_short(&raw.ss, raw.len, NULL, 0), strlen("[::1]:8080"));
}
END_TEST

/* ---- encode: decode(encode(a)) == a ------------------------------------------ */

START_TEST(sockaddr_encode_roundtrip)
{
	const struct row *r = &rows[_i];
	struct raw raw = r->make();
	struct sockaddr_storage ss;
	struct sb_sa a, b;
	socklen_t len;

	sb_sa_decode(&raw.ss, raw.len, &a);
	if (a.kind == SB_SA_INVALID || a.kind == SB_SA_OTHER || a.kind == SB_SA_UNSPEC)
		return;
	len = sb_sa_encode(&a, &ss);
	sb_sa_decode(&ss, len, &b);
	ck_assert_msg(b.kind == a.kind, "%s: kind %d", r->name, b.kind);
	ck_assert_uint_eq(b.port, a.port);
	ck_assert_uint_eq(b.path_len, a.path_len);
	ck_assert_mem_eq(b.path, a.path, a.path_len);
	ck_assert_mem_eq(&b.v4, &a.v4, sizeof(a.v4));
	ck_assert_mem_eq(&b.v6, &a.v6, sizeof(a.v6));
	ck_assert_uint_eq(b.nl_pid, a.nl_pid);
}
END_TEST

/* ---- net= tips ------------------------------------------------------------------ */

static const struct {
	struct raw (*make)(void);
	unsigned proto, dir;
	const char *want;
} tips[] = {
	{ r_v4, SB_PROTO_TCP, SB_DIR_OUT, "net=ALLOW|TCP|1.2.3.4/32|80|OUT" },
	{ r_v6, SB_PROTO_UDP, SB_DIR_IN, "net=ALLOW|UDP|::1/128|8080|IN" },
	{ r_mapped, SB_PROTO_TCP, SB_DIR_OUT, "net=ALLOW|TCP|127.0.0.1/32|22|OUT" },
	{ r_unix, SB_PROTO_TCP, SB_DIR_OUT, "" },
};

START_TEST(sockaddr_net_rule_table)
{
	struct raw raw = tips[_i].make();
	struct sb_sa a;
	char buf[128];

	sb_sa_decode(&raw.ss, raw.len, &a);
	sb_sa_net_rule(&a, tips[_i].proto, tips[_i].dir, buf, sizeof(buf));
	ck_assert_str_eq(buf, tips[_i].want);
}
END_TEST

/* ---- rtnetlink requests ----------------------------------------------------------- */

struct nlbuf {
	unsigned char b[256];
	size_t len;
};

static void nl_add(struct nlbuf *nb, unsigned type, unsigned flags, size_t payload)
{
	struct nlmsghdr h = { .nlmsg_len = (uint32_t)NLMSG_LENGTH(payload), .nlmsg_type = (uint16_t)type,
			      .nlmsg_flags = (uint16_t)flags, .nlmsg_seq = 1 };
	memcpy(nb->b + nb->len, &h, sizeof(h));
	nb->len += NLMSG_SPACE(payload);
}

static const struct {
	const char *name;
	unsigned type[3], flags[3];
	size_t n, trim, extra;
	bool want;
} nlrows[] = {
	{ "getlink dump", { RTM_GETLINK }, { NLM_F_REQUEST | NLM_F_DUMP }, 1, 0, 0, true },
	{ "getaddr + getroute", { RTM_GETADDR, RTM_GETROUTE }, { NLM_F_REQUEST | NLM_F_DUMP, NLM_F_REQUEST }, 2, 0, 0, true },
	{ "newroute", { RTM_NEWROUTE }, { NLM_F_REQUEST | NLM_F_CREATE }, 1, 0, 0, false },
	{ "dellink after get", { RTM_GETLINK, RTM_DELLINK }, { NLM_F_REQUEST, NLM_F_REQUEST }, 2, 0, 0, false },
	{ "setlink", { RTM_SETLINK }, { NLM_F_REQUEST }, 1, 0, 0, false },
	{ "not a request", { RTM_GETLINK }, { NLM_F_DUMP }, 1, 0, 0, false },
	{ "control type", { NLMSG_NOOP }, { NLM_F_REQUEST }, 1, 0, 0, false },
	{ "length past the buffer", { RTM_GETLINK }, { NLM_F_REQUEST }, 1, 4, 0, false },
	{ "trailing scrap", { RTM_GETADDR }, { NLM_F_REQUEST | NLM_F_DUMP }, 1, 0, 3, true },
	{ "empty", { 0 }, { 0 }, 0, 0, 0, false },
};

START_TEST(sockaddr_netlink_table)
{
	struct nlbuf nb = { .len = 0 };

	memset(nb.b, 0, sizeof(nb.b));
	for (size_t i = 0; i < nlrows[_i].n; i++)
		nl_add(&nb, nlrows[_i].type[i], nlrows[_i].flags[i], 4);
	nb.len = nb.len - nlrows[_i].trim + nlrows[_i].extra;
	ck_assert_msg(sb_netlink_route_readonly(nb.b, nb.len) == nlrows[_i].want, "%s", nlrows[_i].name);
}
END_TEST

/* Random bytes never crash the decoder or the printers. */
START_TEST(sockaddr_random_bytes)
{
	unsigned seed = 12345;
	char buf[600];

	for (int round = 0; round < 20000; round++) {
		unsigned char b[sizeof(struct sockaddr_storage)];
		size_t len = (size_t)(rand_r(&seed) % (int)(sizeof(b) + 1));
		struct sb_sa a;

		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)rand_r(&seed);
		if (round % 3 == 0)
			b[0] = (unsigned char)(1 + round % 17), b[1] = 0;
		sb_sa_decode(b, len, &a);
		ck_assert(sb_sa_format(b, len, buf, sizeof(buf)) < sizeof(buf));
		ck_assert(sb_sa_short(b, len, buf, sizeof(buf)) < sizeof(buf));
		(void)sb_netlink_route_readonly(b, len);
	}
}
END_TEST

static Suite *sockaddr_suite(void)
{
	Suite *s = suite_create("sockaddr");
	TCase *tc = tcase_create("core");
	int nrows = (int)(sizeof(rows) / sizeof(rows[0]));

	tcase_add_loop_test(tc, sockaddr_decode_table, 0, nrows);
	tcase_add_loop_test(tc, sockaddr_short_table, 0, nrows);
	tcase_add_loop_test(tc, sockaddr_strace_table, 0, nrows);
	tcase_add_loop_test(tc, sockaddr_encode_roundtrip, 0, nrows);
	tcase_add_test(tc, sockaddr_unix_paths);
	tcase_add_test(tc, sockaddr_v4mapped);
	tcase_add_test(tc, sockaddr_truncation);
	tcase_add_loop_test(tc, sockaddr_net_rule_table, 0, (int)(sizeof(tips) / sizeof(tips[0])));
	tcase_add_loop_test(tc, sockaddr_netlink_table, 0, (int)(sizeof(nlrows) / sizeof(nlrows[0])));
	tcase_add_test(tc, sockaddr_random_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sockaddr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
