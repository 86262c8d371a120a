"""No import circle anywhere in pct_runtime or pct_tui, counting imports under
`TYPE_CHECKING` too: import-linter's layers allow a circle inside one layer, so this guard
reads the same AST graph as `scripts/arch_metrics.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_import_cycle() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "arch_metrics.py")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("import cycles:"))
    cycles = [line.strip() for line in lines[at + 1 :] if line.startswith("  ")]
    assert lines[at] == "import cycles: 0", "import circles: " + "; ".join(cycles)
