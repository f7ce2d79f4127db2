"""Learning and auditing of eval features (reference §3, eval part)."""
from __future__ import annotations

import unittest
import warnings

from evalguard_corpus import support
from pysandboxes import evalguard, exceptions
from pysandboxes.evalguard import learn


def features(sent: list[dict]) -> dict:
    """Every feature sent, merged: key -> set of tokens."""
    out: dict = {}
    for m in sent:
        if m.get("kind") == "eval":
            for k, toks in m.get("features", {}).items():
                out.setdefault(k, set()).update(toks)
    return out


class Learning(support.GuardTest):
    def test_widened_run_reports_what_was_needed(self):
        self.install(mode="learn")
        src = ("def f(s):\n    return s.upper() + str(len(s))\n"
               "r = [f(w) for w in words if w]\n"
               "getattr('a b', 'spl' + 'it')()\n"
               "import json\n"
               "r")
        result = evalguard.guarded_eval(src, names={"words": ["ab", ""]})
        self.assertEqual(result, ["AB2"])
        f = features(self.sent)
        self.assertTrue({"FunctionDef", "Return", "arguments", "arg", "BinOp", "ListComp", "comprehension",
                         "Assign", "Import", "alias"} <= f["eval-syntax"], f)
        self.assertEqual(f["eval-call"], {"str", "len", "getattr"})
        self.assertEqual(f["eval-attribute"], {"upper", "split"}, "run-time reads are observed too")
        self.assertEqual(f["eval-import"], {"json"})
        msg = [m for m in self.sent if m.get("features")][0]
        self.assertEqual((msg["kind"], msg["name"], msg["verdict"]), ("eval", "eval", "would-deny"))
        self.assertIn("test_evalguard_learn.py:", msg["pyloc"])

    def test_each_fact_is_sent_once(self):
        self.install(mode="learn")
        evalguard.guarded_eval("1 + 1")
        n = len(self.sent)
        evalguard.guarded_eval("2 + 2")
        self.assertEqual(len(self.sent), n)
        evalguard.guarded_eval("2 < 3")
        self.assertEqual(features(self.sent[n:]), {"eval-syntax": {"Compare"}})

    def test_only_what_the_profile_lacks(self):
        self.install(mode="learn", syntax=["arith"], call=["len"])
        evalguard.guarded_eval("len('ab') + abs(-1)")
        self.assertEqual(features(self.sent), {"eval-call": {"abs"}})

    def test_without_eval_rules_learning_writes_eval_rules(self):
        self.install(mode="learn", present=False)
        self.assertEqual(eval("40 + 2"), 42)
        self.assertEqual(features(self.sent), {"eval-syntax": {"BinOp"}})
        self.assertFalse([m for m in self.sent if m["kind"] == "api"], "not the dynamic-code escape hatch")

    def test_hard_refusals_and_budgets_still_hold(self):
        self.install(mode="learn", max_iterations=100)
        self.assertRejected(lambda: eval("__sb_tick__"), "reserved prefix")
        self.assertRejected(lambda: eval("(i for i in ()).gi_frame"), "frame capture")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertDenied(lambda: eval("getattr(g, 'gi_frame')", {"g": (i for i in ())}), "Frame capture")
        self.assertInterrupted(lambda: exec("while True:\n    pass"), "eval-max-iterations=100")

    def test_named_profile_features(self):
        self.install(mode="learn", named={"llm": {"namespace": "closed"}})
        evalguard.guarded_eval("x < 1", profile="llm", names={"x": 0})
        msg = [m for m in self.sent if m.get("features")][0]
        self.assertEqual((msg["name"], msg["profile"]), ("eval:llm", "llm"))

    def test_context_site_is_reported(self):
        self.install(mode="learn")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eval("helper(1)", {"helper": abs})
        sites = [m["context_site"] for m in self.sent if "context_site" in m]
        self.assertEqual(len(sites), 1)
        self.assertIn("test_evalguard_learn.py:", sites[0])

    def test_audit_runs_widened_and_reports(self):
        self.install(mode="audit")
        self.assertEqual(eval("'ab'.upper()"), "AB")
        self.assertEqual(features(self.sent), {"eval-attribute": {"upper"}})
        self.assertEqual(self.sent[-1]["verdict"], "would-deny")

    def test_enforce_reports_refusals(self):
        self.install()
        with self.assertRaises(exceptions.EvalSyntaxRejected):
            eval("1 + 1")
        self.assertEqual(self.sent[-1]["verdict"], "denied")
        self.assertEqual(self.sent[-1]["features"], {"eval-syntax": ["BinOp"]})


class RuleLines(unittest.TestCase):
    def test_groups_only_when_every_node_was_seen(self):
        self.assertEqual(learn.condense_syntax({"BinOp", "UnaryOp", "Compare", "While"}), ["arith", "Compare", "While"])
        lines = learn.rule_lines({"eval-syntax": {"BinOp", "UnaryOp", "Lambda"}, "eval-call": {"len", "sum"},
                                  "eval-attribute": {"split"}, "eval-magic": {"__name__"}, "eval-import": {"json"}})
        self.assertEqual(lines[0], "eval-syntax=arith, Lambda")
        self.assertEqual(lines[1], "eval-import=json")
        self.assertEqual(lines[2], "eval-call=len, sum")
        self.assertTrue(lines[3].startswith("eval-attribute=split"))
        self.assertTrue(lines[3].endswith("# ⚠ runtime-observed"))
        self.assertTrue(lines[4].startswith("eval-magic=__name__"))

    def test_context_sites_replace_eval_call(self):
        lines = learn.rule_lines({"eval-syntax": {"Call"}}, context_sites=["tools.py:66"])
        self.assertEqual(lines[1:], ["# eval-call not emitted: the namespace came from the call site",
                                     "#   (tools.py:66). Set eval-namespace=closed to declare it here."])

    def test_context_sites_keep_the_calls_of_bare_evaluations(self):
        # Upstream drops eval-call here, and an enforced re-run then refuses
        # len() in the bare eval() elsewhere.
        lines = learn.rule_lines({"eval-call": {"len"}}, context_sites=["tools.py:66"])
        self.assertEqual(lines, ["# eval-call below is for the other evaluations: the namespace came from the call site",
                                 "#   (tools.py:66). Set eval-namespace=closed to declare it here.",
                                 "eval-call=len"])

    def test_named_profile_and_format_advice(self):
        lines = learn.rule_lines({"eval-attribute": {"format"}}, profile_name="llm")
        self.assertTrue(lines[0].startswith('# Prefer an f-string'))
        self.assertTrue(lines[2].startswith("eval-attribute:llm=format"))


if __name__ == "__main__":
    unittest.main()
