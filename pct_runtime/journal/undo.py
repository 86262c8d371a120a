"""Taking a patch back: restore each file's pre-image, only if it is still the post-image.

Every file is checked first (bytes and mode equal to what the patch left, or still absent),
through folders that must be the very ones the patch wrote in (`restore`); one that differs
refuses the whole undo and nothing changes. Then every restored content is staged beside
its target (the same `.pct-apply-patch-<pid>-<uuid>.tmp` names the patch tool stages under,
so a dead writer's leftovers are swept the same way), the folders and files are checked
again, and only then is each renamed into place. All of that runs under the workspace lock
a patch commits under, so an undo and a patch of the same files never both succeed on
stale checks. The undo is journaled as a call of tool `undo` with the files it changed, so
it can itself be undone.
"""

from __future__ import annotations

import difflib
import sqlite3
import time
from collections.abc import Sequence

from pct_runtime.host.system.workspace_lock import (
    LOCKS_DIR_NAME,
    WAIT_SECONDS,
    LockTimeoutError,
    WorkspaceLock,
)
from pct_runtime.journal.blobs import PENDING_PREFIX, sha256_hex
from pct_runtime.journal.records import CallRecord, FileImage, PatchFile, UndoOutcome
from pct_runtime.journal.restore import Content, Refusal, Restore, containment_refusal
from pct_runtime.journal.schema import is_busy
from pct_runtime.journal.store import Journal, JournalError, new_call_id

_RECORD_ATTEMPTS = 5
_DIFF_LIMIT = 2_000_000  # bytes per side beyond which the diff says only "changed"


def _find(journal: Journal, call_id: str | None, session: str | None) -> CallRecord | str:
    if call_id is not None:
        record = journal.get(call_id)
        if record is None:
            return f"No call {call_id} in the journal. Run `pct log` to see the call ids."
        return record
    record = journal.last_undoable(session)
    if record is None:
        where = f" in session {session}" if session else ""
        return f"No patch to undo{where}: the journal has no applied patch that was not undone."
    return record


def _changed_refusal(record: CallRecord, changed: tuple[str, ...]) -> UndoOutcome:
    return UndoOutcome(
        False,
        f"Not undone: {len(changed)} file(s) changed after {record.call_id}: "
        f"{', '.join(changed)}. Nothing was changed.",
        changed_since=changed,
    )


def _refusal(record: CallRecord) -> str | None:
    if not record.patch_files:
        return (
            f"Call {record.call_id} ({record.tool}) changed no file the journal recorded; "
            "only patches and undos can be undone."
        )
    if record.outcome != "ok":
        return f"Call {record.call_id} did not complete ({record.outcome}); it cannot be undone."
    if record.undone_by is not None:
        return f"Call {record.call_id} was already undone by {record.undone_by}."
    return None


def undo_patch(
    journal: Journal,
    call_id: str | None = None,
    *,
    session: str | None = None,
    transport: str = "cli",
) -> UndoOutcome:
    """Undo `call_id` (else the newest undoable patch of `session`). Blocking: files + sqlite."""
    try:  # a `pct apply-patch` row still in the spool may be the newest patch
        journal.ingest_spool()
    except (OSError, sqlite3.Error, JournalError) as exc:
        return UndoOutcome(
            False, f"Not undone: the journal is busy ({exc}). Nothing was changed; try again."
        )
    found = _find(journal, call_id, session)
    if isinstance(found, str):
        return UndoOutcome(False, found)
    refusal = _refusal(found)
    if refusal is not None:
        return UndoOutcome(False, refusal)
    record = _resolved(journal, found)
    if isinstance(record, str):
        return UndoOutcome(False, record)
    uncontained = containment_refusal(record.call_id, record.patch_files)
    if uncontained is not None:
        return UndoOutcome(False, uncontained)
    contents: dict[str, Content] = {}
    for item in record.patch_files:
        if item.before is None:
            contents[item.path] = None
            continue
        data = journal.blobs.read(item.before.sha256)
        if data is None or sha256_hex(data) != item.before.sha256:
            return UndoOutcome(
                False,
                f"Not undone: the saved copy of {item.path} from before {record.call_id} is "
                "no longer stored (pruned by retention, or changed before pct saved it). "
                "Nothing was changed.",
            )
        contents[item.path] = (data, item.before.mode)
    started = time.time()
    clock = time.monotonic()
    refused = _restore_locked(journal, record, contents)
    if refused is not None:
        return refused
    undo_id = new_call_id()
    files = tuple(PatchFile(f.path, f.after, f.before, f.anchor) for f in record.patch_files)
    message = f"Undid {record.call_id}: restored {len(files)} file(s):\n" + "\n".join(
        f"- {_verb(f)} {f.path}" for f in files
    )
    undo_record = CallRecord(
        call_id=undo_id,
        seq=0,
        time=started,
        session_id=record.session_id,
        client_name=None,
        client_version=None,
        model=None,
        tool="undo",
        transport=transport,
        path="direct",
        parent_call_id=None,
        summary=f"undo {record.call_id}: {len(files)} file(s)",
        outcome="ok",
        error_code=None,
        duration_ms=(time.monotonic() - clock) * 1000,
        result_text=message,
        patch_files=files,
        undo_of=record.call_id,
    )
    for attempt in range(_RECORD_ATTEMPTS):  # a runtime's writer may hold the lock briefly
        try:
            journal.record(undo_record)
            return UndoOutcome(True, message, undo_id)
        except sqlite3.OperationalError as exc:
            if attempt + 1 < _RECORD_ATTEMPTS and is_busy(exc):
                time.sleep(0.1 * (attempt + 1))
                continue
            problem: Exception = exc
        except (JournalError, sqlite3.Error) as exc:
            problem = exc
        break
    # The files are back either way; say the record of it is missing.
    return UndoOutcome(True, f"{message}\n(the undo itself was not journaled: {problem})", None)


def _pending(record: CallRecord) -> bool:
    return any(
        image is not None and image.sha256.startswith(PENDING_PREFIX)
        for item in record.patch_files
        for image in (item.before, item.after)
    )


def _resolved(journal: Journal, record: CallRecord) -> CallRecord | str:
    """`record` with its `pending:` images named by content (`pct apply-patch` left them)."""
    if not _pending(record):
        return record
    try:
        journal.resolve_pending(record.call_id)
    except (OSError, sqlite3.Error, JournalError) as exc:
        return (
            f"Not undone: the saved copies of {record.call_id} could not be read ({exc}). "
            "Nothing was changed; try again."
        )
    again = journal.get(record.call_id)
    if again is None:
        return f"No call {record.call_id} in the journal (pruned just now). Nothing was changed."
    return again


def _verb(item: PatchFile) -> str:
    if item.after is None:
        return "removed"
    return "re-created" if item.before is None else "restored"


def _restore_locked(
    journal: Journal, record: CallRecord, contents: dict[str, Content]
) -> UndoOutcome | None:
    """Check and restore every file under the lock of each working directory; None when
    done, else the refusal (nothing changed)."""
    roots = sorted({f.anchor.root for f in record.patch_files if f.anchor is not None})
    held: list[WorkspaceLock] = []
    try:
        for root in roots:  # in one order, so two undos never wait on each other
            held.append(WorkspaceLock.acquire(journal.path.parent / LOCKS_DIR_NAME, root))
    except LockTimeoutError:
        _release(held)
        return UndoOutcome(
            False,
            f"Not undone: another pct process (a patch or an undo) kept {roots[len(held)]} "
            f"locked for {WAIT_SECONDS:.0f} s. Nothing was changed; try again.",
        )
    except OSError as exc:
        _release(held)
        return UndoOutcome(
            False,
            f"Not undone: the lock that keeps patches of {roots[len(held)]} out while undo "
            f"writes could not be taken ({exc.strerror or exc}). Nothing was changed.",
        )
    try:
        return _restore(record, contents)
    finally:
        _release(held)


def _release(held: Sequence[WorkspaceLock]) -> None:
    for lock in held:
        lock.release()


def _restore(record: CallRecord, contents: dict[str, Content]) -> UndoOutcome | None:
    """Open every file's folder, check, stage, check folders and files again, then rename
    into place and unlink the added ones."""
    with Restore(record.call_id, record.patch_files) as restore:
        try:
            restore.open()
            changed = restore.changed()
            if changed:
                return _changed_refusal(record, changed)
            try:
                restore.stage(contents)
            except OSError as exc:
                return UndoOutcome(
                    False,
                    f"Not undone: writing the restored files failed ({exc.strerror or exc}). "
                    "Nothing was changed.",
                )
            restore.recheck_folders()
        except Refusal as refusal:
            return UndoOutcome(False, str(refusal))
        late = restore.changed()
        if late:
            return _changed_refusal(record, late)
        try:
            restore.commit()
        except OSError as exc:
            return UndoOutcome(
                False,
                f"Not undone: renaming the restored files into place failed "
                f"({exc.strerror or exc}); some files may be restored already. Run `pct log` "
                "and check the files it lists.",
            )
    return None


def _workspace_path(item: PatchFile) -> str:
    """The file as the patch named it: relative to the working directory it ran in (its
    anchor's root); the absolute path, without its leading `/`, when outside or unknown."""
    root = item.anchor.root.rstrip("/") + "/" if item.anchor is not None else None
    if root is not None and item.path.startswith(root):
        return item.path[len(root) :]
    return item.path.lstrip("/")


def patch_diff(journal: Journal, record: CallRecord) -> str:
    """A unified diff of every file the call changed, before → after, from the stored blobs."""
    parts: list[str] = []
    resolved = _resolved(journal, record)
    record = resolved if isinstance(resolved, CallRecord) else record
    for item in record.patch_files:
        before = _side(journal, item.before)
        after = _side(journal, item.after)
        name = _workspace_path(item)
        old_name = f"a/{name}" if item.before else "/dev/null"
        new_name = f"b/{name}" if item.after else "/dev/null"
        if before is None or after is None:
            parts.append(f"--- {old_name}\n+++ {new_name}\n(content no longer stored)\n")
            continue
        if isinstance(before, bytes) or isinstance(after, bytes):
            parts.append(f"Binary files {old_name} and {new_name} differ\n")
            continue
        if item.before and item.after and item.before.mode != item.after.mode:
            parts.append(f"old mode {item.before.mode:o}\nnew mode {item.after.mode:o}\n")
        parts.append(
            "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile=old_name,
                    tofile=new_name,
                )
            )
        )
    return "".join(part if part.endswith("\n") else part + "\n" for part in parts if part)


def _side(journal: Journal, image: FileImage | None) -> str | bytes | None:
    """The text of one side ('' for absent), bytes when binary or huge, None when pruned."""
    if image is None:
        return ""
    data = journal.blobs.read(image.sha256)
    if data is None:
        return None
    if len(data) > _DIFF_LIMIT:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
