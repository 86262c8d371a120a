"""A fake `node_repl` MCP server (raw JSON-RPC over stdio) for runs against the real app-server.

It offers one tool, `js`, recognises which fixed template it was sent (like the fake
app-server does), asks its client for Computer Use access through a form-mode
`elicitation/create` carrying Sky's `_meta` for actions, and answers with text and, for
app state, a PNG image block. Usage: fake_cu_node_repl.py LOG_PATH
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any

LOG = sys.argv[1] if len(sys.argv) > 1 else ""
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
ACTIONS = {"click", "type_text", "press_key", "scroll"}


def log(record: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def parse(code: str) -> tuple[str, Any]:
    if "sky.target" in code:
        return "probe", None
    match = re.search(r"sky\.(\w+)\(", code)
    args = None
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("const args = ") and stripped.endswith(";"):
            args = json.loads(stripped[len("const args = ") : -1])
    return (match.group(1) if match else "unknown"), args


def result_for(method: str, args: Any) -> dict[str, Any]:
    if method == "probe":
        return {"content": [{"type": "text", "text": "mac"}]}
    if method == "list_apps":
        apps = [{"name": "TextEdit", "bundleId": "com.apple.TextEdit"}]
        return {"content": [{"type": "text", "text": json.dumps(apps)}]}
    if method == "get_app_state":
        image = base64.b64encode(PNG).decode("ascii")
        return {
            "content": [
                {"type": "text", "text": f"state of {args['app']}"},
                {"type": "image", "data": image, "mimeType": "image/png"},
            ]
        }
    return {"content": [{"type": "text", "text": f"{method} completed."}]}


def main() -> None:
    waiting: dict[str, tuple[Any, str, Any]] = {}
    counter = 0
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            send(
                {
                    "id": message["id"],
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "node_repl", "version": "0.0-test"},
                    },
                }
            )
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"code": {"type": "string"}}}
            tool = {"name": "js", "description": "Run JavaScript", "inputSchema": schema}
            send({"id": message["id"], "result": {"tools": [tool]}})
        elif method == "tools/call":
            arguments = message["params"]["arguments"]
            name, args = parse(arguments["code"])
            log(
                {"tool_call": {"method": name, "args": args, "timeout_ms": arguments["timeout_ms"]}}
            )
            if name in ACTIONS:
                counter += 1
                request_id = f"access-{counter}"
                waiting[request_id] = (message["id"], name, args)
                send(
                    {
                        "id": request_id,
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": f"Allow Computer Use to control {args['app']}?",
                            "requestedSchema": {"type": "object", "properties": {}},
                            "_meta": {
                                "connector_id": "computer-use",
                                "tool_params": {"app": args["app"]},
                            },
                        },
                    }
                )
            else:
                send({"id": message["id"], "result": result_for(name, args)})
        elif message.get("id") in waiting and method is None:
            call_id, name, args = waiting.pop(message["id"])
            answer = message.get("result") or {}
            log({"access_reply": answer})
            if answer.get("action") == "accept":
                send({"id": call_id, "result": result_for(name, args)})
            else:
                text = {"type": "text", "text": "Computer Use access was not granted."}
                send({"id": call_id, "result": {"content": [text], "isError": True}})
        elif method is not None and "id" in message:
            send({"id": message["id"], "result": {}})


if __name__ == "__main__":
    main()
