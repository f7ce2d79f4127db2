/* Network attacks in native code (part of rt_native.so).  Targets are
 * loopback only, or addresses the harness put on the loopback device of a
 * network namespace it created (tests/redteam/run-net.py). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rt_native.h"


static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	char s[4200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(s) - 2)
		n = (int)sizeof(s) - 2;
	s[n++] = '\n';
	(void)!write(1, s, (size_t)n);
}

static void out_err(const char *what)
{
	out("%s ERR %s", what, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
}

static socklen_t inet_addr_of(const char *ip, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *b = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &a->sin_addr) == 1) {
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		return sizeof(*a);
	}
	inet_pton(AF_INET6, ip, &b->sin6_addr);
	b->sin6_family = AF_INET6;
	b->sin6_port = htons((uint16_t)port);
	return sizeof(*b);
}

/* TCP Fast Open: the destination travels in sendto's address. */
RT_API int rt_tfo(const char *ip, int port, int nonblock)
{
	struct sockaddr_storage ss;
	socklen_t len = inet_addr_of(ip, port, &ss);
	int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	ssize_t n;

	if (s < 0)
		return out_err("tfo socket"), 0;
	n = sendto(s, "RT-TFO-DATA", 11, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&ss, len);
	if (n < 0)
		out_err("tfo sendto");
	else
		out("tfo sent %zd", n);
	if (nonblock) {
		struct pollfd p = { .fd = s, .events = POLLOUT };

		poll(&p, 1, 300);
		(void)!send(s, "RT-TFO-DATA", 11, MSG_NOSIGNAL);
	}
	usleep(100000);
	close(s);
	return 0;
}

/* sendmmsg: an allowed datagram first, then one to the canary. */
RT_API int rt_sendmmsg(int allowed_port, int canary_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) }, c = a;
	struct iovec iov[2] = { { (void *)"RT-ALLOWED", 10 }, { (void *)"RT-MMSG-CANARY", 14 } };
	struct mmsghdr m[2];
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), n;

	if (s < 0)
		return out_err("sendmmsg socket"), 0;
	a.sin_port = htons((uint16_t)allowed_port);
	c.sin_port = htons((uint16_t)canary_port);
	memset(m, 0, sizeof(m));
	m[0].msg_hdr = (struct msghdr){ .msg_name = &a, .msg_namelen = sizeof(a), .msg_iov = &iov[0], .msg_iovlen = 1 };
	m[1].msg_hdr = (struct msghdr){ .msg_name = &c, .msg_namelen = sizeof(c), .msg_iov = &iov[1], .msg_iovlen = 1 };
	n = sendmmsg(s, m, 2, 0);
	if (n < 0)
		out_err("sendmmsg");
	else
		out("sendmmsg sent %d", n);
	/* The canary first, the allowed one second. */
	m[0].msg_hdr.msg_name = &c;
	m[0].msg_hdr.msg_iov = &iov[1];
	m[1].msg_hdr.msg_name = &a;
	m[1].msg_hdr.msg_iov = &iov[0];
	n = sendmmsg(s, m, 2, 0);
	if (n < 0)
		out_err("sendmmsg reversed");
	else
		out("sendmmsg reversed sent %d", n);
	close(s);
	return 0;
}

/* SCM_RIGHTS naming descriptors the program does not hold (among them the
 * number the harness opened the secret on before starting python-sb): does
 * anything come back that the program did not already have? */
RT_API int rt_scm_probe(int max_fd)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return out_err("socketpair"), 0;
	for (int fd = 3; fd <= max_fd; fd++) {
		union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } c;
		struct iovec iov = { (void *)"x", 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
				    .msg_controllen = sizeof(c.buf) };
		char link[512], data[512], path[64], b;
		ssize_t n;
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || fd == sv[0] || fd == sv[1])
			continue;	/* the program's own descriptors prove nothing */
		c.h.cmsg_len = CMSG_LEN(sizeof(int));
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type = SCM_RIGHTS;
		memcpy(CMSG_DATA(&c.h), &fd, sizeof(int));
		if (sendmsg(sv[0], &m, 0) < 0)
			continue;
		iov.iov_base = &b;
		m.msg_controllen = sizeof(c.buf);
		if (recvmsg(sv[1], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0 || m.msg_controllen < CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&got, CMSG_DATA(&c.h), sizeof(int));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", got);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		n = pread(got, data, sizeof(data) - 1, 0);
		data[n > 0 ? n : 0] = '\0';
		data[strcspn(data, "\n")] = '\0';
		out("RT-GOT-FD %d -> %s READ %s", fd, link, data);
		close(got);
	}
	close(sv[0]);
	close(sv[1]);
	out("scm probe done");
	return 0;
}

/* rtnetlink RTM_NEWADDR ADDR/32 on IFNAME, sent by write (how 0), send (1),
 * sendto the kernel (2) or sendmsg (3).  Needs CAP_NET_ADMIN: the harness
 * runs it in a network namespace of its own. */
RT_API int rt_nl_newaddr(const char *ifname, const char *addr, int how)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
		struct rtattr rta;
		struct in_addr a;
		struct rtattr rta2;
		struct in_addr a2;
	} req;
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	char ack[512];
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t n;

	if (s < 0)
		return out_err("netlink socket"), 0;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = AF_INET;
	req.ifa.ifa_prefixlen = 32;
	req.ifa.ifa_index = if_nametoindex(ifname);
	req.rta.rta_type = IFA_LOCAL;
	req.rta.rta_len = RTA_LENGTH(sizeof(struct in_addr));
	inet_pton(AF_INET, addr, &req.a);
	req.rta2.rta_type = IFA_ADDRESS;
	req.rta2.rta_len = RTA_LENGTH(sizeof(struct in_addr));
	req.a2 = req.a;
	if (how == 0)
		n = write(s, &req, sizeof(req));
	else if (how == 1)
		n = send(s, &req, sizeof(req), 0);
	else if (how == 2)
		n = sendto(s, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k));
	else {
		struct iovec iov = { &req, sizeof(req) };
		struct msghdr m = { .msg_name = &k, .msg_namelen = sizeof(k), .msg_iov = &iov, .msg_iovlen = 1 };

		n = sendmsg(s, &m, 0);
	}
	if (n < 0) {
		out_err("netlink newaddr send");
	} else if ((n = recv(s, ack, sizeof(ack), MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)ack;

		if (h->nlmsg_type == NLMSG_ERROR)
			out("netlink newaddr ack %d", ((struct nlmsgerr *)NLMSG_DATA(h))->error);
	}
	close(s);
	return 0;
}

/* NETLINK_SOCK_DIAG: list the host's listening TCP sockets (ports). */
RT_API int rt_sock_diag(int how)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	char buf[16384];
	int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), count = 0;
	ssize_t n;

	if (s < 0)
		return out_err("sock_diag socket"), 0;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_INET;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1u << 10;	/* TCP_LISTEN */
	n = how ? sendto(s, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k)) : send(s, &req, sizeof(req), 0);
	if (n < 0) {
		out_err("sock_diag send");
		close(s);
		return 0;
	}
	while ((n = recv(s, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int done = 0;

		for (; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
			struct inet_diag_msg *d = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			out("RTPORT-%u-RTPORT", ntohs(d->id.idiag_sport));
			count++;
		}
		if (done)
			break;
	}
	out("sock_diag listening=%d", count);
	close(s);
	return 0;
}

/* Capture every frame on every interface for MS milliseconds. */
RT_API int rt_packet_sniff(int ms)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)), frames = 0;
	struct timespec t0, t;

	if (s < 0)
		return out_err("packet socket"), 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char buf[2048];
		struct pollfd p = { .fd = s, .events = POLLIN };
		ssize_t n;
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || frames > 400 || poll(&p, 1, (int)left) <= 0)
			break;
		n = recv(s, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] < 32 || buf[i] > 126)
				buf[i] = '.';
		buf[n] = '\0';
		out("SNIFF %s", buf);
		frames++;
	}
	out("sniff frames=%d", frames);
	close(s);
	return 0;
}

static uint16_t ip_sum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t s = 0;

	for (; len > 1; len -= 2)
		s += *w++;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Build IPv4 + UDP to 127.0.0.1:PORT carrying the text. */
static size_t udp_packet(unsigned char *pkt, int port, const char *text)
{
	struct iphdr *ip = (struct iphdr *)pkt;
	struct udphdr *u = (struct udphdr *)(pkt + sizeof(*ip));
	size_t len = strlen(text), total = sizeof(*ip) + sizeof(*u) + len;

	memset(pkt, 0, total);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((uint16_t)total);
	ip->saddr = htonl(INADDR_LOOPBACK);
	ip->daddr = htonl(INADDR_LOOPBACK);
	ip->check = ip_sum(ip, sizeof(*ip));
	u->source = htons(40000);
	u->dest = htons((uint16_t)port);
	u->len = htons((uint16_t)(sizeof(*u) + len));
	memcpy(pkt + sizeof(*ip) + sizeof(*u), text, len);
	return total;
}

/* Forge a UDP datagram to the canary: AF_PACKET (how 0), raw IP with a
 * header (1), raw UDP (2). */
RT_API int rt_raw_inject(int port, const char *text, int how)
{
	unsigned char pkt[1500];
	size_t len = udp_packet(pkt, port, text);
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ssize_t n;
	int s;

	if (how == 0) {
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
					  .sll_ifindex = (int)if_nametoindex("lo"), .sll_halen = 6 };

		s = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
		if (s < 0)
			return out_err("inject socket"), 0;
		n = sendto(s, pkt, len, 0, (struct sockaddr *)&ll, sizeof(ll));
	} else if (how == 1) {
		s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
		if (s < 0)
			return out_err("inject socket"), 0;
		n = sendto(s, pkt, len, 0, (struct sockaddr *)&dst, sizeof(dst));
	} else {
		s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
		if (s < 0)
			return out_err("inject socket"), 0;
		n = sendto(s, pkt + sizeof(struct iphdr), len - sizeof(struct iphdr), 0,
			   (struct sockaddr *)&dst, sizeof(dst));
	}
	if (n < 0)
		out_err("inject sendto");
	else
		out("inject sent %zd", n);
	close(s);
	return 0;
}

/* Interface configuration by ioctl (CAP_NET_ADMIN): take IFNAME down. */
RT_API int rt_ifdown(const char *ifname)
{
	struct ifreq r;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return out_err("ifdown socket"), 0;
	memset(&r, 0, sizeof(r));
	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &r) < 0)
		out_err("SIOCGIFFLAGS");
	r.ifr_flags = (short)(r.ifr_flags & ~IFF_UP);
	if (ioctl(s, SIOCSIFFLAGS, &r) < 0)
		out_err("SIOCSIFFLAGS");
	else
		out("ifdown done");
	close(s);
	return 0;
}
