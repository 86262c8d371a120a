"""Exact result text and details of `format_shell_result` (no processes)."""

from __future__ import annotations

from pathlib import Path

from pct_runtime.capabilities.shell import ShellObservation, StdinReport, format_shell_result
from pct_runtime.output import PreviewRead, RecoveryRecord


def _read(text: str, dropped: int = 0, omitted: int = 0) -> PreviewRead:
    return PreviewRead(text.encode(), dropped, omitted)


def test_completed_with_both_streams() -> None:
    result = format_shell_result(
        ShellObservation(
            "pct-shell-a", "completed", 0, _read("out\n"), _read("err"), ever_output=True
        )
    )
    assert (
        result.text
        == "session_id pct-shell-a: completed\nexit_code: 0\n[stdout]\nout\n[stderr]\nerr"
    )
    d = result.details
    assert (d["session_id"], d["exit_code"]) == ("pct-shell-a", 0)
    assert "sessionId" not in d  # one spelling per field
    assert "exitCode" not in d
    assert d["status"] == "completed"
    assert "signal" not in d


def test_running_with_recovery_and_no_new_output(tmp_path: Path) -> None:
    x, y = tmp_path / "x.txt", tmp_path / "y.txt"
    rec = RecoveryRecord("capturing", str(x), 10, 4)
    rec2 = RecoveryRecord("capturing", str(y), 0, 0)
    result = format_shell_result(
        ShellObservation(
            "pct-shell-b",
            "running",
            recovery={"stderr": rec2, "stdout": rec},
            ever_output=True,
        )
    )
    assert result.text == (
        "session_id pct-shell-b: running\n"
        "job still running; continue with write_stdin, not wait\n"
        f"stdout recovery: capturing — {x} [4/10 UTF-8 bytes captured]\n"
        f"stderr recovery: capturing — {y} [0/0 UTF-8 bytes captured]\n"
        "(no new output)"
    )
    assert result.details["exit_code"] is None
    assert result.details["recovery"]["stdout"] == {
        "state": "capturing",
        "path": str(x),
        "bytes": 10,
        "captured_bytes": 4,
    }


def test_no_output_ever() -> None:
    text = format_shell_result(ShellObservation("pct-shell-c", "completed", 0)).text
    assert text.endswith("exit_code: 0\n(no output)")


def test_signal_and_unknown_exit() -> None:
    r = format_shell_result(ShellObservation("pct-shell-d", "terminated", -9))
    assert "exit_code: SIGKILL" in r.text
    assert r.details["signal"] == "SIGKILL"
    assert r.details["exit_code"] is None
    r = format_shell_result(
        ShellObservation("pct-shell-d", "terminated", None, unknown_outcome=True)
    )
    lines = r.text.splitlines()
    assert lines[1] == "exit_code: unknown"
    assert lines[2].startswith("outcome unknown:")
    assert r.details["unknown_outcome"] is True


def test_truncation_notes_and_unavailable_recovery() -> None:
    rec = RecoveryRecord("unavailable", None, 5000, 0, "io-error")
    r = format_shell_result(
        ShellObservation(
            "pct-shell-e",
            "completed",
            0,
            _read("x", dropped=100, omitted=50),
            recovery={"stdout": rec},
            ever_output=True,
        )
    )
    assert "stdout recovery: unavailable (io-error) [0/5000 UTF-8 bytes captured]" in r.text
    assert r.text.endswith(
        "[stdout: 150 UTF-8 bytes not shown — 50 over this call's output budget, 100 dropped "
        "by the 256 KiB preview before this read; no recovery file is available, so that text "
        "is lost]"
    )
    assert r.details["truncated"] == {"stdout": {"dropped_bytes": 100, "omitted_bytes": 50}}


def test_stdin_lines() -> None:
    r = format_shell_result(
        ShellObservation("s", "running", stdin=StdinReport("written", 6, 6, True), ever_output=True)
    )
    assert "stdin: written (6 UTF-8 bytes); closed" in r.text
    assert r.details["input_delivery"] == "written"
    r = format_shell_result(ShellObservation("s", "running", stdin=StdinReport(None, 0, 0, True)))
    assert "stdin: closed" in r.text
    assert "input_delivery" not in r.details
    r = format_shell_result(ShellObservation("s", "running", stdin=StdinReport("unknown", 6, 2)))
    assert "stdin: delivery unknown (2 of 6 UTF-8 bytes reached the pipe" in r.text
    assert r.details["input_delivery"] == "unknown"


def test_pending_stdin_and_earlier_calls() -> None:
    r = format_shell_result(
        ShellObservation(
            "s",
            "running",
            stdin=StdinReport("pending", 100_000, 65_536, True),
            stdin_earlier=[StdinReport("written", 10, 10), StdinReport("unknown", 9, 4)],
        )
    )
    lines = r.text.splitlines()
    assert lines[2] == (
        "stdin: pending (65536 of 100000 UTF-8 bytes reached the pipe so far; the program has "
        "not read the rest yet). pct keeps writing it in the background, then closes stdin; "
        "do not resend — poll with write_stdin to see it delivered."
    )
    assert lines[3] == "stdin (earlier call): written (10 UTF-8 bytes)"
    assert lines[4].startswith("stdin (earlier call): delivery unknown (4 of 9 UTF-8 bytes")
    assert r.details["input_delivery"] == "pending"
    assert r.details["input_bytes"] == 100_000
    assert r.details["input_written_bytes"] == 65_536
