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

Every folder step 2 walks is opened without following links and held (`walk.HeldFolders`)
until the commit is over; steps 5–6 check that each is still reachable by the same names
(same st_dev/st_ino) and then stage, rename, unlink and create folders only relative to the
held descriptors. A sandboxed job that swaps a folder for a link (to the user's home, say)
gets the patch refused; a swap after that check can at worst make the patch land in the
real (moved) folder, never outside the working directory.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

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
from pct_runtime.capabilities.apply_patch.walk import OPEN_CLOEXEC as _OPEN_CLOEXEC
from pct_runtime.capabilities.apply_patch.walk import OPEN_NOFOLLOW as _OPEN_NOFOLLOW
from pct_runtime.capabilities.apply_patch.walk import HeldFolders, Key, appeared, read_bytes
from pct_runtime.capabilities.apply_patch.walk import abs_path as _abs
from pct_runtime.capabilities.apply_patch.walk import check_new as _check_new
from pct_runtime.capabilities.apply_patch.walk import identity as _identity
from pct_runtime.capabilities.apply_patch.walk import kind_name as _kind_name
from pct_runtime.capabilities.apply_patch.walk import read_source as _read_source
from pct_runtime.capabilities.apply_patch.walk import walk_path as _walk
from pct_runtime.host.system.staging import (
    remove_stale_staging,
    staging_name,
    write_all,
)
from pct_runtime.host.system.workspace_lock import (
    WAIT_SECONDS,
    LockAbortedError,
    LockTimeoutError,
    WorkspaceLock,
)
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:  # only annotations: the tool contract is not loaded by `pct apply-patch`
    from pathlib import Path
    from typing import Literal

    from pct_runtime.capabilities import base
    from pct_runtime.jsontypes import JSONObject

    OperationName = Literal["add", "update", "delete", "move"]
AbortCheck = Callable[[], bool]

_NEW_FILE_MODE = 0o666


# Named tuples and slotted classes, not dataclasses: `pct apply-patch` is a whole process per
# patch, and importing dataclasses and building its classes cost more than applying a
# 400-hunk patch to a 100,000-line file.


class OperationSummary(NamedTuple):
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


class ApplyResult(NamedTuple):
    operations: tuple[OperationSummary, ...]

    @property
    def text(self) -> str:
        return "\n".join(["Applied patch:", *(op.text for op in self.operations)])

    @property
    def details(self) -> JSONObject:
        return {"operations": [op.to_details() for op in self.operations]}


class _Plan:
    """One operation. Paths are for messages and the journal; the file work uses the held
    folders: `target_name` goes in `stage` (or, with `missing` folders, in the last of
    them, created at commit), the staging file in `stage`, the source is `source_name` in
    `source_folder`."""

    __slots__ = (
        "content",
        "kind",
        "missing",
        "mode",
        "source",
        "source_folder",
        "source_identity",
        "source_name",
        "stage",
        "staged",
        "summary",
        "target",
        "target_name",
    )

    def __init__(
        self,
        summary: OperationSummary,
        kind: Literal["add", "update", "delete", "rename"],
        target: str,  # absolute path written (or unlinked for a delete)
        source: str | None,  # absolute path read (update/move/delete)
        content: bytes | Rewrite | None,  # a Rewrite is written piece by piece while staging
        mode: int | None,  # exact mode for the staged file; None → new-file default
        stage: Key,
        target_name: str,
        missing: tuple[str, ...] = (),
        source_folder: Key | None = None,
        source_name: str | None = None,
        source_identity: tuple[int, int, int, int] | None = None,
    ) -> None:
        self.summary = summary
        self.kind = kind
        self.target = target
        self.source = source
        self.content = content
        self.mode = mode
        self.stage = stage
        self.target_name = target_name
        self.missing = missing
        self.source_folder = source_folder
        self.source_name = source_name
        self.source_identity = source_identity
        self.staged: str | None = None  # the staging file's name in `stage`


class PreparedPatch:
    """A fully validated patch: every check done, nothing written yet.

    `summary`/`patch` are what an approval step shows; `commit_prepared` applies it and
    then closes the folders it holds. One that is never committed should be `close`d (the
    garbage collector closes them otherwise).
    """

    __slots__ = ("cwd", "folders", "parsed", "patch", "plans")

    def __init__(self, cwd: str, patch: str, parsed: Patch, folders: HeldFolders) -> None:
        self.cwd = cwd
        self.patch = patch
        self.parsed = parsed
        self.folders = folders
        self.plans: list[_Plan] = []

    @property
    def summary(self) -> tuple[OperationSummary, ...]:
        return tuple(plan.summary for plan in self.plans)

    def close(self) -> None:
        """Close every held folder; the patch can no longer be committed."""
        self.folders.close()

    def __enter__(self) -> PreparedPatch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


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
    held = HeldFolders(real_cwd)
    try:
        prepared = PreparedPatch(cwd=real_cwd, patch=patch, parsed=parsed, folders=held)
        _plan_all(prepared)
    except BaseException:
        held.close()
        raise
    return prepared


def _plan_all(prepared: PreparedPatch) -> None:
    held = prepared.folders
    for op in prepared.parsed.operations:  # step 2 for every path before reading any file
        _walk(held, op.path, new=isinstance(op, AddFile))
        if isinstance(op, UpdateFile) and op.move_to is not None:
            _walk(held, op.move_to, new=True)
    seen: dict[object, PatchPath] = {}
    for op in prepared.parsed.operations:
        try:
            plan = _plan(held, op)
        except OSError as exc:
            raise PreflightError(
                f"Cannot apply patch: checking '{op.path.display}' (patch line {op.line}) "
                f"failed: {exc.strerror or exc}. Nothing was changed."
            ) from None
        for key, path in _aliases(held, op, plan):
            other = seen.get(key)
            if other is not None:
                raise PreflightError(
                    f"Cannot apply patch: '{other.display}' (patch line {other.line}) and "
                    f"'{path.display}' (patch line {path.line}) are the same file on disk. "
                    "Change each file in one section only. Nothing was changed."
                )
            seen[key] = path
        prepared.plans.append(plan)


def _aliases(
    held: HeldFolders, op: AddFile | DeleteFile | UpdateFile, plan: _Plan
) -> list[tuple[object, PatchPath]]:
    keys: list[tuple[object, PatchPath]] = []
    if plan.source_identity is not None:
        keys.append((plan.source_identity[:2], op.path))
    if plan.kind == "add" or plan.summary.operation == "move":
        dest = op.move_to if isinstance(op, UpdateFile) and op.move_to else op.path
        rest = "/".join((*plan.missing, plan.target_name))
        keys.append(((held.identity(plan.stage), os.path.normcase(rest).casefold()), dest))
    return keys


def _plan(held: HeldFolders, op: AddFile | DeleteFile | UpdateFile) -> _Plan:
    cwd = held.cwd
    if isinstance(op, AddFile):
        new = _check_new(held, op.path, None)
        content = ("\n".join(op.lines) + "\n").encode("utf-8")
        return _Plan(
            OperationSummary("add", op.path.display),
            "add",
            _abs(cwd, op.path),
            None,
            content,
            None,
            new.folder,
            new.name,
            new.missing,
        )
    if isinstance(op, DeleteFile):
        _, st, folder = _read_source(held, op.path, "delete")
        target = _abs(cwd, op.path)
        name = op.path.parts[-1]
        return _Plan(
            OperationSummary("delete", op.path.display),
            "delete",
            target,
            target,
            None,
            None,
            folder,
            name,
            (),
            folder,
            name,
            _identity(st),
        )
    if op.move_to is not None and not op.chunks:
        return _rename_plan(held, op.path, op.move_to)
    source, st, folder = _read_source(held, op.path, "update")
    updated = Rewrite(source, apply_chunks(source, op.chunks, op.path.display))
    source_abs = _abs(cwd, op.path)
    mode = stat.S_IMODE(st.st_mode)
    name = op.path.parts[-1]
    if op.move_to is None:
        check_staging_room(os.path.dirname(source_abs), op.path)
        return _Plan(
            OperationSummary("update", op.path.display),
            "update",
            source_abs,
            source_abs,
            updated,
            mode,
            folder,
            name,
            (),
            folder,
            name,
            _identity(st),
        )
    new = _check_new(held, op.move_to, op.path)
    return _Plan(
        OperationSummary("move", op.move_to.display, op.path.display),
        "update",
        _abs(cwd, op.move_to),
        source_abs,
        updated,
        mode,
        new.folder,
        new.name,
        new.missing,
        folder,
        name,
        _identity(st),
    )


def _rename_plan(held: HeldFolders, path: PatchPath, move_to: PatchPath) -> _Plan:
    """A move without hunks: the file is renamed as is (any bytes, its mode and inode kept),
    so nothing is decoded or staged. Onto another file system a rename would fail at commit,
    so there the bytes are staged next to the destination instead (the inode is new)."""
    walk = _walk(held, path)
    if walk.stat is None or not stat.S_ISREG(walk.stat.st_mode):
        problem = "does not exist" if walk.stat is None else f"is {_kind_name(walk.stat)}"
        raise PreflightError(
            f"Cannot move '{path.display}' (patch line {path.line}): it {problem}; "
            "apply_patch only moves files. Nothing was changed."
        )
    new = _check_new(held, move_to, path)
    summary = OperationSummary("move", move_to.display, path.display)
    where = (new.folder, new.name, new.missing, walk.folder, path.parts[-1])
    source_abs, target = _abs(held.cwd, path), _abs(held.cwd, move_to)
    if _same_device(walk.stat, held.fd(new.folder)):
        found = _identity(walk.stat)
        return _Plan(summary, "rename", target, source_abs, None, None, *where, found)
    data, st = read_bytes(held.fd(walk.folder), path)
    mode = stat.S_IMODE(st.st_mode)
    return _Plan(summary, "update", target, source_abs, data, mode, *where, _identity(st))


def _same_device(st: os.stat_result, folder: int) -> bool:
    return os.fstat(folder).st_dev == st.st_dev


def _touched_folders(prepared: PreparedPatch) -> list[int]:
    """Held folders the patch writes in: staging folders and moved or deleted sources'."""
    held = prepared.folders
    keys = [plan.stage for plan in prepared.plans]
    keys += [plan.source_folder for plan in prepared.plans if plan.source_folder is not None]
    return [held.fd(key) for key in dict.fromkeys(keys)]


def _cleanup(prepared: PreparedPatch) -> None:
    for plan in prepared.plans:
        if plan.staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(plan.staged, dir_fd=prepared.folders.fd(plan.stage))
            plan.staged = None


def _stage(plan: _Plan, folder: int) -> None:
    assert plan.content is not None
    staged = staging_name()
    create_mode = _NEW_FILE_MODE if plan.mode is None else plan.mode & 0o777
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_NOFOLLOW | _OPEN_CLOEXEC
    fd = os.open(staged, flags, create_mode, dir_fd=folder)
    plan.staged = staged
    try:
        if plan.mode is not None:
            os.fchmod(fd, plan.mode)  # restore bits the umask stripped; never wider than source
        blocks = [plan.content] if isinstance(plan.content, bytes) else plan.content.pieces()
        write_all(fd, blocks)
    finally:
        os.close(fd)


def _recheck(prepared: PreparedPatch) -> None:
    """Sources must be exactly what was validated (an approval may have taken a while),
    new paths still free, and every held folder still the one reached by its names."""
    _recheck_folders(prepared)
    held = prepared.folders
    for plan, op in zip(prepared.plans, prepared.parsed.operations, strict=True):
        if plan.source_folder is not None and plan.source_name is not None:
            try:
                st = os.lstat(plan.source_name, dir_fd=held.fd(plan.source_folder))
            except OSError:
                st = None
            if st is None or _identity(st) != plan.source_identity:
                raise PreflightError(
                    f"Cannot apply patch: '{op.path.display}' changed on disk after the patch "
                    "was checked. Re-read the file and send the patch again. Nothing was changed."
                )
        is_new = plan.kind == "add" or plan.summary.operation == "move"
        if is_new and appeared(held.fd(plan.stage), (*plan.missing, plan.target_name)):
            raise PreflightError(
                f"Cannot apply patch: '{plan.summary.path}' appeared on disk after the "
                "patch was checked. Re-read and send the patch again. Nothing was changed."
            )


def _recheck_folders(prepared: PreparedPatch) -> None:
    shown: dict[Key, str] = {}
    for plan in prepared.plans:
        for key, path in ((plan.stage, plan.summary.path), (plan.source_folder, None)):
            if key is None:
                continue
            path = path if path is not None else plan.summary.from_path or plan.summary.path
            for depth in range(1, len(key) + 1):
                shown.setdefault(key[:depth], path)
    prepared.folders.still_same(shown)


def commit_prepared(
    prepared: PreparedPatch,
    should_abort: AbortCheck | None = None,
    witness: base.PatchWitness | None = None,
    locks: str | os.PathLike[str] | None = None,
) -> ApplyResult:
    """Stage and commit a `PreparedPatch` (steps 5–6). Raises an `ApplyPatchError`.

    `witness` (the journal) sees every changed path just before the first rename and
    once the commit is over; its failures never affect the patch. `locks` (the agent dir's
    workspace locks) serializes the commit with `pct undo` of the same working directory:
    the recheck, the commit and the post-images all run under the lock.
    """
    try:
        with collector_paused():
            if locks is None:
                return _commit(prepared, should_abort, witness)
            return _commit_locked(prepared, should_abort, witness, locks)
    finally:
        prepared.close()


def _commit_locked(
    prepared: PreparedPatch,
    should_abort: AbortCheck | None,
    witness: base.PatchWitness | None,
    locks: str | os.PathLike[str],
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
    held = prepared.folders
    if should_abort is not None and should_abort():
        raise PatchAbortedError("Apply Patch was cancelled before any file changed.")
    remove_stale_staging(_touched_folders(prepared))
    try:
        for plan in plans:
            if plan.content is None:
                continue
            try:
                _stage(plan, held.fd(plan.stage))
            except OSError as exc:
                raise PreflightError(
                    f"Cannot apply patch: preparing the new content of '{plan.summary.path}' "
                    f"failed: {exc.strerror or exc}. Nothing was changed."
                ) from None
        if should_abort is not None and should_abort():
            raise PatchAbortedError("Apply Patch was cancelled before any file changed.")
        _recheck_folders(prepared)  # as late as possible: the renames follow
    except BaseException:
        _cleanup(prepared)
        raise
    if witness is None:
        return _commit_plans(prepared)
    changed = _changed_paths(plans)
    _witness(lambda: witness.before_commit(changed, prepared.cwd))
    try:
        return _commit_plans(prepared)
    finally:
        _witness(witness.after_commit)


def _commit_plans(prepared: PreparedPatch) -> ApplyResult:
    plans = prepared.plans
    done: list[OperationSummary] = []
    try:
        for index, plan in enumerate(plans):
            try:
                _commit_one(prepared.folders, plan)
            except _PartialMove as exc:
                raise _commit_error(plans, index, done, exc.reason, partial=True) from None
            except OSError as exc:
                raise _commit_error(
                    plans, index, done, exc.strerror or str(exc), partial=False
                ) from None
            done.append(plan.summary)
    except BaseException:
        _cleanup(prepared)
        raise
    return ApplyResult(tuple(done))


class _PartialMove(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _commit_one(held: HeldFolders, plan: _Plan) -> None:
    stage = held.fd(plan.stage)
    folder = stage
    for name in plan.missing:
        folder = held.make(folder, name)
    if plan.kind == "delete":
        os.unlink(plan.target_name, dir_fd=folder)
        return
    if plan.kind == "rename":
        assert plan.source_folder is not None
        assert plan.source_name is not None
        source = held.fd(plan.source_folder)
        os.rename(plan.source_name, plan.target_name, src_dir_fd=source, dst_dir_fd=folder)
        return
    assert plan.staged is not None
    os.rename(plan.staged, plan.target_name, src_dir_fd=stage, dst_dir_fd=folder)
    plan.staged = None
    if plan.summary.operation == "move":
        assert plan.source_folder is not None
        assert plan.source_name is not None
        try:
            os.unlink(plan.source_name, dir_fd=held.fd(plan.source_folder))
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
    locks: str | os.PathLike[str] | None = None,
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
