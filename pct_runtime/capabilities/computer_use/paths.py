"""The fixed paths of Computer Use's runtime, below both the client and the eligibility chain."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ComputerUseRuntime:
    """The five fixed paths one client needs; never searched on PATH or in plugin caches."""

    codex_path: Path
    node_repl_path: Path
    node_path: Path
    node_modules_path: Path
    helper_path: Path
