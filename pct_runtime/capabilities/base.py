"""The one tool contract every capability implements and every server consumes.

The MCP server, the console and Code Mode's nested adapters all call tools through this
shape, so a capability is written once and reached from every path identically.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pct_runtime.host.ui import NoUI, UIPort
from pct_runtime.jsontypes import JSONMapping, JSONObject

CallPath = Literal["direct", "nested"]
ProgressSink = Callable[[JSONMapping], None]


@dataclass(frozen=True)
class ToolSpec:
    """What an agent is shown: name, label, model-facing description and JSON Schema.

    `meta` carries optional transport hints (for example the Lark grammar of
    `apply_patch` for grammar-capable clients); `sequential` tools never run concurrently
    with another call of the same session.
    """

    name: str
    label: str
    description: str
    input_schema: JSONMapping
    meta: JSONMapping | None = None
    sequential: bool = False


@dataclass(frozen=True)
class ImagePart:
    """Raw image bytes with their MIME type; servers encode them (base64) at the edge."""

    data: bytes
    mime_type: str


@dataclass
class ToolResult:
    """A successful call: text for the model, structured details, optional images."""

    text: str
    details: JSONObject = field(default_factory=dict)
    images: list[ImagePart] = field(default_factory=list)


class ToolError(Exception):
    """A failed call. `message` is the exact model-facing text; `code` is machine-readable.

    Raised for validation failures, gating refusals and executor errors alike; servers map
    it to an `is_error` result whose text is `message`.
    """

    def __init__(self, code: str, message: str, details: JSONMapping | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: JSONObject = dict(details or {})

    def __str__(self) -> str:
        return self.message


class PatchWitness(Protocol):
    """Sees the files a patch changes around its commit (the journal's undo images).

    `before_commit` runs after staging, before the first rename, with every absolute path
    the patch writes, moves or removes and the working directory's real path they are all
    under (undo restores only inside it); `after_commit` once the commit is over (also
    after a partial one). Both run in the patch's worker thread and must not raise.
    """

    def before_commit(self, paths: Sequence[str], root: str) -> None: ...

    def after_commit(self) -> None: ...


class CallObservation(Protocol):
    """One observed call (the journal's row being built)."""

    @property
    def patch_witness(self) -> PatchWitness | None: ...

    def nested(self) -> CallObserver:
        """The observer of the calls this one makes (a command policy's decision row)."""
        ...

    def finish(
        self,
        *,
        outcome: str,
        error_code: str | None = None,
        text: str = "",
        details: JSONMapping | None = None,
    ) -> None: ...


class CallObserver(Protocol):
    """Observes calls made inside a call: Code Mode's nested calls, journaled by the runtime.

    `start` and `finish` never block and never raise.
    """

    def start(self, tool: str, args: JSONMapping, *, cell_id: str | None) -> CallObservation: ...


@dataclass
class CallContext:
    """Everything an executor may know about one invocation, and nothing about the agent.

    `env_overlay` comes from the invocation hooks and applies to one spawn only. `progress`
    receives bounded progress records (never command, patch or program text). Cancellation
    arrives as `asyncio.CancelledError` in the executor's task.
    """

    cwd: Path
    path: CallPath = "direct"
    session_id: str = ""
    tool_call_id: str = ""
    ui: UIPort = field(default_factory=NoUI)
    env_overlay: Mapping[str, str] | None = None
    progress: ProgressSink | None = None
    cell_id: str | None = None
    #: Set by the runtime when the journal records this call's file images (apply_patch).
    patch_witness: PatchWitness | None = None
    #: Set by the runtime: the agent dir's workspace locks, which apply_patch's commit
    #: holds so that `pct undo` of the same working directory never races it.
    patch_locks: Path | None = None
    #: Set by the runtime: records the calls this call makes (a cell's nested calls).
    observer: CallObserver | None = None


class Tool(Protocol):
    """A callable tool: its spec plus the executor entry point."""

    @property
    def spec(self) -> ToolSpec: ...

    def __call__(self, args: JSONMapping, ctx: CallContext) -> Awaitable[ToolResult]: ...
