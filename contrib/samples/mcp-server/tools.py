"""The two tools of the MCP server sample, deliberately naive.

Neither tool filters its input: keeping the server out of trouble is
python-sb's job, not the tool's (reference: upstream samples).

* ``fetch_webpage(url)`` fetches with urllib, which also opens ``file://``
  URLs: without a sandbox it reads any file of the machine, reaches any
  address the machine can (SSRF, intranet, cloud metadata).
* ``evaluate_expression(expression)`` is ``eval`` with empty builtins, which
  is no protection: ``().__class__.__base__.__subclasses__()`` walks back to
  ``os`` and ``subprocess``.

Each tool is split in two, as the upstream samples do: a module-level
``@sandbox`` function that does the work (run in the sandboxed worker in
partial mode, called directly in complete mode or without py-sandboxes), and
a thin wrapper the server calls, which turns a refusal into text naming the
rule, for the model to read.
"""
from __future__ import annotations

import html
import re
import urllib.error
import urllib.request

try:
    from pysandboxes import sandbox, sandbox_denials
except ImportError:  # plain python, no py-sandboxes installed: no sandbox at all
    def sandbox(fn):  # type: ignore[no-redef]
        return fn

    def sandbox_denials(exc: BaseException) -> list:  # type: ignore[no-redef]
        return []

MAX_BYTES = 256 * 1024
TIMEOUT = 10


class ToolError(Exception):
    """A tool failed; the message is what the model sees."""


def _to_text(page: str) -> str:
    """A rough markdown-ish text of an HTML page (title, headings, text)."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    page = re.sub(r"(?is)<title>(.*?)</title>", r"# \1\n", page)
    page = re.sub(r"(?is)<h([1-6])\b[^>]*>(.*?)</h\1>", lambda m: "#" * int(m.group(1)) + " " + m.group(2) + "\n", page)
    page = re.sub(r"(?is)<(br|p|div|li|tr)\b[^>]*>", "\n", page)
    page = re.sub(r"(?s)<[^>]+>", "", page)
    page = html.unescape(page)
    return re.sub(r"\n\s*\n+", "\n\n", page).strip()


@sandbox
def _fetch_webpage(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as resp:
            data = resp.read(MAX_BYTES)
            charset = resp.headers.get_content_charset() or "utf-8"
            kind = resp.headers.get_content_type()
    except urllib.error.URLError as e:
        # The OSError inside (a refusal of the sandbox, or a plain network
        # error) is what the caller needs; URLError would lose it on its way
        # back from a partial-mode worker.
        if isinstance(e.reason, OSError):
            raise e.reason from None
        raise
    text = data.decode(charset, "replace")
    return _to_text(text) if kind == "text/html" else text


@sandbox
def _evaluate_expression(expression: str) -> str:
    return repr(eval(expression, {"__builtins__": {}}, {}))  # naive on purpose


def _describe(exc: BaseException) -> str:
    """What went wrong, naming the rule when py-sandboxes refused it."""
    denials = sandbox_denials(exc)
    if denials:
        return "Refused by the sandbox: " + "; ".join(denials)
    return f"{type(exc).__name__}: {exc}"


def fetch_webpage(url: str) -> str:
    try:
        return _fetch_webpage(url)
    except Exception as e:
        raise ToolError(f"cannot fetch {url}: {_describe(e)}") from e


def evaluate_expression(expression: str) -> str:
    try:
        return _evaluate_expression(expression)
    except BaseException as e:  # EvalInterrupted is a BaseException on purpose
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise ToolError(f"cannot evaluate {expression!r}: {_describe(e)}") from e
