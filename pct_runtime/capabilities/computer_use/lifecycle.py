"""The runtime's owner of the one Computer Use client and of the status probe.

The runtime decides whether Computer Use is active (`pct_runtime.decide`); this owner only
keeps the client alive across ordinary turns, compaction, an unchanged reload and an eligible
model switch, and drops it (and with it every remembered approval) on `reset()`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pct_runtime.capabilities.computer_use.approval import ApprovalMode
from pct_runtime.capabilities.computer_use.client import ComputerUseClient
from pct_runtime.capabilities.computer_use.eligibility import (
    ComputerUseProbe,
    ComputerUseProbeLike,
    ComputerUseRuntime,
    ComputerUseRuntimeReason,
    RuntimeInspection,
)
from pct_runtime.debug import DISABLED, DebugSink

ClientFactory = Callable[[ComputerUseRuntime, ApprovalMode], ComputerUseClient]


def _default_factory(
    runtime: ComputerUseRuntime, mode: ApprovalMode, *, debug: DebugSink = DISABLED
) -> ComputerUseClient:
    return ComputerUseClient(runtime, approval_mode=mode, debug=debug)


class ComputerUseLifecycle:
    """Lazily creates the client from the static inspection and resets it on request."""

    def __init__(
        self,
        *,
        probe: ComputerUseProbeLike | None = None,
        approval_mode: ApprovalMode = "confirm",
        client_factory: ClientFactory | None = None,
        debug: DebugSink = DISABLED,
    ) -> None:
        self._probe: ComputerUseProbeLike = probe or ComputerUseProbe()
        self._mode: ApprovalMode = approval_mode
        self._factory: ClientFactory = client_factory or partial(_default_factory, debug=debug)
        self._client: ComputerUseClient | None = None

    @property
    def approval_mode(self) -> ApprovalMode:
        return self._mode

    @property
    def current_client(self) -> ComputerUseClient | None:
        return self._client

    def inspect(self) -> RuntimeInspection:
        """Cheap static checks for session start (no process is started)."""
        return self._probe.inspect()

    async def status_probe(self) -> ComputerUseRuntimeReason | None:
        """Explicit `/pct status` only: a dedicated probe client checks the Sky target."""
        return await self._probe.probe()

    def client(self) -> ComputerUseClient | None:
        """The reusable client (created on first use); None when the runtime files are missing.

        Creating the client starts nothing: the app-server starts on the first tool call.
        """
        if self._client is not None and not self._client.is_closed:
            return self._client
        inspection = self._probe.inspect()
        if inspection.runtime is None:
            return None
        self._client = self._factory(inspection.runtime, self._mode)
        return self._client

    async def acquire(self, approval_mode: ApprovalMode | None = None) -> ComputerUseClient | None:
        """`client()` after applying the current configured mode (a change resets first).

        Meant as the tools' client provider: read the config's mode per call and pass it.
        """
        if approval_mode is not None:
            await self.set_approval_mode(approval_mode)
        return self.client()

    async def set_approval_mode(self, mode: ApprovalMode) -> None:
        """A changed mode resets: approvals from the old mode never carry over."""
        if mode != self._mode:
            self._mode = mode
            await self.reset()

    async def reset(self) -> None:
        """Close the client and forget its approvals (new/resume/fork, global reload,
        restart, disabling, mode change, lost eligibility, a name conflict)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def close(self) -> None:
        await self.reset()
