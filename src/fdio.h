/* Whole reads and writes on descriptors, retried on EINTR.  System calls
 * only (no allocation, no stdio), so a forked child may use them. */
#ifndef SB_FDIO_H
#define SB_FDIO_H

#include <stddef.h>

/* Write all `len` bytes.  0, or -errno (-EPIPE when write returned 0). */
int sb_write_all(int fd, const void *buf, size_t len);

/* send(MSG_NOSIGNAL) all `len` bytes on a socket: no SIGPIPE. */
int sb_send_all(int sock, const void *buf, size_t len);

/* Read exactly `len` bytes.  0, or -errno (-EPIPE at end of file). */
int sb_read_all(int fd, void *buf, size_t len);

#endif
