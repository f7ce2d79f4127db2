/* Test program for the network handlers: a plain C client started from a
 * sandboxed Python program, so the calls come from compiled code, not from
 * the interpreter.
 *
 *   net_connect tcp HOST PORT     connect, send "ping", expect "pong"
 *   net_connect udp HOST PORT     sendto "ping" (no connect)
 *   net_connect unix PATH         connect, send "ping", expect "pong"
 *
 * Prints "OK" or "ERR <errno name>" and exits 0 / 1 (2 for usage errors).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("ERR %s %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?", what);
	return 1;
}

static socklen_t inet_addr_of(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)atoi(port));
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)atoi(port));
		return sizeof(*s6);
	}
	return 0;
}

static int ping_pong(int fd)
{
	struct timeval tv = { 10, 0 };	/* a server that never answers fails the test, not hangs it */
	char buf[8] = { 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, "ping", 4, 0) != 4)
		return fail("send");
	if (recv(fd, buf, 4, MSG_WAITALL) != 4 || memcmp(buf, "pong", 4) != 0)
		return fail("recv");
	printf("OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (argc == 3 && strcmp(argv[1], "unix") == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;
		memset(&ss, 0, sizeof(ss));
		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof(un->sun_path), "%s", argv[2]);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return fail("socket");
		if (connect(fd, (struct sockaddr *)&ss, sizeof(*un)) < 0)
			return fail("connect");
		return ping_pong(fd);
	}
	if (argc != 4 || !(len = inet_addr_of(argv[2], argv[3], &ss))) {
		fprintf(stderr, "usage: net_connect tcp|udp HOST PORT | unix PATH\n");
		return 2;
	}
	if (strcmp(argv[1], "udp") == 0) {
		fd = socket(ss.ss_family, SOCK_DGRAM, 0);
		if (fd < 0)
			return fail("socket");
		if (sendto(fd, "ping", 4, 0, (struct sockaddr *)&ss, len) != 4)
			return fail("sendto");
		printf("OK\n");
		return 0;
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return fail("socket");
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		return fail("connect");
	return ping_pong(fd);
}
