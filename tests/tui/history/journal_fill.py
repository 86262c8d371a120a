"""Filling a journal for History tests (not a test module) through the journal's own API:
a real patch applied with its pre- and post-images stored (so diff and undo work on real
files), and plain calls, as another pct process of the same agent dir would record them."""

from __future__ import annotations

import time
from pathlib import Path

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.journal import CallRecord, Journal, PatchCapture, new_call_id


def call(
    tool: str = "exec_command",
    *,
    session: str = "pct-session-alpha",
    summary: str = "echo hi",
    result: str = "hi",
    outcome: str = "ok",
    when: float | None = None,
    **fields: object,
) -> CallRecord:
    values: dict[str, object] = {
        "call_id": new_call_id(),
        "seq": 0,
        "time": time.time() if when is None else when,
        "session_id": session,
        "client_name": "codex",
        "client_version": "0.63.0",
        "model": "openai/gpt-5.1-codex",
        "tool": tool,
        "transport": "http",
        "path": "direct",
        "parent_call_id": None,
        "summary": summary,
        "outcome": outcome,
        "error_code": None if outcome == "ok" else "boom",
        "duration_ms": 12.0,
        "result_text": result,
    }
    values.update(fields)
    return CallRecord(**values)  # type: ignore[arg-type]


def record(agent_dir: Path, *records: CallRecord) -> None:
    with Journal.open(agent_dir) as journal:
        for item in records:
            journal.record(item)


def apply_and_record(
    agent_dir: Path,
    cwd: Path,
    patch: str,
    *,
    session: str = "pct-session-alpha",
    **fields: object,
) -> CallRecord:
    """Apply `patch` in `cwd` for real, journaling it with its file images."""
    with Journal.open(agent_dir) as journal:
        capture = PatchCapture(journal.blobs)
        result = apply_patch_text(patch, cwd, witness=capture)
        files = capture.files()
        assert files, capture.failed
        item = call(
            "apply_patch",
            session=session,
            summary=f"{len(files)} file(s): " + ", ".join(Path(f.path).name for f in files),
            result=result.text,
            patch_files=files,
            **fields,
        )
        journal.record(item)
        return item
