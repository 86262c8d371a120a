"""Undo and apply_patch of the same file never both win: real `pct undo` and `pct apply-patch`
processes racing, the workspace lock they share, and its file's place and mode."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text
from pct_runtime.host.system.workspace_lock import (
    WorkspaceLock,
    lock_name,
    locks_dir,
)
from pct_runtime.journal import Journal, PatchCapture
from tests.journal.helpers import make_record

ROUNDS = 40
#: The file is long enough that staging it takes a while, so the two processes' commits
#: overlap often (the old code lost one change in a few rounds out of forty).
BODY = "".join(f"line {n:06d} of a long file\n" for n in range(40_000))


def _pct(agent: Path, *args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.Popen(
        [sys.executable, "-m", "pct_runtime.cli", *args],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _feed(proc: subprocess.Popen[str], text: str) -> None:
    """Send the patch and close stdin (later `communicate` only reads)."""
    assert proc.stdin is not None
    proc.stdin.write(text)
    proc.stdin.close()
    proc.stdin = None


def _edit(old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: f.txt\n@@\n-{old}\n+{new}\n*** End Patch\n"


def test_concurrent_undo_and_apply_patch_never_both_report_success(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    target = work / "f.txt"
    outcomes: list[str] = []
    with Journal.open(agent) as journal:
        for round_ in range(ROUNDS):
            before, patched, edited = f"a{round_}", f"b{round_}", f"c{round_}"
            target.write_text(f"{before}\n{BODY}")
            capture = PatchCapture(journal.blobs)
            apply_patch_text(_edit(before, patched), work, witness=capture)
            record = make_record("apply_patch", patch_files=capture.files())
            journal.record(record)
            # The patch waits on its stdin, so its commit can be moved across the undo's.
            patcher = _pct(agent, "apply-patch", "--cwd", str(work), stdin=subprocess.PIPE)
            undoer = _pct(agent, "undo", record.call_id)
            try:
                time.sleep(0.1 + 0.3 * round_ / ROUNDS)
                _feed(patcher, _edit(patched, edited))
                p_out, p_err = patcher.communicate(timeout=60)
                u_out, u_err = undoer.communicate(timeout=60)
            finally:
                for proc in (patcher, undoer):
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
            undone, applied = undoer.returncode == 0, patcher.returncode == 0
            first = target.read_text().split("\n", 1)[0]
            context = f"round {round_}: undo {u_out}{u_err!r}, apply {p_out}{p_err!r}"
            assert not (undone and applied), f"both reported success: {context}"
            assert first == (before if undone else edited if applied else patched), context
            if not undone:
                assert "changed after" in u_err or "busy" in u_err, context
            if not applied:
                assert "changed on disk" in p_err or "does not match" in p_err, context
            outcomes.append("undo" if undone else "apply" if applied else "neither")
            assert target.read_text().split("\n", 1)[1] == BODY
    assert len(outcomes) == ROUNDS


def test_apply_patch_waits_for_the_workspace_lock_and_checks_again_under_it(
    tmp_path: Path,
) -> None:
    """While an undo holds the lock, a patch prepared from the old content must not commit
    over what the undo wrote: it waits, then finds the file changed and changes nothing."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    target = work / "f.txt"
    target.write_text("one\n")
    with WorkspaceLock.acquire(locks_dir(agent), os.path.realpath(work)):
        patcher = _pct(agent, "apply-patch", "--cwd", str(work), stdin=subprocess.PIPE)
        try:
            _feed(patcher, _edit("one", "two"))
            time.sleep(1.0)  # it has read and matched "one" by now, and waits
            assert patcher.poll() is None, patcher.communicate()
            fresh = work / "f.txt.new"
            fresh.write_text("restored\n")
            os.replace(fresh, target)  # what an undo does under the lock
        except BaseException:
            patcher.kill()
            patcher.wait()
            raise
    out, err = patcher.communicate(timeout=60)
    assert patcher.returncode == 1, out
    assert "f.txt" in err
    assert "changed on disk" in err or "does not match" in err
    assert target.read_text() == "restored\n"


def test_the_lock_file_is_private_and_never_opened_through_a_link(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "f.txt").write_text("one\n")
    folder = locks_dir(agent)
    folder.parent.mkdir(parents=True)
    elsewhere = tmp_path / "users-folder"
    elsewhere.mkdir()
    folder.symlink_to(elsewhere, target_is_directory=True)
    patcher = _pct(agent, "apply-patch", "--cwd", str(work), stdin=subprocess.PIPE)
    _out, err = patcher.communicate(_edit("one", "two"), timeout=60)
    assert patcher.returncode == 0, err  # the patch goes on: no undo can take the lock either
    assert list(elsewhere.iterdir()) == []
    with Journal.open(agent) as journal:
        journal.ingest_spool()
    undoer = _pct(agent, "undo")
    _out, err = undoer.communicate(timeout=60)
    assert undoer.returncode == 1
    assert "lock" in err
    assert "Nothing was changed" in err
    assert (work / "f.txt").read_text() == "two\n"
    assert list(elsewhere.iterdir()) == []

    folder.unlink()
    patcher = _pct(agent, "apply-patch", "--cwd", str(work), stdin=subprocess.PIPE)
    _out, err = patcher.communicate(_edit("two", "three"), timeout=60)
    assert patcher.returncode == 0, err
    lock = folder / lock_name(os.path.realpath(work))
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
