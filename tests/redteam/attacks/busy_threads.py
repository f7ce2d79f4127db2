"""Threads keep the supervisor busy (opens, stats, connects, mkdir) until the
harness SIGKILLs this program in the middle of their notifications."""
import os
import socket
import threading
import time
from rtlib import CTX

port = CTX["allowed_tcp"]


def work(i):
    d = f"{CTX['out']}/d{i}"
    while True:
        for fn in (lambda: open(CTX["public"]).read(), lambda: os.stat(CTX["secret"]),
                   lambda: socket.create_connection(("127.0.0.1", port), 1).close(),
                   lambda: os.mkdir(d), lambda: os.rmdir(d), lambda: open(CTX["secret"]).read()):
            try:
                fn()
            except OSError:
                pass


for i in range(6):
    threading.Thread(target=work, args=(i,), daemon=True).start()
time.sleep(0.2)
print("RT-READY", os.getpid(), flush=True)
time.sleep(20)
print("not killed", flush=True)
