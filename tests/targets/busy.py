"""A thread that never blocks (spins in spin()) next to a sleeping main
thread: its stack is read while it runs.  Prints "READY spinner=<tid>"."""
import sys
import threading
import time

box = []


def spin():
    box.append(threading.get_native_id())
    x = 0
    while True:
        x += 1  # LINE:spin


threading.Thread(target=spin, daemon=True).start()
while not box:
    time.sleep(0.01)
print(f"READY spinner={box[0]}", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
