"""Several pct processes write one journal at once; every row lands."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pct_runtime.journal import Journal, JournalQuery

_CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pct_runtime.journal import CallRecord, JournalWriter, new_call_id

    agent, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    writer = JournalWriter(agent)
    for i in range(count):
        writer.submit(CallRecord(
            call_id=new_call_id(), seq=0, time=time.time(), session_id=name,
            client_name=None, client_version=None, model=None, tool="exec_command",
            transport="stdio", path="direct", parent_call_id=None, summary=f"{name} {i}",
            outcome="ok", error_code=None, duration_ms=0.1, result_text="", ))
    assert writer.flush(60), "flush timed out"
    writer.close()
    print(writer.written, writer.dropped)
    """
)


def test_four_processes_write_one_journal(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    count = 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(tmp_path), f"proc-{n}", str(count)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outputs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            outputs.append(out.split())
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with Journal.open(tmp_path) as journal:
        rows = journal.query(JournalQuery(limit=10_000))
    written = sum(int(w) for w, _ in outputs)
    assert len(rows) == written
    # Under this load a writer may give up on a lock; it says so, it does not lose silently.
    assert written + sum(int(d) for _, d in outputs) == 4 * count
    assert written >= 4 * count * 0.95
    for n in range(4):
        mine = [r.summary for r in rows if r.session_id == f"proc-{n}"]
        assert mine == sorted(mine, key=lambda s: int(s.split()[1]), reverse=True)


_RUNTIME_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from pct_runtime.runtime import Runtime

    agent, work, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    async def main():
        async with Runtime(agent_dir=agent, cwd=work, debug_stream=None) as runtime:
            session = await runtime.open_session("embedded", session_id=name)
            for i in range(15):
                await session.call("exec_command", {"cmd": "true"})
                patch = f"*** Begin Patch\\n*** Add File: {name}-{i}.txt\\n+{i}\\n*** End Patch"
                await session.call("apply_patch", {"patch": patch})

    asyncio.run(main())
    """
)


def test_three_runtimes_journal_every_call_into_one_file(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    (agent / "extensions").mkdir(parents=True)
    work.mkdir()
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        '{"applyPatch": {"enabled": true}, "shellSessions": {"enabled": true}}'
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RUNTIME_CHILD, str(agent), str(work), f"rt-{n}"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with Journal.open(agent) as journal:
        rows = journal.query(JournalQuery(limit=1000))
    for n in range(3):
        mine = [r for r in rows if r.session_id == f"rt-{n}"]
        assert [r.tool for r in mine].count("exec_command") == 15
        patches = [r for r in mine if r.tool == "apply_patch"]
        assert len(patches) == 15
        assert all(r.undoable for r in patches)


def test_pct_undo_and_apply_patch_while_two_runtimes_write(tmp_path: Path) -> None:
    """`pct undo` and `pct apply-patch` race two runtimes' writers (and their ingestion of
    the spool): every undo restores its file and is journaled, no runtime row is lost."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    (agent / "extensions").mkdir(parents=True)
    work.mkdir()
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(
        '{"applyPatch": {"enabled": true}, "shellSessions": {"enabled": true}}'
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "PI_CODING_AGENT_DIR": str(agent),
    }

    def pct(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pct_runtime.cli", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )

    for n in range(4):
        (work / f"u{n}.txt").write_text(f"before {n}\n")
        patch = (
            f"*** Begin Patch\n*** Update File: u{n}.txt\n@@\n-before {n}\n+after {n}\n"
            "*** End Patch\n"
        )
        assert pct("apply-patch", "--cwd", str(work), stdin=patch).returncode == 0
    with Journal.open(agent) as journal:
        ids = [r.call_id for r in journal.query(JournalQuery(tool="apply_patch"))]
    assert len(ids) == 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RUNTIME_CHILD, str(agent), str(work), f"rt-{n}"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    try:
        undos = [pct("undo", call_id) for call_id in ids]
        extra = pct(
            "apply-patch",
            "--cwd",
            str(work),
            stdin="*** Begin Patch\n*** Add File: late.txt\n+late\n*** End Patch\n",
        )
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for undo in undos:
        assert undo.returncode == 0, undo.stderr
        assert "not journaled" not in undo.stdout
    assert extra.returncode == 0, extra.stderr
    for n in range(4):
        assert (work / f"u{n}.txt").read_text() == f"before {n}\n"
    with Journal.open(agent) as journal:
        rows = journal.query(JournalQuery(limit=1000))
        assert sorted(r.undo_of or "" for r in rows if r.tool == "undo") == sorted(ids)
        assert all(journal.get(call_id).undone_by for call_id in ids)  # type: ignore[union-attr]
        assert sum(r.transport == "cli" and r.tool == "apply_patch" for r in rows) == 5
        for n in range(2):
            mine = [r for r in rows if r.session_id == f"rt-{n}"]
            assert [r.tool for r in mine].count("exec_command") == 15
            assert sum(r.tool == "apply_patch" and r.undoable for r in mine) == 15
