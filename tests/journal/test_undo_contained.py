"""Undo that no sandboxed job can turn against the user, through real `pct apply-patch` and
`pct undo` processes: a folder of the patched file replaced by a link to the user's home or
by another directory refuses the undo and changes nothing anywhere; a row naming a file
outside its working directory, or written without folder identities, is refused. Run as
root and, where the runner can drop privileges, as an unprivileged user."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pct_runtime.journal import FileImage, Journal, PatchFile
from tests.journal.helpers import make_record

NOBODY = 65534


def _can_drop_privileges() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@dataclass
class Place:
    """An agent dir, a working directory and a stand-in for the user's home, owned by the
    user the `pct` processes run as."""

    base: Path
    uid: int | None  # None: run as the test's own user

    @property
    def agent(self) -> Path:
        return self.base / "agent"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def home(self) -> Path:
        return self.base / "home"

    def own(self) -> None:
        """Give everything under the base to the user the processes run as."""
        if self.uid is None:
            return
        for folder, dirs, files in os.walk(self.base):
            for name in (folder, *(os.path.join(folder, n) for n in (*dirs, *files))):
                os.chown(name, self.uid, self.uid, follow_symlinks=False)

    def pct(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        self.own()
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(self.agent)}
        prefix: list[str] = []
        if self.uid is not None:
            prefix = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            env["HOME"] = str(self.home)
        return subprocess.run(
            [*prefix, sys.executable, "-m", "pct_runtime.cli", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=self.base,
            timeout=60,
            check=False,
        )

    def patch(self, body: str) -> subprocess.CompletedProcess[str]:
        envelope = f"*** Begin Patch\n{body}*** End Patch\n"
        return self.pct("apply-patch", "--cwd", str(self.work), stdin=envelope)


@pytest.fixture(params=["owner", "unprivileged"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    if request.param == "owner":
        found = Place(tmp_path, None)
        for folder in (found.agent, found.work, found.home):
            folder.mkdir()
        yield found
        return
    if not _can_drop_privileges():
        pytest.skip("dropping privileges needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="pct-undo-contained-"))
    try:
        os.chmod(base, 0o755)
        found = Place(base, NOBODY)
        for folder in (found.agent, found.work, found.home):
            folder.mkdir()
        found.own()
        yield found
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode))
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


VARIANTS = {
    # name: (setup files under work/sub, patch body, the user's files in home)
    "delete": (
        {".profile": "echo model\n"},
        "*** Delete File: sub/.profile\n",
        {"notes.txt": "mine\n"},
    ),
    "update": (
        {"notes.txt": "one\n"},
        "*** Update File: sub/notes.txt\n@@\n-one\n+two\n",
        {"notes.txt": "two\n"},  # the user's file happens to hold what the patch wrote
    ),
    "add": (
        {},
        "*** Add File: sub/new.txt\n+fresh\n",
        {"new.txt": "fresh\n"},
    ),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_undo_refuses_a_folder_replaced_by_a_link_to_home(place: Place, variant: str) -> None:
    files, body, users = VARIANTS[variant]
    (place.work / "sub").mkdir()
    for name, text in files.items():
        (place.work / "sub" / name).write_text(text)
    for name, text in users.items():
        (place.home / name).write_text(text)
    done = place.patch(body)
    assert done.returncode == 0, done.stderr
    # The job: `sub` becomes a link to the user's home.
    shutil.rmtree(place.work / "sub")
    (place.work / "sub").symlink_to(place.home, target_is_directory=True)
    home_before = _snapshot(place.home)

    undo = place.pct("undo")

    assert undo.returncode == 1, undo.stdout
    assert str(place.work / "sub") in undo.stderr
    assert "symbolic link" in undo.stderr
    assert "Nothing was changed" in undo.stderr
    assert _snapshot(place.home) == home_before
    assert (place.work / "sub").is_symlink()
    assert not list(place.home.glob(".pct-apply-patch-*"))
    log = place.pct("log")
    assert "[undoable]" in log.stdout  # refused, not spent


@pytest.mark.parametrize("replaced", ["sub", "work"])
def test_undo_refuses_a_folder_replaced_by_another_directory(place: Place, replaced: str) -> None:
    (place.work / "sub").mkdir()
    (place.work / "sub" / "notes.txt").write_text("one\n")
    done = place.patch("*** Update File: sub/notes.txt\n@@\n-one\n+two\n")
    assert done.returncode == 0, done.stderr
    # The rename dance: the folder moves away and a look-alike takes its place.
    folder = place.work / "sub" if replaced == "sub" else place.work
    folder.rename(folder.with_name(folder.name + "-old"))
    shutil.copytree(folder.with_name(folder.name + "-old"), folder, symlinks=True)
    moved = folder.with_name(folder.name + "-old")
    copies = sorted(p for p in (folder, moved) if p.exists())

    undo = place.pct("undo")

    assert undo.returncode == 1, undo.stdout
    assert str(folder) in undo.stderr
    assert "replaced by another directory" in undo.stderr
    for top in copies:
        found = next(top.rglob("notes.txt"))
        assert found.read_text() == "two\n", found


def test_undo_still_restores_when_every_folder_is_the_same(place: Place) -> None:
    (place.work / "sub" / "deep").mkdir(parents=True)
    (place.work / "sub" / "deep" / "a.txt").write_text("one\n")
    (place.work / "sub" / "x.txt").write_text("moved\n")
    body = (
        "*** Update File: sub/deep/a.txt\n@@\n-one\n+two\n"
        "*** Add File: sub/made/b.txt\n+new\n"
        "*** Update File: sub/x.txt\n*** Move to: sub/deep/y.txt\n"
    )
    done = place.patch(body)
    assert done.returncode == 0, done.stderr
    undo = place.pct("undo")
    assert undo.returncode == 0, undo.stderr
    assert (place.work / "sub" / "deep" / "a.txt").read_text() == "one\n"
    assert (place.work / "sub" / "x.txt").read_text() == "moved\n"
    assert not (place.work / "sub" / "made" / "b.txt").exists()
    assert not (place.work / "sub" / "deep" / "y.txt").exists()
    redo = place.pct("undo", _newest_id(place))  # the undo's own row: the patch again
    assert redo.returncode == 0, redo.stderr
    assert (place.work / "sub" / "made" / "b.txt").read_text() == "new\n"
    assert (place.work / "sub" / "deep" / "y.txt").read_text() == "moved\n"


def _newest_id(place: Place) -> str:
    rows = [json.loads(line) for line in place.pct("log", "--json").stdout.splitlines()]
    return str(rows[0]["call_id"])


def test_a_row_without_folder_identities_is_refused(tmp_path: Path) -> None:
    """A row an older pct wrote cannot be checked, so it is not undone (nothing written)."""
    agent, work, outside = tmp_path / "agent", tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    with Journal.open(agent) as journal:
        digest = journal.blobs.put(b"planted\n")
        victim = outside / "victim.txt"
        files = (PatchFile(str(victim), FileImage(digest, 0o644), None),)
        record = make_record("apply_patch", patch_files=files)
        journal.record(record)
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    undo = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "undo", record.call_id],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert undo.returncode == 1, undo.stdout
    assert "older pct" in undo.stderr
    assert "Nothing was changed" in undo.stderr
    assert not victim.exists()


@pytest.mark.parametrize("where", ["outside", "dotdot"])
def test_a_row_naming_a_file_outside_its_working_directory_is_refused(
    tmp_path: Path, where: str
) -> None:
    """Even with the working directory's real identity, a path that is not below it is
    never written (a row is data: only paths inside its call's working directory count)."""
    from pct_runtime.journal import Anchor

    agent, work, outside = tmp_path / "agent", tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    victim = outside / "victim.txt"
    path = str(victim) if where == "outside" else f"{work}/../outside/victim.txt"
    st = os.stat(work)
    with Journal.open(agent) as journal:
        digest = journal.blobs.put(b"planted\n")
        anchor = Anchor(str(work), ((st.st_dev, st.st_ino),))
        files = (PatchFile(path, FileImage(digest, 0o644), None, anchor),)
        record = make_record("apply_patch", patch_files=files)
        journal.record(record)
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    undo = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "undo", record.call_id],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert undo.returncode == 1, undo.stdout
    assert path in undo.stderr
    assert f"not inside {work}" in undo.stderr
    assert not victim.exists()
