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

from pct_runtime.cli_commands.attach_pi import (
    SERVE,
    SERVE_ARGS,
    detect_pi_version,
    parse_pi_version,
    pi_snippet,
)

AGENTS = ("codex", "claude", "pi")


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
    parser.add_argument(
        "--pi-version",
        metavar="X.Y",
        help="the Pi to attach (default: ask `pi --version`; both snippets when unknown)",
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
    pi_agent_dir: str = "~/.pi/agent",
    pi_version: tuple[int, int, int] | None = None,
) -> str:
    """The text `pct attach` prints (pure, for tests).

    `agent_dir_env` is a custom `PI_CODING_AGENT_DIR` to pass on: Codex and Claude start
    stdio servers with a reduced environment, so the snippet sets it explicitly.
    `pi_agent_dir` is where Pi (and pi-mcp-adapter) read their MCP config files;
    `pi_version` picks the Pi snippet (None: both, labelled).
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
    return pi_snippet(url, command, agent_dir_env, pi_agent_dir, pi_version)


def handle(args: argparse.Namespace) -> int:
    from pct_runtime.config.paths import agent_dir

    custom = os.environ.get("PI_CODING_AGENT_DIR") or None
    pi_dir = str(agent_dir()) if custom else "~/.pi/agent"
    version = None
    if args.agent == "pi":
        if args.pi_version is not None:
            version = parse_pi_version(args.pi_version)
            if version is None:
                sys.stderr.write(
                    f"pct: --pi-version wants X.Y, like 0.87 or 1.6 (got {args.pi_version!r})\n"
                )
                return 2
        else:
            version = detect_pi_version()
    text = snippet(args.agent, args.http, _pct_command(), custom, pi_dir, version)
    if args.http is not None:
        text = (
            "# the server decides the sandbox: start it with --sandbox workspace-write\n"
            "# (pct serve --http ... --sandbox workspace-write, or pct-tui --sandbox ...)\n"
            f"# first, in the agent's environment:\n{_token_line()}\n\n{text}"
        )
    sys.stdout.write(text)
    return 0
