"""Imported by slow_outer; its module body blocks, so the import stays on
the stack."""
import sys
import time

print("READY", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)  # LINE:inner
