"""The cyclic collector is paused during an apply and always restored after."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest
from apply_patch_helpers import envelope

from pct_runtime.capabilities.apply_patch import matcher
from pct_runtime.capabilities.apply_patch.collector import collector_paused
from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text


def test_paused_while_matching_and_restored_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    real = matcher.apply_chunks

    def spy(*args: object) -> object:
        seen.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("pct_runtime.capabilities.apply_patch.executor.apply_chunks", spy)
    (tmp_path / "f.txt").write_text("a\n")
    assert gc.isenabled()
    apply_patch_text(envelope("*** Update File: f.txt", "@@", "-a", "+b"), tmp_path)
    assert seen == [False]
    assert gc.isenabled()
    with pytest.raises(ApplyPatchError):
        apply_patch_text(envelope("*** Update File: f.txt", "@@", "-zzz", "+b"), tmp_path)
    assert gc.isenabled(), "restored after a rejection too"


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_restore_once_the_last_one_ends() -> None:
    first_in, second_done = threading.Event(), threading.Event()

    def first() -> None:
        with collector_paused():
            first_in.set()
            second_done.wait(10)

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled(), "the first pause is still running"
    second_done.set()
    worker.join(10)
    assert gc.isenabled()
