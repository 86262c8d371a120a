"""`pct attach pi`: the snippet that fits the user's Pi.

Pi 0.99 and newer have a built-in MCP client whose default `codemode` exposure hides a
server's tools from the model's tool list, so both the one-liner and the `mcp.json` entry
ask for `direct` exposure. Pi 0.58–0.87 (the versions the toolkit targets) have no MCP
client: they need the `pi-mcp-adapter` extension with `directTools`, else the model sees
one `mcp` proxy tool instead of pct's tools. The adapter reads `<agent dir>/mcp.json` in
2.x and `<agent dir>/mcp-adapter.json` from 3.0 on. Npm has no Pi between 0.87 and 0.99.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

#: First Pi with the built-in MCP client (`pi mcp add`, `exposure`).
BUILTIN_MCP = (0, 99)
#: The oldest Pi the toolkit targets (with pi-mcp-adapter); older ones get a warning.
OLDEST_PI = (0, 58)
#: Stdio snippets start pct confined: writes only in the workspace and temp, no network.
SERVE_ARGS = ("serve", "--sandbox", "workspace-write")
SERVE = " ".join(SERVE_ARGS)
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_pi_version(text: str) -> tuple[int, int, int] | None:
    """The first `X.Y[.Z]` in `text` (what `pi --version` prints), else None."""
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def detect_pi_version(timeout: float = 10.0) -> tuple[int, int, int] | None:
    """Ask the `pi` on PATH for its version; None when there is none or it does not answer."""
    pi = shutil.which("pi")
    if pi is None:
        return None
    try:
        done = subprocess.run(
            [pi, "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return parse_pi_version(done.stdout) or parse_pi_version(done.stderr)


def _server(
    url: str | None, command: str, agent_dir_env: str | None, extra: dict[str, object]
) -> dict[str, object]:
    server: dict[str, object]
    if url is None:
        server = {"command": command, "args": list(SERVE_ARGS)}
        if agent_dir_env:
            server["env"] = {"PI_CODING_AGENT_DIR": agent_dir_env}
    else:
        server = {"url": url, "headers": {"Authorization": "Bearer ${PCT_TOKEN}"}}
    server.update(extra)
    return server


def _body(server: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {"pct": server}}, indent=2)


def builtin_snippet(url: str | None, command: str, agent_dir_env: str | None, dir_: str) -> str:
    """Pi >= 0.99: `pi mcp add … --exposure direct`, or the same entry in `mcp.json`."""
    if url is None:
        add_env = f" --env PI_CODING_AGENT_DIR={agent_dir_env}" if agent_dir_env else ""
        one = f"pi mcp add pct --exposure direct{add_env} -- {command} {SERVE}"
    else:
        one = f"pi mcp add pct --url {url} --bearer-token-env-var PCT_TOKEN --exposure direct"
    body = _body(_server(url, command, agent_dir_env, {"exposure": "direct"}))
    return (
        "# Pi 0.99 or newer (built-in MCP). --exposure direct lists pct's tools for the\n"
        "# model; the default (codemode) hides them behind code mode:\n"
        f"{one}\n\n"
        f"# or in {dir_}/mcp.json:\n{body}\n"
    )


#: The last pi-mcp-adapter that imports `@mariozechner/*` (2.6.0 moved to `@earendil-works/*`,
#: which Pi 0.58–0.73, published as `@mariozechner/pi-coding-agent`, cannot resolve).
LEGACY_ADAPTER = "2.5.4"
#: First Pi published as `@earendil-works/pi-coding-agent`.
EARENDIL = (0, 74)


def _adapter_install(version: tuple[int, int, int] | None) -> str:
    latest = "pi install npm:pi-mcp-adapter"
    legacy = f"pi install npm:pi-mcp-adapter@{LEGACY_ADAPTER}"
    if version is None:
        return (
            f"{latest}\n# or, on Pi 0.58 to 0.73 (@mariozechner/pi-coding-agent; later adapters\n"
            f"# import @earendil-works/* and do not load there):\n{legacy}\n"
        )
    return f"{latest if version[:2] >= EARENDIL else legacy}\n"


def adapter_snippet(
    url: str | None,
    command: str,
    agent_dir_env: str | None,
    dir_: str,
    version: tuple[int, int, int] | None = None,
) -> str:
    """Pi 0.58–0.87: `pi-mcp-adapter` with `directTools` (and no idle disconnect)."""
    extra: dict[str, object] = {"lifecycle": "keep-alive", "directTools": True}
    body = _body(_server(url, command, agent_dir_env, extra))
    return (
        "# Pi 0.58 to 0.87 (no built-in MCP): the pi-mcp-adapter extension. directTools\n"
        "# lists pct's tools for the model (as pct_<tool>) instead of one `mcp` proxy\n"
        "# tool; keep-alive never disconnects an idle pct, which would end its shell jobs.\n"
        f"{_adapter_install(version)}\n"
        f"# then in {dir_}/mcp.json (pi-mcp-adapter 2.x) or\n"
        f"# {dir_}/mcp-adapter.json (pi-mcp-adapter 3.x):\n{body}\n"
        "# The adapter lists direct tools from its cache (mcp-cache.json in the same folder):\n"
        "# they appear once pct has connected (first session; else /mcp reconnect pct or\n"
        "# restart Pi).\n"
    )


def pi_snippet(
    url: str | None,
    command: str,
    agent_dir_env: str | None = None,
    agent_dir_display: str = "~/.pi/agent",
    version: tuple[int, int, int] | None = None,
) -> str:
    """The snippet for `version`, or both (newest first) when the version is unknown."""
    if version is None:
        return (
            "# `pi --version` tells which of the two below fits.\n\n"
            + builtin_snippet(url, command, agent_dir_env, agent_dir_display)
            + "\n"
            + adapter_snippet(url, command, agent_dir_env, agent_dir_display)
        )
    label = "# for Pi {}.{}.{}:\n".format(*version)
    if version[:2] >= BUILTIN_MCP:
        return label + builtin_snippet(url, command, agent_dir_env, agent_dir_display)
    return label + adapter_snippet(url, command, agent_dir_env, agent_dir_display, version)
