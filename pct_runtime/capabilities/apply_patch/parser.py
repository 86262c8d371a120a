"""The hand-written apply_patch parser: the authority on what a patch means and why it is refused.

It accepts exactly the language of `grammar.lark` (a test checks both agree) but, unlike a
generated parser, names the problem, the patch line and what to do next. It is a pure function
over text: no filesystem, no event loop. Paths are validated here (syntax and cross-section
conflicts); whether they exist is the executor's business.

Rejection texts that Codex also produces keep Codex's wording byte for byte as their first
sentence (`Invalid patch: …` for the envelope, `Invalid patch hunk on line N: …` for a
section); pct may add a specific fix (a Markdown fence, literal backslash-n escapes) and
every rejection ends with `Nothing was changed.` (see `errors.says_nothing_changed`).
"""

from __future__ import annotations

import unicodedata

from pct_runtime.capabilities.apply_patch.errors import PatchSyntaxError, PathConflictError
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:
    from typing import Literal

    LineKind = Literal[" ", "-", "+"]

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
SECTION_PREFIX = "*** "

# The parsed patch is made of named tuples, not dataclasses: immutable values either way,
# but `pct apply-patch` is a whole process per patch, and importing dataclasses and building
# its classes cost more than applying a 400-hunk patch to a 100,000-line file (and
# `typing.NamedTuple` with `typing` more than the matcher's pass over the file).


class PatchPath(NamedTuple):
    """A validated relative path: `raw` as written; `parts` without `.` and empty segments."""

    raw: str
    parts: tuple[str, ...]
    line: int

    @property
    def display(self) -> str:
        return "/".join(self.parts)

    @property
    def key(self) -> str:
        """Identity for conflict checks: case- and Unicode-normalisation-insensitive."""
        return unicodedata.normalize("NFC", unicodedata.normalize("NFC", self.display).casefold())


class Locator(NamedTuple):
    text: str
    line: int


class Chunk(NamedTuple):
    """One hunk of an Update: optional `@@` locators, then context/removed/added lines."""

    locators: tuple[Locator, ...]
    kinds: str  # one of ' ', '-', '+' per line (a string: no per-line objects for the GC)
    texts: tuple[str, ...]
    end_of_file: bool
    line: int

    @property
    def lines(self) -> tuple[tuple[LineKind, str], ...]:
        return tuple(zip(self.kinds, self.texts, strict=True))  # type: ignore[arg-type]

    @property
    def old_lines(self) -> list[str]:
        return [text for kind, text in zip(self.kinds, self.texts, strict=True) if kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for kind, text in zip(self.kinds, self.texts, strict=True) if kind != "-"]


class AddFile(NamedTuple):
    path: PatchPath
    lines: tuple[str, ...]

    @property
    def line(self) -> int:
        return self.path.line


class DeleteFile(NamedTuple):
    path: PatchPath

    @property
    def line(self) -> int:
        return self.path.line


class UpdateFile(NamedTuple):
    path: PatchPath
    move_to: PatchPath | None
    chunks: tuple[Chunk, ...]

    @property
    def line(self) -> int:
        return self.path.line


Operation = AddFile | DeleteFile | UpdateFile


class Patch(NamedTuple):
    operations: tuple[Operation, ...]


_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _is_drive(segment: str) -> bool:
    """`C:`, `c:x`: a segment starting with an ASCII letter and a colon (no `re`: its
    compiler is a noticeable part of a one-patch process)."""
    return len(segment) >= 2 and segment[1] == ":" and segment[0] in _ASCII_LETTERS


def _hunk_error(line: int, message: str) -> PatchSyntaxError:
    return PatchSyntaxError(f"Invalid patch hunk on line {line}: {message}", line=line)


def _envelope_error(message: str, line: int | None = None) -> PatchSyntaxError:
    return PatchSyntaxError(f"Invalid patch: {message}", line=line)


def parse_path(raw: str, line: int) -> PatchPath:
    """Validate one header path; refuse anything that could leave the working directory."""
    if "\x00" in raw:
        raise _hunk_error(
            line, f"The path {raw!r} contains a NUL character. Use a plain relative path."
        )
    if raw == "" or raw.isspace():
        raise _hunk_error(line, "The path is empty. Write a relative path after the header.")
    if raw[0].isspace() or raw[-1].isspace():
        raise _hunk_error(
            line,
            f"The path '{raw}' has leading or trailing whitespace. "
            "Write the path right after the header's single space, with nothing after it.",
        )
    if raw[0] in "/\\":
        raise _hunk_error(
            line,
            f"The path '{raw}' is absolute. Use a path relative to the working directory.",
        )
    segments = raw.replace("\\", "/").split("/")  # either separator
    if any(_is_drive(seg) for seg in segments):
        raise _hunk_error(
            line,
            f"The path '{raw}' contains a drive-letter segment (like 'C:'). "
            "Use a path relative to the working directory.",
        )
    if ".." in segments:
        raise _hunk_error(
            line,
            f"The path '{raw}' contains '..'. Paths must stay inside the working directory; "
            "write the path relative to it without '..'.",
        )
    parts = tuple(seg for seg in segments if seg not in ("", "."))
    if not parts or all(ch in "./\\" for ch in raw):
        raise _hunk_error(line, f"The path '{raw}' names no file. Write a relative file path.")
    return PatchPath(raw=raw, parts=parts, line=line)


def split_patch_lines(patch: str) -> list[str]:
    """Split on LF only (never `str.splitlines`) and drop one trailing empty line."""
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_patch(patch: str) -> Patch:
    """Parse a whole envelope or raise `PatchSyntaxError` with the exact rejection text."""
    cr = patch.find("\r")
    if cr != -1:
        line = patch.count("\n", 0, cr) + 1
        raise _envelope_error(
            f"The patch contains a carriage return (CR) character on line {line}. "
            "Send every patch line ending with LF only; CRLF files are still matched and "
            "keep their CRLF line endings."
        )
    lines = split_patch_lines(patch)
    if not lines or lines[0] != BEGIN_PATCH:
        raise _envelope_error(
            "The first line of the patch must be '*** Begin Patch'" + _first_line_hint(lines), 1
        )
    if len(lines) < 2 or lines[-1] != END_PATCH:
        raise _envelope_error(
            "The last line of the patch must be '*** End Patch'" + _last_line_hint(lines),
            len(lines),
        )
    parser = _SectionParser(lines)
    operations = parser.parse()
    if not operations:
        raise _envelope_error(
            "The patch contains no file operations. Put at least one '*** Add File: ', "
            "'*** Delete File: ' or '*** Update File: ' section between '*** Begin Patch' "
            "and '*** End Patch'.",
            2,
        )
    check_path_conflicts(operations)
    return Patch(operations=tuple(operations))


_FENCES = ("```", "~~~")
_FENCE_HINT = (
    ". Remove the Markdown code fence lines (```): send only the patch, from "
    "'*** Begin Patch' to '*** End Patch'."
)


def _first_line_hint(lines: list[str]) -> str:
    """What to do about the commonest wrong first lines (Codex's own text comes first).

    A Markdown fence around the envelope, and a patch sent as one line with literal
    backslash-n escapes, are the two mistakes models make most; each gets its own fix.
    """
    first = lines[0] if lines else ""
    if first.lstrip().startswith(_FENCES):
        return _FENCE_HINT
    if BEGIN_PATCH in first and "\\n" in first:
        return (
            ". The patch arrived with literal \\n escapes (a backslash followed by n) instead "
            "of line breaks: separate the patch lines with real newline characters, not "
            "backslash-n."
        )
    if BEGIN_PATCH in first:
        return ". Write that line exactly as '*** Begin Patch', with nothing before or after it."
    if BEGIN_PATCH in lines:
        return (
            f". Line {lines.index(BEGIN_PATCH) + 1} is '*** Begin Patch': remove every line "
            "before it."
        )
    return ""


def _last_line_hint(lines: list[str]) -> str:
    """What to do about a wrong last line: a closing fence, text after it, or a cut-off patch."""
    last = lines[-1] if len(lines) > 1 else ""
    if last.lstrip().startswith(_FENCES):
        return _FENCE_HINT
    if END_PATCH in lines[1:]:
        end = len(lines) - 1 - lines[::-1].index(END_PATCH)
        return f". Line {end + 1} is '*** End Patch': remove every line after it."
    if END_PATCH in last:
        return ". Write that line exactly as '*** End Patch', with nothing before or after it."
    return ". If the patch was cut off, send it again in full, ending with '*** End Patch'."


class _SectionParser:
    """Walks lines 2..n-1 of the envelope (1-based patch line numbers in every message)."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.end = len(lines) - 1  # index of the End Patch line
        self.i = 1

    def parse(self) -> list[Operation]:
        ops: list[Operation] = []
        while self.i < self.end:
            line = self.lines[self.i]
            number = self.i + 1
            if line.startswith(ADD_FILE):
                ops.append(self._add(parse_path(line[len(ADD_FILE) :], number)))
            elif line.startswith(DELETE_FILE):
                ops.append(DeleteFile(parse_path(line[len(DELETE_FILE) :], number)))
                self.i += 1
            elif line.startswith(UPDATE_FILE):
                ops.append(self._update(parse_path(line[len(UPDATE_FILE) :], number)))
            else:
                raise _hunk_error(
                    number,
                    f"'{line}' is not a valid hunk header. Valid hunk headers: "
                    "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
                )
        return ops

    def _add(self, path: PatchPath) -> AddFile:
        self.i += 1
        content: list[str] = []
        while self.i < self.end:
            line = self.lines[self.i]
            if line.startswith("+"):
                content.append(line[1:])
                self.i += 1
            elif line.startswith(SECTION_PREFIX):
                break
            else:
                raise _hunk_error(
                    self.i + 1,
                    f"Unexpected line found in add file hunk for path '{path.display}': "
                    f"'{line}'. Every line of an added file must start with '+' "
                    "(write '+' alone for an empty line).",
                )
        if not content:
            raise _hunk_error(
                path.line,
                f"Add file hunk for path '{path.display}' is empty. Give the new file's "
                "contents as one or more '+' lines.",
            )
        return AddFile(path=path, lines=tuple(content))

    def _update(self, path: PatchPath) -> UpdateFile:
        self.i += 1
        move_to: PatchPath | None = None
        if self.i < self.end and self.lines[self.i].startswith(MOVE_TO):
            move_to = parse_path(self.lines[self.i][len(MOVE_TO) :], self.i + 1)
            self.i += 1
        chunks: list[Chunk] = []
        locators: list[Locator] = []
        kinds: list[str] = []
        body: list[str] = []
        chunk_line: int | None = None
        end_of_file = False
        while self.i < self.end:
            line = self.lines[self.i]
            number = self.i + 1
            if line.startswith(SECTION_PREFIX) and line != END_OF_FILE:
                break
            if line == END_OF_FILE:
                if not body:
                    raise _hunk_error(number, "Update hunk does not contain any lines")
                end_of_file = True
                self.i += 1
                if self.i < self.end and not self.lines[self.i].startswith(SECTION_PREFIX):
                    raise _hunk_error(
                        self.i + 1,
                        f"'*** End of File' must be the last line of the update of "
                        f"'{path.display}'. Move the hunk that touches the end of the file "
                        "last, or drop the marker.",
                    )
                break
            if line.startswith("@@"):
                if line != "@@" and not line.startswith("@@ "):
                    raise _hunk_error(number, _unexpected_update_line(line))
                if line == "@@ ":
                    raise _hunk_error(
                        number,
                        "'@@ ' has an empty locator. Write '@@' alone, or '@@ ' followed by "
                        "the text of a line in the file (such as a function or class header).",
                    )
                if body:
                    chunks.append(
                        Chunk(
                            tuple(locators),
                            "".join(kinds),
                            tuple(body),
                            False,
                            chunk_line or number,
                        )
                    )
                    locators, kinds, body, chunk_line = [], [], [], None
                if chunk_line is None:
                    chunk_line = number
                if line != "@@":
                    locators.append(Locator(line[3:], number))
                self.i += 1
                if self.i >= self.end or self.lines[self.i].startswith(SECTION_PREFIX):
                    raise _hunk_error(number, "Update hunk does not contain any lines")
                continue
            if line == "":
                kinds.append(" ")
                body.append("")
            elif line[0] in " -+":
                kinds.append(line[0])
                body.append(line[1:])
            else:
                raise _hunk_error(number, _unexpected_update_line(line))
            if chunk_line is None:
                chunk_line = number
            self.i += 1
        if body:
            chunks.append(
                Chunk(tuple(locators), "".join(kinds), tuple(body), end_of_file, chunk_line or 0)
            )
        if not chunks:
            if move_to is not None:
                return UpdateFile(path=path, move_to=move_to, chunks=())  # a pure rename
            raise _hunk_error(
                path.line,
                f"Update file hunk for path '{path.display}' is empty. Add a hunk ('@@', then "
                "'-'/'+' lines), or follow the header with '*** Move to: <new path>' to only "
                "rename the file.",
            )
        for chunk in chunks:
            _check_chunk(chunk, path)
        return UpdateFile(path=path, move_to=move_to, chunks=tuple(chunks))


def _check_chunk(chunk: Chunk, path: PatchPath) -> None:
    """Refuse hunks that would change nothing, or add lines with nothing saying where.

    Codex applies both silently: a context-only hunk is a no-op, and a pure addition goes to
    the end of the file even after an `@@ <locator>` (toolkit: a locator moves the cursor
    after it; a pure addition needs an anchor).
    """
    if "+" not in chunk.kinds and "-" not in chunk.kinds:
        raise _hunk_error(
            chunk.line,
            f"The hunk for '{path.display}' has only context lines (' ') and no '+' or '-' "
            "line, so it would change nothing. Add the '-' lines to remove and the '+' lines "
            "to add, or drop the hunk.",
        )
    if chunk.kinds.strip("+") or chunk.locators or chunk.end_of_file:
        return
    raise _hunk_error(
        chunk.line,
        f"The hunk for '{path.display}' only adds lines ('+') and nothing says where they go. "
        "Anchor it: put ' ' context lines (the file's lines just before and after the new "
        "ones) around the '+' lines, or start the hunk with '@@ <exact text of the line to "
        "insert after>', or end the update with '*** End of File' to append at the end of the "
        "file.",
    )


def _unexpected_update_line(line: str) -> str:
    return (
        f"Unexpected line found in update hunk: '{line}'. Every line should start with "
        "' ' (context line), '+' (added line), or '-' (removed line)"
    )


def operation_paths(op: Operation) -> list[PatchPath]:
    if isinstance(op, UpdateFile) and op.move_to is not None:
        return [op.path, op.move_to]
    return [op.path]


def check_path_conflicts(operations: list[Operation]) -> None:
    """Refuse two sections on one file, or a file that is also another path's directory."""
    seen: dict[str, PatchPath] = {}
    for op in operations:
        for path in operation_paths(op):
            other = seen.get(path.key)
            if other is not None:
                raise PathConflictError(
                    f"Invalid patch: '{other.display}' (line {other.line}) and "
                    f"'{path.display}' (line {path.line}) name the same file "
                    "(paths are compared ignoring case and Unicode normalization). "
                    "Change each file in one section only.",
                    line=path.line,
                )
            seen[path.key] = path
    for path in seen.values():
        key_parts = path.key.split("/")
        for depth in range(1, len(key_parts)):
            ancestor = seen.get("/".join(key_parts[:depth]))
            if ancestor is not None:
                raise PathConflictError(
                    f"Invalid patch: '{path.display}' (line {path.line}) is inside "
                    f"'{ancestor.display}' "
                    f"(line {ancestor.line}), which the patch also treats as a file. A path "
                    "cannot be both a file and a directory; split this into two patches.",
                    line=path.line,
                )
