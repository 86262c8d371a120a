"""`pct serve`: a headless runtime of its own, served over stdio or streamable HTTP.

Both transports register the runtime for live control (`pct reload`, `pct status --live`)
and end every session — cleaning up its shell jobs, code cells and recovery files — on
exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence

from pct_runtime.host.system.sandbox import SandboxSettings
from pct_runtime.journal.settings import state_problem
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.runtime import Runtime
from pct_runtime.serve.client.running import control_token
from pct_runtime.serve.live.control import ControlServer, transport_of
from pct_runtime.serve.live.hub import LiveHub
from pct_runtime.serve.live.protocol import PROTOCOL_VERSION
from pct_runtime.serve.mcp.server import PctMCPServer
from pct_runtime.serve.mcp.stdio import StdioTransport
from pct_runtime.serve.startup import resume_collector
from pct_runtime.serve.token import TOKEN_ENV, load_or_create_token, token_path

_log = logging.getLogger(__name__)


def control_handler(runtime: Runtime, label: str) -> Callable[[str], Awaitable[JSONMapping]]:
    """The live-control operations every runtime answers."""

    async def handle(op: str) -> JSONMapping:
        if op == "reload":
            outcome = await runtime.reload()
            reply: dict[str, object] = {"ok": outcome.ok, "message": outcome.message}
            # A config that loaded but could not be applied to a session is not "reloaded":
            # say so, as the console's own save does.
            errors = [runtime.projection_sync.apply_error(s.id) for s in runtime.sessions]
            if any(errors):
                reply["apply_error"] = "; ".join(sorted({e for e in errors if e}))
            return reply
        if op == "status":
            return {"ok": True, "text": runtime.live_status_text(label)}
        return {"ok": True}

    return handle


class LiveControl:
    """A runtime's control listener with its live hub (registry entry, one-shot ops, and
    the `subscribe` streams of live consoles)."""

    def __init__(self, runtime: Runtime, label: str, *, kind: str, mcp: str) -> None:
        self.hub = LiveHub(
            runtime,
            kind="serve" if kind == "pct serve" else "console",
            transport=transport_of(mcp),
            mcp=mcp,
            label=label,
        )
        self.server = ControlServer(
            runtime.agent_dir,
            control_token(runtime.agent_dir),
            control_handler(runtime, label),
            kind=kind,
            mcp=mcp,
            stream=self.hub.serve_stream,
            live=PROTOCOL_VERSION,
        )

    async def start(self) -> None:
        self.hub.start()
        await self.server.start()
        self.hub.control = self.server.address

    async def aclose(self) -> None:
        await self.hub.aclose()
        await self.server.aclose()


class NoControl:
    """Live control while `<agent dir>/pct` cannot be written: no registry entry, no
    listener (its token and entry live there); the tools work all the same."""

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def live_control(runtime: Runtime, label: str, *, mcp: str) -> LiveControl | NoControl:
    """The runtime's live control, or none when pct's state folder is unusable, said in
    one warning with the journal (which `Runtime.start` switched off for the same reason)."""
    problem = state_problem(runtime.agent_dir)
    if problem is None:
        return LiveControl(runtime, label, kind="pct serve", mcp=mcp)
    print(
        f"pct: warning: the call journal and the live-control registry are off: {problem}. "
        "Tools work; calls are not recorded (pct log, pct undo) and pct reload / "
        "pct status --live do not see this server.",
        file=sys.stderr,
        flush=True,
    )
    return NoControl()


async def serve_stdio(
    *,
    model: str | None = None,
    allowlist: Sequence[str] | None = None,
    structured_content: bool = False,
    sandbox: SandboxSettings | None = None,
) -> int:
    runtime = Runtime(model=model, allowlist=allowlist, sandbox=sandbox)
    await runtime.start()
    session = await runtime.open_session("mcp")
    mcp = PctMCPServer(runtime, single_session=session, structured_content=structured_content)
    label = f"pct serve (pid {os.getpid()}, stdio)"
    control = live_control(runtime, label, mcp="stdio")
    await control.start()

    async def cleanup() -> None:
        await control.aclose()
        await mcp.aclose()
        await runtime.aclose()

    stop_on_signals(cleanup, first=runtime.journal.drain)
    transport = StdioTransport()
    resume_collector()  # start-up is over: see pct_runtime/serve/startup.py
    try:
        async with transport.open() as (read, write):
            await mcp.server.run(read, write, mcp.server.create_initialization_options())
    finally:
        runtime.journal.drain()  # stdin closed: the agent may SIGKILL us any moment
        await control.aclose()
        await mcp.aclose()
        await runtime.aclose()
    return 0 if transport.closed_reason is None else 1


async def serve_http(
    host: str,
    port: int,
    *,
    model: str | None = None,
    allowlist: Sequence[str] | None = None,
    structured_content: bool = False,
    sandbox: SandboxSettings | None = None,
) -> int:
    # deferred for start-up time: the HTTP stack (uvicorn, starlette) loads only for --http
    from pct_runtime.serve.mcp.http import PctHttpServer, exposure_warning

    runtime = Runtime(model=model, allowlist=allowlist, sandbox=sandbox)
    await runtime.start()
    mcp = PctMCPServer(runtime, structured_content=structured_content)
    try:
        token = load_or_create_token(runtime.agent_dir)
    except OSError as exc:
        await runtime.aclose()
        raise OSError(
            f"the bearer token cannot be made in {runtime.agent_dir / 'pct'} "
            f"({exc.strerror or exc}); set PCT_TOKEN, or make that folder writable"
        ) from None
    # Signals stop uvicorn gracefully and then run the cleanup below (uvicorn's own
    # handling re-raises the signal after serving, which would skip it).
    http = PctHttpServer(mcp, token=token, host=host, port=port, own_signals=False)
    label = f"pct serve (pid {os.getpid()}, {http.url})"
    control = live_control(runtime, label, mcp=http.url)
    await control.start()
    warning = exposure_warning(host, http.port)
    if warning is not None:
        print(f"pct: {warning}", file=sys.stderr, flush=True)
    print(
        f"pct: serving MCP at {http.url} (bearer token: {_token_hint(runtime)})",
        file=sys.stderr,
        flush=True,
    )
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        runtime.journal.drain()  # before uvicorn's graceful stop, which can take seconds
        http.stop()

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # non-POSIX
            loop.add_signal_handler(sig, on_signal)
    resume_collector()  # start-up is over: see pct_runtime/serve/startup.py
    try:
        await http.serve()
    finally:
        await control.aclose()
        await mcp.aclose()
        await runtime.aclose()
    return 0


def stop_on_signals(
    cleanup: Callable[[], Awaitable[None]], *, first: Callable[[], object] | None = None
) -> None:
    """SIGTERM/SIGHUP/SIGINT run `first` synchronously (the journal's queued rows: an agent
    SIGKILLs its server ~5 ms after SIGTERM), then `cleanup` (end every session: shell jobs,
    code cells, recovery files, the registry entry), then exit 0.

    A signal cleans up directly instead of waiting for the transport to see the end of
    its input, which an agent that sends the signal may never close.
    """
    loop = asyncio.get_running_loop()
    started: list[asyncio.Task[None]] = []

    async def shutdown() -> None:
        try:
            await asyncio.wait_for(cleanup(), 15)
        except Exception:
            _log.exception("cleanup on signal failed")
        finally:
            sys.stderr.flush()
            os._exit(0)

    def on_signal() -> None:
        if first is not None:
            try:
                first()
            except Exception:
                _log.exception("first step on signal failed")
        if not started:
            started.append(loop.create_task(shutdown()))

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # non-POSIX
            loop.add_signal_handler(sig, on_signal)


def _token_hint(runtime: Runtime) -> str:
    if os.environ.get(TOKEN_ENV, "").strip():
        return f"${TOKEN_ENV}"
    return str(token_path(runtime.agent_dir))


def run(coro: Coroutine[object, object, int]) -> int:
    try:
        result: int = asyncio.run(coro)
    except KeyboardInterrupt:
        return 130
    return result
