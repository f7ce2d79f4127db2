"""Target of the attach-*.py tests: a program that keeps opening files and
connecting to a loopback server until told to stop.

    attach_loop.py DATADIR PORT [--threads N] [--spawn] [--fork]
                   [--deny PATH] [--write] [--rounds N] [--exit CODE]

Each worker k opens DATADIR/f<k> (LINE:open), lists DATADIR (LINE:list),
connects to 127.0.0.1:PORT (LINE:connect), optionally opens PATH
(LINE:deny) and appends to DATADIR/out<k> (--write, LINE:write), counting
the errors of the last three, then sleeps 20 ms.  A worker counts as
started once its first round ran.  The loop ends when DATADIR/stop exists,
after N rounds (--rounds) or after 120 s (a harness that lost track of us).

Output, each line flushed:

    READY pid=<pid> tids=<tid,...>        once every worker runs
    SPAWNED tids=<tid,tid>                (--spawn) two more workers, started
                                          once DATADIR/spawn exists
    CHILD pid=<pid>                       (--fork) the child's own workers run
    DENY errno=<NAME> n=<count>           (--deny) failures seen, by errno
    DONE n=<iterations>                   the last line; exit status CODE

With --fork the parent forks once DATADIR/fork exists (the harness
creates it after attaching, so the fork is seen); the child runs one
worker on f<child> and exits 0 when it sees the stop file; the parent
waits for it and prints "CHILD-EXIT <status>" before DONE.
"""
import errno
import os
import socket
import sys
import threading
import time

args = sys.argv[1:]
DATA, PORT = args[0], int(args[1])
THREADS = int(args[args.index("--threads") + 1]) if "--threads" in args else 1
FORK = "--fork" in args
SPAWN = "--spawn" in args
DENY = args[args.index("--deny") + 1] if "--deny" in args else None
WRITE = "--write" in args
EXIT = int(args[args.index("--exit") + 1]) if "--exit" in args else 0
ROUNDS = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 0
STOP = os.path.join(DATA, "stop")
DEADLINE = time.monotonic() + 120

lock = threading.Lock()
counts = {"n": 0}
denied = {}
tids = []


def stopped():
    return os.path.exists(STOP) or time.monotonic() > DEADLINE  # LINE:stop


def one_round(k):
    with open(os.path.join(DATA, f"f{k}")) as f:  # LINE:open
        f.read()
    os.listdir(DATA)  # LINE:list
    try:
        s = socket.create_connection(("127.0.0.1", PORT))  # LINE:connect
        s.close()
    except OSError as e:
        count_error(e)
    if DENY:
        try:
            open(DENY).close()  # LINE:deny
        except OSError as e:
            count_error(e)
    if WRITE:
        try:
            with open(os.path.join(DATA, f"out{k}"), "a") as f:  # LINE:write
                f.write("x")
        except OSError as e:
            count_error(e)


def count_error(e):
    with lock:
        name = errno.errorcode.get(e.errno, str(e.errno))
        denied[name] = denied.get(name, 0) + 1


def worker(k, started):
    with lock:
        tids.append(threading.get_native_id())
    first = True
    done = 0
    while not stopped() and not (ROUNDS and done >= ROUNDS):
        one_round(k)
        done += 1
        with lock:
            counts["n"] += 1
        if first:
            # Ready once a whole round ran: what it imports lazily is loaded.
            started.release()
            first = False
        time.sleep(0.02)
    if first:
        started.release()


def start_workers(names):
    started = threading.Semaphore(0)
    threads = []
    for k in names:
        t = threading.Thread(target=worker, args=(k, started), daemon=True)
        t.start()  # LINE:start
        threads.append(t)
    for _ in names:
        started.acquire()
    return threads


def child_main():
    k = f"child{os.getpid()}"
    with open(os.path.join(DATA, f"f{k}"), "w") as f:
        f.write("child\n")
    print(f"CHILD pid={os.getpid()}", flush=True)
    while not stopped():
        one_round(k)
        time.sleep(0.02)
    os._exit(0)


def main():
    threads = start_workers(list(range(THREADS)))
    with lock:
        print(f"READY pid={os.getpid()} tids={','.join(map(str, tids))}", flush=True)
    if SPAWN:
        while not os.path.exists(os.path.join(DATA, "spawn")) and not stopped():
            time.sleep(0.01)
        before = len(tids)
        threads += start_workers([THREADS, THREADS + 1])
        with lock:
            print(f"SPAWNED tids={','.join(map(str, tids[before:]))}", flush=True)
    child = 0
    if FORK:
        while not os.path.exists(os.path.join(DATA, "fork")) and not stopped():
            time.sleep(0.01)
        child = os.fork()  # LINE:fork
        if child == 0:
            child_main()
    for t in threads:
        t.join()
    if child:
        _, status = os.waitpid(child, 0)
        print(f"CHILD-EXIT {status}", flush=True)
    for name, n in sorted(denied.items()):
        print(f"DENY errno={name} n={n}", flush=True)
    print(f"DONE n={counts['n']}", flush=True)
    sys.exit(EXIT)


main()
