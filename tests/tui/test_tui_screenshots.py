"""`python scripts/screenshots.py` is reproducible: two runs write byte-identical SVGs."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


def test_two_runs_write_identical_pictures(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PCT_TOKEN"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    runs = []
    # The script owns a fixed agent dir (its path is in the pictures): one run at a time.
    with FileLock(os.path.join(tempfile.gettempdir(), "pct-screenshots.lock")):
        for name in ("one", "two"):
            out = tmp_path / name
            done = subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "screenshots.py"), "--out", str(out)],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            runs.append({p.name: p.read_bytes() for p in sorted(out.glob("*.svg"))})
    first, second = runs
    expected = {"rule-edit.svg", "stop-confirmation.svg", "approval-patch.svg", "quit-guard.svg"}
    expected |= {"history.svg", "history-call.svg"}
    assert expected <= set(first)
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == second[name], name
    assert b"+++ b/src/app.py" in first["approval-patch.svg"].replace(b"&#160;", b" ")
    # The README shows the committed pictures: they must be what the script writes now.
    committed = {p.name: p.read_bytes() for p in sorted((ROOT / "screenshots").glob("*.svg"))}
    stale = sorted(n for n in first if committed.get(n) != first[n])
    assert not stale, f"run `python scripts/screenshots.py` and commit: {stale}"
