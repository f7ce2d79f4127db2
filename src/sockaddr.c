/* Decode and print socket addresses (see sockaddr.h). */
#include "config.h"

#include "sockaddr.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

/* ---- decoding ------------------------------------------------------------- */

static void decode_unix(const unsigned char *p, size_t len, struct sb_sa *out)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n = len - off;

	if (n == 0) {
		out->kind = SB_SA_UNIX_UNNAMED;
		return;
	}
	if (n > SB_SUN_PATH_MAX)
		n = SB_SUN_PATH_MAX;
	if (p[off] == '\0') {
		/* Abstract: every byte counts, NULs included. */
		out->kind = SB_SA_UNIX_ABSTRACT;
		out->path_len = n - 1;
		memcpy(out->path, p + off + 1, n - 1);
		out->path[n - 1] = '\0';
		return;
	}
	/* A path ends at the first NUL, as the kernel reads it. */
	const unsigned char *nul = memchr(p + off, '\0', n);
	out->kind = SB_SA_UNIX_PATH;
	out->path_len = nul ? (size_t)(nul - (p + off)) : n;
	memcpy(out->path, p + off, out->path_len);
	out->path[out->path_len] = '\0';
}

void sb_sa_decode(const void *sa, size_t len, struct sb_sa *out)
{
	const unsigned char *p = sa;
	sa_family_t fam;

	memset(out, 0, sizeof(*out));
	out->kind = SB_SA_INVALID;
	out->family = -1;
	if (sa == NULL || len < sizeof(sa_family_t))
		return;
	if (len > sizeof(struct sockaddr_storage))
		len = sizeof(struct sockaddr_storage);
	memcpy(&fam, p, sizeof(fam));
	out->family = fam;

	switch (fam) {
	case AF_UNSPEC:
		out->kind = SB_SA_UNSPEC;
		break;
	case AF_INET: {
		struct sockaddr_in in;
		if (len < sizeof(in))
			return;
		memcpy(&in, p, sizeof(in));
		out->kind = SB_SA_INET;
		out->v4 = in.sin_addr;
		out->port = ntohs(in.sin_port);
		break;
	}
	case AF_INET6: {
		struct sockaddr_in6 in6;
		if (len < SB_SIN6_LEN_RFC2133)
			return;
		memset(&in6, 0, sizeof(in6));
		memcpy(&in6, p, len < sizeof(in6) ? len : sizeof(in6));
		out->kind = SB_SA_INET6;
		out->v6 = in6.sin6_addr;
		out->port = ntohs(in6.sin6_port);
		break;
	}
	case AF_UNIX:
		if (len > sizeof(struct sockaddr_un))
			return;		/* the kernel refuses longer ones (EINVAL) */
		decode_unix(p, len, out);
		break;
	case AF_NETLINK: {
		struct sockaddr_nl nl;
		if (len < sizeof(nl))
			return;
		memcpy(&nl, p, sizeof(nl));
		out->kind = SB_SA_NETLINK;
		out->nl_pid = nl.nl_pid;
		out->nl_groups = nl.nl_groups;
		break;
	}
	default:
		out->kind = SB_SA_OTHER;
		break;
	}
}

bool sb_sa_v4mapped(const struct sb_sa *a, struct in_addr *v4)
{
	if (a->kind != SB_SA_INET6 || !IN6_IS_ADDR_V4MAPPED(&a->v6))
		return false;
	if (v4)
		memcpy(&v4->s_addr, &a->v6.s6_addr[12], 4);
	return true;
}

socklen_t sb_sa_encode(const struct sb_sa *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	switch (a->kind) {
	case SB_SA_INET: {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		in->sin_addr = a->v4;
		return sizeof(*in);
	}
	case SB_SA_INET6: {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		in6->sin6_addr = a->v6;
		return sizeof(*in6);
	}
	case SB_SA_UNIX_PATH:
	case SB_SA_UNIX_ABSTRACT: {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t lead = a->kind == SB_SA_UNIX_ABSTRACT;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path + lead, a->path, a->path_len);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + lead + a->path_len +
				   (lead ? 0 : (a->path_len < SB_SUN_PATH_MAX)));
	}
	case SB_SA_NETLINK: {
		struct sockaddr_nl *nl = (struct sockaddr_nl *)ss;
		nl->nl_family = AF_NETLINK;
		nl->nl_pid = a->nl_pid;
		nl->nl_groups = a->nl_groups;
		return sizeof(*nl);
	}
	default:
		ss->ss_family = a->family < 0 ? AF_UNSPEC : (sa_family_t)a->family;
		return sizeof(sa_family_t);
	}
}

/* ---- names ---------------------------------------------------------------- */

static const struct {
	int family;
	const char *name;
} families[] = {
	{ AF_UNSPEC, "AF_UNSPEC" },	{ AF_UNIX, "AF_UNIX" },
	{ AF_INET, "AF_INET" },		{ AF_AX25, "AF_AX25" },
	{ AF_IPX, "AF_IPX" },		{ AF_APPLETALK, "AF_APPLETALK" },
	{ AF_X25, "AF_X25" },		{ AF_INET6, "AF_INET6" },
	{ AF_DECnet, "AF_DECnet" },	{ AF_KEY, "AF_KEY" },
	{ AF_NETLINK, "AF_NETLINK" },	{ AF_PACKET, "AF_PACKET" },
	{ AF_RDS, "AF_RDS" },		{ AF_IRDA, "AF_IRDA" },
	{ AF_LLC, "AF_LLC" },		{ AF_CAN, "AF_CAN" },
	{ AF_TIPC, "AF_TIPC" },		{ AF_BLUETOOTH, "AF_BLUETOOTH" },
	{ AF_IUCV, "AF_IUCV" },		{ AF_RXRPC, "AF_RXRPC" },
	{ AF_ISDN, "AF_ISDN" },		{ AF_PHONET, "AF_PHONET" },
	{ AF_IEEE802154, "AF_IEEE802154" }, { AF_CAIF, "AF_CAIF" },
	{ AF_ALG, "AF_ALG" },		{ AF_NFC, "AF_NFC" },
	{ AF_VSOCK, "AF_VSOCK" },	{ AF_KCM, "AF_KCM" },
	{ AF_QIPCRTR, "AF_QIPCRTR" },	{ AF_SMC, "AF_SMC" },
	{ AF_XDP, "AF_XDP" },		{ AF_MCTP, "AF_MCTP" },
};

const char *sb_sa_family_name(int family)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (families[i].family == family)
			return families[i].name;
	return NULL;
}

/* ---- a bounded string builder ---------------------------------------------- */

struct out {
	char *buf;
	size_t cap, len;	/* len counts what would have been written */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->cap > 0 && o->len < o->cap - 1) {
		size_t room = o->cap - 1 - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
	if (o->cap > 0)
		o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* strace's quoting: printable ASCII as is, the usual C escapes, other bytes
 * in octal (three digits when an octal digit follows, so it reads back). */
static void put_quoted(struct out *o, const unsigned char *s, size_t n)
{
	puts_(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"': puts_(o, "\\\""); continue;
		case '\\': puts_(o, "\\\\"); continue;
		case '\t': puts_(o, "\\t"); continue;
		case '\n': puts_(o, "\\n"); continue;
		case '\v': puts_(o, "\\v"); continue;
		case '\f': puts_(o, "\\f"); continue;
		case '\r': puts_(o, "\\r"); continue;
		default: break;
		}
		if (c >= 0x20 && c < 0x7f) {
			put(o, (const char *)&c, 1);
		} else if (i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') {
			putf(o, "\\%03o", c);
		} else {
			putf(o, "\\%o", c);
		}
	}
	puts_(o, "\"");
}

/* Short-form escaping: printable ASCII except backslash, the rest \xNN. */
static void put_plain(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			put(o, (const char *)&c, 1);
		else
			putf(o, "\\x%02x", c);
	}
}

static void put_family(struct out *o, int family)
{
	const char *name = sb_sa_family_name(family);
	if (name)
		puts_(o, name);
	else
		putf(o, "%#x /* AF_??? */", (unsigned)family);
}

/* ---- strace form ---------------------------------------------------------- */

static void format_data(struct out *o, const unsigned char *p, size_t len)
{
	size_t off = sizeof(sa_family_t);
	puts_(o, ", sa_data=");
	put_quoted(o, p + off, len - off);
}

static void format_decoded(struct out *o, const struct sb_sa *a, const unsigned char *p, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	switch (a->kind) {
	case SB_SA_INET:
		inet_ntop(AF_INET, &a->v4, ip, sizeof(ip));
		putf(o, ", sin_port=htons(%u), sin_addr=inet_addr(\"%s\")", a->port, ip);
		return;
	case SB_SA_INET6: {
		struct sockaddr_in6 in6;
		memset(&in6, 0, sizeof(in6));
		memcpy(&in6, p, len < sizeof(in6) ? len : sizeof(in6));
		inet_ntop(AF_INET6, &a->v6, ip, sizeof(ip));
		putf(o, ", sin6_port=htons(%u), sin6_flowinfo=htonl(%u), ", a->port,
		     (unsigned)ntohl(in6.sin6_flowinfo));
		putf(o, "inet_pton(AF_INET6, \"%s\", &sin6_addr)", ip);
		if (len >= sizeof(in6))
			putf(o, ", sin6_scope_id=%u", (unsigned)in6.sin6_scope_id);
		return;
	}
	case SB_SA_UNIX_PATH:
		puts_(o, ", sun_path=");
		put_quoted(o, (const unsigned char *)a->path, a->path_len);
		return;
	case SB_SA_UNIX_ABSTRACT:
		puts_(o, ", sun_path=@");
		put_quoted(o, (const unsigned char *)a->path, a->path_len);
		return;
	case SB_SA_UNIX_UNNAMED:
		return;
	case SB_SA_NETLINK:
		putf(o, ", nl_pid=%u, nl_groups=%08x", (unsigned)a->nl_pid, (unsigned)a->nl_groups);
		return;
	default:
		format_data(o, p, len);
		return;
	}
}

size_t sb_sa_format(const void *sa, size_t len, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	const unsigned char *p = sa;
	struct sb_sa a;

	if (cap > 0)
		buf[0] = '\0';
	if (sa == NULL) {
		puts_(&o, "NULL");
		return o.len;
	}
	if (len > sizeof(struct sockaddr_storage))
		len = sizeof(struct sockaddr_storage);
	if (len < sizeof(sa_family_t)) {
		/* Not even a family: show the bytes, as strace does. */
		put_quoted(&o, p, len);
		return o.len;
	}
	sb_sa_decode(sa, len, &a);
	puts_(&o, "{sa_family=");
	put_family(&o, a.family);
	if (a.kind == SB_SA_INVALID && len > sizeof(sa_family_t))
		format_data(&o, p, len);
	else if (a.kind != SB_SA_INVALID)
		format_decoded(&o, &a, p, len);
	puts_(&o, "}");
	return o.len;
}

/* ---- short form ----------------------------------------------------------- */

size_t sb_sa_short_decoded(const struct sb_sa *a, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	char ip[INET6_ADDRSTRLEN];
	const char *name;

	if (cap > 0)
		buf[0] = '\0';
	switch (a->kind) {
	case SB_SA_INET:
		inet_ntop(AF_INET, &a->v4, ip, sizeof(ip));
		putf(&o, "%s:%u", ip, a->port);
		break;
	case SB_SA_INET6:
		inet_ntop(AF_INET6, &a->v6, ip, sizeof(ip));
		putf(&o, "[%s]:%u", ip, a->port);
		break;
	case SB_SA_UNIX_PATH:
		puts_(&o, "unix:");
		put_plain(&o, a->path, a->path_len);
		break;
	case SB_SA_UNIX_ABSTRACT:
		puts_(&o, "unix:@");
		put_plain(&o, a->path, a->path_len);
		break;
	case SB_SA_UNIX_UNNAMED:
		puts_(&o, "unix:<unnamed>");
		break;
	case SB_SA_UNSPEC:
		puts_(&o, "AF_UNSPEC");
		break;
	case SB_SA_NETLINK:
		putf(&o, "netlink:pid=%u", (unsigned)a->nl_pid);
		if (a->nl_groups)
			putf(&o, ",groups=%#x", (unsigned)a->nl_groups);
		break;
	case SB_SA_OTHER:
	case SB_SA_INVALID:
		if (a->family < 0) {
			puts_(&o, "<no address>");
			break;
		}
		name = sb_sa_family_name(a->family);
		if (name)
			puts_(&o, name);
		else
			putf(&o, "family %d", a->family);
		if (a->kind == SB_SA_INVALID)
			puts_(&o, "(malformed)");
		break;
	}
	return o.len;
}

size_t sb_sa_short(const void *sa, size_t len, char *buf, size_t cap)
{
	struct sb_sa a;
	sb_sa_decode(sa, len, &a);
	return sb_sa_short_decoded(&a, buf, cap);
}

size_t sb_sa_net_rule(const struct sb_sa *a, unsigned proto, unsigned dir, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	char ip[INET6_ADDRSTRLEN + 8];
	struct in_addr v4;

	if (cap > 0)
		buf[0] = '\0';
	if (a->kind == SB_SA_INET) {
		inet_ntop(AF_INET, &a->v4, ip, sizeof(ip));
		strcat(ip, "/32");
	} else if (sb_sa_v4mapped(a, &v4)) {
		inet_ntop(AF_INET, &v4, ip, sizeof(ip));
		strcat(ip, "/32");
	} else if (a->kind == SB_SA_INET6) {
		char tmp[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, &a->v6, tmp, sizeof(tmp));
		snprintf(ip, sizeof(ip), "%s/128", tmp);
	} else {
		return 0;
	}
	putf(&o, "net=ALLOW|%s|%s|%u|%s", proto == SB_PROTO_UDP ? "UDP" : "TCP", ip, a->port,
	     dir == SB_DIR_IN ? "IN" : "OUT");
	return o.len;
}

/* ---- rtnetlink requests ------------------------------------------------------ */

bool sb_netlink_route_readonly(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t off = 0;
	bool any = false;

	/* Walk as netlink_rcv_skb() does; every message must be a request of the
	 * GET kind (type & 3 == 2), the only kind rtnetlink serves without
	 * CAP_NET_ADMIN, so performing it lends the program no privilege. */
	while (len - off >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
			return false;
		if (!(h.nlmsg_flags & NLM_F_REQUEST))
			return false;
		if (h.nlmsg_type < RTM_BASE || h.nlmsg_type >= RTM_MAX)
			return false;
		if ((h.nlmsg_type - RTM_BASE) % 4 != 2)
			return false;
		any = true;
		size_t step = NLMSG_ALIGN(h.nlmsg_len);
		off += step < len - off ? step : len - off;
	}
	return any;
}
