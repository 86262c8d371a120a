"""Crash safety and contention of ConfigStore.save across real processes.

Writers are forked (not spawned) so that 40 kills and 8x100 rounds stay within seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from pct_runtime.config import ConfigSaveError, ConfigStore, default_config, to_json_obj
from pct_runtime.config import lock as config_lock
from pct_runtime.config.store import serialize

FORK = multiprocessing.get_context("fork")

DOC_A = default_config().model_copy(update={"debug": True})
DOC_B = default_config().model_copy(
    update={"web_search": default_config().web_search.model_copy(update={"enabled": True})}
)


def _crash_writer(path: str, ready: Any) -> None:
    store = ConfigStore(path)
    ready.set()
    turn = 0
    while True:
        read = store.read()
        with contextlib.suppress(ConfigSaveError):
            store.save(DOC_A if turn % 2 else DOC_B, read.revision)
        turn += 1


def _operator_clears_dead_leftovers(lock_path: Path) -> None:
    """What the lock-held message tells a person to do once no writer is alive."""
    reclaim_owner = lock_path / "reclaim" / "owner"
    if reclaim_owner.exists():
        owner = config_lock.parse_owner(reclaim_owner.read_text())
        assert owner is None or not config_lock.pid_running(owner.pid)
        shutil.rmtree(lock_path)


@pytest.mark.slow
def test_sigkilled_writer_never_leaves_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "pi-codex-toolkit.json"
    store = ConfigStore(path)
    store.save(DOC_A)
    allowed = {serialize(to_json_obj(DOC_A)), serialize(to_json_obj(DOC_B))}
    seen: set[bytes] = set()
    rng = random.Random(20261129)
    for _ in range(40):
        ready = FORK.Event()
        writer = FORK.Process(target=_crash_writer, args=(str(path), ready))
        writer.start()
        try:
            assert ready.wait(10)
            time.sleep(rng.uniform(0.0, 0.04))
        finally:
            os.kill(writer.pid or 0, signal.SIGKILL)
            writer.join(10)
        assert writer.exitcode == -signal.SIGKILL
        data = path.read_bytes()
        json.loads(data)
        assert data in allowed
        seen.add(data)
        _operator_clears_dead_leftovers(Path(f"{path}.lock"))
    assert seen == allowed  # the writers really were writing when killed
    # The next save reclaims a dead writer's lock and sweeps what SIGKILL left behind.
    store.read()
    store.save(DOC_B, store.revision)
    assert sorted(os.listdir(tmp_path)) == ["pi-codex-toolkit.json"]
    assert path.read_bytes() == serialize(to_json_obj(DOC_B))


def _contender(path: str, writer: int, rounds: int, out: str, start: Any) -> None:
    store = ConfigStore(path)
    log: list[dict[str, Any]] = []
    start.wait(10)
    for round_ in range(rounds):
        read = store.read()
        raw = dict(read.raw)
        raw["lastWriter"] = {"writer": writer, "round": round_}
        draft = read.config.model_copy(update={"debug": round_ % 2 == 0})
        try:
            new = store.save(draft, read.revision, raw=raw)
            log.append(
                {
                    "outcome": "ok",
                    "expected": read.revision,
                    "new": new,
                    "writer": writer,
                    "round": round_,
                }
            )
        except ConfigSaveError as exc:
            log.append({"outcome": exc.code})
        except Exception as exc:  # anything else is a failure the test reports
            log.append({"outcome": f"error: {exc!r}"})
    Path(out).write_text(json.dumps(log))


@pytest.mark.slow
def test_concurrent_writers_never_lose_a_committed_change(tmp_path: Path) -> None:
    path = tmp_path / "pi-codex-toolkit.json"
    initial = ConfigStore(path).save(default_config())
    writers, rounds = 8, 100
    start = FORK.Event()
    procs = [
        FORK.Process(
            target=_contender, args=(str(path), w, rounds, str(tmp_path / f"log-{w}.json"), start)
        )
        for w in range(writers)
    ]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    logs = [json.loads((tmp_path / f"log-{w}.json").read_text()) for w in range(writers)]
    entries = [entry for log in logs for entry in log]
    assert len(entries) == writers * rounds
    outcomes = {entry["outcome"] for entry in entries}
    assert outcomes <= {"ok", "stale-revision", "lock-held"}, outcomes
    commits = [entry for entry in entries if entry["outcome"] == "ok"]
    assert len(commits) >= writers  # real progress, not refusals only

    # Every commit was based on the revision the previous commit produced: one linear chain
    # from the initial document through all commits (two commits on one base = a lost update).
    by_base = {}
    for commit in commits:
        assert commit["expected"] not in by_base, "two saves committed on the same revision"
        by_base[commit["expected"]] = commit
    chain, revision = [], initial
    while revision in by_base:
        chain.append(by_base[revision])
        revision = chain[-1]["new"]
    assert len(chain) == len(commits)
    final = path.read_bytes()
    assert hashlib.sha256(final).hexdigest() == revision
    last = chain[-1]
    assert json.loads(final)["lastWriter"] == {"writer": last["writer"], "round": last["round"]}
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["pi-codex-toolkit.json", *[f"log-{w}.json" for w in range(writers)]]
    )
