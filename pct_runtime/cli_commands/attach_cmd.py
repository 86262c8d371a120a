"""`pct attach codex|claude|pi [--http URL]`: ready-to-paste MCP config for an agent.

Stdio snippets start `pct serve` themselves; HTTP snippets point at a running
`pct serve --http` (or the console) and pass the bearer token through `PCT_TOKEN`.
The token itself is never printed: the snippet says where to read it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pct_runtime.cli_commands.attach_pi import (
    OLDEST_PI,
    SERVE,
    SERVE_ARGS,
    detect_pi_version,
    parse_pi_version,
    pi_snippet,
)
from pct_runtime.cli_commands.errors import CliError
from pct_runtime.config.paths import agent_dir
from pct_runtime.serve.token import TOKEN_ENV, token_path

if TYPE_CHECKING:
    import argparse


def _pct_command() -> str:
    found = shutil.which("pct")
    if found:
        return found
    candidate = Path(sys.executable).with_name("pct")
    return str(candidate) if candidate.exists() else "pct"


def _token_line() -> str:
    return f'export {TOKEN_ENV}="$(cat {token_path(agent_dir())})"'


_CODEX_ONE_LINER_NOTE = (
    "# Two alternatives that do the same thing: use ONE of them, not both.\n"
    "#\n"
    "# Alternative 1 - run this command once; it sets neither required = true (Codex\n"
    "# may start the first turn before pct listed its tools) nor the approval line that\n"
    "# `codex exec` needs: add both to the [mcp_servers.pct] table it writes, or use\n"
    "# alternative 2 instead.\n"
)
_CODEX_TABLE_NOTE = "# Alternative 2 - or put this table in ~/.codex/config.toml"
# Codex refuses an MCP call in `codex exec` unless the server's tools are approved; pct asks
# its own approvals (console, elicitation), so the table lets Codex pass its calls through.
_CODEX_APPROVE = (
    "# pct asks its own approvals (patches, command policy): Codex passes its calls through\n"
    'default_tools_approval_mode = "approve"\n'
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
                f"{_CODEX_TABLE_NOTE} (required = true makes\n"
                "# Codex wait for pct's tools before the first turn):\n"
                f"[mcp_servers.pct]\ncommand = {json.dumps(command)}\n"
                f"args = {json.dumps(list(SERVE_ARGS))}\n"
                f"{env}required = true\ntool_timeout_sec = 120\n{_CODEX_APPROVE}"
            )
        return (
            f"{_CODEX_ONE_LINER_NOTE}"
            f"codex mcp add pct --url {url} --bearer-token-env-var PCT_TOKEN\n\n"
            f"{_CODEX_TABLE_NOTE} (the token is read\n"
            "# from PCT_TOKEN; required = true makes Codex wait for pct's tools):\n"
            f"[mcp_servers.pct]\nurl = {json.dumps(url)}\n"
            'bearer_token_env_var = "PCT_TOKEN"\nrequired = true\ntool_timeout_sec = 120\n'
            f"{_CODEX_APPROVE}"
        )
    if agent == "claude":
        if url is None:
            add_env = f" -e PI_CODING_AGENT_DIR={agent_dir_env}" if agent_dir_env else ""
            return f"claude mcp add{add_env} pct -- {command} {SERVE}\n"
        header = '"Authorization: Bearer $PCT_TOKEN"'
        return f"claude mcp add --transport http pct {url} --header {header}\n"
    return pi_snippet(url, command, agent_dir_env, pi_agent_dir, pi_version)


def http_url(text: str) -> str:
    """`--http` as a URL the agent can use: `8765`, `127.0.0.1:8765` or `host:port/path`
    are completed to `http://…` (path `/mcp`, where pct serves, when none is given).
    Raises `CliError` for another scheme or no host."""
    value = text.strip()
    if value.isdigit():
        value = f"127.0.0.1:{value}"
    if "://" not in value:
        value = f"http://{value}"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise CliError(
            f"--http {text!r} is not a URL: give http://HOST:PORT/mcp (or HOST:PORT)"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CliError(
            f"--http {text!r} is not an http(s) URL: give http://HOST:PORT/mcp (or HOST:PORT)"
        )
    if parts.path in ("", "/"):
        value = parts._replace(path="/mcp").geturl()
    return value


def run(args: argparse.Namespace) -> int:
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
    url = None
    if args.http is not None:
        url = http_url(args.http)
        if url != args.http:
            print(f"pct: --http: using {url}", file=sys.stderr)
    if version is not None and version[:2] < OLDEST_PI:
        print(
            "pct: warning: Pi {}.{}.{} is older than {}.{}, the oldest Pi pct supports; "
            "the snippet below is for {}.{} and may not work there: upgrade Pi.".format(
                *version, *OLDEST_PI, *OLDEST_PI
            ),
            file=sys.stderr,
        )
    text = snippet(args.agent, url, _pct_command(), custom, pi_dir, version)
    if url is not None:
        text = (
            "# the server decides the sandbox: start it with --sandbox workspace-write\n"
            "# (pct serve --http ... --sandbox workspace-write, or pct-tui --sandbox ...)\n"
            f"# first, in the agent's environment:\n{_token_line()}\n\n{text}"
        )
    sys.stdout.write(text)
    return 0
