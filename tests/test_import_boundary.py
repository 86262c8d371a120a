"""The runtime never imports the console's UI toolkit (docs/ARCHITECTURE.md: pct_runtime
never imports textual), so agents can embed it and `pct` starts fast."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

_PROBE = """
import importlib, json, pkgutil, sys
import pct_runtime
after_package = "textual" in sys.modules
failed = {}
for info in pkgutil.walk_packages(pct_runtime.__path__, "pct_runtime."):
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed[info.name] = repr(exc)
offenders = sorted(name for name in sys.modules if name == "textual" or name.startswith("textual."))
print(json.dumps({"after_package": after_package, "offenders": offenders, "failed": failed}))
"""


def _probe() -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_import_pct_runtime_does_not_import_textual() -> None:
    result = _probe()
    assert result["after_package"] is False
    # No importable runtime module pulls in textual, directly or through a dependency.
    # (Import failures of modules other tests cover are theirs to report, not this test's.)
    assert result["offenders"] == []


_DIRECT = re.compile(r"^\s*(?:import\s+textual\b|from\s+textual(?:\.|\s))", re.MULTILINE)


def test_no_runtime_source_mentions_a_textual_import() -> None:
    """A static check as well, so a module that fails to import cannot hide the boundary."""
    root = Path(__file__).resolve().parent.parent / "pct_runtime"
    offenders = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        if _DIRECT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert _DIRECT.search("from textual.app import App")
    assert _DIRECT.search("    import textual")
    assert not _DIRECT.search("import textualize_other")


def test_the_console_does_import_textual() -> None:
    """The probe can fail: importing the console does load textual."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, pct_tui.app; print('textual' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "True"
