"""Forks; the child starts a thread after the fork and both child threads
sleep in known functions.  Prints "READY child=<pid> worker=<tid>"."""
import os
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60


def after_fork_worker(box):
    box.append(threading.get_native_id())
    time.sleep(SECONDS)  # LINE:after_fork_worker


def child_main():
    box = []
    t = threading.Thread(target=after_fork_worker, args=(box,), daemon=True)
    t.start()
    while not box:
        time.sleep(0.01)
    print(f"READY child={os.getpid()} worker={box[0]}", flush=True)
    time.sleep(SECONDS)  # LINE:child_main
    os._exit(0)


if __name__ == "__main__":
    pid = os.fork()
    if pid == 0:
        child_main()
    os.waitpid(pid, 0)  # LINE:parent_wait
