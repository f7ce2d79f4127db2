"""Decoding what a partial-mode worker sends back (reference §5, "Results").

The worker is sandboxed and may be hostile: its pickles are decoded by an
unpickler whose ``find_class`` decides which globals a payload may name.

* ``data-only`` (default): built-in scalars and containers (native opcodes)
  plus a fixed list of value types: dates and times, Decimal, Fraction, UUID,
  IP addresses and networks, pure and concrete paths, ordered dicts, deques.
* ``objects``: also classes and functions of modules the parent has already
  imported (a payload never triggers an import), except, while
  ``remote-result-guard`` is on, anything from a module of the denylist (the
  gadgets of pickle exploits: processes, files, code, signals, nested pickles,
  their C twins) and anything whose own ``__module__`` is on it (re-exports
  such as ``from os import system``).  Fail-open by nature: an application
  class with a dangerous constructor is still rebuilt.

A payload larger than ``max_size`` bytes is refused before decoding.
"""
from __future__ import annotations

import _compat_pickle
import io
import pickle
import sys

from .exceptions import RestrictedUnpicklingError  # type: ignore[attr-defined]

DATA_ONLY = "data-only"
OBJECTS = "objects"
MAX_SIZE = 64 << 20

# (module, name) pairs a data-only payload may name; their modules are
# imported on demand (all are standard library value types).
# No callable here may turn a small payload into a large object: `list`,
# `range` or `bytes` would (list(range(10**12))), so they are not listed;
# bytearray() of protocols < 5 is reached through a size-checking factory.
_VALUE_TYPES: dict[str, frozenset] = {
    "builtins": frozenset({"set", "frozenset", "complex", "slice", "bytearray"}),
    "collections": frozenset({"OrderedDict", "deque", "Counter"}),
    "datetime": frozenset({"date", "time", "datetime", "timedelta", "timezone"}),
    "decimal": frozenset({"Decimal"}),
    "_pydecimal": frozenset({"Decimal"}),
    "fractions": frozenset({"Fraction"}),
    "uuid": frozenset({"UUID"}),
    "ipaddress": frozenset({"IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network",
                            "IPv4Interface", "IPv6Interface"}),
    "pathlib": frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath",
                          "WindowsPath"}),
    "pathlib._local": frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath",
                                 "WindowsPath"}),
}

# Top-level modules whose objects a guarded `objects` payload may not name.
DENYLIST = frozenset({
    "os", "posix", "nt", "posixpath", "ntpath", "subprocess", "_posixsubprocess", "_winapi", "sys",
    "builtins", "shutil", "socket", "_socket", "ssl", "_ssl", "select", "selectors", "signal",
    "_signal", "pickle", "_pickle", "pickletools", "copyreg", "marshal", "shelve", "dbm", "types",
    "ctypes", "_ctypes", "importlib", "_imp", "zipimport", "pkgutil", "runpy", "pty", "tty",
    "multiprocessing", "_multiprocessing", "concurrent", "asyncio", "threading", "_thread", "code",
    "codeop", "pdb", "bdb", "io", "_io", "fileinput", "tempfile", "webbrowser", "operator",
    "_operator", "functools", "_functools", "itertools", "inspect", "gc", "ast", "dis", "linecache",
    "platform", "sysconfig", "site", "resource", "faulthandler", "atexit", "logging", "socketserver",
    "http", "urllib", "ftplib", "smtplib", "imaplib", "poplib", "telnetlib", "xmlrpc", "sqlite3",
    "_sqlite3", "tarfile", "zipfile", "gzip", "bz2", "lzma", "zlib", "_bz2", "_lzma", "mmap",
    "codecs", "_codecs", "encodings", "pydoc", "trace", "cProfile", "profile", "timeit",
    "unittest", "doctest", "venv", "ensurepip", "distutils", "setuptools", "pip", "pysandboxes",
})


def _bytearray(*args: object) -> bytearray:
    if args and not isinstance(args[0], (bytes, str)):
        raise RestrictedUnpicklingError("bytearray() of a size is refused")
    return bytearray(*args)  # type: ignore[arg-type]


class RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, mode: str = DATA_ONLY, guard: bool = True) -> None:
        super().__init__(file)
        self.mode = mode
        self.guard = guard

    def find_class(self, module: str, name: str) -> object:
        # Python 2 names of protocols < 3, as pickle's own find_class maps them.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        allowed = _VALUE_TYPES.get(module)
        if allowed is not None and name in allowed:
            if (module, name) == ("builtins", "bytearray"):
                return _bytearray
            return super().find_class(module, name)
        if self.mode != OBJECTS:
            raise RestrictedUnpicklingError(
                f"'{module}.{name}' is not plain data (remote-result-mode=data-only)")
        top = module.partition(".")[0]
        if self.guard and top in DENYLIST:
            raise RestrictedUnpicklingError(f"'{module}.{name}' is refused by remote-result-guard")
        mod = sys.modules.get(module)
        if mod is None:
            raise RestrictedUnpicklingError(
                f"'{module}.{name}' names a module the caller has not imported")
        obj: object = mod
        for part in name.split("."):
            if part.startswith("__") and part != "__main__":
                raise RestrictedUnpicklingError(f"'{module}.{name}' names a private attribute")
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise RestrictedUnpicklingError(f"'{module}.{name}' does not exist") from None
        owner = getattr(obj, "__module__", None)
        if self.guard and isinstance(owner, str) and owner.partition(".")[0] in DENYLIST:
            raise RestrictedUnpicklingError(
                f"'{module}.{name}' is {owner}.{getattr(obj, '__qualname__', name)}, "
                "refused by remote-result-guard")
        if type(obj).__name__ == "module":
            raise RestrictedUnpicklingError(f"'{module}.{name}' is a module")
        return obj

    def persistent_load(self, pid: object) -> object:
        raise RestrictedUnpicklingError("persistent ids are refused")


def loads(data: bytes, mode: str = DATA_ONLY, guard: bool = True, max_size: int = MAX_SIZE) -> object:
    """Decode a payload from a worker under `mode` (data-only or objects)."""
    if len(data) > max_size:
        raise RestrictedUnpicklingError(f"payload of {len(data)} bytes exceeds {max_size} bytes")
    if mode == OBJECTS and not guard:
        # remote-result-guard=false: the policy trusts the worker.
        return pickle.Unpickler(io.BytesIO(data)).load()
    return RestrictedUnpickler(io.BytesIO(data), mode, guard).load()
