"""A fake OpenAI Responses server on 127.0.0.1 that scripts a model's tool calls.

Real HTTP, real `text/event-stream` frames in the Responses wire format: each POST to
`/v1/responses` is answered by the next scripted step (a `function_call` item or a final
assistant message), and every request body is recorded for assertions. A step may be a
callable of the tool outputs so far, for a call whose arguments depend on an earlier result
(a `write_stdin` needs the `session_id` that `exec_command` returned).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any] | Callable[[list[str]], dict[str, Any]]


def function_call(
    call_id: str, name: str, arguments: dict[str, Any], namespace: str
) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "namespace": namespace,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def assistant_message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_final",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class FakeResponses:
    """Serve `steps` (one output item per request) and record the request bodies."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    index = len(owner.requests)
                    owner.requests.append(body)
                    scripted = (
                        owner.steps[index]
                        if index < len(owner.steps)
                        else assistant_message("done")
                    )
                    step = scripted(owner.tool_outputs()) if callable(scripted) else scripted
                if not self.path.endswith("/responses"):
                    self.send_error(404)
                    return
                response_id = f"resp_{index + 1}"
                frames = [
                    (
                        "response.created",
                        {"type": "response.created", "response": {"id": response_id}},
                    ),
                    (
                        "response.output_item.done",
                        {"type": "response.output_item.done", "output_index": 0, "item": step},
                    ),
                    (
                        "response.completed",
                        {
                            "type": "response.completed",
                            "response": {
                                "id": response_id,
                                "usage": {
                                    "input_tokens": 10,
                                    "output_tokens": 5,
                                    "total_tokens": 15,
                                },
                            },
                        },
                    ),
                ]
                payload = "".join(
                    f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in frames
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeResponses:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def tool_outputs(self) -> list[str]:
        """Text of every `function_call_output` the agent sent back, once each, in order.

        Each request repeats the conversation so far; an output is keyed by its `call_id`.
        """
        outputs: dict[str, str] = {}
        for body in self.requests:
            for item in body.get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    out = item.get("output")
                    if isinstance(out, list):
                        text = "".join(str(p.get("text", "")) for p in out if isinstance(p, dict))
                    else:
                        text = str(out)
                    outputs.setdefault(str(item.get("call_id") or len(outputs)), text)
        return list(outputs.values())
