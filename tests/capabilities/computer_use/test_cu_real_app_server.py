"""The client against the *real* `codex app-server` (Codex CLI), with a fake `node_repl`.

This checks our requests against the genuine protocol implementation: the handshake, the
ephemeral thread with one injected MCP server, `mcpServerStatus/list`, `mcpServer/tool/call`
and the app-server's forwarding of a form elicitation (`mcpServer/elicitation/request`) and of
our reply. Only `node_repl` (and so `@oai/sky`) is fake. Skipped when no Codex CLI is present.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from cu_helpers import FAST, FakeUI, alive

from pct_runtime.capabilities.computer_use import (
    ComputerUseClient,
    ComputerUseClientError,
    ComputerUseProbe,
)
from pct_runtime.capabilities.computer_use.eligibility import runtime_paths

FAKE_NODE_REPL = Path(__file__).with_name("fake_cu_node_repl.py")


def _codex_cli() -> str | None:
    from tests.node_tools import node_bin

    configured = os.environ.get("PCT_TEST_CODEX")
    if configured and os.access(configured, os.X_OK):
        return configured
    return node_bin("codex")


CODEX = _codex_cli()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CODEX is None, reason="no Codex CLI (set PCT_TEST_CODEX)"),
]


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def real_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    resources = tmp_path / "ChatGPT.app" / "Contents" / "Resources"
    codex_home = tmp_path / "codex-home"
    log = tmp_path / "node_repl.log"
    _script(resources / "codex", f'exec "{CODEX}" "$@"')
    _script(
        resources / "cua_node" / "bin" / "node_repl",
        f'exec "{sys.executable}" "{FAKE_NODE_REPL}" "{log}"',
    )
    _script(resources / "cua_node" / "bin" / "node", "exit 0")
    (resources / "cua_node" / "lib" / "node_modules").mkdir(parents=True)
    (codex_home / "computer-use" / "Codex Computer Use.app").mkdir(parents=True)
    return resources, codex_home, log


def _temp_homes(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if p.name.startswith("pct-computer-use-")]


def _records(log: Path, key: str) -> list[Any]:
    if not log.exists():
        return []
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return [row[key] for row in rows if key in row]


async def test_tools_and_confirm_through_the_real_app_server(
    real_tree: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    resources, codex_home, log = real_tree
    options: dict[str, Any] = {**FAST, "startup_timeout": 60.0, "request_timeout": 60.0}
    client = ComputerUseClient(runtime_paths(resources, codex_home), temp_root=tmp_path, **options)
    try:
        apps = await client.invoke("list_apps", {})
        assert "com.apple.TextEdit" in apps.text
        pid = client.process_id
        state = await client.invoke("get_app_state", {"app": "TextEdit"})
        assert state.text == "state of TextEdit"
        assert [image.mime_type for image in state.images] == ["image/png"]
        assert state.images[0].data.startswith(b"\x89PNG")

        ui = FakeUI(answers=[True, False])
        clicked = await client.invoke(
            "click", {"app": "com.apple.TextEdit", "element_index": 2}, ui=ui
        )
        assert clicked.text == "click completed."
        assert ui.asked == [
            ("Computer Use access", "Allow Computer Use to control com.apple.TextEdit?")
        ]
        again = await client.invoke("press_key", {"app": "com.apple.TextEdit", "key": "a"}, ui=ui)
        assert again.text == "press_key completed."
        assert len(ui.asked) == 1  # remembered for this client

        with pytest.raises(ComputerUseClientError) as declined:
            await client.invoke("type_text", {"app": "com.apple.Notes", "text": "x"}, ui=ui)
        assert declined.value.code == "approval-declined"
        assert len(ui.asked) == 2

        replies = _records(log, "access_reply")
        assert replies[0] == {"action": "accept", "content": {}, "_meta": {"persist": "session"}}
        assert replies[1]["action"] == "accept"
        assert replies[2]["action"] == "decline"
        calls = _records(log, "tool_call")
        assert [c["method"] for c in calls] == [
            "list_apps",
            "get_app_state",
            "click",
            "press_key",
            "type_text",
        ]
        assert calls[0]["timeout_ms"] == round(FAST["tool_timeout"] * 1000)
        assert client.process_id == pid  # one app-server for every call
    finally:
        await client.close()
    assert pid is not None
    assert not alive(pid)
    assert _temp_homes(tmp_path) == []


async def test_status_probe_through_the_real_app_server(
    real_tree: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    resources, codex_home, log = real_tree
    probe = ComputerUseProbe(resources_path=resources, codex_home=codex_home)
    assert await probe.probe() is None
    assert [c["method"] for c in _records(log, "tool_call")] == ["probe"]
