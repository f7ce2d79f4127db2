"""socket.fromfd / socket(fileno=) on descriptors python-sb inherited (a
connected socket the caller held): row 16."""
import os
import socket
from rtlib import done, try_

for fd in range(3, 128):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try_(f"fromfd {fd}", lambda fd=fd: socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM).send(b"RT-FROMFD"))
    try_(f"fileno {fd}", lambda fd=fd: socket.socket(fileno=fd).send(b"RT-FROMFD"))
    try_(f"write {fd}", os.write, fd, b"RT-FROMFD")
done()
