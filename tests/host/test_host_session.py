"""Session kinds and cheap platform facts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pct_runtime.host.pi.session import HostSession
from pct_runtime.host.system.platform import shell_available


def test_session_kinds() -> None:
    mcp = HostSession()
    assert (mcp.kind, mcp.model, mcp.ui_available, mcp.has_payload_hook) == (
        "mcp",
        None,
        False,
        False,
    )
    assert mcp.lineage == mcp.id
    embedded = HostSession(kind="embedded", lineage="parent")
    assert embedded.has_payload_hook
    assert embedded.lineage == "parent"
    assert HostSession().id != mcp.id
    with pytest.raises(ValueError, match="session kind must be one of mcp, embedded"):
        HostSession(kind="stdio")  # type: ignore[arg-type]


@pytest.mark.skipif(os.name == "nt", reason="POSIX shell resolution")
def test_shell_available(tmp_path: Path) -> None:
    assert shell_available({"SHELL": "/bin/sh", "PATH": ""})
    assert shell_available({"PATH": "/usr/bin:/bin"})
    missing = str(tmp_path / "missing")
    assert not shell_available({"SHELL": missing, "PATH": "/usr/bin:/bin"}, fallback=missing)


@pytest.mark.skipif(os.name == "nt", reason="POSIX shell resolution")
@pytest.mark.parametrize(
    "env",
    [
        {"SHELL": "/bin/sh", "PATH": ""},
        {"PATH": "/usr/bin:/bin"},
        {"SHELL": "/nonexistent/shell", "PATH": "/usr/bin:/bin"},
        {"SHELL": "/nonexistent/shell", "PATH": "/nonexistent"},  # /bin/sh still runs commands
        {"SHELL": "bash", "PATH": "/usr/bin:/bin"},  # relative $SHELL is not used
    ],
)
def test_shell_available_agrees_with_the_executor(env: dict[str, str]) -> None:
    """Status must not say `shell-unavailable` while exec_command would run (or vice versa)."""
    from pct_runtime.capabilities.shell.resolve import find_user_shell

    assert shell_available(env) == (find_user_shell(env) is not None)
