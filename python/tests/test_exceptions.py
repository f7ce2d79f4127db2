"""The exception hierarchy and messages of reference §4.1, sandbox_denials()."""
from __future__ import annotations

import errno
import pickle
import unittest

import support  # noqa: F401  (puts the package on sys.path)
import pysandboxes
from pysandboxes import exceptions as ex


class Hierarchy(unittest.TestCase):
    CASES = [
        (ex.RuleFileNotFoundError, FileNotFoundError, errno.ENOENT),
        (ex.RulePermissionError, PermissionError, errno.EACCES),
        (ex.RuleSocketConnectionRefusedError, ConnectionRefusedError, errno.ECONNREFUSED),
        (ex.RuleApiPermissionError, PermissionError, errno.EPERM),
        (ex.RuleEvalPermissionError, PermissionError, errno.EPERM),
    ]

    def test_each_rule_error_is_also_the_natural_exception(self) -> None:
        for cls, natural, err in self.CASES:
            with self.subTest(cls=cls.__name__):
                self.assertTrue(issubclass(cls, natural))
                self.assertTrue(issubclass(cls, ex.SandBoxError))
                e = cls("Access to '/x' must be accepted by a rule.", "/x") if cls is not ex.RuleApiPermissionError \
                    else cls("os.system", "process-exec")
                self.assertEqual(e.errno, err)
                self.assertNotIn("[Errno", str(e))

    def test_other_bases(self) -> None:
        self.assertTrue(issubclass(ex.SandBoxError, RuntimeError))
        self.assertTrue(issubclass(ex.RuleModuleNotFoundError, ModuleNotFoundError))
        self.assertTrue(issubclass(ex.RuleAttributeError, AttributeError))
        self.assertTrue(issubclass(ex.EvalSyntaxRejected, SyntaxError))
        self.assertTrue(issubclass(ex.EvalSyntaxRejected, ex.SandBoxError))
        self.assertFalse(issubclass(ex.EvalInterrupted, Exception))
        self.assertTrue(issubclass(ex.EvalInterrupted, BaseException))
        for cls in (ex.ConfigSyntaxError, ex.SandBoxProtocolError, ex.SandBoxBaseExceptionError):
            self.assertTrue(issubclass(cls, ex.SandBoxError))
        r = pysandboxes.RestrictedUnpicklingError
        self.assertTrue(issubclass(r, pickle.UnpicklingError))
        self.assertTrue(issubclass(r, ex.SandBoxError))
        self.assertIs(r, ex.RestrictedUnpicklingError)

    def test_all_public_names_exist(self) -> None:
        for name in pysandboxes.__all__:
            with self.subTest(name=name):
                self.assertTrue(hasattr(pysandboxes, name))


class Messages(unittest.TestCase):
    def test_module_refusal(self) -> None:
        e = ex.RuleModuleNotFoundError("socket")
        self.assertEqual(str(e), "Module named 'socket' is not allowed by a rule")
        self.assertEqual(e.name, "socket")

    def test_api_refusal_is_two_exact_lines(self) -> None:
        e = ex.RuleApiPermissionError("os.system", "process-exec")
        self.assertEqual(str(e).split("\n"), [
            "os.system() is denied by the API guard (category: process-exec).",
            "Add `python-api=ALLOW:os.system` for this function only, "
            "or `python-api=ALLOW:process-exec` for the whole category.",
        ])
        self.assertEqual((e.qualname, e.category), ("os.system", "process-exec"))

    def test_eval_interrupted(self) -> None:
        e = ex.EvalInterrupted("eval-timeout=2s")
        self.assertEqual(str(e), "evaluation interrupted: eval-timeout=2s")
        self.assertEqual(e.reason, "eval-timeout=2s")

    def test_file_refusal_keeps_filename(self) -> None:
        e = ex.RuleFileNotFoundError("Access to '/etc/shadow' must be accepted by a rule.", "/etc/shadow")
        self.assertEqual(e.filename, "/etc/shadow")
        self.assertEqual(str(e), "Access to '/etc/shadow' must be accepted by a rule.")

    def test_rule_errors_survive_pickle(self) -> None:
        for e in (ex.RuleModuleNotFoundError("x"), ex.SandBoxError("y"),
                  ex.RuleApiPermissionError("pickle.loads", "deserialization"),
                  ex.RuleFileNotFoundError("Access to '/a' must be accepted by a rule.", "/a")):
            back = pickle.loads(pickle.dumps(e))
            self.assertEqual((type(back), str(back)), (type(e), str(e)))
            self.assertEqual((getattr(back, "errno", None), getattr(back, "filename", None),
                              getattr(back, "category", None)),
                             (getattr(e, "errno", None), getattr(e, "filename", None),
                              getattr(e, "category", None)))


class Denials(unittest.TestCase):
    def test_chain_innermost_first(self) -> None:
        try:
            try:
                try:
                    raise ex.RuleModuleNotFoundError("socket")
                except ImportError as inner:
                    raise ex.RuleApiPermissionError("os.system", "process-exec") from inner
            except PermissionError:
                raise OSError("All connection attempts failed")
        except OSError as outer:
            got = ex.sandbox_denials(outer)
        self.assertEqual(got, [
            "RuleModuleNotFoundError: Module named 'socket' is not allowed by a rule",
            "RuleApiPermissionError: " + str(ex.RuleApiPermissionError("os.system", "process-exec")),
        ])

    def test_no_denial(self) -> None:
        self.assertEqual(ex.sandbox_denials(ValueError("x")), [])

    def test_exception_group_members(self) -> None:
        group_cls = getattr(__builtins__, "ExceptionGroup", None) if not isinstance(__builtins__, dict) \
            else __builtins__.get("ExceptionGroup")
        if group_cls is None:
            self.skipTest("no ExceptionGroup before 3.11")
        g = group_cls("g", [ValueError("v"), ex.RuleFileNotFoundError("Access to '/a' must be accepted by a rule.")])
        self.assertEqual(ex.sandbox_denials(g),
                         ["RuleFileNotFoundError: Access to '/a' must be accepted by a rule."])

    def test_attached_remote_denials(self) -> None:
        e = ValueError("rebuilt from a worker")
        e.__sandbox_denials__ = ["RulePermissionError: Cannot write to '/srv/'."]  # type: ignore[attr-defined]
        self.assertEqual(ex.sandbox_denials(e), ["RulePermissionError: Cannot write to '/srv/'."])

    def test_cycles_terminate(self) -> None:
        a, b = ex.SandBoxError("a"), ex.SandBoxError("b")
        a.__context__, b.__context__ = b, a
        self.assertEqual(sorted(ex.sandbox_denials(a)), ["SandBoxError: a", "SandBoxError: b"])


if __name__ == "__main__":
    unittest.main()
