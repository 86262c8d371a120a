"""Decode a source file into lines and encode it back without changing what the patch didn't.

A file keeps its UTF-8 BOM, its line-ending style (LF or CRLF) and a missing final newline
(Codex would add one). An empty or BOM-only source has no style to keep: it is written with LF
and a final newline. Files that are not UTF-8, contain a CR outside CRLF, or mix LF and CRLF are
refused: editing them line by line could silently change bytes nobody asked to change.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, NoReturn

from pct_runtime.capabilities.apply_patch.errors import PreflightError

BOM = "\ufeff"
Purpose = Literal["update", "delete"]


@dataclass
class TextFile:
    lines: list[str]
    eol: str = "\n"
    bom: bool = False
    final_newline: bool = True

    def iter_encoded(self, block_lines: int = 16384) -> Iterator[bytes]:
        """The encoded file in blocks, so a large file is written without building one huge
        string and one huge bytes object (fewer fresh pages, better cache behaviour)."""
        lines, eol = self.lines, self.eol
        if self.bom:
            yield BOM.encode("utf-8")
        total = len(lines)
        for start in range(0, total, block_lines):
            end = min(start + block_lines, total)
            text = eol.join(lines[start:end])
            if end < total or self.final_newline:
                text += eol
            yield text.encode("utf-8")

    def encode(self) -> bytes:
        lines = self.lines
        if not lines:
            return BOM.encode("utf-8") if self.bom else b""
        if self.final_newline:
            lines.append("")  # join once, without copying the whole text to add the EOL
            try:
                body = self.eol.join(lines)
            finally:
                lines.pop()
        else:
            body = self.eol.join(lines)
        data = body.encode("utf-8")
        return b"\xef\xbb\xbf" + data if self.bom else data


def _verb(purpose: Purpose) -> str:
    return "update" if purpose == "update" else "delete"


def decode_text(data: bytes, display: str, purpose: Purpose, patch_line: int) -> TextFile:
    """Validate and split a whole source held in memory (see `decode_blocks`)."""
    return decode_blocks([data], display, purpose, patch_line)


def _first_bare_cr(work: str) -> int:
    at = 0
    while True:
        at = work.index("\r", at)
        if work[at + 1 : at + 2] != "\n":
            return at
        at += 1


def _first_lone_lf(work: str) -> int:
    at = 0
    while True:
        at = work.index("\n", at)
        if at == 0 or work[at - 1] != "\r":
            return at
        at += 1


def decode_blocks(
    blocks: Iterable[bytes], display: str, purpose: Purpose, patch_line: int
) -> TextFile:
    """Validate and split a source read as consecutive byte blocks.

    Decoding and splitting block by block keeps no whole-file bytes or text copy around,
    which matters for very large files. Raises `PreflightError` naming the file, the first
    offending file line and the problem: invalid UTF-8 first, then a bare CR, then mixed
    LF/CRLF (the same precedence whatever the block boundaries).
    """
    verb = _verb(purpose)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    lines: list[str] = []
    pending: list[str] = []  # text not split yet: the current partial line (or, before the
    # first line break, everything so far, since the line-ending style is not known yet)
    eol: str | None = None
    bom: bool | None = None
    newlines_before = 0  # b"\n" in the bytes already decoded, for UTF-8 error lines
    line_base = 0  # complete lines already split off
    bare_cr_line: int | None = None
    lone_lf_line: int | None = None
    seen_crlf = False

    def feed(text: str, final: bool) -> None:
        nonlocal eol, line_base, bare_cr_line, lone_lf_line, seen_crlf
        if not final and text.endswith("\r"):
            work = "".join(pending) + text[:-1]
            pending[:] = [work, "\r"]  # a CR at a block end may start a CRLF: decide later
            if eol is None and "\n" not in work:
                return
            pending[:] = []
            held = "\r"
        else:
            work = "".join(pending) + text if pending else text
            pending[:] = []
            held = ""
        if eol is None:
            first_lf = work.find("\n")
            if first_lf == -1 and not final:
                pending[:] = [work, held] if held else [work]
                return
            eol = "\r\n" if first_lf > 0 and work[first_lf - 1] == "\r" else "\n"
        if "\r" in work:
            crs, crlfs = work.count("\r"), work.count("\r\n")
            if crs != crlfs and bare_cr_line is None:
                bare_cr_line = line_base + work.count("\n", 0, _first_bare_cr(work)) + 1
            seen_crlf = seen_crlf or crlfs > 0
            if lone_lf_line is None and work.count("\n") != crlfs:
                lone_lf_line = line_base + work.count("\n", 0, _first_lone_lf(work)) + 1
        elif lone_lf_line is None and "\n" in work:
            lone_lf_line = line_base + work.count("\n", 0, work.index("\n")) + 1
        parts = work.split(eol)
        tail = parts.pop()
        lines.extend(parts)
        line_base += work.count("\n") - tail.count("\n")  # line numbers count every LF
        pending[:] = [tail, held] if held else [tail]

    for block in blocks:
        try:
            text = decoder.decode(block, False)
        except UnicodeDecodeError as exc:
            _raise_not_utf8(display, purpose, patch_line, newlines_before, exc)
        newlines_before += block.count(b"\n")
        if bom is None and text:
            bom = text.startswith(BOM)
            if bom:
                text = text[1:]
        if text:
            feed(text, final=False)
    try:
        text = decoder.decode(b"", True)
    except UnicodeDecodeError as exc:
        _raise_not_utf8(display, purpose, patch_line, newlines_before, exc)
    feed(text, final=True)
    if bare_cr_line is not None:
        raise PreflightError(
            f"Cannot {verb} '{display}' (patch line {patch_line}): file line {bare_cr_line} "
            "contains a carriage return (CR) that is not part of a CRLF line ending; "
            "apply_patch only handles files whose lines all end in LF or all end in CRLF. "
            "Nothing was changed."
        )
    if seen_crlf and lone_lf_line is not None:
        raise PreflightError(
            f"Cannot {verb} '{display}' (patch line {patch_line}): the file mixes CRLF and "
            f"LF line endings (file line {lone_lf_line} ends with LF only); apply_patch only "
            "handles files with one line-ending style. Nothing was changed."
        )
    tail = "".join(pending)
    if not lines and tail == "":
        return TextFile(lines=[], eol="\n", bom=bool(bom), final_newline=True)
    final_newline = tail == ""
    if not final_newline:
        lines.append(tail)
    return TextFile(lines=lines, eol=eol or "\n", bom=bool(bom), final_newline=final_newline)


def _raise_not_utf8(
    display: str, purpose: Purpose, patch_line: int, newlines_before: int, exc: UnicodeDecodeError
) -> NoReturn:
    data = exc.object
    line = newlines_before + bytes(data).count(b"\n", 0, exc.start) + 1
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
