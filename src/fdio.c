/* See fdio.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"

static int transfer(int fd, char *p, size_t len, bool reading, bool socket)
{
	while (len) {
		ssize_t n = reading ? read(fd, p, len)
			  : socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sb_write_all(int fd, const void *buf, size_t len)
{
	return transfer(fd, (char *)buf, len, false, false);
}

int sb_send_all(int sock, const void *buf, size_t len)
{
	return transfer(sock, (char *)buf, len, false, true);
}

int sb_read_all(int fd, void *buf, size_t len)
{
	return transfer(fd, buf, len, true, false);
}
