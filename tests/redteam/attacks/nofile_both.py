"""RLIMIT_NOFILE low on both sides (python-sb started with 48 descriptors,
the program inherits the same limit): threads race opens between a public
file and the secret while holding most descriptors."""
import os
import threading
from rtlib import CTX, b, done, native

lib = native()
os.chdir(CTX["root"])
held = []
try:
    while len(held) < 30:
        held.append(os.open(CTX["public"], os.O_RDONLY))
except OSError as e:
    print("held", len(held), "errno", e.errno, flush=True)
ts = [threading.Thread(target=lib.rt_race_open, args=(b"data/public.txt", b"secret//////key", b"public", 1.0))
      for _ in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
done()
