"""`pct attach codex|claude|pi [--http URL]`: ready-to-paste MCP config for an agent.

Stdio snippets start `pct serve` themselves; HTTP snippets point at a running
`pct serve --http` (or the console) and pass the bearer token through `PCT_TOKEN`.
The token itself is never printed: the snippet says where to read it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

AGENTS = ("codex", "claude", "pi")
#: Stdio snippets start pct confined: writes only in the workspace and temp, no network.
SERVE_ARGS = ("serve", "--sandbox", "workspace-write")
SERVE = " ".join(SERVE_ARGS)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "attach",
        help="print MCP config that attaches an agent (codex, claude, pi) to pct",
        description="Print ready-to-paste configuration that attaches an agent to pct over MCP.",
    )
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument(
        "--http",
        metavar="URL",
        help="attach to a running HTTP server (e.g. http://127.0.0.1:8765/mcp)",
    )
    parser.set_defaults(handler=handle)


def _pct_command() -> str:
    found = shutil.which("pct")
    if found:
        return found
    candidate = Path(sys.executable).with_name("pct")
    return str(candidate) if candidate.exists() else "pct"


def _token_line() -> str:
    from pct_runtime.config.paths import agent_dir
    from pct_runtime.serve.token import TOKEN_ENV, token_path

    return f'export {TOKEN_ENV}="$(cat {token_path(agent_dir())})"'


_CODEX_ONE_LINER_NOTE = (
    "# one command (it does not set required = true, so Codex may start the first turn\n"
    "# before pct listed its tools: add that line to the [mcp_servers.pct] table it\n"
    "# writes, or use the table below instead):\n"
)


def snippet(
    agent: str,
    url: str | None,
    command: str,
    agent_dir_env: str | None = None,
    pi_mcp_json: str = "~/.pi/agent/mcp.json",
) -> str:
    """The text `pct attach` prints (pure, for tests).

    `agent_dir_env` is a custom `PI_CODING_AGENT_DIR` to pass on: Codex and Claude start
    stdio servers with a reduced environment, so the snippet sets it explicitly.
    `pi_mcp_json` is where Pi reads its MCP servers: `<agent dir>/mcp.json`.
    """
    if agent == "codex":
        if url is None:
            env = (
                f"env = {{ PI_CODING_AGENT_DIR = {json.dumps(agent_dir_env)} }}\n"
                if agent_dir_env
                else ""
            )
            add_env = f" --env PI_CODING_AGENT_DIR={agent_dir_env}" if agent_dir_env else ""
            return (
                f"{_CODEX_ONE_LINER_NOTE}codex mcp add pct{add_env} -- {command} {SERVE}\n\n"
                "# or in ~/.codex/config.toml (required = true makes Codex wait for pct's\n"
                "# tools before the first turn):\n"
                f"[mcp_servers.pct]\ncommand = {json.dumps(command)}\n"
                f"args = {json.dumps(list(SERVE_ARGS))}\n"
                f"{env}required = true\ntool_timeout_sec = 120\n"
            )
        return (
            f"{_CODEX_ONE_LINER_NOTE}"
            f"codex mcp add pct --url {url} --bearer-token-env-var PCT_TOKEN\n\n"
            "# or in ~/.codex/config.toml (the token is read from PCT_TOKEN):\n"
            f"[mcp_servers.pct]\nurl = {json.dumps(url)}\n"
            'bearer_token_env_var = "PCT_TOKEN"\nrequired = true\ntool_timeout_sec = 120\n'
        )
    if agent == "claude":
        if url is None:
            add_env = f" -e PI_CODING_AGENT_DIR={agent_dir_env}" if agent_dir_env else ""
            return f"claude mcp add{add_env} pct -- {command} {SERVE}\n"
        header = '"Authorization: Bearer $PCT_TOKEN"'
        return f"claude mcp add --transport http pct {url} --header {header}\n"
    # pi: built-in MCP (>= 0.99) reads <agent dir>/mcp.json; "direct" exposes first-class tools.
    server: dict[str, object]
    if url is None:
        server = {"command": command, "args": list(SERVE_ARGS), "exposure": "direct"}
        if agent_dir_env:
            server["env"] = {"PI_CODING_AGENT_DIR": agent_dir_env}
    else:
        server = {
            "url": url,
            "headers": {"Authorization": "Bearer ${PCT_TOKEN}"},
            "exposure": "direct",
        }
    body = json.dumps({"mcpServers": {"pct": server}}, indent=2)
    if url is None:
        head = f"# one command (Pi >= 0.99):\npi mcp add pct -- {command} {SERVE}\n\n# or in "
    else:
        head = "# in "
    return f"{head}{pi_mcp_json}:\n{body}\n"


def handle(args: argparse.Namespace) -> int:
    from pct_runtime.config.paths import agent_dir

    custom = os.environ.get("PI_CODING_AGENT_DIR") or None
    mcp_json = str(agent_dir() / "mcp.json") if custom else "~/.pi/agent/mcp.json"
    text = snippet(args.agent, args.http, _pct_command(), custom, mcp_json)
    if args.http is not None:
        text = (
            "# the server decides the sandbox: start it with --sandbox workspace-write\n"
            "# (pct serve --http ... --sandbox workspace-write, or pct-tui --sandbox ...)\n"
            f"# first, in the agent's environment:\n{_token_line()}\n\n{text}"
        )
    sys.stdout.write(text)
    return 0
