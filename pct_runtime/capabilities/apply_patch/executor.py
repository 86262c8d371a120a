"""Preflight, stage and commit a parsed patch under one working directory.

Order (each step only starts when the previous one passed for the whole patch):
1. resolve the working directory; parse the whole patch;
2. walk every path from the working directory: no symbolic link anywhere, every parent a
   directory; Add and Move destinations must not exist, Update and Delete sources must be
   regular files; no two paths may be the same file on disk; every new name and whole path
   fits the file system's NAME_MAX and PATH_MAX (`pathlimits`);
3. read and validate every source (UTF-8, one line-ending style) and match every hunk;
4. (optional approval by the caller, between `prepare_patch` and `commit_prepared`);
5. abort check, remove staging files of dead writers in the directories the patch touches
   (`staging`), stage every new content as `.pct-apply-patch-<pid>-<uuid>.tmp` next to its
   target (exclusive create, the source's mode from the first byte), abort check;
6. commit in patch order by mkdir/rename/unlink. A failure here reports what was already
   committed and what is unknown; nothing is retried or rolled back.
Steps 5–6 (from the recheck of the sources to the witness's post-images) run under the
working directory's lock when the caller gives its folder (`workspace_lock`), so an undo
of the same files waits, and a patch that waited sees what the undo changed.

This is static containment, not a race-proof sandbox: a process that swaps a checked path
component for a link between steps 2 and 6 is outside the threat model.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pct_runtime.capabilities import base
from pct_runtime.capabilities.apply_patch.collector import collector_paused
from pct_runtime.capabilities.apply_patch.errors import (
    ApplyPatchError,
    CommitError,
    PatchAbortedError,
    PreflightError,
)
from pct_runtime.capabilities.apply_patch.matcher import apply_chunks
from pct_runtime.capabilities.apply_patch.parser import (
    AddFile,
    DeleteFile,
    Patch,
    PatchPath,
    UpdateFile,
    parse_patch,
)
from pct_runtime.capabilities.apply_patch.pathlimits import check_staging_room
from pct_runtime.capabilities.apply_patch.source import Rewrite
from pct_runtime.capabilities.apply_patch.staging import remove_stale_staging, staging_name
from pct_runtime.capabilities.apply_patch.walk import OPEN_CLOEXEC as _OPEN_CLOEXEC
from pct_runtime.capabilities.apply_patch.walk import OPEN_NOFOLLOW as _OPEN_NOFOLLOW
from pct_runtime.capabilities.apply_patch.walk import abs_path as _abs
from pct_runtime.capabilities.apply_patch.walk import check_new as _check_new
from pct_runtime.capabilities.apply_patch.walk import identity as _identity
from pct_runtime.capabilities.apply_patch.walk import kind_name as _kind_name
from pct_runtime.capabilities.apply_patch.walk import read_source as _read_source
from pct_runtime.capabilities.apply_patch.walk import walk_path as _walk
from pct_runtime.capabilities.apply_patch.workspace_lock import (
    WAIT_SECONDS,
    LockAbortedError,
    LockTimeoutError,
    WorkspaceLock,
)
from pct_runtime.jsontypes import JSONObject

OperationName = Literal["add", "update", "delete", "move"]
AbortCheck = Callable[[], bool]

_NEW_FILE_MODE = 0o666


@dataclass(frozen=True)
class OperationSummary:
    """One line of the result: what happened to which path (`from_path` only for a move)."""

    operation: OperationName
    path: str
    from_path: str | None = None

    @property
    def text(self) -> str:
        if self.operation == "move":
            return f"- move {self.from_path} -> {self.path}"
        return f"- {self.operation} {self.path}"

    def to_details(self) -> dict[str, str]:
        out = {"operation": self.operation, "path": self.path}
        if self.from_path is not None:
            out["from"] = self.from_path
        return out


@dataclass(frozen=True)
class ApplyResult:
    operations: tuple[OperationSummary, ...]

    @property
    def text(self) -> str:
        return "\n".join(["Applied patch:", *(op.text for op in self.operations)])

    @property
    def details(self) -> JSONObject:
        return {"operations": [op.to_details() for op in self.operations]}


@dataclass
class _Plan:
    summary: OperationSummary
    kind: Literal["add", "update", "delete", "rename"]
    target: str  # absolute path written (or unlinked for a delete)
    source: str | None  # absolute path read (update/move/delete)
    content: bytes | Rewrite | None  # a Rewrite is written piece by piece while staging
    mode: int | None  # exact mode for the staged file; None → new-file default
    missing_dirs: list[str]
    stage_dir: str
    source_identity: tuple[int, int, int, int] | None = None
    staged: str | None = None


@dataclass
class PreparedPatch:
    """A fully validated patch: every check done, nothing written yet.

    `summary`/`patch` are what an approval step shows; `commit_prepared` applies it.
    """

    cwd: str
    patch: str
    parsed: Patch
    plans: list[_Plan] = field(default_factory=list)

    @property
    def summary(self) -> tuple[OperationSummary, ...]:
        return tuple(plan.summary for plan in self.plans)


def _resolve_cwd(cwd: Path | str) -> str:
    real = os.path.realpath(cwd)
    if not os.path.isdir(real):
        raise PreflightError(
            f"Cannot apply patch: the working directory '{cwd}' does not exist or is not a "
            "directory. Nothing was changed."
        )
    return real


def prepare_patch(patch: str, cwd: Path | str) -> PreparedPatch:
    """Parse and preflight a whole patch (steps 1–3). Raises an `ApplyPatchError`; never writes."""
    with collector_paused():
        return _prepare(patch, cwd)


def _prepare(patch: str, cwd: Path | str) -> PreparedPatch:
    real_cwd = _resolve_cwd(cwd)
    parsed = parse_patch(patch)
    prepared = PreparedPatch(cwd=real_cwd, patch=patch, parsed=parsed)
    for op in parsed.operations:  # step 2 for every path before reading any file
        _walk(real_cwd, op.path, new=isinstance(op, AddFile))
        if isinstance(op, UpdateFile) and op.move_to is not None:
            _walk(real_cwd, op.move_to, new=True)
    seen: dict[object, PatchPath] = {}
    for op in parsed.operations:
        try:
            plan = _plan(real_cwd, op)
        except OSError as exc:
            raise PreflightError(
                f"Cannot apply patch: checking '{op.path.display}' (patch line {op.line}) "
                f"failed: {exc.strerror or exc}. Nothing was changed."
            ) from None
        for key, path in _aliases(real_cwd, op, plan):
            other = seen.get(key)
            if other is not None:
                raise PreflightError(
                    f"Cannot apply patch: '{other.display}' (patch line {other.line}) and "
                    f"'{path.display}' (patch line {path.line}) are the same file on disk. "
                    "Change each file in one section only. Nothing was changed."
                )
            seen[key] = path
        prepared.plans.append(plan)
    return prepared


def _aliases(
    cwd: str, op: AddFile | DeleteFile | UpdateFile, plan: _Plan
) -> list[tuple[object, PatchPath]]:
    keys: list[tuple[object, PatchPath]] = []
    if plan.source_identity is not None:
        keys.append((plan.source_identity[:2], op.path))
    if plan.kind == "add" or plan.summary.operation == "move":
        dest = op.move_to if isinstance(op, UpdateFile) and op.move_to else op.path
        parent_real = os.path.realpath(plan.stage_dir)
        rel = os.path.relpath(plan.target, plan.stage_dir)
        keys.append((os.path.normcase(os.path.join(parent_real, rel)).casefold(), dest))
    return keys


def _plan(cwd: str, op: AddFile | DeleteFile | UpdateFile) -> _Plan:
    if isinstance(op, AddFile):
        missing, stage_dir = _check_new(cwd, op.path, None)
        content = ("\n".join(op.lines) + "\n").encode("utf-8")
        return _Plan(
            OperationSummary("add", op.path.display),
            "add",
            _abs(cwd, op.path),
            None,
            content,
            None,
            missing,
            stage_dir,
        )
    if isinstance(op, DeleteFile):
        _, st = _read_source(cwd, op.path, "delete")
        target = _abs(cwd, op.path)
        return _Plan(
            OperationSummary("delete", op.path.display),
            "delete",
            target,
            target,
            None,
            None,
            [],
            os.path.dirname(target),
            _identity(st),
        )
    if op.move_to is not None and not op.chunks:
        return _rename_plan(cwd, op.path, op.move_to)
    source, st = _read_source(cwd, op.path, "update")
    updated = Rewrite(source, apply_chunks(source, op.chunks, op.path.display))
    source_abs = _abs(cwd, op.path)
    mode = stat.S_IMODE(st.st_mode)
    if op.move_to is None:
        check_staging_room(os.path.dirname(source_abs), op.path)
        return _Plan(
            OperationSummary("update", op.path.display),
            "update",
            source_abs,
            source_abs,
            updated,
            mode,
            [],
            os.path.dirname(source_abs),
            _identity(st),
        )
    missing, stage_dir = _check_new(cwd, op.move_to, op.path)
    return _Plan(
        OperationSummary("move", op.move_to.display, op.path.display),
        "update",
        _abs(cwd, op.move_to),
        source_abs,
        updated,
        mode,
        missing,
        stage_dir,
        _identity(st),
    )


def _rename_plan(cwd: str, path: PatchPath, move_to: PatchPath) -> _Plan:
    """A move without hunks: the file is renamed as is (any bytes, its mode and inode kept),
    so nothing is decoded or staged. Onto another file system a rename would fail at commit,
    so there the bytes are staged next to the destination instead (the inode is new)."""
    walk = _walk(cwd, path)
    if walk.stat is None or not stat.S_ISREG(walk.stat.st_mode):
        problem = "does not exist" if walk.stat is None else f"is {_kind_name(walk.stat)}"
        raise PreflightError(
            f"Cannot move '{path.display}' (patch line {path.line}): it {problem}; "
            "apply_patch only moves files. Nothing was changed."
        )
    missing, stage_dir = _check_new(cwd, move_to, path)
    source_abs = _abs(cwd, path)
    summary = OperationSummary("move", move_to.display, path.display)
    target = _abs(cwd, move_to)
    if _same_device(walk.stat, stage_dir):
        return _Plan(
            summary,
            "rename",
            target,
            source_abs,
            None,
            None,
            missing,
            stage_dir,
            _identity(walk.stat),
        )
    data, st = _read_bytes(source_abs, path)
    return _Plan(
        summary,
        "update",
        target,
        source_abs,
        data,
        stat.S_IMODE(st.st_mode),
        missing,
        stage_dir,
        _identity(st),
    )


def _same_device(st: os.stat_result, directory: str) -> bool:
    return os.lstat(directory).st_dev == st.st_dev


def _read_bytes(source: str, path: PatchPath) -> tuple[bytes, os.stat_result]:
    try:
        fd = os.open(source, os.O_RDONLY | _OPEN_NOFOLLOW | _OPEN_CLOEXEC)
    except OSError as exc:
        raise PreflightError(
            f"Cannot move '{path.display}' (patch line {path.line}): reading it failed: "
            f"{exc.strerror or exc}. Nothing was changed."
        ) from None
    try:
        with io.FileIO(fd, closefd=False) as raw:
            return raw.readall(), os.fstat(fd)
    finally:
        os.close(fd)


def _touched_directories(plans: list[_Plan]) -> list[str]:
    """Existing directories the patch writes in: staging dirs and moved or deleted sources'."""
    dirs = [plan.stage_dir for plan in plans]
    dirs += [os.path.dirname(plan.source) for plan in plans if plan.source is not None]
    return dirs


def _cleanup(plans: list[_Plan]) -> None:
    for plan in plans:
        if plan.staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(plan.staged)
            plan.staged = None


def _stage(plan: _Plan) -> None:
    assert plan.content is not None
    staged = os.path.join(plan.stage_dir, staging_name())
    create_mode = _NEW_FILE_MODE if plan.mode is None else plan.mode & 0o777
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_NOFOLLOW | _OPEN_CLOEXEC
    fd = os.open(staged, flags, create_mode)
    plan.staged = staged
    try:
        if plan.mode is not None:
            os.fchmod(fd, plan.mode)  # restore bits the umask stripped; never wider than source
        blocks = [plan.content] if isinstance(plan.content, bytes) else plan.content.pieces()
        _write_all(fd, blocks)
    finally:
        os.close(fd)


_IOV_BATCH = 512  # well under IOV_MAX (1024 on Linux)


def _write_all(fd: int, pieces: Iterable[bytes | memoryview]) -> None:
    """Write every piece in order with few system calls (an edit is often one short line)."""
    batch: list[memoryview] = []
    for piece in pieces:
        if len(piece):
            batch.append(memoryview(piece))
            if len(batch) == _IOV_BATCH:
                _writev_all(fd, batch)
                batch = []
    if batch:
        _writev_all(fd, batch)


def _writev_all(fd: int, views: list[memoryview]) -> None:
    while views:
        written = os.writev(fd, views)
        done = 0
        while done < len(views) and written >= len(views[done]):
            written -= len(views[done])
            done += 1
        views = views[done:]
        if views and written:
            views[0] = views[0][written:]


def _recheck(prepared: PreparedPatch) -> None:
    """Sources must be exactly what was validated (an approval may have taken a while)."""
    for plan, op in zip(prepared.plans, prepared.parsed.operations, strict=True):
        if plan.source is not None:
            try:
                st = os.lstat(plan.source)
            except OSError:
                st = None
            if st is None or _identity(st) != plan.source_identity:
                raise PreflightError(
                    f"Cannot apply patch: '{op.path.display}' changed on disk after the patch "
                    "was checked. Re-read the file and send the patch again. Nothing was changed."
                )
        is_new = plan.kind == "add" or plan.summary.operation == "move"
        if is_new and os.path.lexists(plan.target):
            raise PreflightError(
                f"Cannot apply patch: '{plan.summary.path}' appeared on disk after the "
                "patch was checked. Re-read and send the patch again. Nothing was changed."
            )


def commit_prepared(
    prepared: PreparedPatch,
    should_abort: AbortCheck | None = None,
    witness: base.PatchWitness | None = None,
    locks: Path | None = None,
) -> ApplyResult:
    """Stage and commit a `PreparedPatch` (steps 5–6). Raises an `ApplyPatchError`.

    `witness` (the journal) sees every changed path just before the first rename and
    once the commit is over; its failures never affect the patch. `locks` (the agent dir's
    workspace locks) serializes the commit with `pct undo` of the same working directory:
    the recheck, the commit and the post-images all run under the lock.
    """
    with collector_paused():
        if locks is None:
            return _commit(prepared, should_abort, witness)
        return _commit_locked(prepared, should_abort, witness, locks)


def _commit_locked(
    prepared: PreparedPatch,
    should_abort: AbortCheck | None,
    witness: base.PatchWitness | None,
    locks: Path,
) -> ApplyResult:
    try:
        held: WorkspaceLock | None = WorkspaceLock.acquire(locks, prepared.cwd, should_abort)
    except LockAbortedError:
        raise PatchAbortedError("Apply Patch was cancelled before any file changed.") from None
    except LockTimeoutError:
        raise PreflightError(
            "Cannot apply patch: another pct process (a patch or an undo) kept this working "
            f"directory locked for {WAIT_SECONDS:.0f} s. Send the patch again in a moment. "
            "Nothing was changed."
        ) from None
    except OSError:
        held = None  # an unusable lock folder: undo needs the lock too, so none races this
    try:
        return _commit(prepared, should_abort, witness)
    finally:
        if held is not None:
            held.release()


def _changed_paths(plans: list[_Plan]) -> list[str]:
    paths: list[str] = []
    for plan in plans:
        if plan.source is not None:
            paths.append(plan.source)
        paths.append(plan.target)
    return list(dict.fromkeys(paths))


def _witness(call: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):  # the journal never fails a patch
        call()


def _commit(
    prepared: PreparedPatch,
    should_abort: AbortCheck | None,
    witness: base.PatchWitness | None = None,
) -> ApplyResult:
    _recheck(prepared)
    plans = prepared.plans
    if should_abort is not None and should_abort():
        raise PatchAbortedError("Apply Patch was cancelled before any file changed.")
    remove_stale_staging(_touched_directories(plans))
    for plan in plans:
        if plan.content is None:
            continue
        try:
            _stage(plan)
        except OSError as exc:
            _cleanup(plans)
            raise PreflightError(
                f"Cannot apply patch: preparing the new content of '{plan.summary.path}' "
                f"failed: {exc.strerror or exc}. Nothing was changed."
            ) from None
    if should_abort is not None and should_abort():
        _cleanup(plans)
        raise PatchAbortedError("Apply Patch was cancelled before any file changed.")
    if witness is None:
        return _commit_plans(plans)
    changed = _changed_paths(plans)
    _witness(lambda: witness.before_commit(changed, prepared.cwd))
    try:
        return _commit_plans(plans)
    finally:
        _witness(witness.after_commit)


def _commit_plans(plans: list[_Plan]) -> ApplyResult:
    done: list[OperationSummary] = []
    for index, plan in enumerate(plans):
        try:
            _commit_one(plan)
        except _PartialMove as exc:
            _cleanup(plans)
            raise _commit_error(plans, index, done, exc.reason, partial=True) from None
        except OSError as exc:
            _cleanup(plans)
            raise _commit_error(
                plans, index, done, exc.strerror or str(exc), partial=False
            ) from None
        done.append(plan.summary)
    return ApplyResult(tuple(done))


class _PartialMove(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _commit_one(plan: _Plan) -> None:
    for directory in plan.missing_dirs:
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(directory).st_mode):
                raise
    if plan.kind == "delete":
        os.unlink(plan.target)
        return
    if plan.kind == "rename":
        assert plan.source is not None
        os.rename(plan.source, plan.target)
        return
    assert plan.staged is not None
    os.rename(plan.staged, plan.target)
    plan.staged = None
    if plan.summary.operation == "move":
        assert plan.source is not None
        try:
            os.unlink(plan.source)
        except OSError as exc:
            raise _PartialMove(
                f"'{plan.summary.path}' was written but removing '{plan.summary.from_path}' "
                f"failed: {exc.strerror or exc}"
            ) from None


def _commit_error(
    plans: list[_Plan], index: int, done: list[OperationSummary], reason: str, *, partial: bool
) -> CommitError:
    failed = plans[index].summary
    outcome = "partially applied" if partial else "outcome unknown"
    lines = [
        f"Patch partially applied: committing '{failed.text[2:]}' failed ({reason}); {outcome}.",
        "Already applied:",
        *([op.text for op in done] or ["(none)"]),
        "Not applied:",
        *([p.summary.text for p in plans[index + 1 :]] or ["(none)"]),
        "Do not resend the whole patch: re-read the affected files and patch only what is "
        "still missing.",
    ]
    return CommitError(
        "\n".join(lines),
        details={
            "committed": [op.to_details() for op in done],
            "failed": {**failed.to_details(), "state": "partial" if partial else "unknown"},
            "not_applied": [p.summary.to_details() for p in plans[index + 1 :]],
        },
    )


def apply_patch_text(
    patch: str,
    cwd: Path | str,
    should_abort: AbortCheck | None = None,
    witness: base.PatchWitness | None = None,
    locks: Path | None = None,
) -> ApplyResult:
    """Parse, preflight, stage and commit in one synchronous call (the CLI and benchmarks)."""
    with collector_paused():
        return commit_prepared(prepare_patch(patch, cwd), should_abort, witness, locks)


__all__ = [
    "ApplyPatchError",
    "ApplyResult",
    "OperationSummary",
    "PreparedPatch",
    "apply_patch_text",
    "commit_prepared",
    "prepare_patch",
]
