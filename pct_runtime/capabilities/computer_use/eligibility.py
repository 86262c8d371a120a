"""Where Computer Use's runtime lives, and the runtime part of its eligibility chain.

The spec orders the chain: configured, macOS, interactive UI, image-capable model (decided from
plain inputs in `pct_runtime.decide`), then the parts checked here: the paired ChatGPT.app
components, the installed helper under the *real* `CODEX_HOME`, `node_repl` starting and
`@oai/sky` reporting target `mac`. The first two are cheap file checks safe at session start;
the last two start the bundled app-server and run only on an explicit status request. Every
root is injectable so the chain is testable on Linux with a temp tree and a fake app-server.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pct_runtime.capabilities.computer_use.paths import (
    ComputerUseRuntime as ComputerUseRuntime,  # re-exported from its former home
)

CHATGPT_RESOURCES = Path("/Applications/ChatGPT.app/Contents/Resources")
HELPER_RELATIVE = Path("computer-use") / "Codex Computer Use.app"

ComputerUseRuntimeReason = Literal[
    "missing-chatgpt-desktop-component",
    "missing-computer-use-helper",
    "node-repl-unavailable",
    "incompatible-sky-target",
]


@dataclass(frozen=True)
class RuntimeInspection:
    """Result of the cheap static checks: a runtime, or the first failing reason."""

    runtime: ComputerUseRuntime | None
    reason: ComputerUseRuntimeReason | None

    @property
    def ok(self) -> bool:
        return self.runtime is not None


def real_codex_home(env: Mapping[str, str] | None = None) -> Path:
    """`CODEX_HOME` (trimmed, `~` expanded) when set and non-empty, else `~/.codex`."""
    source = os.environ if env is None else env
    configured = source.get("CODEX_HOME", "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return Path.home() / ".codex"


def runtime_paths(resources: Path, codex_home: Path) -> ComputerUseRuntime:
    return ComputerUseRuntime(
        codex_path=resources / "codex",
        node_repl_path=resources / "cua_node" / "bin" / "node_repl",
        node_path=resources / "cua_node" / "bin" / "node",
        node_modules_path=resources / "cua_node" / "lib" / "node_modules",
        helper_path=codex_home / HELPER_RELATIVE,
    )


def inspect_runtime(
    *,
    resources_path: Path | None = None,
    codex_home: Path | None = None,
    exists: Callable[[Path], bool] | None = None,
    env: Mapping[str, str] | None = None,
) -> RuntimeInspection:
    """The static part of the chain in the spec's order: components first, then the helper."""
    check = exists or os.path.exists
    runtime = runtime_paths(
        resources_path if resources_path is not None else CHATGPT_RESOURCES,
        codex_home if codex_home is not None else real_codex_home(env),
    )
    components = (
        runtime.codex_path,
        runtime.node_repl_path,
        runtime.node_path,
        runtime.node_modules_path,
    )
    if not all(check(path) for path in components):
        return RuntimeInspection(None, "missing-chatgpt-desktop-component")
    if not check(runtime.helper_path):
        return RuntimeInspection(None, "missing-computer-use-helper")
    return RuntimeInspection(runtime, None)


class TargetProbeClient(Protocol):
    """What the status probe needs from a client: check the Sky target, then close."""

    async def probe_target(self) -> None: ...

    async def close(self) -> None: ...


class ComputerUseProbeLike(Protocol):
    """The injectable runtime probe the runtime and status code depend on."""

    def inspect(self) -> RuntimeInspection: ...

    async def probe(self) -> ComputerUseRuntimeReason | None: ...


class ComputerUseProbe:
    """Runtime eligibility: `inspect()` for session start, `probe()` only on explicit status.

    `probe()` runs the static checks, then a dedicated client that starts the app-server with
    its injected `node_repl`, asks `@oai/sky` for its target and closes; it never lists apps,
    reads app state or performs an action, and it never shares the runtime's tool client.
    """

    def __init__(
        self,
        *,
        resources_path: Path | None = None,
        codex_home: Path | None = None,
        exists: Callable[[Path], bool] | None = None,
        env: Mapping[str, str] | None = None,
        client_factory: Callable[[ComputerUseRuntime], TargetProbeClient] | None = None,
    ) -> None:
        self._resources_path = resources_path
        self._codex_home = codex_home
        self._exists = exists
        self._env = env
        self._client_factory = client_factory

    def inspect(self) -> RuntimeInspection:
        return inspect_runtime(
            resources_path=self._resources_path,
            codex_home=self._codex_home,
            exists=self._exists,
            env=self._env,
        )

    async def probe(self) -> ComputerUseRuntimeReason | None:
        inspection = self.inspect()
        if inspection.runtime is None:
            return inspection.reason
        client = self._make_client(inspection.runtime)
        try:
            await client.probe_target()
        except Exception as error:  # every failure is a reason, never a crash of status
            category = getattr(error, "code", None)
            if category == "incompatible-sky-target":
                return "incompatible-sky-target"
            return "node-repl-unavailable"
        finally:
            await _close_quietly(client)
        return None

    def _make_client(self, runtime: ComputerUseRuntime) -> TargetProbeClient:
        if self._client_factory is not None:
            return self._client_factory(runtime)
        # The bridge's client (and asyncio under it) loads only for an explicit probe.
        from pct_runtime.capabilities.computer_use.client import ComputerUseClient

        return ComputerUseClient(runtime, env=self._env)


async def _close_quietly(client: TargetProbeClient) -> None:
    try:
        await client.close()
    except Exception:  # a failed close must not turn a good probe into a crash
        return None
