"""The one tool contract every capability implements and every server consumes.

A tool has two phases: `prepare` normalizes and validates the arguments and says what a
person must approve, changing nothing; `execute` runs the prepared call. The runtime's call
pipeline (`pct_runtime.runtime.calls`) runs every call, direct or from a Code Mode cell,
through the same steps between the two, so a capability is written once and reached from
every path identically. Code Mode reaches that pipeline through `NestedCalls`, declared
here so capabilities never import the runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pct_runtime.host.ui import Answering, AskedDiff, NoUI, UIPort
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


#: What an approval is about. A `tool` approval is the tool's own question (a patch), which
#: a path may waive (Code Mode's approval mode `always`); a `command-policy` approval is the
#: operator's rule asking, which every path asks.
ApprovalKind = Literal["tool", "command-policy"]


class ApprovalAnswers(Protocol):
    """A question with its own answers (the command policy's Yes once / Yes for this
    session / No) and how each settles. Both methods record what happened; `answered`
    returns when the call may run and raises the model-facing `ToolError` otherwise."""

    @property
    def options(self) -> tuple[str, ...]: ...

    def unavailable(self) -> ToolError:
        """The refusal when no one can be asked."""
        ...

    def answered(self, answer: str | None, note: Answering) -> None: ...


@dataclass(frozen=True)
class Approval:
    """What a person is asked before a prepared call runs: a title, a bounded preview and,
    for a patch, a reader of its per-file diffs against disk now (reads files, so the
    pipeline calls it in a thread, and only when it really asks).

    Without `answers` the question is a yes/no confirm; with them a pick among
    `answers.options`, settled by `answers`.
    """

    title: str
    preview: str
    diffs: Callable[[], Sequence[AskedDiff]] | None = None
    kind: ApprovalKind = "tool"
    answers: ApprovalAnswers | None = None


@dataclass
class Prepared:
    """A validated call, nothing changed yet.

    `args` is the tool's own normalized form. `cwd` is the directory the invocation hooks
    are told about (None: the call's cwd); `session_id` the shell session a `write_stdin`
    continues; `approval` what a person is asked before it runs (None: nothing to ask).
    """

    args: object = None
    cwd: Path | None = None
    session_id: str | None = None
    approval: Approval | None = None


@runtime_checkable
class Tool(Protocol):
    """A callable tool: its spec and its two phases."""

    @property
    def spec(self) -> ToolSpec: ...

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared: ...

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult: ...


class CallableTool(Protocol):
    """A one-phase tool, as an embedder may register one: its spec and `await tool(args, ctx)`."""

    @property
    def spec(self) -> ToolSpec: ...

    def __call__(self, args: JSONMapping, ctx: CallContext) -> Awaitable[ToolResult]: ...


class SimpleTool:
    """Base of a tool with nothing to approve: `prepare` keeps the arguments as they are and
    `execute` calls the subclass's `__call__` with them (which stays callable directly).
    The subclass provides `spec` too."""

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        return Prepared(args)  # the pipeline hands each call its own copy

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        args = prepared.args
        if isinstance(args, dict):  # what the pipeline hands `prepare`
            return await self(args, ctx)
        return await self(args if isinstance(args, Mapping) else {}, ctx)

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        raise NotImplementedError


@dataclass(frozen=True)
class FunctionTool(SimpleTool):
    """A one-phase `CallableTool` (an embedder's registration) as a two-phase `Tool`."""

    inner: CallableTool

    @property
    def spec(self) -> ToolSpec:
        return self.inner.spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        return await self.inner(args, ctx)


def as_tool(tool: Tool | CallableTool) -> Tool:
    """`tool` itself when it has both phases, else wrapped in `FunctionTool`."""
    if isinstance(tool, Tool):
        return tool
    return FunctionTool(tool)


async def run_once(tool: Tool, args: JSONMapping, ctx: CallContext) -> ToolResult:
    """Prepare and execute with nothing between: for a tool used outside any session (a
    benchmark, a unit test). No hooks run and nothing is asked."""
    return await tool.execute(await tool.prepare(args, ctx), ctx)


class CallGate(Protocol):
    """What differs between the paths a call takes through the runtime's pipeline.

    The pipeline owns the order (trace, admit, prepare, hold, recheck, hooks, recheck,
    approval, recheck, execute); a gate supplies the path's own pieces: its journal row,
    its call context, its admission rule, what it holds while the call runs, whether and
    how it asks, and what it counts. Code Mode's dispatcher is the nested gate.
    """

    @property
    def path(self) -> CallPath: ...

    def trace(self, name: str, args: JSONMapping) -> CallObservation | None:
        """Start this call's journal row (None: no journal)."""
        ...

    def context(self, trace: CallObservation | None) -> CallContext: ...

    def admit(self, name: str) -> None:
        """Raise the path's `ToolError` unless `name` may start now (the first check)."""
        ...

    def recheck(self, name: str) -> None:
        """Raise unless `name` is still allowed (after anything that awaited)."""
        ...

    def running(self, name: str, ctx: CallContext) -> AbstractContextManager[object]:
        """Held from admission until the call is over (runtime events, the call's task)."""
        ...

    def hold(self, tool: Tool, prepared: Prepared) -> AbstractAsyncContextManager[object]:
        """Held from the first recheck through execute (a sequential tool's lock, slots)."""
        ...

    def asks(self, name: str, approval: Approval) -> bool:
        """Whether this path asks a person before running the prepared call."""
        ...

    def asking(self, name: str, note: Answering) -> AbstractContextManager[object]:
        """Held while the question is pending (a cell lists it)."""
        ...

    def unavailable(self, name: str) -> str:
        """The refusal when no one can be asked."""
        ...

    def denied(self, name: str, note: Answering) -> str:
        """The refusal when the person said no."""
        ...

    def executing(self) -> None:
        """The effect starts: from here on a stop leaves its outcome unknown."""
        ...

    def settled(self) -> None:
        """The effect finished (successfully or with an error)."""
        ...


class NestedCalls(Protocol):
    """The runtime's call pipeline as Code Mode's dispatcher reaches it."""

    def nested_names(self) -> frozenset[str]:
        """The tools a cell can reach in this session (before admission)."""
        ...

    async def call(self, name: str, args: JSONMapping, gate: CallGate) -> ToolResult:
        """Run one call through the pipeline; raises `ToolError` with the model-facing text."""
        ...
