"""`debug: true` metadata: one JSON line per OpenAI request, to stderr and the event bus.

The record type admits only the fields the spec lists — feature, provider/API/model,
endpoint host, duration, status, request id, content-block counts and a payload-free
error category (plus the compaction outcome/reason) — so headers, tokens, prompts, tool
arguments/results, images, checkpoints or fallback text cannot be put into it by mistake.
There is no log file, level, rotation or generic redactor.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TextIO

from pct_runtime.host.events import EventBus
from pct_runtime.jsontypes import JSONObject

DEBUG_CHANNEL = "pct.debug"

_TOKEN = re.compile(r"^[A-Za-z0-9_.:/+-]{1,128}$")


def _safe_label(value: str | None) -> str | None:
    """Keep identifiers (model ids, hosts, categories); drop anything that is not one."""
    if value is None:
        return None
    return value if _TOKEN.match(value) else None


@dataclass(frozen=True)
class DebugRecord:
    """Metadata of one request; every field is an identifier, a number or a count."""

    feature: str
    provider: str | None = None
    api: str | None = None
    model: str | None = None
    endpoint_host: str | None = None
    duration_ms: int | None = None
    status: int | None = None
    request_id: str | None = None
    content_blocks: Mapping[str, int] | None = None
    error_category: str | None = None
    outcome: str | None = None
    reason: str | None = None
    extra_counts: Mapping[str, int] = field(default_factory=dict)

    def to_json_dict(self) -> JSONObject:
        """The JSON object written out; absent values are omitted, labels are re-checked."""
        out: JSONObject = {"feature": _safe_label(self.feature) or "unknown"}
        labels = {
            "outcome": self.outcome,
            "provider": self.provider,
            "api": self.api,
            "model": self.model,
            "endpointHost": self.endpoint_host,
            "requestId": self.request_id,
        }
        for key, value in labels.items():
            safe = _safe_label(value)
            if safe is not None:
                out[key] = safe
        if self.duration_ms is not None:
            out["durationMs"] = int(self.duration_ms)
        if self.status is not None:
            out["status"] = int(self.status)
        if self.content_blocks:
            out["contentBlocks"] = {
                k: int(v) for k, v in self.content_blocks.items() if _safe_label(k) is not None
            }
        for key, count in self.extra_counts.items():
            if _safe_label(key) is not None:
                out[key] = int(count)
        for key, value in (("reason", self.reason), ("errorCategory", self.error_category)):
            safe = _safe_label(value)
            if safe is not None:
                out[key] = safe
        return out


class DebugSink:
    """Where debug records go: nowhere unless enabled; then stderr and `pct.debug`.

    `enabled` may be a callable (e.g. `lambda: store.config.debug`) so that a reload that
    flips `debug` takes effect on the next request without rebuilding tools. `stream`
    None means the process's stderr at write time; `write=False` publishes on the bus
    only (a full-screen console owns the terminal, so a line there would corrupt it).
    """

    def __init__(
        self,
        enabled: bool | Callable[[], bool] = False,
        bus: EventBus | None = None,
        stream: TextIO | None = None,
        *,
        write: bool = True,
    ) -> None:
        self._enabled = enabled
        self._bus = bus
        self._stream = stream
        self._write = write

    @property
    def enabled(self) -> bool:
        return bool(self._enabled() if callable(self._enabled) else self._enabled)

    def emit(self, record: DebugRecord) -> None:
        if not self.enabled:
            return
        data = record.to_json_dict()
        line = json.dumps(data, separators=(",", ":"), sort_keys=False)
        if self._write:
            stream = self._stream if self._stream is not None else sys.stderr
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):  # a closed stderr must not break a tool call
                pass
        if self._bus is not None:
            self._bus.publish(DEBUG_CHANNEL, data)


DISABLED = DebugSink(False)
