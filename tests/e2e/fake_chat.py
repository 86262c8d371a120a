"""A fake OpenAI Chat Completions server on 127.0.0.1 that scripts a model's tool calls.

Pi talks to it as a custom `openai-completions` provider from `models.json`. Real HTTP and
real `text/event-stream` chunks: the first request that offers `tool` gets one call to it,
every other request gets a short final answer. Every request body is recorded.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeChat:
    """Call `tool` with `arguments` once it is offered, then answer `final`."""

    def __init__(self, tool: str, arguments: dict[str, Any], final: str = "done") -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests.append(body)
                offered = tool in owner.tool_names(body)
                answered = any(m.get("role") == "tool" for m in body.get("messages", []))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                if offered and not answered:
                    call = {"name": tool, "arguments": json.dumps(arguments)}
                    delta = {
                        "role": "assistant",
                        "tool_calls": [
                            {"index": 0, "id": "call_1", "type": "function", **{"function": call}}
                        ],
                    }
                    self._chunk(delta, None)
                    self._chunk({}, "tool_calls")
                else:
                    self._chunk({"role": "assistant", "content": final}, None)
                    self._chunk({}, "stop")
                self.wfile.write(b"data: [DONE]\n\n")

            def _chunk(self, delta: dict[str, Any], finish: str | None) -> None:
                chunk = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "fake-model",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @staticmethod
    def tool_names(body: dict[str, Any]) -> list[str]:
        return [t["function"]["name"] for t in body.get("tools", []) if "function" in t]

    def tool_results(self) -> list[str]:
        """The `tool` message contents the client sent back to the model."""
        out: list[str] = []
        for body in self.requests:
            for message in body.get("messages", []):
                if message.get("role") == "tool":
                    content = message.get("content")
                    if isinstance(content, list):
                        content = "".join(str(p.get("text", "")) for p in content)
                    out.append(str(content))
        return out

    def __enter__(self) -> FakeChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
