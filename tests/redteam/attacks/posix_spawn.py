"""posix_spawn (clone with CLONE_VM|CLONE_VFORK in glibc), multiprocessing."""
import multiprocessing
import os
from rtlib import CTX, done, try_

m, mp = CTX["marker"], CTX["marker_prog"]


def plant():
    print("RT-CHILD-RAN multiprocessing", flush=True)
    open(m, "w").write("mp")


try_("posix_spawn", lambda: os.waitpid(os.posix_spawn(mp, [mp, m], {}), 0))
try_("posix_spawnp", lambda: os.waitpid(os.posix_spawnp("rt_marker", ["rt_marker", m], {"PATH": os.path.dirname(mp)}), 0))
for method in ("fork", "forkserver", "spawn"):
    def start(method=method):
        p = multiprocessing.get_context(method).Process(target=plant)
        p.start()
        p.join(5)
        return p.exitcode
    try_("multiprocessing " + method, start)
done()
