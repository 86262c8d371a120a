"""A source file as one byte buffer, and its new content as slices of it plus the edits.

Cost is linear at any size because no line ever becomes a long-lived object: a million
per-line strings cost far more than ten times a hundred thousand (allocation, page faults,
cache misses, the collector walking them). The file stays one `bytes`; lines are addressed
by the byte offset where they start; the matcher looks at lines through short-lived slices;
unchanged stretches are written straight from the buffer.

What is kept: the UTF-8 BOM, the line-ending style (LF or CRLF) and a missing final newline
(Codex would add one). An empty or BOM-only source has no style to keep: it is written with
LF and a final newline. Files that are not UTF-8, contain a CR outside CRLF, or mix LF and
CRLF are refused: editing them line by line could silently change bytes nobody asked to
change.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from pct_runtime.capabilities.apply_patch.errors import PreflightError
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from typing import Literal, NoReturn

    Purpose = Literal["update", "delete"]

BOM = b"\xef\xbb\xbf"
#: Validate UTF-8 in pieces of about this size (cut after a line feed, never inside a
#: character), so a large non-ASCII file is never decoded into one huge string.
_DECODE_PIECE = 1 << 20


class Source(NamedTuple):
    """A validated source: `data` as read; its lines start at `start` (after any BOM)."""

    data: bytes
    start: int
    eol: bytes
    final_newline: bool

    @property
    def bom(self) -> bool:
        return self.start == len(BOM)

    @property
    def end(self) -> int:
        return len(self.data)

    def lines(self) -> Iterator[bytes]:
        """Every line with its line ending (the last may lack one), created one at a time."""
        buffer = io.BytesIO(self.data)
        buffer.seek(self.start)
        return iter(buffer)

    def raw(self, pos: int) -> tuple[bytes, int]:
        """(the line at `pos` with its ending, always present; where the next line starts)."""
        data = self.data
        nl = data.find(b"\n", pos)
        if nl == -1:
            return data[pos:] + self.eol, len(data)
        return data[pos : nl + 1], nl + 1

    def text(self, pos: int) -> str:
        """The line at `pos` without its line ending."""
        line, _ = self.raw(pos)
        return line[: -len(self.eol)].decode("utf-8")

    def previous(self, pos: int) -> int:
        """Where the line before the one at `pos` starts (`pos` > `start`)."""
        nl = self.data.rfind(b"\n", self.start, pos - 1)
        return self.start if nl == -1 else nl + 1

    def last_line(self) -> int | None:
        """Where the last line starts, or None for a file without lines."""
        data = self.data
        if self.start == len(data):
            return None
        if self.final_newline:
            return self.previous(len(data))
        nl = data.rfind(b"\n", self.start)
        return self.start if nl == -1 else nl + 1

    def line_number(self, pos: int) -> int:
        """1-based line number of the line at `pos` (for messages only: it counts)."""
        number = self.data.count(b"\n", self.start, pos) + 1
        if pos >= len(self.data) > self.start and not self.final_newline:
            number += 1  # past an unterminated last line
        return number

    def rewrite(self, edits: Sequence[tuple[int, int, list[str]]]) -> Iterator[bytes | memoryview]:
        """The new content: `edits` are (start, end, new lines) replacing the lines in
        `[start, end)`, sorted by start. Unchanged stretches come straight from the buffer."""
        data, eol = self.data, self.eol
        view = memoryview(data)
        pieces: list[bytes | memoryview] = [view[: self.start]] if self.start else []
        at = self.start
        unterminated = not self.final_newline  # the source's last line lacks an ending
        for start, end, new in edits:
            if start > at:
                pieces.append(view[at:start])
                if start == len(data) and unterminated:
                    pieces.append(eol)  # something follows the unterminated last line now
            if new:
                pieces.append(eol.join(line.encode("utf-8") for line in new) + eol)
            at = max(at, end)
        if at < len(data):
            pieces.append(view[at:])
        if unterminated:
            _drop_final_eol(pieces, eol)
        return iter(pieces)


class Rewrite(NamedTuple):
    """A source and the edits the matcher computed for it: the new content, not yet built."""

    source: Source
    edits: list[tuple[int, int, list[str]]]

    def pieces(self) -> Iterator[bytes | memoryview]:
        return self.source.rewrite(self.edits)


def _drop_final_eol(pieces: list[bytes | memoryview], eol: bytes) -> None:
    """Keep a missing final newline: the last line of the new content gets no ending."""
    for index in range(len(pieces) - 1, -1, -1):
        piece = pieces[index]
        if not len(piece):
            continue
        if bytes(piece[-len(eol) :]) == eol:
            pieces[index] = piece[: -len(eol)]
        return


def _verb(purpose: Purpose) -> str:
    return "update" if purpose == "update" else "delete"


def load_source(data: bytes, display: str, purpose: Purpose, patch_line: int) -> Source:
    """Validate a whole source held in memory, or raise `PreflightError` naming the file,
    the first offending file line and the problem: invalid UTF-8 first, then a bare CR,
    then mixed LF/CRLF."""
    if not data.isascii():
        _check_utf8(data, display, purpose, patch_line)
    start = len(BOM) if data.startswith(BOM) else 0
    verb = _verb(purpose)
    # memchr first: most files have no CR at all, and counting is far slower than finding.
    crs = data.count(b"\r", start) if data.find(b"\r", start) != -1 else 0
    crlfs = data.count(b"\r\n", start) if crs else 0
    if crs != crlfs:
        at = data.find(b"\r", start)
        while data[at + 1 : at + 2] == b"\n":
            at = data.find(b"\r", at + 1)
        line = data.count(b"\n", start, at) + 1
        raise PreflightError(
            f"Cannot {verb} '{display}' (patch line {patch_line}): file line "
            f"{line} contains a carriage return (CR) that is not "
            "part of a CRLF line ending; apply_patch only handles files whose lines all end "
            "in LF or all end in CRLF. Nothing was changed."
        )
    if crlfs and data.count(b"\n", start) != crlfs:
        at = data.find(b"\n", start)
        while at > start and data[at - 1] == 0x0D:
            at = data.find(b"\n", at + 1)
        line = data.count(b"\n", start, at) + 1
        raise PreflightError(
            f"Cannot {verb} '{display}' (patch line {patch_line}): the file mixes CRLF and "
            f"LF line endings (file line {line} ends with LF "
            "only); apply_patch only handles files with one line-ending style. Nothing was "
            "changed."
        )
    if start == len(data):
        return Source(data, start, b"\n", True)
    return Source(data, start, b"\r\n" if crlfs else b"\n", data.endswith(b"\n"))


def _check_utf8(data: bytes, display: str, purpose: Purpose, patch_line: int) -> None:
    view = memoryview(data)
    at = 0
    while at < len(data):
        cut = data.find(b"\n", at + _DECODE_PIECE)
        end = len(data) if cut == -1 else cut + 1
        try:
            str(view[at:end], "utf-8")
        except UnicodeDecodeError as exc:
            _raise_not_utf8(display, purpose, patch_line, data.count(b"\n", 0, at + exc.start) + 1)
        at = end


def _raise_not_utf8(display: str, purpose: Purpose, patch_line: int, line: int) -> NoReturn:
    if purpose == "delete":
        raise PreflightError(
            f"Cannot delete '{display}' (patch line {patch_line}): it is not valid UTF-8 text "
            f"(first invalid byte on file line {line}); apply_patch does not delete binary "
            "files. Nothing was changed."
        ) from None
    raise PreflightError(
        f"Cannot update '{display}' (patch line {patch_line}): it is not valid UTF-8 text "
        f"(first invalid byte on file line {line}); apply_patch only edits UTF-8 text "
        "files. Nothing was changed."
    ) from None
