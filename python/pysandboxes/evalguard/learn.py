"""Learning (and auditing) of what evaluated code needed (reference §3, eval part).

While learning, an evaluation runs with the widened sub-language and every
construct outside the profile is recorded: syntax nodes, free names read from
the builtins, attributes and dunders (also those read at run time through
``getattr`` or a format template), imported modules.  Each new fact is sent
once to the supervisor, which writes the ``<learning_guard_eval>`` block;
:func:`rule_lines` is the reference of that block's spelling.
"""
from __future__ import annotations

import os

import _thread

from .rules import SYNTAX_GROUPS

KEYS = ("eval-syntax", "eval-import", "eval-call", "eval-attribute", "eval-magic")
RUNTIME_OBSERVED = ("eval-attribute", "eval-magic")


def _safe(send, msg: dict) -> None:
    try:
        send(msg)
    except Exception:  # reporting must never break the program
        pass


class Reporter:
    """Sends eval facts to the supervisor, each once (refusals: once per place)."""

    MAX_DENIALS = 10000

    def __init__(self, send, mode: str) -> None:
        self.send = send
        self.mode = mode
        self.cwd = os.getcwd() + os.sep
        self.sent: set = set()
        self.sites: set = set()
        self.denials = 0

    def where(self, frame) -> tuple[str, str]:
        """(``file:line in func()``, ``file:line``) of the frame, cwd-relative."""
        if frame is None:
            return "", ""
        code = frame.f_code
        name = code.co_filename
        if name.startswith(self.cwd):
            name = name[len(self.cwd):]
        site = f"{name}:{frame.f_lineno}"
        return f"{site} in {code.co_name}()", site

    def _base(self, profile_name: str, verdict: str, frame) -> dict:
        pyloc, site = self.where(frame)
        msg = {"kind": "eval", "name": f"eval:{profile_name}" if profile_name else "eval",
               "profile": profile_name, "verdict": verdict, "pid": os.getpid(),
               "tid": _thread.get_native_id()}
        if pyloc:
            msg["pyloc"] = pyloc
            msg["site"] = site
        return msg

    def features(self, profile_name: str, observed: dict, frame, context_site: bool = False) -> None:
        """Learned / would-deny features of one evaluation (only new ones)."""
        if self.send is None:
            return
        new: dict[str, list[str]] = {}
        for key, tokens in observed.items():
            for tok in sorted(tokens):
                mark = (profile_name, key, tok)
                if mark not in self.sent:
                    self.sent.add(mark)
                    new.setdefault(key, []).append(tok)
        msg = self._base(profile_name, "would-deny", frame)
        if context_site and msg.get("site") and (profile_name, msg["site"]) not in self.sites:
            self.sites.add((profile_name, msg["site"]))
            msg["context_site"] = msg["site"]
        elif not new:
            return
        msg["features"] = new
        _safe(self.send, msg)

    def denied(self, profile_name: str, frame, observed: dict | None = None, reason: str = "") -> None:
        """An evaluation refused (enforce mode), once per place and facts."""
        if self.send is None or self.denials >= self.MAX_DENIALS:
            return
        msg = self._base(profile_name, "denied", frame)
        feats = {k: sorted(v) for k, v in (observed or {}).items()}
        mark = (profile_name, msg.get("pyloc", ""), reason, tuple(sorted((k, tuple(v)) for k, v in feats.items())))
        if mark in self.sent:
            return
        self.sent.add(mark)
        self.denials += 1
        if feats:
            msg["features"] = feats
        if reason:
            msg["reason"] = reason
        _safe(self.send, msg)

    def caller_site(self, profile_name: str, frame) -> None:
        """A bare evaluation that reads or binds names of the caller's scope:
        only ``eval-namespace=caller`` keeps that working (once per site)."""
        if self.send is None:
            return
        msg = self._base(profile_name, "would-deny", frame)
        site = msg.get("site")
        if not site or ("caller", profile_name, site) in self.sent:
            return
        self.sent.add(("caller", profile_name, site))
        msg["caller_site"] = site
        _safe(self.send, msg)

    def context(self, profile_name: str, frame, findings: list[dict]) -> None:
        if self.send is None or not findings:
            return
        msg = self._base(profile_name, "allowed", frame)
        msg["context"] = findings
        _safe(self.send, msg)

    def api(self, qualname: str, verdict: str, frame) -> None:
        """An eval/exec/compile call refused as dynamic-code (no eval-* rule)."""
        if self.send is None:
            return
        pyloc, _site = self.where(frame)
        mark = ("api", qualname, verdict, pyloc)
        if mark in self.sent or self.denials >= self.MAX_DENIALS:
            return
        self.sent.add(mark)
        self.denials += verdict == "denied"
        msg = {"kind": "api", "name": qualname, "verdict": verdict, "category": "dynamic-code",
               "pid": os.getpid(), "tid": _thread.get_native_id()}
        if pyloc:
            msg["pyloc"] = pyloc
        _safe(self.send, msg)


def condense_syntax(nodes) -> list[str]:
    """Group names for the groups whose every node was seen, then the rest:
    learning never grants more than it observed."""
    remaining = set(nodes)
    groups = []
    for group, members in SYNTAX_GROUPS.items():
        if set(members) <= remaining:
            groups.append(group)
            remaining -= set(members)
    return sorted(groups) + sorted(remaining)


def rule_lines(features: dict, profile_name: str = "", context_sites=()) -> list[str]:
    """The ``<learning_guard_eval>`` lines for observed features, never a pattern.

    `features` maps a list key to the tokens seen; `context_sites` are the call
    sites whose own namespace was honoured (adaptive): eval-call was not
    consulted there, so a comment takes the place of its line."""
    suffix = f":{profile_name}" if profile_name else ""
    lines = []
    for key in KEYS:
        tokens = set(features.get(key, ()))
        if key == "eval-call" and context_sites:
            # Upstream drops the eval-call line here; bare evaluations elsewhere
            # still need it, so it follows the comment when tokens were seen.
            lines.append("# eval-call below is for the other evaluations: the namespace came from the call site"
                         if tokens else "# eval-call not emitted: the namespace came from the call site")
            lines.append(f"#   ({', '.join(sorted(context_sites))}). Set eval-namespace=closed to declare it here.")
        if not tokens:
            continue
        if key == "eval-attribute" and tokens & {"format", "format_map"}:
            lines.append('# Prefer an f-string (f"{x}") to str.format(): its attribute reads are checked')
            lines.append("#   statically, where a format template is only checked at run time.")
        values = condense_syntax(tokens) if key == "eval-syntax" else sorted(tokens)
        line = f"{key}{suffix}={', '.join(values)}"
        if key in RUNTIME_OBSERVED:
            line += "                    # ⚠ runtime-observed"
        lines.append(line)
    return lines
