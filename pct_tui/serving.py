"""The console's embedded runtime: one `Runtime`, MCP over streamable HTTP on loopback,
and the live-control entry that `pct reload` / `pct status --live` find.

The HTTP server is uvicorn with `log_config=None` inside the console's event loop (a
Textual worker awaits `serve()`), so it never writes to the terminal the console draws on,
and signals stay with Textual.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.host.system.sandbox import SandboxSettings
from pct_runtime.runtime import Runtime, default_bindings
from pct_runtime.serve.token import TOKEN_ENV, token_path

if TYPE_CHECKING:
    from pct_runtime.serve.mcp.http import PctHttpServer
    from pct_runtime.serve.mcp.server import PctMCPServer
    from pct_runtime.serve.run import LiveControl

CONSOLE_KIND = "pct-tui"


def build_runtime(
    *,
    agent_dir: Path | None,
    model: str | None,
    cwd: Path | None,
    sandbox: SandboxSettings | None,
) -> Runtime:
    """The console's one runtime. The console owns the terminal, so debug records go to
    the Events screen only."""
    return Runtime(agent_dir=agent_dir, model=model, cwd=cwd, debug_stream=None, sandbox=sandbox)


def preload(serving: bool) -> None:
    """Import, off the loop, what the runtime's start would import on it: every capability
    it binds (its descriptors load on first use) and, when serving, the MCP/HTTP stack."""
    default_bindings()
    if serving:
        for name in ("pct_runtime.serve.mcp.server", "pct_runtime.serve.mcp.http", "uvicorn"):
            importlib.import_module(name)


@dataclass(frozen=True)
class AttachInfo:
    """What a person needs to attach an agent to this console."""

    url: str
    token_source: str
    commands: tuple[str, ...]

    def lines(self) -> list[str]:
        return [
            f"MCP endpoint: {self.url}",
            f"Bearer token: ${TOKEN_ENV} (from {self.token_source})",
            f"  {self.export_command()}"
            if self.export_command()
            else f"  {TOKEN_ENV} is already set in this environment",
            *(f"  {command}" for command in self.commands),
        ]

    def export_command(self) -> str:
        """The shell line that puts the token in the environment ('' when it is set)."""
        if self.token_source == f"${TOKEN_ENV}":
            return ""
        return f'export {TOKEN_ENV}="$(cat {self.token_source})"'

    def copy_text(self) -> str:
        """Every command shown, exactly, one per line: what `c` copies."""
        return "\n".join(c for c in (self.export_command(), *self.commands) if c) + "\n"


def attach_commands(url: str) -> tuple[str, ...]:
    return tuple(f"pct attach {agent} --http {url}" for agent in ("codex", "claude", "pi"))


class EmbeddedServing:
    """Start the runtime and its HTTP endpoint; `serve()` runs until `stop()`."""

    def __init__(self, runtime: Runtime, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.runtime = runtime
        self.host = host
        self.port = port
        self.mcp: PctMCPServer | None = None
        self.http: PctHttpServer | None = None
        #: The control socket and live hub: other consoles can watch this runtime.
        self.control: LiveControl | None = None
        self.attach: AttachInfo | None = None

    async def start(self) -> AttachInfo:
        """Read config and models, bind the socket, register for live control."""
        # Deferred for start-up time: the MCP/HTTP stack loads in the boot thread (`_preload`).
        from pct_runtime.serve.mcp.http import PctHttpServer
        from pct_runtime.serve.mcp.server import PctMCPServer
        from pct_runtime.serve.run import LiveControl
        from pct_runtime.serve.token import load_or_create_token

        runtime = self.runtime
        await runtime.start()
        self.mcp = PctMCPServer(runtime)
        token = load_or_create_token(runtime.agent_dir)
        self.http = PctHttpServer(self.mcp, token=token, host=self.host, port=self.port)
        url = self.http.url
        label = f"{CONSOLE_KIND} (pid {os.getpid()}, {url})"
        self.control = LiveControl(runtime, label, kind=CONSOLE_KIND, mcp=url)
        await self.control.start()
        source = (
            f"${TOKEN_ENV}"
            if os.environ.get(TOKEN_ENV, "").strip()
            else str(token_path(runtime.agent_dir))
        )
        self.attach = AttachInfo(url, source, attach_commands(url))
        return self.attach

    async def serve(self) -> None:
        if self.http is not None:
            await self.http.serve()

    def stop(self) -> None:
        if self.http is not None:
            self.http.stop()

    async def aclose(self) -> None:
        self.stop()
        if self.control is not None:
            await self.control.aclose()
        if self.mcp is not None:
            with contextlib.suppress(Exception):
                await self.mcp.aclose()
        await self.runtime.aclose()
