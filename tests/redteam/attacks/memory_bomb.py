"""A memory bomb under limit-as (row 34): map and allocate far beyond it."""
import mmap
from rtlib import done, try_

GiB = 1 << 30


def big_map():
    m = mmap.mmap(-1, GiB)
    print("RT-ALLOC-OK mmap 1 GiB", flush=True)
    m.close()


def big_bytes():
    x = bytearray(768 << 20)
    print("RT-ALLOC-OK bytearray 768 MiB", flush=True)
    return len(x)


try_("mmap", big_map)
try_("bytearray", big_bytes)
done()
