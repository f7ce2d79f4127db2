"""os.fork, os.forkpty, pty.fork: the child would create the marker (row 18)."""
import os
import pty
from rtlib import CTX, done, try_

m = CTX["marker"]


def child(tag):
    try:
        print("RT-CHILD-RAN", tag, flush=True)
        open(m, "w").write(tag)
    finally:
        os._exit(0)


def do_fork(fn, tag):
    pid = fn()
    if isinstance(pid, tuple):
        pid = pid[0]
    if pid == 0:
        child(tag)
    return os.waitpid(pid, 0)


try_("fork", do_fork, os.fork, "fork")
try_("forkpty", do_fork, os.forkpty, "forkpty")
try_("pty.fork", do_fork, pty.fork, "pty.fork")
try_("register_at_fork", lambda: os.register_at_fork(after_in_child=lambda: child("atfork")) or do_fork(os.fork, "x"))
done()
