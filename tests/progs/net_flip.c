/* Race attacks on the network handlers (SPEC §3 "deciding without races").
 *
 *   net_flip addr ALLOWED REFUSED N
 *       A thread flips the port of one shared sockaddr between ALLOWED and
 *       REFUSED (127.0.0.1) while the main thread connects N times.  The
 *       supervisor judges its own copy and connects with that copy, so no
 *       connection may ever reach REFUSED.
 *   net_flip fd ALLOWED REFUSED N
 *       A TCP socket connected to ALLOWED and a UDP socket take turns at one
 *       descriptor number (dup2 in a thread) while the main thread sends a
 *       datagram "leak" to UDP port REFUSED through that number N times.
 *       A TCP socket ignores the address; a UDP one must be judged, so no
 *       datagram may ever reach REFUSED.
 *
 * Prints "done ok=A refused=R other=O" (outcomes of the main thread's calls)
 * and exits 0; 2 for usage or setup errors.  Bounded by N, not by time.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in shared;
static atomic_int stop;
static uint16_t port_a, port_b;
static int slot = -1, tcp_fd = -1, udp_fd = -1;

static void *flip_addr(void *arg)
{
	volatile uint16_t *p = &shared.sin_port;
	(void)arg;
	while (!atomic_load(&stop)) {
		*p = htons(port_a);
		*p = htons(port_b);
	}
	return NULL;
}

static void *flip_fd(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(tcp_fd, slot);
		dup2(udp_fd, slot);
	}
	return NULL;
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };
	s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return s;
}

static void count(int rc, int *ok, int *refused, int *other)
{
	if (rc >= 0)
		(*ok)++;
	else if (errno == ECONNREFUSED)
		(*refused)++;
	else
		(*other)++;
}

int main(int argc, char **argv)
{
	int ok = 0, refused = 0, other = 0, n;
	pthread_t t;

	if (argc != 5) {
		fprintf(stderr, "usage: net_flip addr|fd ALLOWED REFUSED N\n");
		return 2;
	}
	port_a = (uint16_t)atoi(argv[2]);
	port_b = (uint16_t)atoi(argv[3]);
	n = atoi(argv[4]);
	if (strcmp(argv[1], "addr") == 0) {
		shared = loopback(port_a);
		if (pthread_create(&t, NULL, flip_addr, NULL))
			return 2;
		for (int i = 0; i < n; i++) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			count(connect(fd, (struct sockaddr *)&shared, sizeof(shared)), &ok, &refused, &other);
			close(fd);
		}
	} else if (strcmp(argv[1], "fd") == 0) {
		struct sockaddr_in a = loopback(port_a), b = loopback(port_b);
		tcp_fd = socket(AF_INET, SOCK_STREAM, 0);
		udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
		slot = socket(AF_INET, SOCK_STREAM, 0);
		if (tcp_fd < 0 || udp_fd < 0 || slot < 0 || connect(tcp_fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("setup");
			return 2;
		}
		if (pthread_create(&t, NULL, flip_fd, NULL))
			return 2;
		for (int i = 0; i < n; i++)
			count((int)sendto(slot, "leak", 4, MSG_NOSIGNAL, (struct sockaddr *)&b, sizeof(b)), &ok,
			      &refused, &other);
	} else {
		return 2;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("done ok=%d refused=%d other=%d\n", ok, refused, other);
	return 0;
}
