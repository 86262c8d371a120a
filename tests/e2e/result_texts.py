"""One scripted agent session, and what the model must read back from each call.

The real-client tests (Codex CLI, Claude Code) script the same four calls: `apply_patch`, an
`exec_command` still running when it yields, the `write_stdin` poll that completes it, and a
Code Mode `exec` whose nested call reads the file back. Each result the client hands the
model must be pct's result text — the spec wrote those lines for that reader — and never a
JSON dump of the details (which travel in `_meta["pct/details"]`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SESSION = re.compile(r"session_id (pct-shell-[0-9a-f]+): running")
CONFIG: dict[str, Any] = {
    "applyPatch": {"enabled": True},
    "shellSessions": {"enabled": True},
    "codeMode": {"enabled": True},
}
FILE = "from_agent.txt"
LINE = "written by the agent via pct"
PATCH = f"*** Begin Patch\n*** Add File: {FILE}\n+{LINE}\n*** End Patch"
#: Returns on the file's line (new output) while `sleep` runs; the poll waits for the exit.
#: Nothing is printed after the sleep: output there would end the poll before the exit.
SHELL = {"cmd": f"cat {FILE}; sleep 2", "yield_time_ms": 5000}
CELL = (
    f"r = await tools.exec_command(cmd='cat {FILE}')\n"
    "print(r['stdout'].strip())\n"
    "{'code': r['exit_code'], 'camel': 'exitCode' in r}"
)
POLL_YIELD_MS = 20000


def running_session(outputs: list[str]) -> str | None:
    """The session id the latest output reported running, if any."""
    found = SESSION.search(outputs[-1]) if outputs else None
    return found.group(1) if found else None


def assert_no_json_dump(text: str) -> None:
    """What the model reads is pct's text: no serialized details beside or instead of it."""
    for key in ('"session_id"', '"sessionId"', '"exit_code"', '"exitCode"', '"operations"'):
        assert key not in text, f"JSON dump ({key}) in: {text!r}"
    assert "structuredContent" not in text, text
    assert "pct/details" not in text, text


def check_outputs(outputs: list[str], work: Path, diagnostics: str) -> None:
    """The four results, in order, carry the spec's texts; the effects happened in pct."""
    assert (work / FILE).read_text() == f"{LINE}\n", diagnostics
    assert len(outputs) == 4, diagnostics
    patched, started, polled, cell = outputs
    for out in outputs:
        assert_no_json_dump(out)
    assert f"Applied patch:\n- add {FILE}" in patched, diagnostics
    found = SESSION.search(started)
    assert found is not None, diagnostics
    session = found.group(1)
    assert (
        f"session_id {session}: running\njob still running; continue with write_stdin, not wait"
        in started
    ), diagnostics
    assert f"[stdout]\n{LINE}" in started, diagnostics
    assert f"session_id {session}: completed\nexit_code: 0\n" in polled, diagnostics
    assert polled.endswith("(no new output)"), diagnostics
    # The cell's nested call got the snake_case details dict (no camelCase twin).
    assert re.search(r"cell_id cell-[0-9a-f]+: completed\n", cell), diagnostics
    assert f"[output]\n{LINE}" in cell, diagnostics
    assert '[result]\n{"code":0,"camel":false}' in cell, diagnostics
