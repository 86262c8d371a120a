"""Shared helpers for the apply_patch tests (unique module name: tests have no packages)."""

from __future__ import annotations

import os
from pathlib import Path


def envelope(*lines: str, final_newline: bool = True) -> str:
    text = "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
    return text + ("\n" if final_newline else "")


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under root: files as (bytes, mode), dirs as 'dir', links as ('link', target)."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = (full.read_bytes(), st.st_mode & 0o7777)
    return out


def codex_binary() -> str | None:
    """The real Codex CLI, if installed (see `tests/node_tools.py` for where it looks)."""
    from tests.node_tools import node_bin

    return node_bin("codex")
