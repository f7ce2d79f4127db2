"""_importstat: the import system's stats the sandbox makes pointless.

The overrides are installed in this process around each test and counted
through the real stat they wrap; what a module created behind the finder's
back does is checked both ways (a frozen directory needs
importlib.invalidate_caches(), a writable one does not, as bare)."""
from __future__ import annotations

import contextlib
import importlib
import os
import py_compile
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Iterator

from support import rules, run_agent

from pysandboxes import _importstat


@contextlib.contextmanager
def clock(step: int) -> Iterator[None]:
    """_importstat's clock, advancing `step` ns at each reading: the timing
    of a loaded machine (or of none, step 0) made certain."""
    class Fake:
        now = 0

        @classmethod
        def monotonic_ns(cls) -> int:
            cls.now += step
            return cls.now

    real = _importstat.time
    _importstat.time = Fake  # type: ignore[assignment]
    try:
        yield
    finally:
        _importstat.time = real


class Counted(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="sb-importstat-")
        self.root = Path(os.path.realpath(self.tmp.name))
        self.ro = self.root / "ro"
        self.rw = self.root / "rw"
        self.real = self.root / "real"
        for d in (self.ro, self.rw, self.real):
            d.mkdir()
        (self.root / "link").symlink_to(self.real)
        (self.ro / "ro_present.py").write_text("X = 1\n")
        bx = _importstat._bx
        self.originals = (bx._path_stat, bx._path_isfile, bx.SourceFileLoader.path_stats,
                          bx.PathFinder.__dict__["_path_hooks"])
        self.stats = _importstat.ImportStats([str(self.rw)])
        self.calls: list[str] = []
        real = self.stats.real_stat

        def counting(path):
            self.calls.append(path)
            return real(path)

        real_lstat = self.stats.real_lstat

        def counting_lstat(path):
            self.calls.append(path)
            return real_lstat(path)

        self.stats.real_stat = counting
        self.stats.real_lstat = counting_lstat
        self.saved_path = list(sys.path)
        self.saved_modules = set(sys.modules)
        self.stats.install()

    def tearDown(self) -> None:
        self.stats.uninstall()
        sys.path[:] = self.saved_path
        for name in set(sys.modules) - self.saved_modules:
            del sys.modules[name]
        for key in [k for k in sys.path_importer_cache if k.startswith(str(self.root))]:
            del sys.path_importer_cache[key]
        self.tmp.cleanup()

    def lookups(self, where: Path, n: int = 20) -> None:
        sys.path.insert(0, str(where))
        for i in range(n):
            with self.assertRaises(ImportError):
                importlib.import_module(f"sb_absent_{i}")

    def test_everything_writable_keeps_no_directory(self) -> None:
        self.stats.writable = ("/",)
        self.lookups(self.ro, 5)
        self.assertGreaterEqual(self.calls.count(str(self.ro)), 5)

    def test_read_only_directory_is_stat_ed_once(self) -> None:
        self.lookups(self.ro)
        # The path hooks' checks and the finder's first look: one lstat.
        self.assertEqual(self.calls.count(str(self.ro)), 1)
        self.assertIsNotNone(self.stats.dirs.get(str(self.ro)))
        # Created behind its back: not seen until invalidate_caches(), as
        # Python's documentation says a program must call.
        (self.ro / "ro_late.py").write_text("Y = 2\n")
        with self.assertRaises(ImportError):
            importlib.import_module("ro_late")
        importlib.invalidate_caches()
        self.assertEqual(importlib.import_module("ro_late").Y, 2)

    def test_read_only_directory_is_stat_ed_once_on_a_slow_machine(self) -> None:
        # Seconds between the path hooks and the finder's first look (a
        # loaded machine): still one call, the listing follows it anyway.
        with clock(10 * _importstat.REUSE_NS):
            self.lookups(self.ro)
        self.assertEqual(self.calls.count(str(self.ro)), 1)

    def test_writable_directory_is_stat_ed_at_each_lookup(self) -> None:
        self.lookups(self.rw)
        self.assertGreaterEqual(self.calls.count(str(self.rw)), 20)
        (self.rw / "rw_late.py").write_text("Z = 3\n")
        self.assertEqual(importlib.import_module("rw_late").Z, 3)

    def test_writable_package_sees_a_new_module_at_once(self) -> None:
        # Only the package's own directory is searched: nothing else is
        # stat-ed between two lookups there, and still none may reuse the
        # other's result.
        pkg = self.rw / "sb_pkgw"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        sys.path.insert(0, str(self.rw))
        importlib.import_module("sb_pkgw")
        for _ in range(3):
            with self.assertRaises(ImportError):
                importlib.import_module("sb_pkgw.late")
        (pkg / "late.py").write_text("V = 5\n")
        self.assertEqual(importlib.import_module("sb_pkgw.late").V, 5)

    def test_finder_outside_the_cache_sees_a_new_module_at_once(self) -> None:
        # A FileFinder made by hand, or for a relative sys.path entry (its
        # path is absolute, its key not): only the path hooks' own stats
        # may share one call.
        finder = importlib.machinery.FileFinder(str(self.rw), *_importstat._bx._get_supported_file_loaders())
        self.assertIsNone(finder.find_spec("sb_manual"))
        (self.rw / "sb_manual.py").write_text("M = 6\n")
        self.assertIsNotNone(finder.find_spec("sb_manual"))
        rel = os.path.relpath(self.rw)
        sys.path.insert(0, rel)
        with self.assertRaises(ImportError):
            importlib.import_module("sb_relative")
        with self.assertRaises(ImportError):
            importlib.import_module("sb_relative")
        (self.rw / "sb_relative.py").write_text("R = 7\n")
        self.assertEqual(importlib.import_module("sb_relative").R, 7)

    def by_mode(self, euid: int) -> None:
        """Learning or audit, as user `euid` (the test itself runs as anyone)."""
        self.stats.writable = ()
        self.stats.by_mode = True
        self.stats.euid = euid

    def test_learning_keeps_a_directory_this_user_cannot_write(self) -> None:
        other = os.stat(self.ro).st_uid + 1
        self.by_mode(other)
        os.chmod(self.ro, 0o755)
        self.lookups(self.ro)
        self.assertEqual(self.calls.count(str(self.ro)), 1)

    def test_learning_looks_each_time_where_this_user_could_write(self) -> None:
        # Its own directory (even read-only: its owner may chmod it), a
        # group- or other-writable one (an ACL's mask shows there too), and
        # any directory for root.
        owner = os.stat(self.ro).st_uid
        if owner == 0:
            owner = 4242  # as root, directories of another owner are made for the test
        for euid, mode in ((owner, 0o755), (owner, 0o555), (owner + 1, 0o775), (owner + 1, 0o757), (0, 0o555)):
            with self.subTest(euid=euid, mode=oct(mode)):
                where = self.root / f"d{euid}_{mode:o}"
                where.mkdir()
                if os.geteuid() == 0 and euid == owner:
                    os.chown(where, owner, -1)
                os.chmod(where, mode)
                self.by_mode(euid)
                self.calls.clear()
                self.lookups(where, 5)
                self.assertGreaterEqual(self.calls.count(str(where)), 5)
                os.chmod(where, 0o755)
        # Judged writable once, looked at each time: a module written there
        # imports at once.
        self.by_mode(owner + 1)
        where = self.root / f"d{owner + 1}_757"
        (where / "sb_learned_late.py").write_text("L = 8\n")
        self.assertEqual(importlib.import_module("sb_learned_late").L, 8)

    def test_learning_keeps_the_interpreter_tree_even_for_root(self) -> None:
        # Under the interpreter's trees (`kept`), which learning never makes
        # writable: kept for root too, but not where the policy lets the
        # program write, nor through a symbolic link.
        self.by_mode(0)
        self.stats.kept = (str(self.root),)
        self.stats.writable = (str(self.rw),)
        self.lookups(self.ro)
        self.assertEqual(self.calls.count(str(self.ro)), 1)
        for where in (self.rw, self.root / "link"):
            with self.subTest(where=where):
                self.calls.clear()
                self.lookups(where, 5)
                self.assertGreaterEqual(self.calls.count(str(where)), 5)
        self.stats.kept = ()
        self.calls.clear()
        other = self.root / "other"
        other.mkdir()
        self.lookups(other, 5)
        self.assertGreaterEqual(self.calls.count(str(other)), 5)

    def test_directory_under_a_writable_one_is_not_frozen(self) -> None:
        sub = self.rw / "sub"
        sub.mkdir()
        self.lookups(sub, 5)
        self.assertGreaterEqual(self.calls.count(str(sub)), 5)

    def test_symlinked_directory_is_not_frozen(self) -> None:
        # The policy's paths are canonical: a link could lead anywhere.
        self.lookups(self.root / "link", 5)
        self.assertGreaterEqual(self.calls.count(str(self.root / "link")), 5)
        inner = self.root / "link" / "inner"
        inner.mkdir()
        self.lookups(inner, 5)
        self.assertGreaterEqual(self.calls.count(str(inner)), 5)
        (inner / "late_inner.py").write_text("W = 4\n")
        self.assertEqual(importlib.import_module("late_inner").W, 4)

    def test_source_is_stat_ed_once_per_import(self) -> None:
        # With its bytecode there, as an installed module has it: without,
        # a loader that may write bytecode (no PYTHONDONTWRITEBYTECODE) stats
        # the source once more for the .pyc's mode.
        py_compile.compile(str(self.ro / "ro_present.py"), doraise=True)
        self.calls.clear()
        sys.path.insert(0, str(self.ro))
        with clock(0):  # however long the machine paused between the two
            self.assertEqual(importlib.import_module("ro_present").X, 1)
        self.assertEqual(self.calls.count(str(self.ro / "ro_present.py")), 1)

    def test_loader_stats_again_when_late_or_on_another_thread(self) -> None:
        path = str(self.ro / "ro_present.py")
        loader = importlib.machinery.SourceFileLoader("ro_present", path)
        self.assertTrue(_importstat._bx._path_isfile(path))
        old = self.stats.last
        self.stats.last = (old[0], old[1], old[2] - 2 * _importstat.REUSE_NS, old[3])
        loader.path_stats(path)
        self.assertEqual(self.calls.count(path), 2)
        self.assertTrue(_importstat._bx._path_isfile(path))
        t = threading.Thread(target=loader.path_stats, args=(path,))
        t.start()
        t.join()
        self.assertEqual(self.calls.count(path), 4)
        # Once only: a second path_stats stats again.
        self.assertTrue(_importstat._bx._path_isfile(path))
        loader.path_stats(path)
        loader.path_stats(path)
        self.assertEqual(self.calls.count(path), 6)

    def test_modified_source_is_seen_by_a_later_import(self) -> None:
        sys.path.insert(0, str(self.ro))
        importlib.import_module("ro_present")
        del sys.modules["ro_present"]
        src = self.ro / "ro_present.py"
        src.write_text("X = 'changed, and longer'\n")
        later = time.time() + 5
        os.utime(src, (later, later))
        self.assertEqual(importlib.import_module("ro_present").X, "changed, and longer")

    def test_uninstall_restores_importlib(self) -> None:
        bx = _importstat._bx
        self.stats.uninstall()
        self.assertEqual((bx._path_stat, bx._path_isfile, bx.SourceFileLoader.path_stats,
                          bx.PathFinder.__dict__["_path_hooks"]), self.originals)
        self.stats.install()


class Support(unittest.TestCase):
    def test_this_interpreter(self) -> None:
        self.assertTrue(_importstat.supported())

    def test_an_importlib_without_the_helpers(self) -> None:
        # A future CPython may rename them: the program runs, unoptimised.
        bx = _importstat._bx
        saved = bx._path_isfile
        del bx._path_isfile
        try:
            self.assertFalse(_importstat.supported())
        finally:
            bx._path_isfile = saved
        self.assertTrue(_importstat.supported())


class Wiring(unittest.TestCase):
    PROBE = ("import _frozen_importlib_external as b; "
             "print(type(getattr(b._path_stat, '__self__', None)).__name__)")

    def run_probe(self, doc: dict) -> str:
        run = run_agent(["-c", self.PROBE], doc)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout.strip()

    def test_enforce_installs(self) -> None:
        self.assertEqual(self.run_probe(rules(writable=["/tmp"])), "ImportStats")

    def test_learn_and_audit_judge_by_mode(self) -> None:
        # Nothing is refused there: what this uid may write may change, but
        # for the interpreter's own trees (kept even for root) and for what
        # the policy makes writable (never kept, as when enforcing).
        probe = self.PROBE.replace(
            "print(", "import os, sys; s = getattr(b._path_stat, '__self__', None); "
            "print(s.writable, s.by_mode, sorted(s.kept) == sorted({os.path.realpath(sys.prefix), "
            "os.path.realpath(sys.base_prefix)}), ")
        for mode in ("learn", "audit"):
            run = run_agent(["-c", probe], rules(mode=mode, writable=["/tmp"]))
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout.split(), ["('/tmp',)", "True", "True", "ImportStats"])

    def test_no_writable_list_no_override(self) -> None:
        self.assertEqual(self.run_probe(rules()), "NoneType")


if __name__ == "__main__":
    unittest.main()
