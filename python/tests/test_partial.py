"""Partial mode: the frames, exceptions rebuilt in the caller, target
resolution, config lookup; end to end when a built python-sb is available."""
from __future__ import annotations

import asyncio
import os
import pickle
import sys
import tempfile
import textwrap
import unittest

import support
from pysandboxes import _proto, partial, sandbox
from pysandboxes.exceptions import RuleApiPermissionError, RuleFileNotFoundError, SandBoxBaseExceptionError


@sandbox
def plain(x: int) -> int:
    return x + 1


@sandbox
async def aplain(x: int) -> int:
    return x + 2


class Frames(unittest.TestCase):
    def test_round_trip_in_pieces(self) -> None:
        data = _proto.frame(_proto.OUT, 7, b"hello\n") + _proto.frame(_proto.RESULT, 8, b"x" * 70000)
        r = _proto.Reader()
        got = []
        for i in range(0, len(data), 1000):
            got += r.feed(data[i:i + 1000])
        self.assertEqual(got, [(_proto.OUT, 7, b"hello\n"), (_proto.RESULT, 8, b"x" * 70000)])

    def test_malformed_frames_are_refused(self) -> None:
        for bad in (_proto.HEADER.pack(1, 99, 0) + b"x", _proto.HEADER.pack(_proto.MAX_FRAME + 1, _proto.OUT, 0)):
            with self.subTest(bad=bad[:13]), self.assertRaises(_proto.ProtocolError):
                _proto.Reader().feed(bad)
        with self.assertRaises(_proto.ProtocolError):
            _proto.frame(_proto.OUT, 0, b"x" * (_proto.MAX_FRAME + 1))


class Rebuild(unittest.TestCase):
    def desc(self, exc: BaseException) -> dict:
        from pysandboxes import _worker

        try:
            raise exc
        except BaseException as e:
            return pickle.loads(pickle.dumps(_worker._describe(e)))

    def test_same_class_message_traceback(self) -> None:
        e = partial._rebuild(self.desc(ValueError("boom")))
        self.assertIs(type(e), ValueError)
        self.assertEqual(str(e), "boom")
        self.assertIsInstance(e.__cause__, partial.RemoteTraceback)
        self.assertIn('raise exc', str(e.__cause__))

    def test_rule_errors_keep_attributes_and_denials(self) -> None:
        e = partial._rebuild(self.desc(RuleApiPermissionError("os.system", "process-exec")))
        self.assertIs(type(e), RuleApiPermissionError)
        self.assertEqual((e.qualname, e.category, e.errno), ("os.system", "process-exec", 1))
        from pysandboxes import sandbox_denials

        self.assertEqual(len(sandbox_denials(e)), 1)
        f = partial._rebuild(self.desc(RuleFileNotFoundError("Access to '/s' must be accepted by a rule.", "/s")))
        self.assertEqual((type(f), f.errno, f.filename, str(f)),
                         (RuleFileNotFoundError, 2, "/s", "Access to '/s' must be accepted by a rule."))

    def test_os_and_syntax_errors(self) -> None:
        e = partial._rebuild(self.desc(FileNotFoundError(2, "No such file", "/x")))
        self.assertEqual((type(e), e.errno, e.filename), (FileNotFoundError, 2, "/x"))
        s = partial._rebuild(self.desc(SyntaxError("bad", ("f.py", 1, 2, "x y"))))
        self.assertEqual((type(s), s.msg, s.lineno), (SyntaxError, "bad", 1))

    def test_unknown_or_hostile_classes(self) -> None:
        d = self.desc(ValueError("v"))
        d.update(module="not_imported_module_xyz", qualname="Evil")
        e = partial._rebuild(d)
        self.assertIsInstance(e, partial.RemoteError)
        self.assertEqual(str(e), "not_imported_module_xyz.Evil: v")
        d.update(module="os", qualname="system")  # not an exception class
        self.assertIsInstance(partial._rebuild(d), partial.RemoteError)
        d.update(module="builtins", qualname="ValueError", args=pickle.dumps((os.system,)))
        self.assertEqual(partial._rebuild(d).args, ("v",))  # arguments are plain data only

    def test_base_exceptions(self) -> None:
        e = partial._rebuild(self.desc(SystemExit(3)))
        self.assertIsInstance(e, SandBoxBaseExceptionError)
        self.assertEqual(str(e), "SystemExit: 3")


class Targets(unittest.TestCase):
    def test_module_level_functions_only(self) -> None:
        self.assertEqual(partial._target(plain), ("module", __name__, "plain"))

        def local() -> None:
            pass
        with self.assertRaises(TypeError):
            partial._target(local)
        with self.assertRaises(TypeError):
            partial._target(lambda: None)

    def test_outside_sandboxes_calls_are_direct(self) -> None:
        self.assertEqual(plain(1), 2)
        self.assertEqual(asyncio.run(aplain(1)), 3)
        self.assertFalse(hasattr(plain, "__wrapped__"))
        self.assertEqual(plain.__name__, "plain")

    def test_config_lookup(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "sbcfgpkg")
            os.mkdir(pkg)
            open(os.path.join(pkg, "__init__.py"), "w").close()
            open(os.path.join(pkg, ".py-sandboxes"), "w").close()
            sys.path.insert(0, d)
            try:
                import sbcfgpkg  # noqa: F401
                got = partial._find_config(None, {"__package__": "sbcfgpkg"})
            finally:
                sys.path.remove(d)
            self.assertEqual(got, os.path.join(pkg, ".py-sandboxes"))
        self.assertEqual(partial._find_config(None, {}), os.path.abspath(".py-sandboxes"))
        self.assertEqual(partial._find_config("./x/p", {}), os.path.abspath("x/p"))


@unittest.skipUnless(os.environ.get("PYTHON_SB") and os.access(os.environ.get("PYTHON_SB", ""), os.X_OK),
                     "needs the built python-sb (PYTHON_SB)")
class EndToEnd(unittest.TestCase):
    def test_sync_async_prints_exceptions(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "tools.py"), "w") as f:
                f.write(textwrap.dedent("""
                    import asyncio
                    from pysandboxes import sandbox
                    @sandbox
                    def tool(x):
                        print("tool says", x)
                        return 42
                    @sandbox
                    async def atool(x):
                        await asyncio.sleep(0.01)
                        return x * 2
                    @sandbox
                    def boom():
                        raise KeyError("remote")
                """))
            with open(os.path.join(d, "main.py"), "w") as f:
                f.write(textwrap.dedent(f"""
                    import asyncio, sys
                    sys.path.insert(0, {str(support.PYDIR)!r})
                    from pysandboxes import sandboxes
                    import tools
                    with sandboxes():
                        print(tools.tool(1))
                        try:
                            tools.boom()
                        except KeyError as e:
                            print("caught", e)
                        async def many():
                            return await asyncio.gather(*[tools.atool(i) for i in range(8)])
                        print(asyncio.run(many()))
                """))
            with open(os.path.join(d, ".py-sandboxes"), "w") as f:
                f.write(f"expose-ro={d}\nexpose-ro={support.PYDIR}\npython-import=*\n"
                        "python-api=ALLOW:threads\n")
            import subprocess

            out = subprocess.run([support.PYTHON, "main.py"], cwd=d, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines(), ["tool says 1", "42", "caught 'remote'",
                                                   "[0, 2, 4, 6, 8, 10, 12, 14]"])


if __name__ == "__main__":
    unittest.main()
