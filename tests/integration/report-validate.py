#!/usr/bin/env python3
"""Strict validators for the three --report formats (no network, no PyPI).

* SARIF 2.1.0: a structural validator written from the OASIS specification
  (sarif-v2.1.0-os, and its JSON schema's required properties, types, enums
  and "additionalProperties": false on every object except property bags)
  for the objects python-sb writes, plus the spec's cross-references (ruleIndex
  names the rule of ruleId, uriBaseId names an originalUriBaseIds entry).
* JUnit XML: parsed with xml.etree, checked against the shape of the common
  JUnit schema (Jenkins/Ant junit-10.xsd): element nesting and order, required
  attributes, numeric types, counts that add up.
* JSON: json.loads with duplicate keys and NaN refused, then python-sb's own
  schema (doc/user-guide.md, "Reports").

Used as a module by the report-*.py and mcp-*.py tests (load it with
load_validator()) and as a command by tests/unit/check_report:
``report-validate.py FILE...`` exits 0 when every file is valid, 1 with the
errors listed otherwise.
"""
from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Dict, List

# ---- helpers --------------------------------------------------------------------------

DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
# RFC 3986 URI-reference: no spaces or control characters, '%' only as %XX.
URI_REF = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
ABS_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


class Errors(list):
    def add(self, where: str, msg: str) -> None:
        self.append(f"{where}: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _strict_json(text: str) -> Any:
    def no_dupes(pairs: list) -> dict:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys {sorted(k for k in keys if keys.count(k) > 1)}")
        return dict(pairs)

    def no_constant(c: str) -> None:
        raise ValueError(f"non-JSON constant {c}")

    return json.loads(text, object_pairs_hook=no_dupes, parse_constant=no_constant)


# ---- SARIF 2.1.0 ---------------------------------------------------------------------------

# Every property each object may carry (the schema's "properties"; anything
# else is an error, as "additionalProperties": false makes it), the required
# ones, and the checks of the values python-sb uses.
SARIF_OBJECTS: Dict[str, Dict[str, Any]] = {
    "sarifLog": {"allowed": {"$schema", "version", "runs", "inlineExternalProperties", "properties"},
                 "required": {"version", "runs"}},
    "run": {"allowed": {"tool", "invocations", "conversion", "language", "versionControlProvenance",
                        "originalUriBaseIds", "artifacts", "logicalLocations", "graphs", "results",
                        "automationDetails", "runAggregates", "baselineGuid", "redactionTokens",
                        "defaultEncoding", "defaultSourceLanguage", "newlineSequences", "columnKind",
                        "externalPropertyFileReferences", "threadFlowLocations", "taxonomies", "addresses",
                        "translations", "policies", "webRequests", "webResponses", "specialLocations",
                        "properties"},
            "required": {"tool"}},
    "tool": {"allowed": {"driver", "extensions", "properties"}, "required": {"driver"}},
    "toolComponent": {"allowed": {"guid", "name", "organization", "product", "productSuite", "shortDescription",
                                  "fullDescription", "fullName", "version", "semanticVersion",
                                  "dottedQuadFileVersion", "releaseDateUtc", "downloadUri", "informationUri",
                                  "globalMessageStrings", "notifications", "rules", "taxa", "locations",
                                  "language", "contents", "isComprehensive", "localizedDataSemanticVersion",
                                  "minimumRequiredLocalizedDataSemanticVersion", "associatedComponent",
                                  "translationMetadata", "supportedTaxonomies", "properties"},
                      "required": {"name"}},
    "reportingDescriptor": {"allowed": {"id", "deprecatedIds", "guid", "deprecatedGuids", "name",
                                        "deprecatedNames", "shortDescription", "fullDescription",
                                        "messageStrings", "defaultConfiguration", "helpUri", "help",
                                        "relationships", "properties"},
                            "required": {"id"}},
    "multiformatMessageString": {"allowed": {"text", "markdown", "properties"}, "required": {"text"}},
    "reportingConfiguration": {"allowed": {"enabled", "level", "rank", "parameters", "properties"},
                               "required": set()},
    "invocation": {"allowed": {"commandLine", "arguments", "responseFiles", "startTimeUtc", "endTimeUtc",
                               "exitCode", "ruleConfigurationOverrides", "notificationConfigurationOverrides",
                               "toolExecutionNotifications", "toolConfigurationNotifications",
                               "exitCodeDescription", "exitSignalName", "exitSignalNumber",
                               "processStartFailureMessage", "executionSuccessful", "machine", "account",
                               "processId", "executableLocation", "workingDirectory", "environmentVariables",
                               "stdin", "stdout", "stderr", "stdoutStderr", "properties"},
                   "required": {"executionSuccessful"}},
    "artifactLocation": {"allowed": {"uri", "uriBaseId", "index", "description", "properties"},
                         "required": set()},
    "result": {"allowed": {"ruleId", "ruleIndex", "rule", "kind", "level", "message", "analysisTarget",
                           "locations", "guid", "correlationGuid", "occurrenceCount", "partialFingerprints",
                           "fingerprints", "stacks", "codeFlows", "graphs", "graphTraversals",
                           "relatedLocations", "suppressions", "baselineState", "rank", "attachments",
                           "hostedViewerUri", "workItemUris", "provenance", "fixes", "taxa", "webRequest",
                           "webResponse", "properties"},
               "required": {"message"}},
    "message": {"allowed": {"text", "markdown", "id", "arguments", "properties"}, "required": set()},
    "location": {"allowed": {"id", "physicalLocation", "logicalLocations", "message", "annotations",
                             "relationships", "properties"},
                 "required": set()},
    "physicalLocation": {"allowed": {"address", "artifactLocation", "region", "contextRegion", "properties"},
                         "required": set()},
    "region": {"allowed": {"startLine", "startColumn", "endLine", "endColumn", "charOffset", "charLength",
                           "byteOffset", "byteLength", "snippet", "message", "sourceLanguage", "properties"},
               "required": set()},
    "logicalLocation": {"allowed": {"name", "index", "fullyQualifiedName", "decoratedName", "parentIndex",
                                    "kind", "properties"},
                        "required": set()},
}

LEVELS = {"none", "note", "warning", "error"}
KINDS = {"notApplicable", "pass", "fail", "review", "open", "informational"}
LOGICAL_KINDS = {"function", "member", "module", "namespace", "parameter", "resource", "returnType", "type",
                 "variable", "object", "array", "property", "value", "element", "text", "attribute",
                 "comment", "declaration", "processingInstruction", "dtd", "entity"}


class Sarif:
    def __init__(self) -> None:
        self.err = Errors()

    def obj(self, v: Any, kind: str, where: str) -> bool:
        if not isinstance(v, dict):
            self.err.add(where, f"{kind} must be an object, not {type(v).__name__}")
            return False
        spec = SARIF_OBJECTS[kind]
        for key in v:
            if key not in spec["allowed"]:
                self.err.add(where, f"{kind} has no property {key!r} (additionalProperties: false)")
        for key in spec["required"]:
            if key not in v:
                self.err.add(where, f"{kind} lacks required property {key!r}")
        if "properties" in v:
            self.property_bag(v["properties"], where + ".properties")
        return True

    def string(self, v: Any, where: str, nonempty: bool = False) -> None:
        if not isinstance(v, str):
            self.err.add(where, f"must be a string, not {type(v).__name__}")
        elif nonempty and not v:
            self.err.add(where, "must not be empty")

    def integer(self, v: Any, where: str, minimum: int | None = None) -> None:
        if not _is_int(v):
            self.err.add(where, f"must be an integer, not {v!r}")
        elif minimum is not None and v < minimum:
            self.err.add(where, f"must be >= {minimum}, got {v}")

    def array(self, v: Any, where: str, unique: bool = False) -> list:
        if not isinstance(v, list):
            self.err.add(where, f"must be an array, not {type(v).__name__}")
            return []
        if unique:
            seen = [json.dumps(x, sort_keys=True) for x in v]
            if len(seen) != len(set(seen)):
                self.err.add(where, "items must be unique")
        return v

    def uri(self, v: Any, where: str, absolute: bool = False) -> None:
        self.string(v, where)
        if isinstance(v, str):
            if not URI_REF.match(v):
                self.err.add(where, f"not a valid URI reference: {v!r}")
            if absolute and not ABS_URI.match(v):
                self.err.add(where, f"must be an absolute URI: {v!r}")

    def property_bag(self, v: Any, where: str) -> None:
        if not isinstance(v, dict):
            self.err.add(where, "property bag must be an object")
            return
        if "tags" in v:
            for i, t in enumerate(self.array(v["tags"], where + ".tags", unique=True)):
                self.string(t, f"{where}.tags[{i}]")

    def message(self, v: Any, where: str, kind: str = "message") -> None:
        if self.obj(v, kind, where):
            if kind == "message" and "text" not in v and "id" not in v:
                self.err.add(where, "message needs text or id")
            for k in ("text", "markdown", "id"):
                if k in v:
                    self.string(v[k], f"{where}.{k}")

    def artifact_location(self, v: Any, where: str, bases: dict) -> None:
        if not self.obj(v, "artifactLocation", where):
            return
        if "uri" in v:
            self.uri(v["uri"], where + ".uri")
        if "uriBaseId" in v:
            self.string(v["uriBaseId"], where + ".uriBaseId")
            if v["uriBaseId"] not in bases:
                self.err.add(where, f"uriBaseId {v['uriBaseId']!r} is not in run.originalUriBaseIds")
            if isinstance(v.get("uri"), str) and ABS_URI.match(v["uri"]):
                self.err.add(where, "a uri with a uriBaseId must be relative")
        if "index" in v:
            self.integer(v["index"], where + ".index", -1)

    def physical(self, v: Any, where: str, bases: dict) -> None:
        if not self.obj(v, "physicalLocation", where):
            return
        if "address" not in v and "artifactLocation" not in v:
            self.err.add(where, "physicalLocation needs address or artifactLocation (anyOf)")
        if "artifactLocation" in v:
            self.artifact_location(v["artifactLocation"], where + ".artifactLocation", bases)
        if "region" in v:
            r = v["region"]
            if self.obj(r, "region", where + ".region"):
                for k in ("startLine", "startColumn", "endLine", "endColumn"):
                    if k in r:
                        self.integer(r[k], f"{where}.region.{k}", 1)
                if not any(k in r for k in ("startLine", "charOffset", "byteOffset")):
                    self.err.add(where + ".region", "region needs startLine, charOffset or byteOffset")

    def location(self, v: Any, where: str, bases: dict) -> None:
        if not self.obj(v, "location", where):
            return
        if "id" in v:
            self.integer(v["id"], where + ".id", -1)
        if "physicalLocation" in v:
            self.physical(v["physicalLocation"], where + ".physicalLocation", bases)
        for i, ll in enumerate(self.array(v.get("logicalLocations", []), where + ".logicalLocations")):
            w = f"{where}.logicalLocations[{i}]"
            if self.obj(ll, "logicalLocation", w):
                if "name" in ll:
                    self.string(ll["name"], w + ".name")
                if "kind" in ll and ll["kind"] not in LOGICAL_KINDS:
                    self.err.add(w, f"unknown logical location kind {ll['kind']!r}")
        if "message" in v:
            self.message(v["message"], where + ".message")

    def rules(self, driver: dict, where: str) -> list:
        out = []
        for i, rd in enumerate(self.array(driver.get("rules", []), where + ".rules")):
            w = f"{where}.rules[{i}]"
            if not self.obj(rd, "reportingDescriptor", w):
                out.append(None)
                continue
            self.string(rd.get("id"), w + ".id", nonempty=True)
            for k in ("shortDescription", "fullDescription", "help"):
                if k in rd:
                    self.message(rd[k], f"{w}.{k}", "multiformatMessageString")
            if "helpUri" in rd:
                self.uri(rd["helpUri"], w + ".helpUri", absolute=True)
            if "defaultConfiguration" in rd:
                dc = rd["defaultConfiguration"]
                if self.obj(dc, "reportingConfiguration", w + ".defaultConfiguration"):
                    if "level" in dc and dc["level"] not in LEVELS:
                        self.err.add(w + ".defaultConfiguration.level", f"not one of {sorted(LEVELS)}")
            out.append(rd.get("id"))
        ids = [x for x in out if x is not None]
        if len(ids) != len(set(ids)):
            self.err.add(where + ".rules", "rule ids must be unique")
        return out

    def tool(self, v: Any, where: str) -> list:
        if not self.obj(v, "tool", where):
            return []
        d = v.get("driver")
        w = where + ".driver"
        if not self.obj(d, "toolComponent", w):
            return []
        self.string(d.get("name"), w + ".name", nonempty=True)
        for k in ("version", "semanticVersion", "fullName", "organization"):
            if k in d:
                self.string(d[k], f"{w}.{k}")
        if "informationUri" in d:
            self.uri(d["informationUri"], w + ".informationUri", absolute=True)
        return self.rules(d, w)

    def invocation(self, v: Any, where: str) -> None:
        if not self.obj(v, "invocation", where):
            return
        if not isinstance(v.get("executionSuccessful"), bool):
            self.err.add(where + ".executionSuccessful", "must be a boolean")
        if "exitCode" in v:
            self.integer(v["exitCode"], where + ".exitCode")
        for k in ("startTimeUtc", "endTimeUtc"):
            if k in v and not (isinstance(v[k], str) and DATE_TIME.match(v[k])):
                self.err.add(f"{where}.{k}", f"not an RFC 3339 date-time: {v[k]!r}")
        if "workingDirectory" in v:
            self.artifact_location(v["workingDirectory"], where + ".workingDirectory", {})

    def result(self, v: Any, where: str, rules: list, bases: dict) -> None:
        if not self.obj(v, "result", where):
            return
        self.message(v.get("message"), where + ".message")
        if "ruleId" in v:
            self.string(v["ruleId"], where + ".ruleId", nonempty=True)
        if "ruleIndex" in v:
            self.integer(v["ruleIndex"], where + ".ruleIndex", -1)
            ri = v["ruleIndex"]
            if _is_int(ri) and ri >= 0:
                if ri >= len(rules):
                    self.err.add(where + ".ruleIndex", f"{ri} is past the {len(rules)} rules")
                elif "ruleId" in v and rules[ri] != v["ruleId"]:
                    self.err.add(where, f"ruleIndex {ri} names {rules[ri]!r}, ruleId is {v['ruleId']!r}")
        if "level" in v and v["level"] not in LEVELS:
            self.err.add(where + ".level", f"{v['level']!r} not one of {sorted(LEVELS)}")
        if "kind" in v and v["kind"] not in KINDS:
            self.err.add(where + ".kind", f"{v['kind']!r} not one of {sorted(KINDS)}")
        if v.get("kind", "fail") != "fail" and v.get("level", "none") != "none":
            self.err.add(where, "a level other than none needs kind fail")
        if "occurrenceCount" in v:
            self.integer(v["occurrenceCount"], where + ".occurrenceCount", 1)
        for k in ("partialFingerprints", "fingerprints"):
            if k in v:
                if not isinstance(v[k], dict):
                    self.err.add(f"{where}.{k}", "must be an object")
                else:
                    for fk, fv in v[k].items():
                        self.string(fv, f"{where}.{k}.{fk}")
        for k in ("locations", "relatedLocations"):
            for i, loc in enumerate(self.array(v.get(k, []), f"{where}.{k}")):
                self.location(loc, f"{where}.{k}[{i}]", bases)

    def run(self, v: Any, where: str) -> None:
        if not self.obj(v, "run", where):
            return
        rules = self.tool(v.get("tool"), where + ".tool")
        bases = v.get("originalUriBaseIds", {})
        if not isinstance(bases, dict):
            self.err.add(where + ".originalUriBaseIds", "must be an object")
            bases = {}
        for name, al in bases.items():
            w = f"{where}.originalUriBaseIds.{name}"
            self.artifact_location(al, w, {})
            u = al.get("uri") if isinstance(al, dict) else None
            if "uriBaseId" not in (al or {}) and isinstance(u, str):
                if not ABS_URI.match(u):
                    self.err.add(w, "a top-level base URI must be absolute")
                if not u.endswith("/"):
                    self.err.add(w, "a base URI must end with '/' (§3.14.14)")
        for i, inv in enumerate(self.array(v.get("invocations", []), where + ".invocations")):
            self.invocation(inv, f"{where}.invocations[{i}]")
        if "columnKind" in v and v["columnKind"] not in ("utf16CodeUnits", "unicodeCodePoints"):
            self.err.add(where + ".columnKind", "invalid")
        for i, res in enumerate(self.array(v.get("results", []), where + ".results")):
            self.result(res, f"{where}.results[{i}]", rules, bases)

    def log(self, doc: Any) -> Errors:
        if self.obj(doc, "sarifLog", "$"):
            if doc.get("version") != "2.1.0":
                self.err.add("$.version", f"must be \"2.1.0\", not {doc.get('version')!r}")
            if "$schema" in doc:
                self.uri(doc["$schema"], "$.$schema", absolute=True)
            for i, run in enumerate(self.array(doc.get("runs"), "$.runs")):
                self.run(run, f"$.runs[{i}]")
        return self.err


def validate_sarif(text: str) -> List[str]:
    try:
        doc = _strict_json(text)
    except ValueError as e:
        return [f"not JSON: {e}"]
    return list(Sarif().log(doc))


# ---- JUnit XML -----------------------------------------------------------------------------------

JUNIT_ATTRS = {
    "testsuites": ({"name", "tests", "failures", "errors", "disabled", "skipped", "time", "timestamp"}, set()),
    "testsuite": ({"name", "tests", "failures", "errors", "skipped", "disabled", "time", "timestamp",
                   "hostname", "id", "package", "file", "log", "url", "version"}, {"name", "tests"}),
    "properties": (set(), set()),
    "property": ({"name", "value"}, {"name", "value"}),
    "testcase": ({"name", "classname", "time", "assertions", "status", "class", "file", "line"}, {"name"}),
    "failure": ({"message", "type"}, set()),
    "error": ({"message", "type"}, set()),
    "skipped": ({"message"}, set()),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}
JUNIT_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
DECIMAL = re.compile(r"^\d+(\.\d+)?$")


def _junit_attrs(el: ET.Element, where: str, err: Errors) -> None:
    allowed, required = JUNIT_ATTRS[el.tag]
    for a in el.attrib:
        if a not in allowed:
            err.add(where, f"<{el.tag}> has no attribute {a!r}")
    for a in required:
        if a not in el.attrib:
            err.add(where, f"<{el.tag}> lacks required attribute {a!r}")
    for a in ("tests", "failures", "errors", "skipped", "disabled", "assertions"):
        if a in el.attrib and not el.attrib[a].isdigit():
            err.add(where, f"{a}={el.attrib[a]!r} is not a non-negative integer")
    if "time" in el.attrib and not DECIMAL.match(el.attrib["time"]):
        err.add(where, f"time={el.attrib['time']!r} is not a decimal")
    if "timestamp" in el.attrib and not JUNIT_TIMESTAMP.match(el.attrib["timestamp"]):
        err.add(where, f"timestamp={el.attrib['timestamp']!r} is not YYYY-MM-DDTHH:MM:SS")


def _junit_suite(suite: ET.Element, where: str, err: Errors) -> tuple:
    _junit_attrs(suite, where, err)
    order = {"properties": 0, "testcase": 1, "system-out": 2, "system-err": 3}
    last, cases, failures, errors = -1, 0, 0, 0
    for child in suite:
        w = f"{where}/{child.tag}"
        if child.tag not in order:
            err.add(w, f"<{child.tag}> is not allowed in <testsuite>")
            continue
        if order[child.tag] < last or (order[child.tag] == last and child.tag != "testcase"):
            err.add(w, f"<{child.tag}> out of order")
        last = order[child.tag]
        _junit_attrs(child, w, err)
        if child.tag == "properties":
            for p in child:
                if p.tag != "property":
                    err.add(w, f"<{p.tag}> in <properties>")
                else:
                    _junit_attrs(p, w + "/property", err)
        elif child.tag == "testcase":
            cases += 1
            for sub in child:
                if sub.tag not in ("failure", "error", "skipped", "system-out", "system-err"):
                    err.add(w, f"<{sub.tag}> is not allowed in <testcase>")
                    continue
                _junit_attrs(sub, f"{w}/{sub.tag}", err)
                failures += sub.tag == "failure"
                errors += sub.tag == "error"
    if suite.get("tests", "").isdigit() and int(suite.get("tests")) != cases:
        err.add(where, f"tests={suite.get('tests')} but {cases} <testcase>")
    if suite.get("failures", "0").isdigit() and int(suite.get("failures", "0")) != failures:
        err.add(where, f"failures={suite.get('failures')} but {failures} <failure>")
    if suite.get("errors", "0").isdigit() and int(suite.get("errors", "0")) != errors:
        err.add(where, f"errors={suite.get('errors')} but {errors} <error>")
    return cases, failures, errors


def validate_junit(data: bytes) -> List[str]:
    err = Errors()
    if not data.startswith(b"<?xml"):
        err.add("/", "no XML declaration")
    try:
        data.decode("utf-8")
        root = ET.fromstring(data)
    except (ET.ParseError, UnicodeDecodeError) as e:
        return [f"not well-formed XML: {e}"]
    if root.tag == "testsuite":
        _junit_suite(root, "/testsuite", err)
    elif root.tag == "testsuites":
        _junit_attrs(root, "/testsuites", err)
        totals = [0, 0, 0]
        for i, s in enumerate(root):
            if s.tag != "testsuite":
                err.add("/testsuites", f"<{s.tag}> is not allowed in <testsuites>")
                continue
            for k, n in enumerate(_junit_suite(s, f"/testsuites/testsuite[{i}]", err)):
                totals[k] += n
        for k, a in enumerate(("tests", "failures", "errors")):
            if root.get(a, "").isdigit() and int(root.get(a)) != totals[k]:
                err.add("/testsuites", f"{a}={root.get(a)} but the suites hold {totals[k]}")
    else:
        err.add("/", f"root element <{root.tag}> is neither <testsuites> nor <testsuite>")
    return list(err)


# ---- python-sb JSON ---------------------------------------------------------------------------

FAMILIES = {"file-read", "file-write", "unix-socket", "exec", "net-connect", "net-bind", "process", "env",
            "import", "python-api", "dns"}
JSON_TOP: Dict[str, Callable[[Any], bool]] = {
    "version": lambda v: v == 1,
    "tool": lambda v: isinstance(v, dict) and v.get("name") == "python-sb" and isinstance(v.get("version"), str),
    "start_time": lambda v: isinstance(v, str) and bool(DATE_TIME.match(v)),
    "exit_status": _is_int,
    "config": lambda v: v is None or isinstance(v, str),
    "cwd": lambda v: isinstance(v, str),
    "summary": lambda v: isinstance(v, dict),
    "violations": lambda v: isinstance(v, list),
}
JSON_ITEM: Dict[str, Callable[[Any], bool]] = {
    "family": lambda v: v in FAMILIES,
    "kind": lambda v: v in ("path", "net", "unix", "exec", "proc", "env", "import", "api", "dns"),
    "syscall": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, str) and bool(v),
    "verdict": lambda v: v in ("denied", "would-deny"),
    "count": lambda v: _is_int(v) and v >= 1,
    "denied": lambda v: _is_int(v) and v >= 0,
    "would_deny": lambda v: _is_int(v) and v >= 0,
    "from_eval": lambda v: isinstance(v, bool),
    "message": lambda v: isinstance(v, str) and bool(v),
}
JSON_ITEM_OPTIONAL: Dict[str, Callable[[Any], bool]] = {
    "protocol": lambda v: v in ("tcp", "udp", "unknown"),
    "category": lambda v: isinstance(v, str),
    "errno": lambda v: isinstance(v, str) and v.startswith("E"),
    "python": lambda v: isinstance(v, str),
    "file": lambda v: isinstance(v, str) and bool(v),
    "line": lambda v: _is_int(v) and v >= 1,
    "function": lambda v: isinstance(v, str),
    "tip": lambda v: isinstance(v, str) and bool(v),
    "rule": lambda v: isinstance(v, dict) and set(v) == {"file", "line", "text"} and _is_int(v["line"]),
}


def validate_json(text: str) -> List[str]:
    err = Errors()
    try:
        doc = _strict_json(text)
    except ValueError as e:
        return [f"not JSON: {e}"]
    if not isinstance(doc, dict):
        return ["$: the document must be an object"]
    for k, ok in JSON_TOP.items():
        if k not in doc:
            err.add("$", f"lacks {k!r}")
        elif not ok(doc[k]):
            err.add(f"$.{k}", f"invalid value {doc[k]!r}")
    s = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    for k in ("distinct", "events", "denied", "would_deny", "dropped_events"):
        if not (_is_int(s.get(k)) and s[k] >= 0):
            err.add("$.summary", f"{k} must be a non-negative integer")
    fam = s.get("families", {})
    if not isinstance(fam, dict) or any(f not in FAMILIES or not _is_int(n) for f, n in fam.items()):
        err.add("$.summary.families", "must map rule families to counts")
    items = doc.get("violations") if isinstance(doc.get("violations"), list) else []
    if _is_int(s.get("distinct")) and s["distinct"] != len(items):
        err.add("$.summary.distinct", f"{s['distinct']} but {len(items)} violations")
    for i, it in enumerate(items):
        w = f"$.violations[{i}]"
        if not isinstance(it, dict):
            err.add(w, "must be an object")
            continue
        for k, ok in JSON_ITEM.items():
            if k not in it:
                err.add(w, f"lacks {k!r}")
            elif not ok(it[k]):
                err.add(f"{w}.{k}", f"invalid value {it[k]!r}")
        for k, v in it.items():
            if k in JSON_ITEM:
                continue
            if k not in JSON_ITEM_OPTIONAL:
                err.add(w, f"unknown key {k!r}")
            elif not JSON_ITEM_OPTIONAL[k](v):
                err.add(f"{w}.{k}", f"invalid value {v!r}")
        if all(_is_int(it.get(k)) for k in ("count", "denied", "would_deny")):
            if it["count"] != it["denied"] + it["would_deny"]:
                err.add(w, "count != denied + would_deny")
            if (it["verdict"] == "denied") != (it["denied"] > 0):
                err.add(w, "verdict does not match the counts")
    return list(err)


# ---- entry points ------------------------------------------------------------------------------------


def validate_file(path: str | Path) -> List[str]:
    p = Path(path)
    data = p.read_bytes()
    suffix = p.suffix.lower()
    if suffix == ".sarif":
        return validate_sarif(data.decode("utf-8"))
    if suffix == ".xml":
        return validate_junit(data)
    if suffix == ".json":
        return validate_json(data.decode("utf-8"))
    return [f"{p}: unknown report extension"]


def main(argv: List[str]) -> int:
    bad = 0
    for f in argv:
        try:
            errors = validate_file(f)
        except (OSError, UnicodeDecodeError) as e:
            errors = [str(e)]
        for e in errors:
            print(f"{f}: {e}")
        bad += bool(errors)
    return 1 if bad or not argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
