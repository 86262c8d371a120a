"""Where the capture root is, when a runtime dir is safe to use, and what the sweep removes."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import uuid
from pathlib import Path

import pytest

from pct_runtime.output import OutputOwner
from pct_runtime.output.root import CaptureRoot, open_capture_root
from pct_runtime.output.sweep import remove_folder


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    out = {name: tmp_path / name for name in ("run", "tmp", "agent")}
    out["run"].mkdir(mode=0o700)
    out["tmp"].mkdir()
    # The process's OS temp dir, as a server started with this TMPDIR would see it.
    monkeypatch.setattr(tempfile, "tempdir", str(out["tmp"]))
    return out


def env_of(tree: dict[str, Path], **changes: str) -> dict[str, str]:
    env = {
        "XDG_RUNTIME_DIR": str(tree["run"]),
        "TMPDIR": str(tree["tmp"]),
        "PI_CODING_AGENT_DIR": str(tree["agent"]),
    }
    env.update(changes)
    return {k: v for k, v in env.items() if v}


def opened(env: dict[str, str]) -> str:
    root = open_capture_root(env)
    try:
        st = os.fstat(root.fd)
        assert stat.S_IMODE(st.st_mode) == 0o700
        assert (os.stat(root.path).st_dev, os.stat(root.path).st_ino) == (st.st_dev, st.st_ino)
        assert fcntl.fcntl(root.fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # no job inherits it
        return root.path
    finally:
        os.close(root.fd)


def test_the_runtime_dir_when_it_is_private(tree: dict[str, Path]) -> None:
    assert opened(env_of(tree)) == str(tree["run"] / "pct")


def test_an_existing_root_is_tightened_to_0700(tree: dict[str, Path]) -> None:
    (tree["run"] / "pct").mkdir(mode=0o755)
    os.chmod(tree["run"] / "pct", 0o755)
    assert opened(env_of(tree)) == str(tree["run"] / "pct")


def test_the_agent_dir_without_a_runtime_dir(tree: dict[str, Path]) -> None:
    assert opened(env_of(tree, XDG_RUNTIME_DIR="")) == str(tree["agent"] / "pct" / "output")


@pytest.mark.parametrize(
    "case", ["relative", "missing", "shared", "inside-tmp", "link", "pct-link"]
)
def test_an_unsafe_runtime_dir_falls_back_to_the_agent_dir(
    tree: dict[str, Path], tmp_path: Path, case: str
) -> None:
    env = env_of(tree)
    if case == "relative":
        env["XDG_RUNTIME_DIR"] = "run"
    elif case == "missing":
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "nowhere")
    elif case == "shared":  # others may enter: a job of another user could swap things
        os.chmod(tree["run"], 0o755)
    elif case == "inside-tmp":  # a job's writable temp tree
        inner = tree["tmp"] / "run"
        inner.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(inner)
    elif case == "link":
        (tmp_path / "run-link").symlink_to(tree["run"])
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "run-link")
    else:  # someone put a link where pct's folder goes: never followed
        outside = tmp_path / "outside"
        outside.mkdir()
        (tree["run"] / "pct").symlink_to(outside)
    assert opened(env) == str(tree["agent"] / "pct" / "output")
    assert not (tmp_path / "outside").exists() or list((tmp_path / "outside").iterdir()) == []


def test_a_link_in_the_agent_dir_fallback_is_never_followed(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tree["agent"] / "pct").mkdir(parents=True)
    (tree["agent"] / "pct" / "output").symlink_to(outside)
    with pytest.raises(OSError, match=r"Not a directory|symbolic links"):
        open_capture_root(env_of(tree, XDG_RUNTIME_DIR=""))


async def test_a_folder_swapped_for_a_link_gets_no_new_file(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(mode=0o700)
    outside.mkdir()
    owner = OutputOwner(root=root)
    first = await owner.open_capture("stdout").publish()
    assert first.path is not None
    folder = Path(first.path).parent
    folder.rename(tmp_path / "moved")
    folder.symlink_to(outside)
    second = await owner.open_capture("stdout").publish()
    assert second.path is not None
    assert Path(second.path).parent == folder
    assert list(outside.iterdir()) == []
    assert (tmp_path / "moved" / Path(second.path).name).is_file()  # in pct's own folder
    assert (second.state, second.reason) == ("partial", "missing")  # the path leads elsewhere
    assert await owner.close() == []
    assert list(outside.iterdir()) == []
    assert list((tmp_path / "moved").iterdir()) == []  # its files removed through the fd


def _root(path: Path) -> CaptureRoot:
    return CaptureRoot(str(path), os.open(path, os.O_RDONLY | os.O_DIRECTORY))


def test_the_sweep_removes_only_what_pct_creates(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    folder = root / "pct-output-1-2-abc"
    folder.mkdir(mode=0o700)
    ours = folder / f"{uuid.uuid4()}.txt"
    ours.write_text("x")
    foreign = folder / "notes.txt"
    foreign.write_text("keep")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (folder / f"{uuid.uuid4()}.txt").symlink_to(outside)
    handle = _root(root)
    try:
        assert remove_folder(handle.fd, folder.name) is False  # not empty: foreign files stay
        assert not ours.exists()
        assert foreign.read_text() == "keep"
        assert outside.read_text() == "keep"
        shared = root / "pct-output-3-4-def"
        shared.mkdir()
        os.chmod(shared, 0o755)  # pct makes 0700 folders only
        (shared / f"{uuid.uuid4()}.txt").write_text("keep")
        assert remove_folder(handle.fd, shared.name) is False
        assert len(list(shared.iterdir())) == 1
        (root / "pct-output-5-6-link").symlink_to(shared)
        assert remove_folder(handle.fd, "pct-output-5-6-link") is False
        assert len(list(shared.iterdir())) == 1
    finally:
        os.close(handle.fd)
