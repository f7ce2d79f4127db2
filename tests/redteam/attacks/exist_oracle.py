"""Learn whether a hidden file exists without opening it: compare the error
a path through it gives (ENOTDIR for secret/key/x, EEXIST for mkdir) with the
error for a name that does not exist.  Any difference is the answer."""
import errno
import os
from rtlib import CTX, done

SECRET = CTX["secret"]
ABSENT = os.path.join(CTX["secret_dir"], "no-such-file")


def err(fn, path):
    try:
        fn(path)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def open_ro(p):
    os.close(os.open(p, os.O_RDONLY))


def open_path(p):
    os.close(os.open(p, os.O_PATH))


def create(p):
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def access(p):
    if not os.access(p, os.F_OK):
        raise OSError(errno.ENOENT, "")


PROBES = {"stat": os.stat, "lstat": os.lstat, "open": open_ro, "O_PATH": open_path, "listdir": os.listdir,
          "create": create, "mkdir": os.mkdir, "access": access, "chdir": os.chdir, "readlink": os.readlink,
          "unlink": os.unlink}
for suffix in ("/x", "/", "/.", "/..", "/x/y", ""):
    for name, fn in PROBES.items():
        real, absent = err(fn, SECRET + suffix), err(fn, ABSENT + suffix)
        print(name, repr(suffix), real, absent, flush=True)
        if real != absent:
            print("RT-EXISTS", name, repr(suffix), real, "vs", absent, flush=True)
done()
