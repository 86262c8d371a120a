"""Incremental Server-Sent Events decoding for Responses streams.

Events are separated by a blank line; only `data:` lines carry the JSON payload (joined by
newlines); `[DONE]` and empty events are skipped. CRLF and LF framings are both accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator

from pct_runtime.jsontypes import JSONObject

_SEPARATOR = re.compile(r"\r?\n\r?\n")


class SSEDecodeError(ValueError):
    """An event's data is not a JSON object."""


def _parse_block(block: str) -> JSONObject | None:
    lines = re.split(r"\r?\n", block)
    data = "\n".join(
        line[5:][1:] if line[5:].startswith(" ") else line[5:]
        for line in lines
        if line.startswith("data:")
    ).strip()
    if not data or data == "[DONE]":
        return None
    try:
        value = json.loads(data)
    except ValueError:
        raise SSEDecodeError("event data is not JSON") from None
    if not isinstance(value, dict):
        raise SSEDecodeError("event data is not a JSON object")
    return value


class SSEDecoder:
    """Feed text chunks; get complete events back. Call `flush()` at end of stream."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, chunk: str) -> Iterator[JSONObject]:
        self._buffer += chunk
        while True:
            match = _SEPARATOR.search(self._buffer)
            if match is None:
                return
            block = self._buffer[: match.start()]
            self._buffer = self._buffer[match.end() :]
            event = _parse_block(block)
            if event is not None:
                yield event

    def flush(self) -> Iterator[JSONObject]:
        rest, self._buffer = self._buffer, ""
        if rest.strip():
            event = _parse_block(rest)
            if event is not None:
                yield event


async def iter_sse(chunks: AsyncIterator[str]) -> AsyncIterator[JSONObject]:
    """Decode an async stream of text chunks into JSON events."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.flush():
        yield event
