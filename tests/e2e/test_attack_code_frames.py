"""Through a real `pct serve` over stdio: a Code Mode cell that writes a 100,000-deep frame
to its own channel fails with a clear error, its stop is confirmed, and Code Mode stays."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pct_procs import RawStdio, write_config

pytestmark = pytest.mark.e2e

# Busy for 0.3 s (so `exec` answers "running" first), then the frame, then spin forever.
DEEP_FRAME_CELL = """\
import datetime
end = datetime.datetime.now() + datetime.timedelta(seconds=0.3)
while datetime.datetime.now() < end:
    pass
body = b'{"t":"o","s":' + b'[' * 100_000 + b']' * 100_000 + b'}'
tools._rt.sock.sendall(len(body).to_bytes(4, 'big') + body)
while True:
    pass
"""


def test_deep_frames_never_wedge_code_mode(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    write_config(agent, {"codeMode": {"enabled": True}})
    with RawStdio(agent, work) as server:
        server.initialize()
        for _ in range(5):  # one more than may run at once: no cell may stay running
            text, details = server.call("exec", {"code": DEEP_FRAME_CELL, "yield_time_ms": 100})
            assert details["status"] == "running", text
            time.sleep(0.6)
            text, details = server.call("wait", {"cell_id": details["cell_id"], "terminate": True})
            assert details["status"] == "failed", text
            assert (
                "The cell wrote a frame nested deeper than 64 levels; Code Mode stopped it. "
                "Return flatter data." in text
            )
            assert "not yet confirmed" not in text
        text, details = server.call("exec", {"code": "1 + 1"})
        assert details["status"] == "completed", text
        assert details["result"] == 2
        server.proc.stdin.close()  # type: ignore[union-attr]
        assert server.proc.wait(30) == 0
        assert "Traceback" not in server.stderr_text()
