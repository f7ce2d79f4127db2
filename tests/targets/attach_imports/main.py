"""Target of tests/integration/attach-learn-imports.py: a program whose
imports all happen at start-up, before python-sb attaches to it.

    main.py DATADIR [--exit CODE]

Imports standard modules (json, csv, decimal, colorsys) and a module of
its own directory (attach_imports_local), prints "READY pid=<pid>", then
reads DATADIR/tick every 50 ms until DATADIR/stop exists (or 120 s passed:
a harness that lost track of it), and prints "DONE <result>" and exits with
CODE.  Run fresh it does the same and stops at once when DATADIR/stop
exists already.
"""
import colorsys
import csv
import decimal
import io
import json
import os
import sys
import time

import attach_imports_local

args = sys.argv[1:]
DATA = args[0]
EXIT = int(args[args.index("--exit") + 1]) if "--exit" in args else 0
STOP = os.path.join(DATA, "stop")
DEADLINE = time.monotonic() + 120

print(f"READY pid={os.getpid()}", flush=True)
n = 0
while True:
    with open(os.path.join(DATA, "tick")) as f:
        f.read()
    n += 1
    if os.path.exists(STOP) or time.monotonic() > DEADLINE:
        break
    time.sleep(0.05)

rows = list(csv.reader(io.StringIO("a,b\n1,2\n")))
value = json.dumps({"rows": rows, "sum": str(decimal.Decimal("0.1") + decimal.Decimal("0.2")),
                    "rgb": colorsys.hls_to_rgb(0.0, 0.5, 1.0), "local": attach_imports_local.NAME})
print(f"DONE {value}", flush=True)
sys.exit(EXIT)
