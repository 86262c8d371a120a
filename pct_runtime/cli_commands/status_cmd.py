"""`pct status [--model PROVIDER/ID] [--tools A,B] [--headless] [--session mcp|embedded]`.

Prints the `/pct status` text of a fresh session to stdout and exits 0 — also when the
config file is broken (the text says so). A model the registry does not know is an error
(stderr, exit 2). Without `--model` the model is Pi's `settings.json` default (the
project's `.pi/settings.json` in the working directory wins per key), else none.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.cli_commands.errors import CliError
from pct_runtime.cli_commands.host_checks import load_host_model, warn_unknown_tools
from pct_runtime.config.commands import CommandsConfigError, CommandsFields, commands_fields
from pct_runtime.config.paths import agent_dir, config_path
from pct_runtime.config.store import ConfigStore, read_document
from pct_runtime.config.typos import unknown_key_warnings
from pct_runtime.decide.projection import plan_projection
from pct_runtime.host.pi.names import OWNED_TOOL_NAMES
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry
from pct_runtime.host.system import platform as host_platform
from pct_runtime.host.system.sandbox import SandboxConfigError, resolve_settings
from pct_runtime.host.system.sandbox import settings_from_config as configured_sandbox
from pct_runtime.runtime.inputs import plan_inputs
from pct_runtime.status import commands_lines, sandbox_lines, status_text

if TYPE_CHECKING:
    import argparse


def parse_tools_arg(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def run(args: argparse.Namespace) -> int:
    if getattr(args, "live", False):
        if (
            args.model is not None
            or args.tools is not None
            or args.headless
            or args.session != "mcp"
            or args.sandbox is not None
            or args.sandbox_network
        ):
            raise CliError(
                "--live shows the running runtimes as they are; "
                "--model, --tools, --headless and --session apply only without it"
            )
        # Start-up: only --live talks to the running runtimes (asyncio, sockets).
        from pct_runtime.serve.client.running import status_running  # noqa: PLC0415

        return status_running(agent_dir())
    host = load_host_model(agent_dir(), args.model, Path.cwd())
    registry, model = host.registry, host.model

    read = ConfigStore(config_path()).read()
    for warning in unknown_key_warnings(read.raw) if read.error is None else ():
        print(f"pct: warning: {warning}", file=sys.stderr)
    allowlist = parse_tools_arg(args.tools)
    # A fresh status session knows only these names; a typo would silently drop a tool.
    warn_unknown_tools(allowlist)
    tools = ToolRegistry.with_natives(allowlist=allowlist)
    for name in OWNED_TOOL_NAMES:
        tools.register(name, RUNTIME_OWNER)
    platform = host_platform.current_platform()
    ui_available = not args.headless
    plan = plan_projection(
        plan_inputs(
            config=read.config,
            model=model,
            registry=registry,
            tools=tools.snapshot(),
            kind=args.session,
            ui_available=ui_available,
            platform=platform,
            full_probe=True,  # an explicit status may start a host probe's helper
        ),
        CAPABILITIES,
    )
    raw = read_document(config_path()) or {}
    text = status_text(
        plan,
        config_path=os.fspath(config_path()),
        read_error=read.error,
        sandbox=_sandbox_block(args, raw) + _commands_block(raw),
    )
    sys.stdout.write(text + "\n")
    return 0


def _commands_block(raw: dict[str, object]) -> list[str]:
    """The command policy `pct serve` would judge by (the file's `pct.commands`)."""
    try:
        return commands_lines(commands_fields(raw))
    except CommandsConfigError as exc:
        return commands_lines(CommandsFields(), str(exc))


def _sandbox_block(args: argparse.Namespace, raw: dict[str, object]) -> list[str]:
    """What `pct serve` with the same flags would confine jobs with (flags > config)."""
    problem = None
    try:
        configured = configured_sandbox(raw)
    except SandboxConfigError as exc:
        configured, problem = None, str(exc)
    settings = resolve_settings(args.sandbox, args.sandbox_network, configured)
    lines = sandbox_lines(settings, Path.cwd())
    if problem is not None:
        lines.insert(1, f"  config error: {problem} (pct serve refuses to start)")
    return lines
