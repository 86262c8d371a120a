"""The distribution's own name (`pct` on PyPI is someone else's) and the one version lookup."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pct_runtime.version
from pct_runtime.decide.sync import toolkit_identity
from pct_runtime.version import version

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_names_the_distribution_the_runtime_reads() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == pct_runtime.version.DISTRIBUTION == "pi-codex-toolkit"
    # The commands keep their short names.
    assert set(project["scripts"]) == {"pct", "pct-tui"}


def test_version_comes_from_the_installed_distribution() -> None:
    installed = metadata.version("pi-codex-toolkit")
    assert version() == installed
    assert pct_runtime.__version__ == installed
    assert toolkit_identity() == {"name": "pct", "version": installed}
