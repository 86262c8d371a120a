"""Building records, agent dirs and reading rows back for journal tests (not a test module)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pct_runtime.journal import CallRecord, Journal, JournalQuery, PatchFile, new_call_id
from pct_runtime.runtime import Runtime

#: A one-line update of `a.txt` ("one" -> "two"), the patch the CLI journal tests apply.
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"


def run_pct(agent: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real `pct` command on `agent` as the agent dir."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )


def make_root(tmp_path: Path, **config: Any) -> Path:
    """`tmp_path` with an agent dir (apply_patch, shell, Code Mode asking always, plus
    `config`) and an empty `work` dir."""
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    settings = {
        "applyPatch": {"enabled": True},
        "shellSessions": {"enabled": True},
        "codeMode": {"enabled": True, "approvalMode": "always"},
        **config,
    }
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        json.dumps(settings), encoding="utf-8"
    )
    (tmp_path / "work").mkdir()
    return tmp_path


async def flushed_rows(runtime: Runtime) -> list[CallRecord]:
    """The runtime's journal rows, oldest first, once its writer has flushed."""
    assert await asyncio.to_thread(runtime.journal.flush)
    with Journal.open(runtime.agent_dir) as journal:
        return list(reversed(journal.query(JournalQuery(limit=1000))))


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


def sign_row(agent: Path, row: dict[str, object]) -> dict[str, object]:
    """`row` with the authenticator pct's own spool key gives it (the key made if missing)."""
    from pct_runtime.journal import spool

    (agent / "pct").mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = spool.open_dir(agent / "pct")
    try:
        key = spool.load_key(fd, create=True)
    finally:
        os.close(fd)
    assert key is not None
    return {**row, "mac": spool.mac_of(key, row)}


def damage(db: Path) -> None:
    """Garbage over every page but the first (the schema stays readable, so the journal
    opens and its first read fails), as a bad disk or a stray write would leave it."""
    data = db.read_bytes()
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) > page, "a one-page journal has nothing to damage"
    with db.open("r+b") as handle:
        handle.seek(page)
        handle.write(os.urandom(len(data) - page))
