"""The `exec` and `wait` tools: model-facing descriptions, JSON Schemas and the `Tool` shells.

The descriptions follow the phrases Codex-trained models expect (`Run ... code to
orchestrate/compose tool calls`, `Script running with cell ID ...`, `wait` only after
`exec` yields) translated to Python cells, and state plainly that a cell is a
supported-API boundary, not a sandbox.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pct_runtime.capabilities.base import CallContext, SimpleTool, Tool, ToolResult, ToolSpec
from pct_runtime.capabilities.code.bridge import MEMORY_LIMIT_BYTES
from pct_runtime.capabilities.code.dialect import ADAPTER_NAMES, PRAGMA_EXAMPLE
from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.worker import ALLOWED_MODULES
from pct_runtime.host.system.sandbox import Sandbox
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.output.budgets import (
    OUTPUT_DEFAULT_BYTES,
    OUTPUT_MAX_BYTES,
    OUTPUT_MIN_BYTES,
    TOKENS_MAX,
    TOKENS_MIN,
    YIELD_DEFAULT_MS,
    YIELD_MAX_MS,
)

ADAPTER_HELP = "\n".join(
    [
        "Nested tools this build may expose inside a cell (only those admitted for the current "
        "session and declared in `uses` can be called; `pct status` shows the admitted set):",
        "- `await tools.exec_command(cmd=..., workdir=..., yield_time_ms=..., "
        "max_output_tokens=...)` — the Shell Sessions executor; returns a dict with `stdout` "
        "and `stderr` (new output since the last read), `status` (running, completed or "
        "terminated), `session_id`, `exit_code` (None while running or when a signal ended "
        "it), `truncated` and `recovery` (where output beyond the budget was saved). A shell "
        "still running after the cell ends belongs to Shell Sessions: continue it with "
        "write_stdin, not wait.",
        "- `await tools.write_stdin(session_id=..., chars=..., yield_time_ms=...)` — poll or "
        "write to a running shell session (same fields as the direct tool); returns a dict "
        "with the same keys as exec_command.",
        '- `await tools.apply_patch("*** Begin Patch\\n...\\n*** End Patch")` (or '
        "`patch=...`) — the Apply Patch executor; returns a dict with `operations` (one "
        "{operation, path, from?} per file) and `text` (the Applied patch: summary). Admitted "
        "only when Patch is routed through Code Mode. With approval mode `confirm` the user is "
        "asked before each nested patch; without an interactive UI it fails with "
        "approval-unavailable and changes nothing.",
        "Both spellings of every argument are accepted (`cmd`/`command`, `session_id`/"
        "`sessionId`, ...); returned dicts use the snake_case names. Pass keyword arguments "
        "or one dict. A failed call raises `ToolError` with `.code` and `.message`; catch it "
        "with `except ToolError as e:`.",
    ]
)

_NOT_A_SANDBOX = (
    "This is a supported-API boundary, not a sandbox: only run trusted code; it runs with "
    "the user's permissions."
)

EXEC_DESCRIPTION = "\n".join(
    [
        "Run Python code to orchestrate/compose tool calls",
        "- Evaluates the provided Python code in a fresh worker process with fresh state; "
        "top-level `await` works. Nothing (variables, imports, functions) survives between "
        "`exec` calls. The program runs once and is never replayed.",
        "- Nested tools are on the global `tools` object, for example "
        '`r = await tools.exec_command(cmd="ls")`; `tools["name"]` works too. Calls start '
        "immediately; await them (or `asyncio.gather` them) to use their results. The `uses` "
        "parameter lists each nested tool, its arguments and the dict it returns.",
        "- `print(...)` and `text(value)` append to the output (`text` adds strings as is, other "
        "values as JSON, no newline). The value of the final expression statement, if any and "
        "not None, is returned as the result (JSON).",
        "- Restricted builtins: no `open`, `input`, `exit`, no file, process or network API. "
        "Imports are limited to: "
        + ", ".join(ALLOWED_MODULES)
        + " (and `asyncio` for `gather` only). "
        + _NOT_A_SANDBOX,
        f"- {MEMORY_LIMIT_BYTES // (1024 * 1024)} MiB address-space limit per cell; stop a "
        "CPU-bound cell with `wait` terminate=true.",
        "- Send raw Python source, not JSON, quoted strings or markdown code fences; it may "
        f"start with a first-line pragma like `{PRAGMA_EXAMPLE}`.",
        "- If the script is still running after `yield_time_ms` (default "
        f"{YIELD_DEFAULT_MS}), `exec` returns `Script running with cell ID <id>.`; continue "
        "with `wait`.",
        "- Output beyond `max_output_tokens` (4 bytes each) or `maxOutputBytes` (default "
        f"{OUTPUT_DEFAULT_BYTES} bytes; the smaller wins) is kept in a recovery file whose "
        "path is returned; never rerun a program to recover output.",
    ]
)

WAIT_DESCRIPTION = "\n".join(
    [
        "Waits on a yielded `exec` cell and returns new output or completion.",
        "- Use `wait` only after `exec` returns `Script running with cell ID ...`.",
        "- `cell_id` identifies the running `exec` cell to resume (an opaque string; never a "
        "number, a process id or a shell session id).",
        "- `yield_time_ms` controls how long to wait for more output before yielding again. If "
        "omitted, `wait` uses its default wait timeout.",
        "- `max_tokens` limits how much new output this wait call returns.",
        "- `terminate: true` stops the running cell instead of waiting for more output.",
        "- `wait` returns only the new output since the last yield, or the final completion or "
        "termination result for that cell.",
        "- If the cell is still running, `wait` may yield again with the same `cell_id`.",
        "- If the cell has already finished, `wait` returns the completed result and closes the "
        "cell.",
        "- `wait` controls cells, not shells: continue a shell session with write_stdin.",
    ]
)

# The freeform variant for grammar-capable clients: the raw program (optionally with the
# pragma line) is decoded into `code` and goes through the same executor and checks.
EXEC_LARK_GRAMMAR = r"""
start: pragma_source | plain_source
pragma_source: PRAGMA_LINE NEWLINE SOURCE
plain_source: SOURCE

PRAGMA_LINE: /[ \t]*(#|\/\/) @exec:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
"""
GRAMMAR_META_KEY = "pct/grammar"

_YIELD = {"type": "integer", "minimum": 0, "maximum": YIELD_MAX_MS}
_TOKENS = {"type": "integer", "minimum": TOKENS_MIN, "maximum": TOKENS_MAX}
_BYTES = {"type": "integer", "minimum": OUTPUT_MIN_BYTES, "maximum": OUTPUT_MAX_BYTES}

EXEC_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "minLength": 1,
            "description": "Raw Python source of the cell, optionally starting with the "
            "`# @exec: {...}` pragma line.",
        },
        "uses": {
            "type": "array",
            "items": {"type": "string", "enum": list(ADAPTER_NAMES)},
            "uniqueItems": True,
            "description": "Adapters the program may call. Omit for every adapter admitted now; "
            "[] for none.\n" + ADAPTER_HELP,
        },
        "yield_time_ms": {**_YIELD, "description": "How long to wait before yielding."},
        "yieldTimeMs": {**_YIELD, "description": "Same field as yield_time_ms."},
        "max_output_tokens": {**_TOKENS, "description": "Output budget in tokens (4 bytes each)."},
        "maxOutputBytes": {**_BYTES, "description": "Output budget in UTF-8 bytes."},
    },
    "required": ["code"],
    "additionalProperties": False,
}

WAIT_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {
        "cell_id": {"type": "string", "description": "Identifier of the running exec cell."},
        "cellId": {"type": "string", "description": "Same field as cell_id."},
        "yield_time_ms": {
            **_YIELD,
            "description": "How long to wait (in milliseconds) for more output before yielding "
            "again.",
        },
        "yieldTimeMs": {**_YIELD, "description": "Same field as yield_time_ms."},
        "max_tokens": {
            **_TOKENS,
            "description": "Maximum number of output tokens to return for this wait call.",
        },
        "max_output_tokens": {**_TOKENS, "description": "Same field as max_tokens."},
        "maxOutputBytes": {**_BYTES, "description": "Output budget in UTF-8 bytes."},
        "terminate": {
            "type": "boolean",
            "description": "Whether to terminate the running exec cell.",
        },
    },
    "additionalProperties": False,
}


#: A manager, or a getter of the session's current one (the runtime binds a fresh manager
#: when Code Mode is enabled again after a confirmed disable cleanup).
ManagerRef = CodeManager | Callable[[], CodeManager]


def _current(ref: ManagerRef) -> CodeManager:
    return ref if isinstance(ref, CodeManager) else ref()


class _CellTool(SimpleTool):
    """`exec` or `wait`: its spec, and the manager method it calls on the current manager."""

    def __init__(
        self,
        spec: ToolSpec,
        manager: ManagerRef,
        method: Callable[[CodeManager, JSONMapping, CallContext], Awaitable[ToolResult]],
    ) -> None:
        self._spec = spec
        self._manager = manager
        self._method = method

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        return await self._method(_current(self._manager), args, ctx)


def exec_description(sandbox: Sandbox | None = None) -> str:
    """`exec`'s description; under `--sandbox` it says what the cell process may touch."""
    if sandbox is None or not sandbox.confined:
        return EXEC_DESCRIPTION
    # No paths here (unlike exec_command): a cell has no file API, and a long working
    # directory must not push the description past what clients show the model.
    settings = sandbox.settings
    writes = (
        "it writes nowhere"
        if settings.mode == "read-only"
        else "it writes only under the working directory and the temp dir"
    )
    network = "allowed" if settings.network else "blocked"
    return EXEC_DESCRIPTION.replace(
        _NOT_A_SANDBOX,
        "This is a supported-API boundary; the cell process itself runs in a kernel sandbox "
        f"({settings.mode}): {writes}, outbound network {network}.",
    )


def create_code_tools(manager: ManagerRef, sandbox: Sandbox | None = None) -> list[Tool]:
    """The atomic pair `[exec, wait]` over one manager (or a getter of the current one)."""
    exec_spec = ToolSpec(
        "exec",
        "Exec Code",
        exec_description(sandbox),
        EXEC_SCHEMA,
        meta={GRAMMAR_META_KEY: {"syntax": "lark", "definition": EXEC_LARK_GRAMMAR}},
    )
    wait_spec = ToolSpec("wait", "Wait For Cell", WAIT_DESCRIPTION, WAIT_SCHEMA)
    return [
        _CellTool(exec_spec, manager, lambda m, args, ctx: m.exec(args, ctx)),
        _CellTool(wait_spec, manager, lambda m, args, ctx: m.wait(args, ctx)),
    ]
