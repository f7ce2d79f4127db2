"""Target blocked inside a nested import: load() imports slow_outer, whose
body imports slow_inner, whose body sleeps."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyfr_mods"))


def load():
    import slow_outer  # LINE:load  # noqa: F401


if __name__ == "__main__":
    load()  # LINE:main
