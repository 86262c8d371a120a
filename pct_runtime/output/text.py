"""Bounded UTF-8 text: code-point-safe cuts and the rolling preview of one output stream.

Shell and Code previews are destructive (a read consumes them) and bounded (old text is
dropped once a stream runs ahead of its reader). Everything here works on UTF-8 *bytes of
already decoded text*, so every cut lands on a code point boundary and byte counts are the
numbers the model is told.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

PREVIEW_LIMIT_BYTES = 256 * 1024


def _is_continuation(byte: int) -> bool:
    return (byte & 0xC0) == 0x80


def utf8_head(data: bytes, limit: int) -> bytes:
    """The longest prefix of `data` of at most `limit` bytes that ends on a code point boundary."""
    if limit <= 0:
        return b""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and _is_continuation(data[end]):
        end -= 1
    return data[:end]


def utf8_tail_start(data: bytes, start: int) -> int:
    """The first code point boundary at or after `start` (so `data[result:]` is valid UTF-8)."""
    if start <= 0:
        return 0
    n = len(data)
    while start < n and _is_continuation(data[start]):
        start += 1
    return start


def truncate_text(text: str, limit: int) -> tuple[str, int]:
    """Cut `text` to at most `limit` UTF-8 bytes on a code point boundary.

    Returns the kept text and how many UTF-8 bytes were cut off.
    """
    data = text.encode("utf-8")
    head = utf8_head(data, limit)
    return head.decode("utf-8"), len(data) - len(head)


@dataclass
class PreviewRead:
    """What one destructive read took from a preview.

    `dropped` counts bytes the rolling window discarded before this read ever saw them;
    `omitted` counts bytes this read consumed but could not return within its budget.
    """

    data: bytes
    dropped: int
    omitted: int

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    @property
    def lost(self) -> int:
        return self.dropped + self.omitted


class RollingPreview:
    """The unread tail of one stream, at most `limit` bytes; older text is dropped and counted.

    Appends are UTF-8 bytes of decoded text. The window only ever drops whole code points,
    so whatever a read returns decodes cleanly.
    """

    def __init__(self, limit: int = PREVIEW_LIMIT_BYTES) -> None:
        if limit < 4:
            raise ValueError("preview limit must hold at least one code point")
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._total = 0

    @property
    def pending(self) -> int:
        """Unread bytes currently held."""
        return self._size

    @property
    def dropped(self) -> int:
        """Bytes dropped since the last read."""
        return self._dropped

    @property
    def total(self) -> int:
        """Bytes ever appended (read, pending or dropped)."""
        return self._total

    def append(self, data: bytes) -> None:
        if not data:
            return
        self._total += len(data)
        if len(data) >= self._limit:
            start = utf8_tail_start(data, len(data) - self._limit)
            self._dropped += self._size + start
            self._chunks.clear()
            data = data[start:]
            self._size = 0
        self._chunks.append(data)
        self._size += len(data)
        while self._size > self._limit:
            excess = self._size - self._limit
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
                self._dropped += len(first)
                continue
            cut = utf8_tail_start(first, excess)
            self._chunks[0] = first[cut:]
            self._size -= cut
            self._dropped += cut
            if not self._chunks[0]:
                self._chunks.popleft()

    def read(self, budget: int) -> PreviewRead:
        """Consume everything pending; return at most `budget` bytes of it (head first)."""
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        dropped, self._dropped = self._dropped, 0
        head = utf8_head(data, max(budget, 0))
        return PreviewRead(head, dropped, len(data) - len(head))
