"""Target with a known stack: main -> outer -> middle -> Sleeper.inner, which
blocks in time.sleep().  The line of every call is marked with a LINE comment
that the integration tests look up, so editing this file keeps them right."""
import sys
import time


class Sleeper:
    def inner(self, seconds):
        print("READY", flush=True)
        time.sleep(seconds)  # LINE:inner


def middle(seconds):
    Sleeper().inner(seconds)  # LINE:middle


def outer(seconds):
    middle(seconds)  # LINE:outer


if __name__ == "__main__":
    outer(float(sys.argv[1]) if len(sys.argv) > 1 else 60)  # LINE:module
