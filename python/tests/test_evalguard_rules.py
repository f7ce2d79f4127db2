"""eval-* rules: groups, node names, DENY, patterns, scalars, closest-match errors."""
from __future__ import annotations

import ast
import os
import unittest
from pathlib import Path

from evalguard_corpus import support
from pysandboxes import evalguard, exceptions
from pysandboxes.evalguard import rules


def lines(*text):
    return rules.profiles_from_lines(list(text), "test.py-sandboxes")


class ListKeys(unittest.TestCase):
    def test_groups_match_the_c_side_list(self):
        """The supervisor's parser and learner read rules/eval-syntax-groups.in:
        a group that differs there would learn or accept other nodes."""
        path = Path(os.environ.get("SB_TOP_SRCDIR", Path(__file__).resolve().parents[2]))
        groups = {}
        for line in (path / "rules" / "eval-syntax-groups.in").read_text().splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                name, *nodes = line.split()
                groups[name] = tuple(nodes)
        self.assertEqual(groups, rules.SYNTAX_GROUPS)

    def test_every_syntax_group_expands_to_its_nodes(self):
        for group, nodes in rules.SYNTAX_GROUPS.items():
            with self.subTest(group=group):
                profiles, errors, _ = lines(f"eval-syntax={group}")
                self.assertEqual(errors, [])
                p = profiles[""]
                for node in nodes:
                    self.assertTrue(p.syntax.allows(node), node)
                others = set(rules.GROUP_OF_NODE) - set(nodes)
                self.assertFalse(any(p.syntax.allows(n) for n in others))

    def test_every_node_name_of_this_interpreter_is_a_token(self):
        for name, value in vars(ast).items():
            if isinstance(value, type) and issubclass(value, ast.AST) and name in vars(__import__("_ast")):
                with self.subTest(node=name):
                    profiles, errors, _ = lines(f"eval-syntax={name}")
                    self.assertEqual(errors, [])
                    self.assertTrue(profiles[""].syntax.allows(name))

    def test_core_is_always_allowed_and_nothing_else(self):
        p = lines("eval-timeout=2s")[0][""]
        for node in rules.CORE_NODES:
            self.assertTrue(p.syntax.allows(node))
        for node in ("BinOp", "Call", "While", "Lambda", "Import"):
            self.assertFalse(p.syntax.allows(node))

    def test_closest_match_on_unknown_syntax_token(self):
        _, errors, _ = lines("eval-syntax=lop")
        self.assertEqual(len(errors), 1)
        self.assertIn("test.py-sandboxes(1)", errors[0])
        self.assertIn("unknown syntax token 'lop', closest known token is 'loop'", errors[0])
        _, errors, _ = lines("eval-syntax=Whlie")
        self.assertIn("closest known token is 'While'", errors[0])
        _, errors, _ = lines("eval-syntax=zzzqqq")
        self.assertIn("unknown syntax token 'zzzqqq'.", errors[0])

    def test_closest_match_on_unknown_key(self):
        _, errors, _ = lines("eval-timout=2s")
        self.assertIn("unknown key 'eval-timout', closest known token is 'eval-timeout'", errors[0])

    def test_deny_wins_whatever_the_order(self):
        for order in (("eval-syntax=arith", "eval-syntax=DENY:BinOp"),
                      ("eval-syntax=DENY:BinOp", "eval-syntax=arith")):
            p = lines(*order)[0][""]
            self.assertFalse(p.syntax.allows("BinOp"))
            self.assertTrue(p.syntax.allows("UnaryOp"))

    def test_patterns_and_their_refusal_on_syntax(self):
        p = lines("eval-attribute=get*, is*", "eval-attribute=DENY:get_secret")[0][""]
        self.assertTrue(p.attribute.allows("get"))
        self.assertTrue(p.attribute.allows("isdigit"))
        self.assertFalse(p.attribute.allows("get_secret"))
        self.assertFalse(p.attribute.allows("forget"))
        _, errors, _ = lines("eval-syntax=Bin*")
        self.assertIn("a pattern is not accepted on eval-syntax", errors[0])
        _, _, warnings = lines("eval-attribute=g*")
        self.assertTrue(any("short pattern" in w for w in warnings))

    def test_glob(self):
        for pattern, name, expected in (("a*c", "abc", True), ("a*c", "abd", False), ("*", "x", True),
                                        ("to_*", "to_csv", True), ("*_x*y", "a_xzy", True),
                                        ("ab*ba", "aba", False), ("*ab", "b", False)):
            self.assertEqual(rules.glob_match(pattern, name), expected, (pattern, name))

    def test_attribute_groups_and_format(self):
        p = lines("eval-attribute=str-methods")[0][""]
        self.assertTrue(p.attribute.allows("split"))
        self.assertFalse(p.attribute.allows("format"))
        self.assertFalse(p.attribute.allows("format_map"))
        p = lines("eval-attribute=*")[0][""]
        self.assertFalse(p.attribute.allows("format"), "a pattern never grants format")
        profiles, errors, warnings = lines("eval-attribute=format")
        self.assertTrue(profiles[""].attribute.allows("format"))
        self.assertTrue(any("checked at run time" in w for w in warnings))
        for group in rules.ATTRIBUTE_GROUPS:
            self.assertEqual(lines(f"eval-attribute={group}")[1], [])
        self.assertTrue(lines("eval-attribute=date-methods")[0][""].attribute.allows("isoformat"))

    def test_sensitive_call_warns(self):
        _, _, warnings = lines("eval-call=getattr, len")
        self.assertEqual(len(warnings), 1)
        self.assertIn("eval-call=getattr", warnings[0])

    def test_reserved_prefix_and_deny_inside_a_list(self):
        _, errors, _ = lines("eval-magic=__sb_getattr__")
        self.assertIn("reserved", errors[0])
        _, errors, _ = lines("eval-call=len, DENY:open")
        self.assertIn("DENY: applies to a whole line", errors[0])
        _, errors, _ = lines("eval-call=len,,sum")
        self.assertIn("empty target", errors[0])


class ScalarKeys(unittest.TestCase):
    def test_units_and_separators(self):
        p = lines("eval-timeout=250ms", "eval-max-alloc=1.5MB", "eval-max-iterations=100_000",
                  "eval-max-call-depth=7", "eval-max-depth=9", "eval-max-nodes=1_000",
                  "eval-max-leaked-threads=0", "eval-namespace=closed")[0][""]
        self.assertEqual(p.timeout_ms, 250)
        self.assertEqual(p.max_alloc, 1_500_000)
        self.assertEqual(p.max_iterations, 100_000)
        self.assertEqual((p.max_call_depth, p.max_depth, p.max_nodes, p.max_leaked_threads), (7, 9, 1000, 0))
        self.assertEqual(p.namespace, "closed")
        self.assertEqual(lines("eval-timeout=2")[0][""].timeout_ms, 2000)
        self.assertEqual(lines("eval-timeout=1m")[0][""].timeout_ms, 60000)
        self.assertEqual(lines("eval-max-alloc=2KB")[0][""].max_alloc, 2000)

    def test_defaults(self):
        p = lines("eval-syntax=arith")[0][""]
        self.assertEqual((p.namespace, p.timeout_ms, p.max_iterations, p.max_call_depth, p.max_depth, p.max_nodes,
                          p.max_alloc, p.max_leaked_threads),
                         ("adaptive", 5000, 1_000_000, 20, 20, 5000, 10_000_000, 4))

    def test_errors(self):
        _, errors, _ = lines("eval-timeout=2s", "eval-timeout=3s")
        self.assertIn("eval-timeout is set twice in this profile (already at line 1): a scalar is not a set.",
                      errors[0])
        _, errors, _ = lines("eval-timeout=DENY:5s")
        self.assertIn("`DENY:` and patterns apply to list keys only", errors[0])
        _, errors, _ = lines("eval-namespace=open")
        self.assertIn("unknown mode 'open', expected one of ['adaptive', 'closed', 'caller']", errors[0])
        _, errors, _ = lines("eval-max-iterations=5s")
        self.assertTrue(errors)

    def test_named_profiles_are_independent(self):
        profiles, errors, _ = lines("eval-syntax=arith, compare, loop", "eval-timeout=5s",
                                    "eval-syntax:llm=arith", "eval-timeout:llm=2s", "eval-namespace:llm=closed")
        self.assertEqual(errors, [])
        llm = profiles["llm"]
        self.assertTrue(llm.syntax.allows("BinOp"))
        self.assertFalse(llm.syntax.allows("While"), "no inheritance from the default profile")
        self.assertEqual((llm.timeout_ms, llm.namespace, llm.label), (2000, "closed", "<eval:llm>"))
        self.assertEqual(profiles[""].timeout_ms, 5000)
        self.assertEqual(lines("eval-timeout:a=1s", "eval-timeout:b=1s")[1], [])


class Section(support.GuardTest):
    def test_section_as_the_supervisor_sends_it(self):
        sec = support.section(syntax=["arith", "DENY:Pow"], call=["len"], timeout_ms=1500, imports=["json.*"],
                              named={"calc": {"syntax": ["compare"], "namespace": "closed"}})
        profiles, errors, _ = rules.profiles_from_section(sec)
        self.assertEqual(errors, [])
        self.assertTrue(profiles[""].syntax.allows("BinOp"))
        self.assertFalse(profiles[""].syntax.allows("Pow"))
        self.assertEqual(profiles[""].timeout, 1.5)
        self.assertTrue(profiles["calc"].syntax.allows("Compare"))
        self.assertFalse(profiles["calc"].syntax.allows("BinOp"))
        self.assertTrue(profiles[""].declared)
        self.assertTrue(profiles[""].imports.allows("json.decoder"))
        self.assertFalse(profiles["calc"].imports.allows("json.decoder"))

    def test_bad_section_is_a_config_error(self):
        sec = support.section(syntax=["lop"])
        self.assertIn("closest known token is 'loop'", evalguard.config_error(sec, False))
        with self.assertRaises(exceptions.ConfigSyntaxError) as cm:
            evalguard.install(sec, mode="enforce", dynamic_code_allowed=False, exc=exceptions)
        self.assertIn("Syntax error in config files.", str(cm.exception))
        sec = support.section(max_nodes=-1)
        self.assertTrue(evalguard.config_error(sec, False))

    def test_eval_rules_with_dynamic_code_grant_is_refused(self):
        sec = support.section(syntax=["arith"])
        self.assertEqual(evalguard.config_error(sec, True), evalguard.CONFLICT)
        with self.assertRaises(exceptions.ConfigSyntaxError) as cm:
            evalguard.install(sec, mode="enforce", dynamic_code_allowed=True, exc=exceptions)
        self.assertIn("dynamic-code", str(cm.exception))
        self.assertIsNone(evalguard.config_error(support.section(present=False), True))


if __name__ == "__main__":
    unittest.main()
