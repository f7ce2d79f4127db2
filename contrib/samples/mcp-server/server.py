#!/usr/bin/env python3
"""A stdlib-only MCP server over stdio with two naive tools.

    python-sb server.py                  complete mode: the whole server is
                                         sandboxed by ./.py-sandboxes
    python3 server.py --partial          partial mode: only the tools run in a
                                         sandboxed worker (.py-sandboxes-partial)
    python3 server.py                    no sandbox (do not do this)

Transport (MCP, "stdio"): one JSON-RPC 2.0 message per line on stdin and
stdout, UTF-8, no embedded newlines; anything else the process prints goes to
stderr.  Methods: initialize, notifications/initialized, ping, tools/list,
tools/call.  The tools are in tools.py.
"""
from __future__ import annotations

import json
import os
import sys
import tools

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")  # newest first
SERVER_INFO = {"name": "py-sandboxes-mcp-sample", "title": "py-sandboxes MCP sample", "version": "1.0.0"}

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = \
    -32700, -32600, -32601, -32602, -32603

TOOLS: dict = {
    "fetch_webpage": {
        "description": "Fetch a web page (http or https) and return its text.",
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string", "description": "The URL"}},
                        "required": ["url"], "additionalProperties": False},
        "call": lambda args: tools.fetch_webpage(args["url"]),
        "types": {"url": str},
    },
    "evaluate_expression": {
        "description": "Evaluate an arithmetic expression such as (3 + 4) * 2.",
        "inputSchema": {"type": "object",
                        "properties": {"expression": {"type": "string", "description": "The expression"}},
                        "required": ["expression"], "additionalProperties": False},
        "call": lambda args: tools.evaluate_expression(args["expression"]),
        "types": {"expression": str},
    },
}


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def log(msg: str) -> None:
    print(f"mcp-server: {msg}", file=sys.stderr, flush=True)


# ---- methods ------------------------------------------------------------------------


def initialize(params: dict) -> dict:
    asked = params.get("protocolVersion")
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
    return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
            "instructions": "Two tools: fetch_webpage and evaluate_expression. A refusal names the sandbox rule."}


def tools_list(params: dict) -> dict:
    return {"tools": [{"name": name, "description": t["description"], "inputSchema": t["inputSchema"]}
                      for name, t in TOOLS.items()]}


def tools_call(params: dict) -> dict:
    name, args = params.get("name"), params.get("arguments") or {}
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name!r}")
    if not isinstance(args, dict) or any(not isinstance(args.get(k), t) for k, t in tool["types"].items()):
        raise RpcError(INVALID_PARAMS, f"Invalid arguments for {name}: expected {sorted(tool['types'])}")
    try:
        text, failed = tool["call"](args), False
    except tools.ToolError as e:
        text, failed = str(e), True
    return {"content": [{"type": "text", "text": text}], "isError": failed}


METHODS: dict = {
    "initialize": initialize,
    "ping": lambda params: {},
    "tools/list": tools_list,
    "tools/call": tools_call,
}


# ---- JSON-RPC over stdio ---------------------------------------------------------------


def error(id_: object, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def handle(line: bytes) -> dict | None:
    """The answer to one line, or None (notifications, client responses)."""
    try:
        msg = json.loads(line)
    except ValueError as e:
        return error(None, PARSE_ERROR, f"Parse error: {e}")
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return error(None, INVALID_REQUEST, "Invalid Request: one JSON-RPC 2.0 object per line")
    if "method" not in msg:
        return None  # a response to a request of ours: we send none
    method, id_ = msg["method"], msg.get("id")
    is_request = "id" in msg
    if is_request and (isinstance(id_, bool) or not isinstance(id_, (str, int))):
        return error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if not isinstance(method, str):
        return error(id_, INVALID_REQUEST, "Invalid Request: method must be a string") if is_request else None
    params = msg.get("params") or {}
    if not isinstance(params, dict):
        return error(id_, INVALID_PARAMS, "params must be an object") if is_request else None
    if not is_request:
        return None  # notifications/initialized, notifications/cancelled, ...
    fn = METHODS.get(method)
    if fn is None:
        return error(id_, METHOD_NOT_FOUND, f"Method not found: {method}")
    try:
        return {"jsonrpc": "2.0", "id": id_, "result": fn(params)}
    except RpcError as e:
        return error(id_, e.code, str(e))
    except Exception as e:  # a bug of ours: say so, keep serving
        log(f"internal error in {method}: {type(e).__name__}: {e}")
        return error(id_, INTERNAL_ERROR, f"Internal error: {type(e).__name__}")


def protocol_stdout():
    """The protocol stream, and stdout (fd 1 and sys.stdout) sent to stderr:
    a stray print, a library or a sandboxed worker writing to stdout must not
    corrupt the JSON-RPC stream."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def serve() -> int:
    out = protocol_stdout()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        answer = handle(line)
        if answer is not None:
            out.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n")
            out.flush()
    return 0


USAGE = "usage: server.py [--partial [--config=RULE_FILE]]"


def main(argv: list) -> int:
    # No argparse: it would pull gettext and its locale lookups into the
    # policy of a server that needs neither.
    partial, config = False, os.path.join(HERE, ".py-sandboxes-partial")
    for arg in argv:
        if arg == "--partial":
            partial = True
        elif arg.startswith("--config="):
            config = arg.split("=", 1)[1]
        else:
            print(USAGE, file=sys.stderr)
            return 2
    if not partial:
        return serve()
    from pysandboxes import sandboxes  # partial mode: the caller runs unsandboxed

    with sandboxes(sandboxes_config=config):
        return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
