"""The journal's values: one call, one changed file, a query, an undo's outcome.

Plain frozen dataclasses so the console, `pct log` and tests read the same shapes and
nothing in them can reach back into the database.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pct_runtime.capabilities.base import CallPath

Outcome = Literal["ok", "error", "denied", "cancelled"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "error", "denied", "cancelled")
Transport = Literal["stdio", "http", "console", "cli", "embedded"]


@dataclass(frozen=True)
class FileImage:
    """One side of a changed file: the content address of its bytes and its permission bits.

    `sha256` may also be `pending:<name>:<size>:<mtime_ns>` (taken by `pct apply-patch`, not
    hashed yet: undo and diff name it first) or `lost` (its file changed before it was
    hashed: that side never matches, so undo refuses)."""

    sha256: str
    mode: int


@dataclass(frozen=True)
class Anchor:
    """Where a changed file sat when the patch ran: the working directory's real path and
    the (st_dev, st_ino) of it and of every folder below it down to the file's own. Undo
    writes only inside `root`, and only while each folder is still the same one."""

    root: str
    folders: tuple[tuple[int, int], ...]

    def to_json(self) -> str:
        return json.dumps({"root": self.root, "folders": [list(f) for f in self.folders]})

    @classmethod
    def from_json(cls, text: object) -> Anchor | None:
        """The anchor a row stored; None when absent or not one (undo then refuses)."""
        if not isinstance(text, str):
            return None
        try:
            data = json.loads(text)
            return cls.of(data.get("root"), data.get("folders"))
        except (ValueError, AttributeError):
            return None

    @classmethod
    def of(cls, root: object, folders: object) -> Anchor | None:
        if not isinstance(root, str) or not isinstance(folders, list) or not folders:
            return None
        out: list[tuple[int, int]] = []
        for item in folders:
            if not isinstance(item, list) or len(item) != 2:
                return None
            dev, ino = item
            if not isinstance(dev, int) or not isinstance(ino, int):
                return None
            out.append((dev, ino))
        return cls(root, tuple(out))


@dataclass(frozen=True)
class PatchFile:
    """A file a patch (or an undo) changed; `None` on a side means the file did not exist.
    `anchor` is None on rows of a pct that did not record it: those are not undoable."""

    path: str
    before: FileImage | None
    after: FileImage | None
    anchor: Anchor | None = None


@dataclass(frozen=True)
class CallRecord:
    """One tool call as the journal keeps it (bounded, redacted)."""

    call_id: str
    seq: int
    time: float
    session_id: str | None
    client_name: str | None
    client_version: str | None
    model: str | None
    tool: str
    transport: str
    path: CallPath
    parent_call_id: str | None
    summary: str
    outcome: Outcome
    error_code: str | None
    duration_ms: float
    result_text: str
    recovery_paths: tuple[str, ...] = ()
    patch_files: tuple[PatchFile, ...] = ()
    undo_of: str | None = None
    undone_by: str | None = None

    @property
    def undoable(self) -> bool:
        """A patch that committed and was not taken back yet (the files may still differ)."""
        return bool(self.patch_files) and self.outcome == "ok" and self.undone_by is None

    def to_json(self) -> str:
        """One line of `pct log --json`: every field, snake_case, `undoable` included."""
        data = asdict(self)
        data["undoable"] = self.undoable
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class JournalQuery:
    """Filters of `Journal.query`; every given filter must match (newest first)."""

    session: str | None = None
    tool: str | None = None
    outcome: Outcome | None = None
    text: str | None = None
    since: float | None = None
    before_seq: int | None = None
    limit: int = 200


@dataclass(frozen=True)
class UndoOutcome:
    """What an undo did. `message` is what the user reads; on refusal nothing changed."""

    ok: bool
    message: str
    undo_call_id: str | None = None
    changed_since: tuple[str, ...] = field(default=())
