/* net=ACTION|PROTOCOL|NETWORK|PORTS|DIRECTION (reference §2.5) compiled into
 * CIDR tables, one per family (IPv4 entries, then IPv6), each with its DENY
 * entries first: any DENY match refuses, then the first ALLOW match allows,
 * else the implicit default policy denies.
 *
 * Host names are resolved once, at load: the hosts file first (with the
 * loopback fallbacks upstream adds when the file lacks them), then DNS with
 * two short retries on transient failures.  The addresses are pinned. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "pol_int.h"

#define NET_FORMAT "Format: <DENY,ALLOW>|<TCP,UDP list or *>|<ip/mask>, *|<port list>|<IN, OUT>."

/* ---- fields --------------------------------------------------------------- */

static bool parse_protos(struct pol_ctx *c, const struct pol_line *l, const char *s, unsigned *out)
{
	char *dup = strdup(s), *save = NULL;
	size_t n_items = 0;
	bool ok = true;

	if (!dup) {
		pol_oom(c);
		return false;
	}
	*out = 0;
	/* Count non-empty items first: `*`/`any` must stand alone. */
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		if (*t)
			n_items++;
	}
	strcpy(dup, s);
	save = NULL;
	if (!n_items) {
		pol_err(c, l, "'%s' has empty socket specs.", l->ref.text);
		ok = false;
	}
	for (char *t = strtok_r(dup, ",", &save); t && ok; t = strtok_r(NULL, ",", &save)) {
		size_t n;

		while (isspace((unsigned char)*t))
			t++;
		n = strlen(t);
		while (n && isspace((unsigned char)t[n - 1]))
			t[--n] = 0;
		if (!n)
			continue;
		for (char *u = t; *u; u++)
			*u = (char)toupper((unsigned char)*u);
		if (!strcmp(t, "ANY") || !strcmp(t, "*")) {
			if (n_items > 1) {
				pol_err(c, l, "In '%s', '%s' must be used alone, not combined with other specifiers.",
					l->ref.text, t);
				ok = false;
			} else {
				*out = SB_PROTO_TCP | SB_PROTO_UDP;
			}
		} else if (!strcmp(t, "TCP")) {
			*out |= SB_PROTO_TCP;
		} else if (!strcmp(t, "UDP")) {
			*out |= SB_PROTO_UDP;
		} else {
			pol_err(c, l, "'%s' has unknown socket specifier '%s'. Valid specifiers: any, TCP, UDP.",
				l->ref.text, t);
			ok = false;
		}
	}
	free(dup);
	return ok;
}

static bool parse_dirs(const char *s, unsigned *out)
{
	const char *p = s;

	*out = 0;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == 2 && !strncmp(p, "IN", 2))
			*out |= SB_DIR_IN;
		else if (n == 3 && !strncmp(p, "OUT", 3))
			*out |= SB_DIR_OUT;
		else if (n == 1 && *p == '*')
			*out |= SB_DIR_IN | SB_DIR_OUT;
		else
			return false;
		if (!e)
			return true;
		p = e + 1;
	}
}

/* Python's int() on a stripped token: [+]digits with single '_' separators. */
static bool port_num(const char *s, size_t n, long *out)
{
	long v = 0;
	size_t i = 0, digits = 0;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n; i++) {
		if (s[i] == '_' && digits && i + 1 < n && isdigit((unsigned char)s[i + 1]))
			continue;
		if (!isdigit((unsigned char)s[i]))
			return false;
		if (v < 1000000)
			v = v * 10 + (s[i] - '0');
		digits++;
	}
	if (!digits)
		return false;
	*out = n && s[0] == '-' ? -v : v;
	return true;
}

static int add_range(struct pol_vec *v, long lo, long hi)
{
	struct sb_port_range *r = pol_vec_push(v);

	if (!r)
		return -ENOMEM;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

/* Returns 0, -EINVAL (syntax) or -ENOMEM.  Empty spec = no port at all. */
static int parse_ports(const char *spec, struct pol_vec *out)
{
	const char *p = spec;
	const char *t = spec;

	while (isspace((unsigned char)*t))
		t++;
	if (!*spec)
		return 0;
	if (t[0] == '*' && !t[1 + strspn(t + 1, " \t")])
		return add_range(out, 0, 65535);
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *dash = memchr(p, '-', n);
		size_t k = strspn(p, " \t");
		long lo, hi;

		if (k >= n) {
			/* empty element: skipped */
		} else if (dash) {
			const char *end_s = dash + 1;
			size_t end_n = n - (size_t)(end_s - p);

			if (!port_num(p, (size_t)(dash - p), &lo) || lo < 0 || lo > 65535)
				return -EINVAL;
			if (strspn(end_s, " \t") >= end_n)
				hi = 65535;
			else if (!port_num(end_s, end_n, &hi) || hi < 0 || hi > 65535)
				return -EINVAL;
			if (lo > hi)
				return -EINVAL;
			if (add_range(out, lo, hi))
				return -ENOMEM;
		} else {
			if (!port_num(p, n, &lo) || lo < 0 || lo > 65535)
				return -EINVAL;
			if (add_range(out, lo, lo))
				return -ENOMEM;
		}
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* ---- networks ------------------------------------------------------------ */

static void mask_addr(uint8_t *a, unsigned plen, unsigned bits)
{
	for (unsigned b = plen; b < bits; b++)
		a[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
}

static bool parse_v4_mask(const char *s, unsigned *plen)
{
	struct in_addr m;
	uint32_t v;
	unsigned n = 0;

	if (inet_pton(AF_INET, s, &m) != 1)
		return false;
	v = ntohl(m.s_addr);
	while (n < 32 && (v & (0x80000000u >> n)))
		n++;
	/* Only a contiguous netmask (Python also accepts a host mask; rare). */
	if (n < 32 && (v << n))
		return false;
	*plen = n;
	return true;
}

/* An address or CIDR, host bits allowed (strict=False). */
static bool parse_cidr(const char *s, int *family, uint8_t *addr, unsigned *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		*family = AF_INET6;
	else
		return false;
	unsigned bits = *family == AF_INET ? 32 : 128;
	*plen = bits;
	if (slash) {
		const char *q = slash + 1;
		char *end;
		long v;

		if (!*q)
			return false;
		if (isdigit((unsigned char)*q) && strspn(q, "0123456789") == strlen(q)) {
			v = strtol(q, &end, 10);
			if (v < 0 || v > (long)bits)
				return false;
			*plen = (unsigned)v;
		} else if (*family != AF_INET || !parse_v4_mask(q, plen)) {
			return false;
		}
	}
	mask_addr(addr, *plen, bits);
	return true;
}

/* ---- host names ------------------------------------------------------------ */

struct resolved {
	struct sb_host_addr a[64];
	size_t n;
};

static void add_addr(struct resolved *r, int family, const void *addr)
{
	struct sb_host_addr x = { .family = family };

	memcpy(x.addr, addr, family == AF_INET ? 4 : 16);
	for (size_t i = 0; i < r->n; i++)
		if (r->a[i].family == family && !memcmp(r->a[i].addr, x.addr, 16))
			return;
	if (r->n < sizeof(r->a) / sizeof(r->a[0]))
		r->a[r->n++] = x;
}

static bool hosts_lookup(const char *path, const char *name, struct resolved *r, bool *named)
{
	FILE *f = fopen(path ? path : "/etc/hosts", "re");
	char line[1024];

	*named = false;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *hash = strchr(line, '#'), *ip;
		uint8_t a[16];
		int fam;

		if (hash)
			*hash = 0;
		ip = strtok_r(line, " \t\r\n", &save);
		if (!ip)
			continue;
		fam = inet_pton(AF_INET, ip, a) == 1 ? AF_INET : inet_pton(AF_INET6, ip, a) == 1 ? AF_INET6 : 0;
		for (char *t = strtok_r(NULL, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
			if (!strcasecmp(t, name)) {
				*named = true;
				if (fam)
					add_addr(r, fam, a);
			}
	}
	fclose(f);
	return r->n > 0;
}

static bool builtin_lookup(const char *name, struct resolved *r)
{
	static const uint8_t v6_loop[16] = { [15] = 1 };
	static const uint8_t v4_loop[4] = { 127, 0, 0, 1 };

	/* "localhost" maps to IPv4 only, as the standard hosts file: ::1 too
	 * would silently widen a rule. */
	if (!strcasecmp(name, "localhost"))
		add_addr(r, AF_INET, v4_loop);
	else if (!strcasecmp(name, "ip6-localhost") || !strcasecmp(name, "ip6-loopback"))
		add_addr(r, AF_INET6, v6_loop);
	return r->n > 0;
}

/* 0, or an EAI_* code; *transient set for EAI_AGAIN/EAI_SYSTEM after retries. */
static int dns_lookup(const char *name, struct resolved *r)
{
	static const long delays_ms[] = { 200, 400 };
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *res = NULL;
	int rc;

	for (size_t attempt = 0;; attempt++) {
		rc = getaddrinfo(name, NULL, &hints, &res);
		if (!rc || (rc != EAI_AGAIN && rc != EAI_SYSTEM) || attempt == 2)
			break;
		struct timespec ts = { 0, delays_ms[attempt] * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (rc)
		return rc;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			add_addr(r, AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6)
			add_addr(r, AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
	}
	freeaddrinfo(res);
	return r->n ? 0 : EAI_NONAME;
}

/* The pinned host entry for `name`, resolving it the first time.  NULL with
 * *reason set when it does not resolve. */
static const struct sb_host *resolve_host(struct pol_ctx *c, const char *name, const char **reason)
{
	struct resolved r = { .n = 0 };
	const char *source;
	bool named;
	int rc;

	for (size_t i = 0; i < c->p->hosts.n; i++) {
		const struct sb_host *h = POL_VEC_AT(&c->p->hosts, struct sb_host, i);
		if (!strcasecmp(h->name, name))
			return h;
	}
	*reason = "invalid network specification. That does not resolve to any network.";
	if (hosts_lookup(c->o->hosts_path, name, &r, &named))
		source = "hosts file";
	else if (!named && builtin_lookup(name, &r))
		source = "built-in";
	else if (c->o->no_dns || !*name)
		return NULL;
	else if ((rc = dns_lookup(name, &r))) {
		if (rc == EAI_AGAIN || rc == EAI_SYSTEM) {
			*reason = pol_printf(&c->p->arena,
					     "the name resolution failed temporarily (%s). Check the resolver, not the rule.",
					     gai_strerror(rc));
			if (!*reason)
				*reason = "the name resolution failed temporarily.";
		}
		return NULL;
	} else {
		source = "DNS";
	}
	struct sb_host *h = pol_vec_push(&c->p->hosts);
	struct sb_host_addr *addrs = pol_alloc(&c->p->arena, r.n * sizeof(*addrs));
	if (!h || !addrs || !(h->name = pol_strdup(&c->p->arena, name))) {
		pol_oom(c);
		return NULL;
	}
	memcpy(addrs, r.a, r.n * sizeof(*addrs));
	h->source = source;
	h->n_addrs = r.n;
	h->addrs = addrs;
	return h;
}

/* ---- rules ------------------------------------------------------------------ */

static bool same_rule(const struct sb_net_rule *a, const struct sb_net_rule *b)
{
	return a->deny == b->deny && a->protos == b->protos && a->dirs == b->dirs && a->family == b->family &&
	       a->plen == b->plen && !memcmp(a->addr, b->addr, 16) && a->n_ports == b->n_ports &&
	       (!a->n_ports || !memcmp(a->ports, b->ports, a->n_ports * sizeof(*a->ports)));
}

static int emit(struct pol_ctx *c, const struct sb_net_rule *tmpl, int family, const uint8_t *addr, unsigned plen,
		const char *host)
{
	struct sb_net_rule r = *tmpl, *slot;

	r.family = family;
	memset(r.addr, 0, 16);
	memcpy(r.addr, addr, family == AF_INET ? 4 : 16);
	r.plen = plen;
	r.host = host;
	for (size_t i = 0; i < c->p->net.n; i++)
		if (same_rule(POL_VEC_AT(&c->p->net, struct sb_net_rule, i), &r))
			return 0;
	slot = pol_vec_push(&c->p->net);
	if (!slot)
		return -ENOMEM;
	*slot = r;
	return 0;
}

/* Split "a|b|c|d|e" into at most 5 parts (the last keeps any extra '|'). */
static size_t split5(char *s, char **parts)
{
	size_t n = 0;

	parts[n++] = s;
	while (n < 5 && (s = strchr(s, '|'))) {
		*s++ = 0;
		parts[n++] = s;
	}
	return n;
}

static void parse_net_line(struct pol_ctx *c, struct pol_line *l)
{
	struct pol_vec ports = POL_VEC_INIT(struct sb_port_range);
	struct sb_net_rule tmpl = { .ref = &l->ref };
	char *dup = strdup(l->value), *f[5];
	size_t nerr = sb_diag_count(c->d, SB_DIAG_ERROR), n;
	int rc;

	if (!dup)
		return pol_oom(c);
	n = split5(dup, f);
	if (n != 5) {
		pol_err(c, l, "'%s' has incorrect number of parts separated by '|'. Expected 5, got %zu. " NET_FORMAT,
			l->ref.text, n);
		goto out;
	}
	if (strcmp(f[0], "ALLOW") && strcmp(f[0], "DENY"))
		pol_err(c, l, "'%s' use an invalid action. Must be 'ALLOW' or 'DENY'.", l->ref.text);
	tmpl.deny = !strcmp(f[0], "DENY");
	parse_protos(c, l, f[1], &tmpl.protos);
	if (!f[2][strspn(f[2], " \t")])
		pol_err(c, l, "In '%s', network part must be set.", l->ref.text);
	if (!parse_dirs(f[4], &tmpl.dirs))
		pol_err(c, l, "In '%s', direction is not 'IN' or 'OUT'.", l->ref.text);
	rc = parse_ports(f[3], &ports);
	if (rc == -ENOMEM)
		goto oom;
	if (rc)
		pol_err(c, l, "In '%s', invalid port list.", l->ref.text);
	if (sb_diag_count(c->d, SB_DIAG_ERROR) != nerr)
		goto out;
	tmpl.n_ports = ports.n;
	tmpl.ports = ports.n ? pol_alloc(&c->p->arena, ports.n * sizeof(struct sb_port_range)) : NULL;
	if (ports.n && !tmpl.ports)
		goto oom;
	if (ports.n)
		memcpy((void *)tmpl.ports, ports.v, ports.n * sizeof(struct sb_port_range));

	int fam;
	uint8_t addr[16];
	unsigned plen;
	if (!strcmp(f[2], "*")) {
		static const uint8_t zero[16];
		if (emit(c, &tmpl, AF_INET, zero, 0, NULL) || emit(c, &tmpl, AF_INET6, zero, 0, NULL))
			goto oom;
	} else if (parse_cidr(f[2], &fam, addr, &plen)) {
		if (emit(c, &tmpl, fam, addr, plen, NULL))
			goto oom;
	} else {
		const char *reason = NULL;
		const struct sb_host *h = resolve_host(c, f[2], &reason);

		if (!h && c->sys_err)
			goto out;
		if (!h && tmpl.deny)
			pol_err(c, l, "In '%s', %s", l->ref.text, reason);
		else if (!h)
			pol_warn(c, l, "In '%s', %s Rule ignored: it allows nothing.", l->ref.text, reason);
		for (size_t i = 0; h && i < h->n_addrs; i++)
			if (emit(c, &tmpl, h->addrs[i].family, h->addrs[i].addr, h->addrs[i].family == AF_INET ? 32 : 128,
				 h->name))
				goto oom;
	}
	goto out;
oom:
	pol_oom(c);
out:
	pol_vec_free(&ports);
	free(dup);
}

static int rule_order(const void *a, const void *b)
{
	const struct sb_net_rule *x = a, *y = b;

	if (x->family != y->family)
		return x->family == AF_INET ? -1 : 1;
	if (x->deny != y->deny)
		return x->deny ? -1 : 1;
	if (x->plen != y->plen)
		return x->plen > y->plen ? -1 : 1;
	if (x->ref != y->ref)
		return x->ref->line != y->ref->line ? (x->ref->line < y->ref->line ? -1 : 1)
						    : strcmp(x->ref->file, y->ref->file);
	return memcmp(x->addr, y->addr, 16);
}

void pol_parse_net(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->claimed || !pol_key_is(l, "net"))
			continue;
		l->claimed = true;
		parse_net_line(c, l);
	}
	if (c->p->net.n)
		qsort(c->p->net.v, c->p->net.n, sizeof(struct sb_net_rule), rule_order);
	c->p->net_v4_end = 0;
	while (c->p->net_v4_end < c->p->net.n &&
	       POL_VEC_AT(&c->p->net, struct sb_net_rule, c->p->net_v4_end)->family == AF_INET)
		c->p->net_v4_end++;
}

/* ---- lookups -------------------------------------------------------------- */

static bool prefix_match(const uint8_t *net, unsigned plen, const uint8_t *a)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(net, a, full))
		return false;
	if (!rest)
		return true;
	uint8_t m = (uint8_t)(0xffu << (8 - rest));
	return (net[full] & m) == (a[full] & m);
}

static bool port_match(const struct sb_net_rule *r, uint16_t port)
{
	for (size_t i = 0; i < r->n_ports; i++)
		if (r->ports[i].lo <= port && port <= r->ports[i].hi)
			return true;
	return false;
}

enum sb_net_verdict sb_policy_check_net(const struct sb_policy *p, int family, const void *addr,
					uint16_t port, unsigned proto, unsigned dir,
					const struct sb_rule_ref **hit)
{
	const uint8_t *a = addr;

	if (hit)
		*hit = NULL;
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)addr)) {
		family = AF_INET;
		a += 12;
	}
	if (family != AF_INET && family != AF_INET6)
		return SB_NET_DENY_IMPLICIT;
	/* One table per family, each with every DENY before any ALLOW. */
	size_t i = family == AF_INET ? 0 : p->net_v4_end, end = family == AF_INET ? p->net_v4_end : p->net.n;
	for (; i < end; i++) {
		const struct sb_net_rule *r = POL_VEC_AT(&p->net, struct sb_net_rule, i);

		if (!(r->protos & proto) || !(r->dirs & dir) ||
		    !prefix_match(r->addr, r->plen, a) || !port_match(r, port))
			continue;
		if (hit)
			*hit = r->ref;
		return r->deny ? SB_NET_DENY_RULE : SB_NET_ALLOW;
	}
	return SB_NET_DENY_IMPLICIT;
}

size_t sb_policy_net_rules(const struct sb_policy *p, const struct sb_net_rule **out)
{
	*out = p->net.v;
	return p->net.n;
}

size_t sb_policy_hosts(const struct sb_policy *p, const struct sb_host **out)
{
	*out = p->hosts.v;
	return p->hosts.n;
}
