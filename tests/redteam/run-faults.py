#!/usr/bin/env python3
"""Red-team attacks of group 'faults' (tests/redteam/catalogue.txt), each run
under os-sandbox=none and os-sandbox=auto (those marked `layers: yes` also
under unshare, bwrap and firejail), each proven by canaries."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rt  # noqa: E402

if __name__ == "__main__":
    rt.main("faults")
