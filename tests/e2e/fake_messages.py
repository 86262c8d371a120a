"""A fake Anthropic Messages API on 127.0.0.1 that scripts a model's tool calls.

Real HTTP and, when the client asks for `stream: true` (Claude Code always does), real
`text/event-stream` frames in the Messages wire format. Only the agent's main-loop requests
(those offering the tools named by `tool_prefix`) consume scripted steps; side requests a
client makes on its own (titles, quota probes, token counts) get a short text reply, so the
script does not depend on how many of those a client version sends. Every request is
recorded, with its path, for assertions and diagnostics.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: One scripted reply: content blocks (`tool_use` or `text`), or a callable of the
#: `tool_result` texts so far that returns them.
Step = list[dict[str, Any]] | Callable[[list[str]], list[dict[str, Any]]]


def tool_use(block_id: str, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": block_id, "name": name, "input": arguments}]


def text_reply(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def result_text(block: dict[str, Any]) -> str:
    """The text of one `tool_result` block (a string, or a list of text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _frames(message_id: str, model: str, blocks: list[dict[str, Any]]) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 5}
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


def _message(message_id: str, model: str, blocks: list[dict[str, Any]]) -> bytes:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return json.dumps(
        {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    ).encode()


class FakeMessages:
    """Serve `steps` to the main-loop requests and record every request."""

    def __init__(self, steps: list[Step], *, tool_prefix: str) -> None:
        self.steps = list(steps)
        self.tool_prefix = tool_prefix
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._served = 0
        self._count = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_HEAD(self) -> None:
                self._send(200, "text/plain", b"")

            def do_GET(self) -> None:
                with owner._lock:
                    owner.requests.append((f"GET {self.path}", {}))
                self._send(404, "application/json", b'{"type":"error"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) or b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                path = self.path.split("?", 1)[0]
                with owner._lock:
                    owner.requests.append((f"POST {self.path}", body))
                    owner._count += 1
                    message_id = f"msg_{owner._count}"
                if path.endswith("/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 10}')
                    return
                if not path.endswith("/v1/messages"):
                    self._send(404, "application/json", b'{"type":"error"}')
                    return
                blocks = owner._next_blocks(body)
                model = str(body.get("model") or "fake-model")
                if body.get("stream"):
                    self._send(200, "text/event-stream", _frames(message_id, model, blocks))
                else:
                    self._send(200, "application/json", _message(message_id, model, blocks))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _main_loop(self, body: dict[str, Any]) -> bool:
        tools = body.get("tools") or []
        return any(
            isinstance(t, dict) and str(t.get("name", "")).startswith(self.tool_prefix)
            for t in tools
        )

    def _next_blocks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if not self._main_loop(body):
            return text_reply("ok")
        with self._lock:
            index = self._served
            self._served += 1
        if index >= len(self.steps):
            return text_reply("done")
        step = self.steps[index]
        return step(self.tool_results()) if callable(step) else step

    def __enter__(self) -> FakeMessages:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def tool_result_blocks(self) -> list[dict[str, Any]]:
        """Every `tool_result` block the agent sent, once each (by `tool_use_id`), in order."""
        found: dict[str, dict[str, Any]] = {}
        for _, body in list(self.requests):
            for message in body.get("messages") or []:
                content = message.get("content") if isinstance(message, dict) else None
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.setdefault(str(block.get("tool_use_id")), block)
        return list(found.values())

    def tool_results(self) -> list[str]:
        return [result_text(block) for block in self.tool_result_blocks()]
