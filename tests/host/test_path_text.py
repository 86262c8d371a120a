"""`path_text` is `str(PurePosixPath(...))`: `pct apply-patch` builds its state paths as strings
(no pathlib on its path), and they must read exactly as the Path-built ones elsewhere."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from pct_runtime.host.system.folders import path_text
from pct_runtime.host.system.workspace_lock import locks_dir, locks_folder

CASES = [
    ("",),
    (".",),
    ("/",),
    ("//",),
    ("///",),
    ("//a/b",),
    ("///a//b/",),
    ("a",),
    ("a/",),
    ("./a/./b/.",),
    ("a/../b",),
    ("a//b",),
    ("/srv/a", ".pi", "agent"),
    ("/srv/u", "x//y/"),
    ("rel/agent", "pct", "locks"),
    ("a", "/abs", "b"),
    ("a", "//net", "b"),
    ("a", "", "b"),
    ("~user/a",),
    ("é/ü", "ß"),
]


@pytest.mark.parametrize("segments", CASES)
def test_path_text_reads_as_a_posix_path(segments: tuple[str, ...]) -> None:
    assert path_text(*segments) == str(PurePosixPath(*segments))


def test_path_text_takes_paths() -> None:
    assert path_text(Path("/x/agent"), "pct") == "/x/agent/pct"


@pytest.mark.parametrize("agent", ["/x/agent", "/x/agent/", "rel/agent", ".", "a//b"])
def test_locks_folder_is_locks_dir(agent: str) -> None:
    assert locks_folder(agent) == str(locks_dir(agent))
    assert locks_folder(Path(agent)) == str(locks_dir(Path(agent)))
