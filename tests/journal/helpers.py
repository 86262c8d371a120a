"""Building records for journal tests (not a test module)."""

from __future__ import annotations

import time

from pct_runtime.journal import CallRecord, PatchFile, new_call_id


def make_record(
    tool: str = "exec_command",
    *,
    session: str | None = "s-1",
    summary: str = "echo hi",
    result: str = "hi",
    outcome: str = "ok",
    patch_files: tuple[PatchFile, ...] = (),
    when: float | None = None,
    call_id: str | None = None,
    transport: str = "stdio",
) -> CallRecord:
    return CallRecord(
        call_id=call_id or new_call_id(),
        seq=0,
        time=time.time() if when is None else when,
        session_id=session,
        client_name="codex",
        client_version="1.2.3",
        model="openai/gpt-5.1",
        tool=tool,
        transport=transport,
        path="direct",
        parent_call_id=None,
        summary=summary,
        outcome=outcome,  # type: ignore[arg-type]
        error_code=None if outcome == "ok" else "boom",
        duration_ms=1.5,
        result_text=result,
        recovery_paths=("pct-output-x/x.log",) if tool == "exec_command" else (),
        patch_files=patch_files,
    )
