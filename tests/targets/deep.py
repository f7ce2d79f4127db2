"""Recursion N frames deep (argv[1], default 500), then a sleep."""
import sys
import time

sys.setrecursionlimit(10000)


def recurse(n, seconds):
    if n == 0:
        print("READY", flush=True)
        time.sleep(seconds)  # LINE:bottom
        return
    recurse(n - 1, seconds)  # LINE:recurse


if __name__ == "__main__":
    recurse(int(sys.argv[1]) if len(sys.argv) > 1 else 500, float(sys.argv[2]) if len(sys.argv) > 2 else 60)
