"""A fake `codex app-server` for the Computer Use tests: real JSON lines on stdin/stdout.

It answers `initialize`, `thread/start`, `mcpServerStatus/list` and `mcpServer/tool/call`
(server `node_repl`, tool `js`), recognises which fixed template it was sent (the `sky.<m>(`
call, and the JSON literal on the `const args = ...;` line), can ask the client an
`mcpServer/elicitation/request` first, and misbehaves on demand (hang, exit, garbage, errors).

Behaviour comes from the JSON scenario file named by PCT_FAKE_CU_SCENARIO; every message it
receives (and each spawn) is appended as one JSON line to PCT_FAKE_CU_LOG.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
from typing import Any

SCENARIO: dict[str, Any] = {}
LOG_PATH = os.environ.get("PCT_FAKE_CU_LOG", "")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 24
GIF = b"GIF89a" + b"\x00" * 24


def log(record: dict[str, Any]) -> None:
    if LOG_PATH:
        with open(LOG_PATH, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read_message() -> dict[str, Any] | None:
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        log({"received": message})
        return message


def parse_template(code: str) -> tuple[str, Any]:
    if "sky.target" in code:
        return "probe", None
    match = re.search(r"sky\.(\w+)\(", code)
    method = match.group(1) if match else "unknown"
    args = None
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("const args = ") and stripped.endswith(";"):
            args = json.loads(stripped[len("const args = ") : -1])
    return method, args


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def image_block(kind: str) -> dict[str, Any] | None:
    if kind == "none":
        return None
    if kind == "large":  # a PNG-signed screenshot of SCENARIO["screenshot_bytes"] bytes
        size = int(SCENARIO.get("screenshot_bytes", 2_000_000))
        data = PNG + b"\x00" * max(0, size - len(PNG))
        return {
            "type": "image",
            "data": base64.b64encode(data).decode("ascii"),
            "mimeType": "image/png",
        }
    data, mime = {
        "png": (PNG, "image/png"),
        "jpeg": (JPEG, "image/jpeg"),
        "gif": (GIF, "image/gif"),
        "mismatch": (GIF, "image/png"),
    }[kind]
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}


ELICIT_COUNTER = 0


def elicit(thread_id: str, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Ask the client; returns its result (None if it answered with an error or went away)."""
    global ELICIT_COUNTER
    ELICIT_COUNTER += 1
    request_id = f"elicit-{ELICIT_COUNTER}"
    params: dict[str, Any] = {
        "threadId": spec.get("threadId", thread_id),
        "serverName": spec.get("serverName", "node_repl"),
        "mode": spec.get("mode", "form"),
        "message": spec.get("message", "Allow Computer Use to control TextEdit?"),
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {
            "connector_id": spec.get("connector_id", "computer-use"),
            "tool_params": {"app": spec.get("app", "com.apple.TextEdit")},
        },
    }
    if spec.get("raw_params") is not None:
        params = spec["raw_params"]
    send({"id": request_id, "method": "mcpServer/elicitation/request", "params": params})
    while True:
        message = read_message()
        if message is None:
            sys.exit(0)
        if message.get("id") == request_id:
            log({"elicitation_reply": message})
            result = message.get("result")
            return result if isinstance(result, dict) else None


def handle_tool_call(request_id: Any, params: dict[str, Any], thread_id: str) -> None:
    code = params["arguments"]["code"]
    method, args = parse_template(code)
    log({"tool_call": {"method": method, "args": args, "arguments": params["arguments"]}})
    if method in SCENARIO.get("exit_on", []):
        sys.exit(3)
    if method in SCENARIO.get("hang_on", []):
        return
    if method in SCENARIO.get("garbage_on", []):
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        return
    if method in SCENARIO.get("rpc_error_on", []):
        send({"id": request_id, "error": {"code": -32000, "message": "thread not found"}})
        return
    if SCENARIO.get("foreign_request_on") == method:
        send({"id": "foreign-1", "method": "item/tool/call", "params": {"threadId": thread_id}})
    for spec in SCENARIO.get("elicit", {}).get(method, []):
        result = elicit(thread_id, spec)
        if not result or result.get("action") != "accept":
            send(
                {
                    "id": request_id,
                    "result": {
                        "content": [text("User declined the Computer Use request.")],
                        "isError": True,
                    },
                }
            )
            return
    if method in SCENARIO.get("error_on", []):
        send(
            {
                "id": request_id,
                "result": {
                    "content": [text(f'App "{(args or {}).get("app")}" was not found')],
                    "isError": True,
                },
            }
        )
        return
    if method == "probe":
        content = [text(SCENARIO.get("sky_target", "mac"))]
    elif method == "list_apps":
        content = [text(json.dumps([{"name": "TextEdit", "bundleId": "com.apple.TextEdit"}]))]
    elif method == "get_app_state":
        content = [text(f"App state of {(args or {}).get('app')}: 0 button OK")]
        block = image_block(SCENARIO.get("screenshot", "png"))
        if block is not None:
            content.append(block)
    else:
        done = {
            "click": "Click completed.",
            "type_text": "Text entry completed.",
            "press_key": "Key press completed.",
            "scroll": "Scroll completed.",
        }.get(method, "unknown")
        content = [text(done)]
    if SCENARIO.get("bad_content_on") == method:
        content = [{"type": "audio", "data": "AAAA"}]
    if SCENARIO.get("close_stdin_after") == method:
        # Stop reading before answering, stay alive with stdout open: the client's next
        # write hits EPIPE rather than EOF.
        sys.stdin.close()
        os.close(0)
        send({"id": request_id, "result": {"content": content, "isError": False}})
        time.sleep(300)
    send({"id": request_id, "result": {"content": content, "isError": False}})


def main() -> None:
    global SCENARIO
    path = os.environ.get("PCT_FAKE_CU_SCENARIO")
    if path:
        with open(path, encoding="utf-8") as handle:
            SCENARIO = json.load(handle)
    child = None
    if SCENARIO.get("spawn_child"):
        child = subprocess.Popen(["sleep", "300"])  # stands in for node_repl, same group
    log(
        {
            "spawn": {
                "pid": os.getpid(),
                "argv": sys.argv[1:],
                "codex_home": os.environ.get("CODEX_HOME"),
                "cwd": os.getcwd(),
                "child": child.pid if child else None,
            }
        }
    )
    thread_id = SCENARIO.get("thread_id", "thr-fake-1")
    polls = 0
    while True:
        message = read_message()
        if message is None:
            return
        method = message.get("method")
        request_id = message.get("id")
        if request_id is None or method is None:
            continue  # notification (initialized) or a reply we did not wait for
        params = message.get("params") or {}
        if method == "initialize":
            if SCENARIO.get("hang_on_initialize"):
                continue
            send({"id": request_id, "result": {"userAgent": "fake-app-server/1.0"}})
        elif method == "thread/start":
            send({"id": request_id, "result": {"thread": {"id": thread_id}, "model": "fake"}})
        elif method == "mcpServerStatus/list":
            polls += 1
            status = SCENARIO.get("node_repl", "connected")
            if status == "connected" and polls <= SCENARIO.get("starting_polls", 0):
                status = "starting"
            if status == "never":
                status = "starting"
            tools = {"js": {"name": "js"}} if status == "connected" else {}
            entry = {"name": "node_repl", "runtimeStatus": status, "tools": tools}
            if SCENARIO.get("paginate") and params.get("cursor") is None:
                other = {"name": "other", "runtimeStatus": "connected", "tools": {}}
                send({"id": request_id, "result": {"data": [other], "nextCursor": "page-2"}})
            else:
                send({"id": request_id, "result": {"data": [entry], "nextCursor": None}})
        elif method == "mcpServer/tool/call":
            handle_tool_call(request_id, params, thread_id)
        else:
            send({"id": request_id, "error": {"code": -32601, "message": "unknown method"}})


if __name__ == "__main__":
    main()
