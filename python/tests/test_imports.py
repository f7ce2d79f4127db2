"""python-import=: decisions of the import guard (reference §2.6)."""
from __future__ import annotations

import textwrap
import unittest

from support import rules, run_agent


def attempt(*modules: str) -> str:
    """A program importing each module, printing OK or the refusal."""
    return textwrap.dedent(f"""
        for name in {list(modules)!r}:
            try:
                __import__(name)
                print(name, 'OK')
            except ImportError as e:
                print(name, type(e).__name__, e)
    """)


class Enforce(unittest.TestCase):
    def test_refusal_message_and_class(self) -> None:
        run = run_agent(["-c", "import colorsys\nprint('IMPORTED')"], rules(imports="json"))
        self.assertEqual(run.returncode, 1)
        self.assertNotIn("IMPORTED", run.stdout)
        self.assertIn("RuleModuleNotFoundError: Module named 'colorsys' is not allowed by a rule",
                      run.stderr)
        denied = run.of("import")
        self.assertEqual([(m["name"], m["verdict"]) for m in denied], [("colorsys", "denied")])
        self.assertEqual(denied[0]["pyloc"], "<string>:1 in <module>()")

    def test_decisions(self) -> None:
        code = attempt("colorsys", "wave", "json.decoder", "xxsubtype", "__hello__", "asyncio",
                       "pysandboxes.unpickle", "nonexistent_mod_xyz")
        run = run_agent(["-c", code], rules(imports="colorsys,json,xml.dom"))
        self.assertEqual(run.returncode, 0, run.stderr)
        out = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
        self.assertEqual(out["colorsys"], "OK")
        self.assertEqual(out["wave"], "RuleModuleNotFoundError Module named 'wave' is not allowed by a rule")
        self.assertEqual(out["json.decoder"], "OK")  # the top-level name; what json imports comes with it
        self.assertIn("'xxsubtype' is not allowed", out["xxsubtype"])  # a builtin module
        self.assertIn("'__hello__' is not allowed", out["__hello__"])  # a frozen module
        self.assertEqual(out["asyncio"], "OK")                       # core, with what it loads
        self.assertEqual(out["pysandboxes.unpickle"], "OK")          # always allowed
        self.assertIn("'nonexistent_mod_xyz' is not allowed", out["nonexistent_mod_xyz"])

    def test_import_module_is_judged_too(self) -> None:
        # importlib.import_module raises no `import` audit event.
        run = run_agent(["-c", "import importlib; importlib.import_module('colorsys')"],
                        rules(imports="json,importlib"))
        self.assertIn("Module named 'colorsys' is not allowed", run.stderr)

    def test_dotted_entries_never_match(self) -> None:
        run = run_agent(["-c", "import xml.dom"], rules(imports="xml.dom"))
        self.assertIn("Module named 'xml' is not allowed", run.stderr)

    def test_star_allows_everything(self) -> None:
        run = run_agent(["-c", "import colorsys, wave, xxsubtype; print('OK')"], rules(imports="*"))
        self.assertEqual((run.returncode, run.stdout, run.of("import")), (0, "OK\n", []))

    def test_empty_list_denies_all_but_core(self) -> None:
        run = run_agent(["-c", "import asyncio; print('A')\nimport json"], rules(imports=""))
        self.assertEqual(run.stdout, "A\n")
        self.assertIn("Module named 'json'", run.stderr)

    def test_removing_the_finder_does_not_help(self) -> None:
        code = textwrap.dedent("""
            import sys
            sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != 'pysandboxes.guards.imports']
            import colorsys
        """)
        run = run_agent(["-c", code], rules(imports="sys"))
        self.assertIn("Module named 'colorsys' is not allowed", run.stderr)

    def test_a_finder_put_first_keeps_its_place(self) -> None:
        # insert(0) then del [0] is how programs and test suites add and
        # remove a finder: the second must remove theirs, not ours, and
        # while theirs is first an import is still judged.
        code = textwrap.dedent("""
            import sys
            class Mine:
                def find_spec(self, name, path=None, target=None):
                    return None
            mine = Mine()
            sys.meta_path.insert(0, mine)
            import json
            print(sys.meta_path[0] is mine)
            try:
                import colorsys
            except ImportError as e:
                print(type(e).__name__)
            del sys.meta_path[0]
            import json.decoder
            print(any(f is mine for f in sys.meta_path),
                  any(type(f).__module__ == 'pysandboxes.guards.imports' for f in sys.meta_path))
        """)
        run = run_agent(["-c", code], rules(imports="sys,json"))
        self.assertEqual(run.stdout.split(), ["True", "RuleModuleNotFoundError", "False", "True"], run.stderr)

    def test_optional_import_degrades_gracefully(self) -> None:
        code = "try:\n import colorsys\nexcept ImportError:\n colorsys = None\nprint(colorsys)"
        run = run_agent(["-c", code], rules(imports="json"))
        self.assertEqual((run.returncode, run.stdout), (0, "None\n"))


class Learn(unittest.TestCase):
    def test_records_what_loaded_and_is_not_allowed(self) -> None:
        code = textwrap.dedent("""
            import colorsys, json
            try:
                import nonexistent_optional_xyz
            except ImportError:
                pass
            import asyncio
            print('DONE')
        """)
        run = run_agent(["-c", code], rules(mode="learn", imports="json"))
        self.assertEqual((run.returncode, run.stdout), (0, "DONE\n"), run.stderr)
        names = run.names("import")
        self.assertIn("colorsys", names)
        self.assertNotIn("json", names)                      # allowed already
        self.assertNotIn("nonexistent_optional_xyz", names)  # missing optional module
        self.assertFalse({"asyncio", "selectors", "socket"} & names)  # core and what it loads
        self.assertEqual({m["verdict"] for m in run.of("import")}, {"would-deny"})
        self.assertEqual(len(run.of("import")), len(names))  # each name once

    def test_audit_lets_through(self) -> None:
        run = run_agent(["-c", "import colorsys; print('IN')"], rules(mode="audit", imports="json"))
        self.assertEqual(run.stdout, "IN\n")
        self.assertEqual([(m["name"], m["verdict"]) for m in run.of("import")], [("colorsys", "would-deny")])


if __name__ == "__main__":
    unittest.main()
