"""Sleeps in first(); on SIGUSR1 replaces itself (execv) with sleepy.py, so
a reader's cached view of this process goes stale."""
import os
import signal
import sys
import time


def go(signum, frame):
    here = os.path.dirname(os.path.abspath(__file__))
    os.execv(sys.executable, [sys.executable, os.path.join(here, "sleepy.py")])


def first():
    print("READY phase=1", flush=True)
    time.sleep(60)  # LINE:first


signal.signal(signal.SIGUSR1, go)
first()
