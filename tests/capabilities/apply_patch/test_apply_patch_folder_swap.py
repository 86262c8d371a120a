"""A job swapping a folder for a link between preflight and commit never makes pct write
outside the working directory (the patch is refused, or lands in the real, moved folder)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from apply_patch_helpers import envelope, snapshot

from pct_runtime.capabilities.apply_patch import executor
from pct_runtime.capabilities.apply_patch.errors import ApplyPatchError, PreflightError
from pct_runtime.capabilities.apply_patch.executor import (
    apply_patch_text,
    commit_prepared,
    prepare_patch,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX folder descriptors")

PATCHES = {
    "add": envelope("*** Add File: sub/new.txt", "+planted"),
    "update": envelope("*** Update File: sub/a.txt", "@@", "-inside", "+changed"),
    "delete": envelope("*** Delete File: sub/a.txt"),
    "move": envelope("*** Update File: top.txt", "*** Move to: sub/moved.txt", "@@", "-t", "+m"),
    "rename": envelope("*** Update File: top.txt", "*** Move to: sub/renamed.txt"),
    "deep": envelope("*** Add File: sub/x/y/new.txt", "+planted"),
}


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(work, outside): `work/sub/a.txt` and `outside/a.txt` (what a link would expose)."""
    work, outside = tmp_path / "work", tmp_path / "home"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "a.txt").write_text("inside\n")
    (work / "top.txt").write_text("t\n")
    outside.mkdir()
    (outside / "a.txt").write_text("inside\n")  # same bytes: a hunk would match here too
    return work, outside


def swap(work: Path, outside: Path) -> None:
    """What a sandboxed job can do: keep the real folder aside, link `sub` to home."""
    os.rename(work / "sub", work / "sub.real")
    os.symlink(outside, work / "sub")


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")


@pytest.mark.parametrize("name", sorted(PATCHES))
def test_a_swap_after_preflight_is_refused_and_changes_nothing(
    tree: tuple[Path, Path], name: str
) -> None:
    work, outside = tree
    prepared = prepare_patch(PATCHES[name], work)
    swap(work, outside)
    before_out, before_work = snapshot(outside), snapshot(work)
    with pytest.raises(PreflightError) as info:
        commit_prepared(prepared)
    assert "changed on disk after the patch was checked" in str(info.value)
    assert str(info.value).endswith("Nothing was changed.")
    assert snapshot(outside) == before_out
    assert snapshot(work) == before_work


class _SwapWitness:
    """Swaps the folder once the commit checked its folders, just before the first rename."""

    def __init__(self, work: Path, outside: Path) -> None:
        self.work, self.outside = work, outside

    def before_commit(self, paths: Sequence[str], root: str) -> None:
        swap(self.work, self.outside)

    def after_commit(self) -> None:
        pass


@pytest.mark.parametrize("name", sorted(PATCHES))
def test_a_swap_after_the_last_check_lands_in_the_real_folder(
    tree: tuple[Path, Path], name: str
) -> None:
    work, outside = tree
    before_out = snapshot(outside)
    prepared = prepare_patch(PATCHES[name], work)
    commit_prepared(prepared, witness=_SwapWitness(work, outside))
    assert snapshot(outside) == before_out
    real = work / "sub.real"
    if name == "add":
        assert (real / "new.txt").read_text() == "planted\n"
    elif name == "update":
        assert (real / "a.txt").read_text() == "changed\n"
    elif name == "delete":
        assert not (real / "a.txt").exists()
    elif name == "move":
        assert (real / "moved.txt").read_text() == "m\n"
    elif name == "rename":
        assert (real / "renamed.txt").read_text() == "t\n"
    else:
        assert (real / "x" / "y" / "new.txt").read_text() == "planted\n"


def test_a_swap_during_staging_is_refused_before_any_rename(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, outside = tree
    real_clean = executor.remove_stale_staging

    def clean_then_swap(folders: Sequence[int]) -> list[str]:
        removed = real_clean(folders)
        swap(work, outside)
        return removed

    monkeypatch.setattr(executor, "remove_stale_staging", clean_then_swap)
    before_out = snapshot(outside)
    with pytest.raises(PreflightError, match="changed on disk after the patch was checked"):
        apply_patch_text(PATCHES["update"], work)
    assert snapshot(outside) == before_out
    assert sorted(os.listdir(work / "sub.real")) == ["a.txt"]  # staging file removed


@contextlib.contextmanager
def swapping(work: Path, outside: Path, times: int) -> Iterator[threading.Event]:
    """A thread swapping `work/sub` for a link to `outside` and back, `times` times."""
    stop = threading.Event()

    def run() -> None:
        for _ in range(times):
            if stop.is_set():
                break
            with contextlib.suppress(OSError):
                swap(work, outside)
            with contextlib.suppress(OSError):
                os.unlink(work / "sub")
                os.rename(work / "sub.real", work / "sub")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive()


def race_patch(i: int) -> str:
    return envelope(f"*** Add File: sub/n{i}.txt", "+planted", f"*** Delete File: sub/d{i}.txt")


def plant(work: Path, outside: Path, count: int) -> None:
    for i in range(count):
        (work / "sub" / f"d{i}.txt").write_text("keep\n")
        (outside / f"d{i}.txt").write_text("keep\n")


@needs_proc
def test_a_racing_swap_never_writes_outside(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    plant(work, outside, 50)
    before_out = snapshot(outside)
    fds = open_fds()
    with swapping(work, outside, 2000):
        for i in range(50):
            with contextlib.suppress(ApplyPatchError):
                apply_patch_text(race_patch(i), work)
    assert snapshot(outside) == before_out
    assert open_fds() == fds


def pct_apply_patch(work: Path, patch: str) -> subprocess.CompletedProcess[str]:
    agent = work.parent / "agent"
    agent.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch,
        capture_output=True,
        text=True,
        cwd=work.parent,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
        timeout=60,
    )


def test_pct_apply_patch_refuses_a_linked_folder_and_races_stay_inside(
    tree: tuple[Path, Path],
) -> None:
    work, outside = tree
    done = pct_apply_patch(work, PATCHES["add"])
    assert done.returncode == 0, done.stderr
    assert (work / "sub" / "new.txt").read_text() == "planted\n"
    plant(work, outside, 12)
    before_out = snapshot(outside)
    with swapping(work, outside, 100_000):  # keeps swapping while the processes run
        for i in range(12):
            pct_apply_patch(work, race_patch(i))
    assert snapshot(outside) == before_out
    swap(work, outside)
    done = pct_apply_patch(work, PATCHES["deep"])
    assert done.returncode == 1
    assert "goes through the symbolic link 'sub'" in done.stderr
    assert snapshot(outside) == before_out


@needs_proc
def test_every_folder_is_closed_on_every_outcome(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, outside = tree
    fds = open_fds()
    apply_patch_text(PATCHES["deep"], work)  # success, folders created
    with pytest.raises(ApplyPatchError):
        apply_patch_text(PATCHES["deep"], work)  # preflight refusal (exists now)
    prepared = prepare_patch(PATCHES["update"], work)
    prepared.close()  # a denied approval
    with prepare_patch(PATCHES["update"], work) as prepared:
        assert prepared.summary
    prepared = prepare_patch(PATCHES["update"], work)
    with pytest.raises(ApplyPatchError):
        commit_prepared(prepared, should_abort=lambda: True)  # cancellation
    prepared = prepare_patch(PATCHES["update"], work)
    swap(work, outside)
    with pytest.raises(PreflightError):
        commit_prepared(prepared)  # folder changed
    os.unlink(work / "sub")
    os.rename(work / "sub.real", work / "sub")

    def full(*_args: object, **_kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(executor.os, "rename", full)
    with pytest.raises(ApplyPatchError):
        apply_patch_text(PATCHES["update"], work)  # commit failure
    assert open_fds() == fds
