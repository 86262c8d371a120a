"""Retention: size and age limits, images shared with a kept call survive, no image of a
row still present is ever removed, and pruning runs on the writer thread, never the loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from pct_runtime.journal import FileImage, Journal, JournalQuery, PatchFile, undo_patch
from pct_runtime.journal.settings import JournalSettings
from pct_runtime.journal.writer import JournalWriter
from pct_runtime.runtime import Runtime
from tests.journal.helpers import make_record

PAST_GRACE = 10_000.0  # seconds: older than every grace period


def _age_blobs(journal: Journal, seconds: float) -> None:
    for path, _name, _size, mtime in journal.blobs.walk():
        os.utime(path, (mtime - seconds, mtime - seconds))


def _every_row_has_its_images(journal: Journal) -> None:
    for record in journal.query(JournalQuery(limit=100_000)):
        for item in record.patch_files:
            for image in (item.before, item.after):
                if image is not None:
                    assert journal.blobs.read(image.sha256) is not None, (record.call_id, item)


def test_size_and_age_limits_keep_the_newest_and_every_image_they_name(tmp_path: Path) -> None:
    now = time.time()
    with Journal.open(tmp_path) as journal:
        shared = journal.blobs.put(b"shared by old and new\n" * 100)
        ids: list[str] = []
        for index in range(120):
            own = journal.blobs.put(f"image {index}\n".encode() * 2000)  # ~20 KB each
            files = (PatchFile(f"/w/f{index}", FileImage(shared, 0o644), FileImage(own, 0o600)),)
            when = now - (60 - index) * 86400 if index < 20 else now - (120 - index)
            record = make_record("apply_patch", patch_files=files, when=when)
            journal.record(record)
            ids.append(record.call_id)
        _age_blobs(journal, PAST_GRACE)
        used = journal.used_bytes()
        limit = used // 3
        deleted = journal.prune(max_bytes=limit, max_age_days=30, now=now)
        kept = [r.call_id for r in reversed(journal.query(JournalQuery(limit=1000)))]
        assert deleted == len(ids) - len(kept)
        assert journal.used_bytes() <= limit
        assert kept == ids[len(ids) - len(kept) :]  # the newest, in order
        assert all(call not in kept for call in ids[:20])  # every call past 30 days
        assert journal.blobs.exists(shared)  # shared with a kept call
        _every_row_has_its_images(journal)
        removed = ids[: len(ids) - len(kept)]
        assert all(journal.get(call) is None for call in removed)


def test_images_younger_than_the_grace_period_survive_a_prune(tmp_path: Path) -> None:
    """An image stored a moment ago may belong to a call not recorded yet."""
    with Journal.open(tmp_path) as journal:
        fresh = journal.blobs.put(b"a patch being recorded\n")
        journal.prune(max_bytes=1, max_age_days=30)
        assert journal.blobs.exists(fresh)


def test_pruning_a_spooled_patch_keeps_its_images_and_its_undo(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch.encode(),
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    # Long past every grace period (the pending images are links to a file written long
    # ago): the spooled row is inserted and its images named before anything is swept.
    later = time.time() + PAST_GRACE
    with Journal.open(agent) as journal:
        assert journal.prune(max_bytes=10**9, max_age_days=30, now=later) == 0
        _every_row_has_its_images(journal)
        assert undo_patch(journal).ok
    assert (work / "a.txt").read_text() == "one\n"


def test_the_writer_prunes_on_its_thread_never_on_the_event_loop(tmp_path: Path) -> None:
    seen: list[tuple[str, bool]] = []
    original = Journal.prune

    def watched(
        self: Journal, max_bytes: int, max_age_days: float, now: float | None = None
    ) -> int:
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        seen.append((threading.current_thread().name, on_loop))
        return original(self, max_bytes, max_age_days, now)

    async def main() -> None:
        agent = tmp_path / "agent"
        (agent / "extensions").mkdir(parents=True)
        (agent / "extensions" / "pi-codex-toolkit.json").write_text(
            json.dumps({"shellSessions": {"enabled": True}})
        )
        async with Runtime(agent_dir=agent, cwd=tmp_path) as runtime:
            session = await runtime.open_session("mcp")
            await session.call("exec_command", {"cmd": "true"})
            writer = runtime.journal.writer
            assert writer is not None
            writer.prune_soon()
            assert await asyncio.to_thread(writer.flush, 10)

    Journal.prune = watched  # type: ignore[method-assign]
    try:
        asyncio.run(main())
    finally:
        Journal.prune = original  # type: ignore[method-assign]
    assert seen
    assert all(name == "pct-journal" and not on_loop for name, on_loop in seen), seen


def test_settings_limits_reach_the_pruner(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        old = make_record(when=time.time() - 3 * 86400)
        new = make_record()
        journal.record(old)
        journal.record(new)
    writer = JournalWriter(tmp_path, JournalSettings(max_bytes=10**9, max_age_days=2))
    try:
        writer.prune_soon()
        assert writer.flush(10)
    finally:
        writer.close()
    with Journal.open(tmp_path) as journal:
        assert [r.call_id for r in journal.query(JournalQuery())] == [new.call_id]
