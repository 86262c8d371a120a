"""No source folder holds more than 15 modules: a folder is a room with one purpose, and
past that size it has become several (split it into packages named for what each holds)."""

from __future__ import annotations

from pathlib import Path

from tests.arch import metrics as _metrics

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULES = 15


def test_no_source_folder_holds_more_than_15_modules() -> None:
    folder, count = _metrics().largest_folder()
    assert count <= MAX_MODULES, f"{folder} holds {count} modules (at most {MAX_MODULES})"


def test_no_module_is_called_registry() -> None:
    """ "Registry" meant six things; each now has a name saying which (the capability tables,
    the tool and model registries of Pi, the runtime registry of live control)."""
    named = sorted(
        path.relative_to(ROOT).as_posix()
        for package in ("pct_runtime", "pct_tui")
        for path in (ROOT / package).rglob("registry.py")
    )
    assert named == []
