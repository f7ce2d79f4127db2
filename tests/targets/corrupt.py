"""A program that forges its own code objects, as hostile code may: a file
name with a newline and a fake policy line, a 100 000-character file name,
a control-character qualname, and a megabyte of garbage as location table.
The frames it sleeps in carry them.  Prints READY."""
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60


def sleeper():
    print("READY", flush=True)
    time.sleep(SECONDS)


def level(fn, name, **changes):
    def call():
        fn()
    call.__code__ = call.__code__.replace(co_qualname=name, **changes)
    return call


fn = sleeper
fn = level(fn, "newline", co_filename="/tmp/x.py\npython-import=os\n# ")
fn = level(fn, "long", co_filename="/very/long/" + "d" * 100000 + "/tail.py")
fn = level(fn, "ctl\x1b[31mred\x07")
fn = level(fn, "garbage_lines", co_linetable=bytes((i * 37 + 11) & 0xff for i in range(1 << 20)))
fn = level(fn, "emoji_\U0001f600_\u20ac", co_filename="/tmp/\u00fc\u20ac\U0001f600.py")
fn()
