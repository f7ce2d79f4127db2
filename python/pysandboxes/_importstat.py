"""Fewer stat calls for imports, where the sandbox makes them pointless.

Under python-sb every stat the interpreter makes is a system call the
supervisor decides: several microseconds each, against half of one bare.  An
import-heavy start makes about a thousand, and half of them cannot tell the
import system anything new (doc/supervisor.md §6):

- A ``FileFinder`` stats its directory at every lookup, to notice modules
  added since it listed it.  In enforce mode, a directory the policy does not
  let the program write can only change from outside the sandbox, and
  Python's documentation already asks for ``importlib.invalidate_caches()``
  after modules are created that way while a program runs.  Learning and
  audit refuse no write: there the line is the kernel's, a directory this
  (non-root) user could not write even bare: not its own, and without a
  group or other write bit (an ACL's mask shows there), or one of the
  interpreter's own trees, which learning never makes writable and the
  policy keeps read-only (so even for root).  Such a directory is stat-ed
  once; ``invalidate_caches()`` still makes its finder list it
  again (the finder forgets the time it compares).  A directory reached
  through a symbolic link keeps the per-lookup stat: the policy's paths are
  canonical, so only a canonical one can be judged against them.
- Before a directory has a finder, the zip importer's path hook, the file
  finder's and the new finder each stat it, one after the other: one call
  serves the three (an lstat, which also tells whether it is a link).
- A source module is stat-ed twice in a row, by the finder (is it a file?)
  and by its loader (mtime and size, for the bytecode cache).  The loader gets
  the finder's result when it asks for the same path on the same thread within
  a few milliseconds, as an import does.  A finder directory that is looked
  at each time never takes a remembered result: its time is how it notices
  new modules.

CPython keeps ``_path_stat`` separate "to make it easier to override (e.g.
cache stat results)"; this module overrides it, ``_path_isfile``,
``SourceFileLoader.path_stats`` and, to know when the path hooks run,
``PathFinder._path_hooks``.  Nothing here is a security boundary: the
supervisor decides every call that is still made, and skipping a repeat only
skips a call that it allowed a moment ago.
"""
from __future__ import annotations

import os
import stat
import sys
import time
from _thread import _local, get_ident

import _frozen_importlib_external as _bx

# The loader's stat follows the finder's at once in an import; a lazy loader
# may wait longer, and then stats for itself.
REUSE_NS = 50_000_000

_tls = _local()  # .hooking: the path PathFinder's hooks are being run for


def supported() -> bool:
    """Does this interpreter's importlib have what is overridden here
    (CPython 3.10 to 3.13 do, the versions tested)?  Elsewhere nothing is
    installed: this saves system calls, it guards nothing."""
    finder = getattr(_bx, "PathFinder", None)
    return (callable(getattr(_bx, "_path_stat", None)) and callable(getattr(_bx, "_path_isfile", None))
            and callable(getattr(getattr(_bx, "SourceFileLoader", None), "path_stats", None))
            and isinstance(getattr(finder, "__dict__", {}).get("_path_hooks"), staticmethod)
            and isinstance(getattr(_bx, "FileFinder", None), type))


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r if r.endswith("/") else r + "/") for r in roots)


class ImportStats:
    """The overrides, and what they remember."""

    def __init__(self, writable: list[str], by_mode: bool = False, kept: tuple[str, ...] = ()) -> None:
        self.writable = tuple(w for w in writable if isinstance(w, str) and w.startswith("/"))
        # Learning and audit: also keep a directory this uid may write by its
        # mode (see the top); root may write any, so nothing is kept for it
        # but the interpreter's own trees (`kept`).
        self.by_mode = by_mode
        self.kept = tuple(k for k in kept if isinstance(k, str) and k.startswith("/"))
        self.euid = os.geteuid()
        # finder directory -> its stat once frozen, or None: stat it each time
        self.dirs: dict[str, os.stat_result | None] = {}
        self.canonical: dict[str, bool] = {"/": True}
        self.last: tuple | None = None  # (path, thread, time, stat result, is a link or None)
        self.real_stat = _bx._path_stat
        self.real_lstat = os.lstat
        self.real_isfile = _bx._path_isfile
        self.real_path_stats = _bx.SourceFileLoader.path_stats
        self.real_path_hooks = _bx.PathFinder._path_hooks
        self.saved: tuple = ()

    # -- directories ------------------------------------------------------------

    def _is_canonical(self, path: str) -> bool:
        known = self.canonical.get(path)
        if known is not None:
            return known
        parent = os.path.dirname(path)
        try:
            ok = self._is_canonical(parent) and not stat.S_ISLNK(self.real_lstat(path).st_mode)
        except OSError:
            ok = False
        self.canonical[path] = ok
        return ok

    def _finder_dir(self, path: str) -> bool:
        cache = sys.path_importer_cache
        finder = cache.get(path)
        if finder is None:
            finder = cache.get("")  # the current directory's finder, stat-ed by its absolute path
        return isinstance(finder, _bx.FileFinder) and finder.path == path

    def _kept(self, path: str) -> bool:
        """Under the interpreter's own trees, which learning never makes
        writable and the policy's implicit grant keeps read-only: what the
        program writes there at run time is refused once the policy is
        enforced, so learning or auditing it need not see it as bare would."""
        return bool(self.kept) and _under(path, self.kept)

    def _freezable(self, path: str) -> bool:
        return (os.path.isabs(path) and os.path.normpath(path) == path and not _under(path, self.writable)
                and (not self.by_mode or self.euid != 0 or self._kept(path))
                and self._is_canonical(os.path.dirname(path)))

    def _may_write(self, st: os.stat_result) -> bool:
        """Could this uid write the directory?  Its owner may (chmod gives
        it back whatever its mode says), and anyone a write bit of the group
        or others may concern."""
        return st.st_uid == self.euid or bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))

    # -- the last stat, for the next question about the same path ----------------

    def _recall(self, path, timed: bool = True) -> tuple | None:
        last = self.last
        if (last is not None and last[0] == path and last[1] == get_ident()
                and (not timed or time.monotonic_ns() - last[2] < REUSE_NS)):
            return last
        return None

    def _remember(self, path, st, link: bool | None) -> None:
        self.last = (path, get_ident(), time.monotonic_ns(), st, link)

    def _lstat(self, path):
        """stat's answer, and whether the path is a symbolic link (lstat first:
        one call for anything but a link)."""
        st = self.real_lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return self.real_stat(path), True
        return st, False

    # -- the overrides ------------------------------------------------------------

    def path_stat(self, path):
        st = self.dirs.get(path)
        if st is not None:
            return st
        if not isinstance(path, str) or path in self.dirs:
            return self.real_stat(path)  # a finder directory stat-ed each time, as bare
        # Untimed: the path hooks' stat is only ever followed by the finder's
        # first look, and that first look lists the directory after it
        # whatever the delay (a loaded machine may pause for longer than
        # REUSE_NS between the two).
        last = self._recall(path, timed=False)
        if not self._finder_dir(path):
            if getattr(_tls, "hooking", None) != path:
                self.last = None
                return self.real_stat(path)
            # Before its finder exists, a directory is stat-ed by the zip
            # importer's path hook, then the file finder's, then the finder
            # itself: one call serves the three.  Only there: a finder made
            # by hand looks at its directory through here too.
            if last is not None:
                return last[3]
            st, link = self._lstat(path)
            self._remember(path, st, link)
            return st
        self.last = None
        if not self._freezable(path):
            self.dirs[path] = None
            return self.real_stat(path)
        st, link = (last[3], last[4]) if last is not None and last[4] is not None else self._lstat(path)
        if link or not stat.S_ISDIR(st.st_mode) or (self.by_mode and self._may_write(st) and not self._kept(path)):
            self.dirs[path] = None
            return self.real_stat(path) if link else st
        self.canonical[path] = True
        self.dirs[path] = st
        return st

    def path_hooks(self, path):
        prev = getattr(_tls, "hooking", None)
        _tls.hooking = path
        self.last = None  # the hooks share only a stat of their own
        try:
            return self.real_path_hooks(path)
        finally:
            _tls.hooking = prev

    def path_isfile(self, path) -> bool:
        self.last = None
        try:
            st = self.real_stat(path)
        except OSError:
            return False
        self._remember(path, st, None)
        return stat.S_ISREG(st.st_mode)

    def path_stats(self, loader, path) -> dict:
        last = self._recall(path)
        self.last = None
        if last is not None:
            st = last[3]
            return {"mtime": st.st_mtime, "size": st.st_size}
        return self.real_path_stats(loader, path)

    # -- set-up -----------------------------------------------------------------

    def install(self) -> None:
        stats = self

        def path_stats(loader, path):
            return stats.path_stats(loader, path)

        path_stats.__doc__ = self.real_path_stats.__doc__
        self.saved = (_bx._path_stat, _bx._path_isfile, _bx.SourceFileLoader.path_stats,
                      _bx.PathFinder.__dict__["_path_hooks"])
        _bx._path_stat = self.path_stat
        _bx._path_isfile = self.path_isfile
        _bx.SourceFileLoader.path_stats = path_stats  # type: ignore[method-assign]
        _bx.PathFinder._path_hooks = staticmethod(self.path_hooks)  # type: ignore[method-assign]

    def uninstall(self) -> None:
        (_bx._path_stat, _bx._path_isfile, _bx.SourceFileLoader.path_stats,
         _bx.PathFinder._path_hooks) = self.saved  # type: ignore[method-assign]
