"""`pct attach pi`: the snippet for each Pi line, and how the version is chosen.

Pi 0.99+ (built-in MCP) needs `exposure: direct` (its default `codemode` hides the tools);
Pi 0.58–0.87 need `pi-mcp-adapter` with `directTools`. The real packages run the printed
config in tests/e2e/test_pi_attach.py.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pct_runtime.cli import main
from pct_runtime.cli_commands.attach_cmd import snippet
from pct_runtime.cli_commands.attach_pi import detect_pi_version, parse_pi_version

BUILTIN = "# Pi 0.99 or newer (built-in MCP)"
ADAPTER = "# Pi 0.58 to 0.87 (no built-in MCP)"

SERVE = ["serve", "--sandbox", "workspace-write"]


def bodies(text: str) -> list[dict[str, object]]:
    """Every JSON object the snippet prints, in order."""
    found: list[dict[str, object]] = []
    decoder = json.JSONDecoder()
    start = text.find("\n{")
    while start != -1:
        obj, end = decoder.raw_decode(text, start + 1)
        found.append(obj)
        start = text.find("\n{", end)
    return found


def test_builtin_one_liner_and_mcp_json_expose_tools_directly() -> None:
    text = snippet("pi", None, "/opt/pct", pi_version=(1, 6, 0))
    assert text.startswith("# for Pi 1.6.0:\n" + BUILTIN)
    assert (
        "\npi mcp add pct --exposure direct -- /opt/pct serve --sandbox workspace-write\n" in text
    )
    assert "\n# or in ~/.pi/agent/mcp.json:\n" in text
    assert ADAPTER not in text
    assert "directTools" not in text
    assert bodies(text) == [
        {"mcpServers": {"pct": {"command": "/opt/pct", "args": SERVE, "exposure": "direct"}}}
    ]


@pytest.mark.parametrize("version", [(0, 58, 3), (0, 73, 1), (0, 74, 0), (0, 87, 1)])
def test_adapter_snippet_for_pi_before_builtin_mcp(version: tuple[int, int, int]) -> None:
    text = snippet("pi", None, "pct", pi_version=version)
    assert ADAPTER in text
    assert BUILTIN not in text
    install = [ln for ln in text.splitlines() if ln.startswith("pi install ")]
    # Pi 0.58-0.73 are @mariozechner/pi-coding-agent: adapters from 2.6.0 on import
    # @earendil-works/* and fail to load there, so the last compatible one is pinned.
    legacy = version < (0, 74, 0)
    assert install == ["pi install npm:pi-mcp-adapter" + ("@2.5.4" if legacy else "")]
    assert "pi mcp add" not in text
    assert "exposure" not in text
    assert "~/.pi/agent/mcp.json (pi-mcp-adapter 2.x)" in text
    assert "~/.pi/agent/mcp-adapter.json (pi-mcp-adapter 3.x)" in text
    server = {"command": "pct", "args": SERVE, "lifecycle": "keep-alive", "directTools": True}
    assert bodies(text) == [{"mcpServers": {"pct": server}}]


def test_unknown_version_prints_both_newest_first() -> None:
    text = snippet("pi", None, "pct")
    assert text.index(BUILTIN) < text.index(ADAPTER)
    assert "`pi --version` tells which" in text
    assert [ln for ln in text.splitlines() if ln.startswith("pi install ")] == [
        "pi install npm:pi-mcp-adapter",
        "pi install npm:pi-mcp-adapter@2.5.4",
    ]
    assert "# or, on Pi 0.58 to 0.73 (@mariozechner/pi-coding-agent;" in text
    assert [b["mcpServers"]["pct"] for b in bodies(text)] == [  # type: ignore[index]
        {"command": "pct", "args": SERVE, "exposure": "direct"},
        {"command": "pct", "args": SERVE, "lifecycle": "keep-alive", "directTools": True},
    ]


def test_custom_agent_dir_is_passed_on_and_names_the_files() -> None:
    text = snippet("pi", None, "pct", "/srv/agent", "/srv/agent")
    assert "pi mcp add pct --exposure direct --env PI_CODING_AGENT_DIR=/srv/agent -- pct" in text
    assert "# or in /srv/agent/mcp.json:" in text
    assert "# then in /srv/agent/mcp.json (pi-mcp-adapter 2.x) or" in text
    assert "# /srv/agent/mcp-adapter.json (pi-mcp-adapter 3.x):" in text
    for body in bodies(text):
        assert body["mcpServers"]["pct"]["env"] == {"PI_CODING_AGENT_DIR": "/srv/agent"}  # type: ignore[index]


def test_http_snippets_carry_the_token_from_the_environment() -> None:
    url = "http://127.0.0.1:8765/mcp"
    text = snippet("pi", url, "pct")
    assert f"pi mcp add pct --url {url} --bearer-token-env-var PCT_TOKEN --exposure direct" in text
    builtin, adapter = (b["mcpServers"]["pct"] for b in bodies(text))  # type: ignore[index]
    for server in (builtin, adapter):
        assert server["url"] == url
        assert server["headers"] == {"Authorization": "Bearer ${PCT_TOKEN}"}
        assert "command" not in server
    assert builtin["exposure"] == "direct"
    assert adapter["directTools"] is True


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.87.1\n", (0, 87, 1)),
        ("pi 1.6.0", (1, 6, 0)),
        ("0.99", (0, 99, 0)),
        ("v0.58.3-beta", (0, 58, 3)),
        ("", None),
        ("unknown", None),
    ],
)
def test_parse_pi_version(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_pi_version(text) == version


def fake_pi(bin_dir: Path, output: str, code: int = 0) -> None:
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "pi"
    script.write_text(f"#!/bin/sh\necho '{output}'\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_detect_asks_the_pi_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert detect_pi_version() is None  # no pi at all
    fake_pi(tmp_path / "bin", "0.86.1")
    assert detect_pi_version() == (0, 86, 1)
    fake_pi(tmp_path / "bin", "1.6.0", code=1)
    assert detect_pi_version() is None  # a failing pi is not trusted


def test_cli_uses_the_detected_or_given_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    fake_pi(tmp_path / "bin", "0.87.0")
    assert main(["attach", "pi"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# for Pi 0.87.0:\n" + ADAPTER)
    assert f"# then in {tmp_path / 'agent'}/mcp.json (pi-mcp-adapter 2.x)" in out
    assert main(["attach", "pi", "--pi-version", "1.0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# for Pi 1.0.0:\n" + BUILTIN)
    assert main(["attach", "pi", "--pi-version", "latest"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--pi-version wants X.Y" in captured.err
