"""Every function of rules/python-api.in that exists on this interpreter is
guarded: by an audit event, or by a wrapper at the registered name."""
from __future__ import annotations

import sys
import textwrap
import unittest

import support
from pysandboxes.guards import api

CHECK = textwrap.dedent("""
    import importlib, sys
    from pysandboxes.guards import api
    registry = %r
    covered = set()
    for since, members in api.EVENT_DOORS.values():
        if sys.version_info[:2] >= since:
            covered.update(members)
    missing, absent = [], []
    for qual in registry:
        parts = qual.split('.')
        obj = None
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module('.'.join(parts[:i]))
            except ImportError:
                continue
            try:
                for p in parts[i:]:
                    obj = getattr(obj, p)
            except AttributeError:
                obj = None
            break
        if obj is None:
            absent.append(qual)
            continue
        if qual in covered:
            continue
        if isinstance(obj, type):
            obj = obj.__dict__.get('__init__')
        if getattr(obj, '__sb_qualname__', None) != qual:
            missing.append(qual)
    print('MISSING', sorted(missing))
    print('ABSENT', sorted(absent))
""")


class Registry(unittest.TestCase):
    def test_every_present_function_is_guarded(self) -> None:
        reg = support.registry()
        run = support.run_agent(["-c", CHECK % sorted(reg)], support.rules(mode="learn"))
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
        self.assertEqual(lines["MISSING"], "[]")
        absent = eval(lines["ABSENT"])  # noqa: S307 (our own output)
        # Only platform- or version-specific names may be absent.
        for qual in absent:
            with self.subTest(qual=qual):
                self.assertTrue(qual.split(".")[0] in ("nt", "_winapi", "_interpreters", "_xxsubinterpreters")
                                or qual in ("os.startfile", "sys.remote_exec", "sys._getframemodulename",
                                            "sys.monitoring.use_tool_id", "sys.monitoring.register_callback",
                                            "_thread.start_joinable_thread", "threading._start_joinable_thread",
                                            "threading._start_new_thread", "threading.settrace_all_threads",
                                            "threading.setprofile_all_threads", "subprocess._fork_exec",
                                            "_thread.start_new", "os.setns", "posix.setns",
                                            "os.unshare", "posix.unshare", "sys._current_exceptions"),
                                f"{qual} is registered but missing on {sys.version}")

    def test_event_doors_name_registered_functions(self) -> None:
        reg = support.registry()
        for event, (_since, members) in api.EVENT_DOORS.items():
            with self.subTest(event=event):
                self.assertTrue(set(members) & set(reg), f"{event} guards nothing registered")


if __name__ == "__main__":
    unittest.main()
