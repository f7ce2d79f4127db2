/* Socket addresses as the supervisor and the attach backend see them: decode
 * the bytes a program handed to connect/bind/sendto, and print them, either
 * strace-style for traces or in a short form for messages and logs.
 *
 *   strace:  {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("1.2.3.4")}
 *   short:   1.2.3.4:80   [::1]:80   unix:/run/x.sock   unix:@name
 *
 * Pure functions on memory: no system calls, no allocation, no printing.
 * Also here: the pure checks of message contents the network handlers need
 * (read-only rtnetlink requests) so that they can be tested without a kernel.
 */
#ifndef SB_SOCKADDR_H
#define SB_SOCKADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

/* sizeof(sockaddr_in6) without sin6_scope_id: the kernel accepts it. */
#define SB_SIN6_LEN_RFC2133 24
#define SB_SUN_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

enum sb_sa_kind {
	SB_SA_INVALID = 0,	/* too short for its family, or no family at all */
	SB_SA_UNSPEC,		/* AF_UNSPEC: a disconnect, or "no address" */
	SB_SA_INET,		/* AF_INET, at least sizeof(sockaddr_in) bytes */
	SB_SA_INET6,		/* AF_INET6, at least SB_SIN6_LEN_RFC2133 bytes */
	SB_SA_UNIX_PATH,	/* AF_UNIX naming a file */
	SB_SA_UNIX_ABSTRACT,	/* AF_UNIX, sun_path[0] == 0: the abstract namespace */
	SB_SA_UNIX_UNNAMED,	/* AF_UNIX with no sun_path at all (autobind) */
	SB_SA_NETLINK,		/* AF_NETLINK, at least sizeof(sockaddr_nl) bytes */
	SB_SA_OTHER,		/* any other family (AF_PACKET, AF_VSOCK, ...) */
};

struct sb_sa {
	enum sb_sa_kind kind;
	int family;		/* sa_family as written */
	uint16_t port;		/* INET/INET6: host byte order */
	struct in_addr v4;	/* SB_SA_INET */
	struct in6_addr v6;	/* SB_SA_INET6 */
	/* UNIX: the name as the kernel will use it (a path stops at the first
	 * NUL; an abstract name is every byte after the leading NUL) */
	char path[SB_SUN_PATH_MAX + 1];
	size_t path_len;
	uint32_t nl_pid, nl_groups;	/* SB_SA_NETLINK */
};

/* Decode `len` bytes at `sa` (len as given to the syscall, already bounded by
 * sizeof(struct sockaddr_storage)).  Fills *out; never fails: bad shapes give
 * SB_SA_INVALID. */
void sb_sa_decode(const void *sa, size_t len, struct sb_sa *out);

/* "AF_INET", ... or NULL for a family without a name here. */
const char *sb_sa_family_name(int family);

/* strace-style rendering into buf (always NUL-terminated when cap > 0).
 * Returns the length it needed (like snprintf): >= cap means truncated. */
size_t sb_sa_format(const void *sa, size_t len, char *buf, size_t cap);

/* Short form for messages: 1.2.3.4:80, [::1]:80, unix:/path, unix:@name
 * (bytes outside printable ASCII as \xNN), unix:<unnamed>, netlink:pid=0,
 * AF_PACKET, ... Same return convention as sb_sa_format. */
size_t sb_sa_short(const void *sa, size_t len, char *buf, size_t cap);

/* Same, from a decoded address. */
size_t sb_sa_short_decoded(const struct sb_sa *a, char *buf, size_t cap);

/* The net= line that would allow a use of `a` (INET or INET6; IPv4-mapped
 * IPv6 written as IPv4): "net=ALLOW|TCP|127.0.0.1/32|8080|OUT".  proto and dir
 * are single bits of enum sb_net_proto / sb_net_dir.  Same return convention. */
size_t sb_sa_net_rule(const struct sb_sa *a, unsigned proto, unsigned dir, char *buf, size_t cap);

/* Build a sockaddr for `a` (INET, INET6, UNIX path or abstract, NETLINK;
 * other kinds give just the family).  Returns its length. */
socklen_t sb_sa_encode(const struct sb_sa *a, struct sockaddr_storage *ss);

/* Is `a` an IPv4-mapped IPv6 address?  If so *v4 receives the IPv4 part. */
bool sb_sa_v4mapped(const struct sb_sa *a, struct in_addr *v4);

/* True when every netlink message in buf[0..len) is a well-formed rtnetlink
 * GET request (RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, ...): what glibc's
 * getaddrinfo(AI_ADDRCONFIG), getifaddrs() and if_nameindex() send.  Anything
 * else (a change of links, addresses or routes, trailing garbage, an empty
 * buffer) is false. */
bool sb_netlink_route_readonly(const void *buf, size_t len);

#endif
