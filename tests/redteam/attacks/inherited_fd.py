"""Descriptors python-sb itself inherited (the harness opened the secret
before starting it): are any left for the program? (row 16, files)"""
import os
from rtlib import done, read, read_fd, try_

for fd in range(3, 256):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try_(f"fd {fd} link", os.readlink, f"/proc/self/fd/{fd}")
    try_(f"fd {fd} read", read_fd, fd)
    try_(f"fd {fd} reopen", read, f"/proc/self/fd/{fd}")
try_("fd 3 fdopen", lambda: os.fdopen(3).read())
done()
