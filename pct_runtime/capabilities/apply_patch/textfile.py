"""Decode a source file into lines and encode it back without changing what the patch didn't.

A file keeps its UTF-8 BOM, its line-ending style (LF or CRLF) and a missing final newline
(Codex would add one). An empty or BOM-only source has no style to keep: it is written with LF
and a final newline. Files that are not UTF-8, contain a CR outside CRLF, or mix LF and CRLF are
refused: editing them line by line could silently change bytes nobody asked to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pct_runtime.capabilities.apply_patch.errors import PreflightError

BOM = "\ufeff"
Purpose = Literal["update", "delete"]


@dataclass
class TextFile:
    lines: list[str]
    eol: str = "\n"
    bom: bool = False
    final_newline: bool = True

    def encode(self) -> bytes:
        body = ""
        if self.lines:
            body = self.eol.join(self.lines)
            if self.final_newline:
                body += self.eol
        return ((BOM if self.bom else "") + body).encode("utf-8")


def _verb(purpose: Purpose) -> str:
    return "update" if purpose == "update" else "delete"


def decode_text(data: bytes, display: str, purpose: Purpose, patch_line: int) -> TextFile:
    """Validate and split a source; raise `PreflightError` naming the file and the problem."""
    verb = _verb(purpose)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
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
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    crs = text.count("\r") if "\r" in text else 0  # memchr first: LF files skip counting
    crlfs = text.count("\r\n") if crs else 0
    if crs != crlfs:
        at = 0
        while True:
            at = text.index("\r", at)
            if text[at + 1 : at + 2] != "\n":
                break
            at += 1
        line = text.count("\n", 0, at) + 1
        raise PreflightError(
            f"Cannot {verb} '{display}' (patch line {patch_line}): file line {line} contains a "
            "carriage return (CR) that is not part of a CRLF line ending; apply_patch only "
            "handles files whose lines all end in LF or all end in CRLF. Nothing was changed."
        )
    if crlfs:
        lfs = text.count("\n")
        if lfs != crlfs:
            first_lone = 0
            while True:
                first_lone = text.index("\n", first_lone)
                if first_lone == 0 or text[first_lone - 1] != "\r":
                    break
                first_lone += 1
            line = text.count("\n", 0, first_lone) + 1
            raise PreflightError(
                f"Cannot {verb} '{display}' (patch line {patch_line}): the file mixes CRLF and "
                f"LF line endings (file line {line} ends with LF only); apply_patch only handles "
                "files with one line-ending style. Nothing was changed."
            )
    if text == "":
        return TextFile(lines=[], eol="\n", bom=bom, final_newline=True)
    eol = "\r\n" if crlfs else "\n"
    lines = text.split(eol)
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    return TextFile(lines=lines, eol=eol, bom=bom, final_newline=final_newline)
