/* libFuzzer target: the socket-address decoder and printers (src/sockaddr.h)
 * on the bytes a program hands to connect/bind/sendto, of any family and
 * length, and the rtnetlink read-only check on arbitrary messages.
 *
 * Input: one control byte, then the address bytes.  The control byte picks
 * the length the "program" claims (the real one, a shorter one, or a huge
 * one, which the supervisor bounds to sockaddr_storage before decoding) and
 * the output buffer sizes; the buffers are exactly as large as promised, so
 * AddressSanitizer sees any read or write past them.
 *
 * Promises checked: every output is NUL-terminated printable ASCII, the
 * return value is the length needed (snprintf convention, truncation keeps a
 * prefix), the short form of the bytes equals the short form of their
 * decoding, encode(decode(x)) decodes to the same address, and the net= rule
 * printed for an INET address loads with the policy loader and allows
 * exactly that address. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "fuzz_input.h"
#include "policy.h"
#include "sockaddr.h"

#define OUT_BIG 2048

static char dir[64];

static void init_dir(void)
{
	char tmpl[] = "/tmp/fuzz_sockaddr.XXXXXX";
	char path[128];
	FILE *f;

	if (!mkdtemp(tmpl))
		abort();
	snprintf(dir, sizeof(dir), "%s", tmpl);
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	f = fopen(path, "w");	/* an empty rule file: only the command-line rule counts */
	if (!f)
		abort();
	fclose(f);
}

/* One printer at buffer size cap against its own untruncated output. */
static void check_sized(size_t need, const char *full, const char *buf, size_t cap)
{
	if (cap == 0)
		return;
	FUZZ_CHECK(strlen(buf) == (need < cap ? need : cap - 1));
	FUZZ_CHECK(strncmp(buf, full, strlen(buf)) == 0);
}

static void check_decoded(const struct sb_sa *a)
{
	FUZZ_CHECK(a->kind >= SB_SA_INVALID && a->kind <= SB_SA_OTHER);
	FUZZ_CHECK(a->path_len <= SB_SUN_PATH_MAX);
	FUZZ_CHECK(a->path[a->path_len] == '\0');
	if (a->kind == SB_SA_UNIX_PATH)
		FUZZ_CHECK(a->path_len > 0 && memchr(a->path, '\0', a->path_len) == NULL);
	if (a->kind != SB_SA_UNIX_PATH && a->kind != SB_SA_UNIX_ABSTRACT)
		FUZZ_CHECK(a->path_len == 0);
}

static bool same_address(const struct sb_sa *a, const struct sb_sa *b)
{
	if (a->kind != b->kind || a->family != b->family)
		return false;
	switch (a->kind) {
	case SB_SA_INET:
		return a->port == b->port && a->v4.s_addr == b->v4.s_addr;
	case SB_SA_INET6:
		return a->port == b->port && memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
	case SB_SA_UNIX_PATH:
	case SB_SA_UNIX_ABSTRACT:
		return a->path_len == b->path_len && memcmp(a->path, b->path, a->path_len) == 0;
	case SB_SA_NETLINK:
		return a->nl_pid == b->nl_pid && a->nl_groups == b->nl_groups;
	default:
		return true;
	}
}

/* The tip the supervisor prints must be a line the loader accepts and that
 * allows what was refused. */
static void check_net_rule(const struct sb_sa *a, uint8_t sel)
{
	static char *env[] = { "PATH=/usr/bin:/bin", NULL };
	unsigned proto = sel & 1 ? SB_PROTO_UDP : SB_PROTO_TCP, d = sel & 2 ? SB_DIR_IN : SB_DIR_OUT;
	char rule[256], hosts[128];
	const char *cli[1] = { rule };
	struct sb_load_opts o = {
		.config_path = ".py-sandboxes", .cli_rules = cli, .n_cli_rules = 1, .envp = env,
		.cwd = dir, .hosts_path = hosts, .no_dns = true, .template_path = "/nonexistent/template",
	};
	struct sb_policy *p = NULL;
	struct in_addr v4;
	struct sb_diag diag;
	size_t need;
	int rc;

	need = sb_sa_net_rule(a, proto, d, rule, sizeof(rule));
	FUZZ_CHECK(need < sizeof(rule) && strlen(rule) == need);
	FUZZ_CHECK(strncmp(rule, "net=ALLOW|", 10) == 0);
	snprintf(hosts, sizeof(hosts), "%s/no-hosts", dir);
	sb_diag_init(&diag);
	rc = sb_policy_load(&o, &p, &diag);
	if (rc) {
		for (size_t i = 0; i < diag.n; i++) {
			char *s = sb_diag_format(&diag.items[i]);
			fprintf(stderr, "%s\n", s ? s : "?");
			free(s);
		}
		fprintf(stderr, "rule: %s\n", rule);
	}
	FUZZ_CHECK(rc == 0);
	if (sb_sa_v4mapped(a, &v4) || a->kind == SB_SA_INET) {
		if (a->kind == SB_SA_INET)
			v4 = a->v4;
		FUZZ_CHECK(sb_policy_check_net(p, AF_INET, &v4, a->port, proto, d, NULL) == SB_NET_ALLOW);
	} else {
		FUZZ_CHECK(sb_policy_check_net(p, AF_INET6, &a->v6, a->port, proto, d, NULL) == SB_NET_ALLOW);
	}
	sb_policy_free(p);
	sb_diag_free(&diag);
}

static void check_one(const uint8_t *sa, size_t len, uint8_t ctl, uint8_t cap_sel)
{
	struct sb_sa a, again;
	struct sockaddr_storage ss;
	char full[OUT_BIG], full2[OUT_BIG];
	size_t need, need2, cap = cap_sel % 64;
	char *small = cap ? malloc(cap) : NULL;
	socklen_t elen;

	sb_sa_decode(sa, len, &a);
	check_decoded(&a);

	need = sb_sa_format(sa, len, full, sizeof(full));
	FUZZ_CHECK(need < sizeof(full) && strlen(full) == need && fuzz_printable(full, need));
	need2 = sb_sa_format(sa, len, small, cap);
	FUZZ_CHECK(need2 == need);
	check_sized(need2, full, small, cap);

	need = sb_sa_short(sa, len, full, sizeof(full));
	FUZZ_CHECK(need < sizeof(full) && strlen(full) == need && fuzz_printable(full, need));
	need2 = sb_sa_short_decoded(&a, full2, sizeof(full2));
	FUZZ_CHECK(need2 == need && strcmp(full, full2) == 0);
	need2 = sb_sa_short(sa, len, small, cap);
	FUZZ_CHECK(need2 == need);
	check_sized(need2, full, small, cap);
	free(small);

	FUZZ_CHECK(sb_sa_v4mapped(&a, NULL) == (a.kind == SB_SA_INET6 && IN6_IS_ADDR_V4MAPPED(&a.v6)));
	elen = sb_sa_encode(&a, &ss);
	FUZZ_CHECK(elen <= sizeof(ss));
	if (a.kind != SB_SA_INVALID && a.kind != SB_SA_OTHER) {
		sb_sa_decode(&ss, elen, &again);
		FUZZ_CHECK(same_address(&a, &again));
	}
	if (a.kind == SB_SA_INET || a.kind == SB_SA_INET6)
		check_net_rule(&a, ctl >> 6);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };
	uint8_t ctl = fin_u8(&f), cap_sel = fin_u8(&f);
	size_t n = f.n, claimed;
	uint8_t *sa;

	if (!*dir)
		init_dir();
	if (n > 4096)
		return 0;
	/* Exactly n bytes: ASan reports any read past what the program gave. */
	sa = malloc(n ? n : 1);
	if (!sa)
		return 0;
	memcpy(sa, f.p, n);
	switch (ctl & 3) {
	case 0:
		claimed = n;
		break;
	case 1:
		claimed = n ? (ctl >> 2) % (n + 1) : 0;
		break;
	default:
		/* A huge length: the caller bounds it, and the storage it copied
		 * is sockaddr_storage-sized. */
		claimed = n >= sizeof(struct sockaddr_storage) ? (ctl & 1 ? SIZE_MAX : 1u << 20)
							      : n;
		break;
	}
	if (claimed > sizeof(struct sockaddr_storage) && n < sizeof(struct sockaddr_storage))
		claimed = n;
	check_one(sa, claimed, ctl, cap_sel);
	sb_netlink_route_readonly(sa, n);
	free(sa);
	return 0;
}
