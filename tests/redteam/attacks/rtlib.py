"""Shared by the red-team attack programs (copied next to each of them).

argv[1] is the run's context (JSON, see tests/redteam/rt.py: paths of the
tree, canary ports, the native library); the attack prints whatever it gets.
try_() never judges: it prints the result, the harness looks for canaries."""
import ctypes
import errno
import json
import os
import sys

CTX = json.loads(sys.argv[1])
ARGS = CTX.get("args", [])


def try_(name, fn, *args, **kw):
    """Run one attempt, print what it returned or how it failed."""
    try:
        r = fn(*args, **kw)
    except OSError as e:
        print(name, "ERR", errno.errorcode.get(e.errno, e.errno), flush=True)
        return None
    except Exception as e:  # noqa: BLE001 - the attempt's failure is data
        print(name, "EXC", type(e).__name__, str(e)[:200], flush=True)
        return None
    print(name, "OK", repr(r)[:2000], flush=True)
    return r


def read(path, **kw):
    with open(path, **kw) as f:
        return f.read()


def read_fd(fd):
    try:
        return os.pread(fd, 4096, 0)
    except OSError:
        return os.read(fd, 4096)


def native():
    """rt_native.so: the native attacks (tests/redteam/rt_native.h)."""
    lib = ctypes.CDLL(CTX["native"])
    c, i, d, u = ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_ulong
    sig = {
        "rt_io_uring_read": [c], "rt_x32_read": [c], "rt_int80_read": [c],
        "rt_openat2": [c, c, ctypes.c_ulonglong], "rt_open_by_handle": [c, c, i],
        "rt_seccomp_nested": [c, i], "rt_personality": [], "rt_userfaultfd": [],
        "rt_exec_memfd": [c, c, i], "rt_vfork_exec": [c, c], "rt_clone_ns": [c, i], "rt_unshare": [],
        "rt_poke_sibling": [c, i], "rt_peek": [i, u, u, i], "rt_fsetown_signal": [i, i],
        "rt_fork_bomb": [i, i], "rt_fork_many": [i], "rt_clone_parent_linger": [i],
        "rt_race_open": [c, c, c, d], "rt_race_move": [c, c, c, c, d, i],
        "rt_race_symlink": [c, c, c, c, c, c, d], "rt_race_chdir": [c, c, c, c, d],
        "rt_race_mprotect": [c, d], "rt_race_opath": [c, c, c, c, d], "rt_race_exec": [c, c, c, d], "rt_race_connect": [c, i, i, d],
        "rt_tfo": [c, i, i], "rt_sendmmsg": [i, i], "rt_scm_probe": [i], "rt_nl_newaddr": [c, c, i], "rt_sock_diag": [i],
        "rt_packet_sniff": [i], "rt_raw_inject": [i, c, i], "rt_ifdown": [c],
    }
    for name, argtypes in sig.items():
        f = getattr(lib, name)
        f.argtypes = argtypes
        f.restype = ctypes.c_int
    sys.stdout.flush()
    return lib


def b(s):
    return str(s).encode()


def done():
    print("RT-DONE", flush=True)
