"""Three Python threads with known stacks: the main thread waits in join(),
a worker sleeps in worker_sleep(), another sleeps inside a running
generator.  Prints "READY main=<tid> sleeper=<tid> gen=<tid>" (native ids)."""
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60
tids = {}
ready = threading.Barrier(3)


def worker_sleep():
    tids["sleeper"] = threading.get_native_id()
    ready.wait()
    time.sleep(SECONDS)  # LINE:worker_sleep


def ticker():
    while True:
        time.sleep(SECONDS)  # LINE:ticker
        yield 1


def worker_gen():
    tids["gen"] = threading.get_native_id()
    ready.wait()
    for _ in ticker():  # LINE:worker_gen
        break


def main():
    tids["main"] = threading.get_native_id()
    threads = [threading.Thread(target=worker_sleep), threading.Thread(target=worker_gen)]
    for t in threads:
        t.start()
    while len(tids) < 3:
        time.sleep(0.01)
    ready.wait()
    time.sleep(0.05)  # let the workers leave Barrier.wait before READY
    print("READY " + " ".join(f"{k}={v}" for k, v in sorted(tids.items())), flush=True)
    for t in threads:
        t.join()  # LINE:main_join


if __name__ == "__main__":
    main()
