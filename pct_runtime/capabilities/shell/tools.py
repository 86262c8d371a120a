"""The two Shell Sessions tools, `exec_command` and `write_stdin`, as `Tool` objects.

Each call runs: normalization (both spellings, limits, rejections) → ownership check →
invocation seam (`context` then `policy` hooks) → admission recheck after an awaited hook →
the command policy's gate (`exec_command` only; an asked command rechecks admission after
the answer) → the manager. Gating (whether Shell Sessions is enabled at all) is the runtime's job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

from pct_runtime.capabilities.base import CallContext, Tool, ToolResult, ToolSpec
from pct_runtime.capabilities.shell.dialect import (
    OUTPUT_DEFAULT_BYTES,
    OUTPUT_MAX_BYTES,
    OUTPUT_MIN_BYTES,
    TOKENS_MAX,
    TOKENS_MIN,
    YIELD_DEFAULT_MS,
    YIELD_MAX_MS,
    YIELD_MIN_MS,
    normalize_exec_command_args,
    normalize_write_stdin_args,
    resolve_workdir,
)
from pct_runtime.capabilities.shell.gate import CommandGate
from pct_runtime.capabilities.shell.manager import ShellManager
from pct_runtime.host.sandbox import Sandbox
from pct_runtime.invocation import InvocationCall, InvocationHooks, invoke_hooks
from pct_runtime.jsontypes import JSONMapping, JSONObject

_NO_SANDBOX = (
    "The command runs with the user's own permissions; there is no sandbox and no timeout."
)

EXEC_COMMAND_DESCRIPTION = (
    "Run a shell command once through the user's shell and return the output it has produced "
    "so far. stdin, stdout and stderr are pipes, not a TTY: line-oriented programs work, "
    "full-screen or TTY-only programs do not. The command is never re-run or replayed. The "
    "call waits up to yield_time_ms (default 10000) for new output or for the job to finish, "
    "then returns `session_id <id>: running|completed|terminated`. A `running` result — even "
    "one that already shows stdout/stderr — is not finished: continue with write_stdin using "
    "that session_id (empty chars to poll, terminate=true to stop), never with wait. Output is "
    "limited to maxOutputBytes (default 51200) per call, stdout first; clipped text is kept in "
    "the recovery file named in the result — read that file, never rerun the command to see "
    "it. " + _NO_SANDBOX
)

WRITE_STDIN_DESCRIPTION = (
    "Continue a shell session started by exec_command: poll for new output (omit chars or "
    "send an empty string), write to its stdin, close its stdin, or stop it. chars is written "
    "verbatim: no newline is added, so to submit a line end it with a real newline character "
    "(U+000A) in the JSON string — never the two characters backslash and n. closeStdin=true "
    "ends stdin after the write, for programs that wait for EOF. terminate=true stops the "
    "whole process group (SIGTERM, then SIGKILL after 5 s) and cannot be combined with chars. "
    "session_id is the exact string exec_command returned. Waits up to yield_time_ms (default "
    "10000) for new output or completion; each call returns only output not returned before. "
    "Once a completed or terminated result has been returned, the session_id is released."
)

_LIMIT_PROPERTIES: JSONObject = {
    "yield_time_ms": {
        "type": "integer",
        "minimum": YIELD_MIN_MS,
        "maximum": YIELD_MAX_MS,
        "description": f"How long to wait for new output or completion before returning "
        f"(default {YIELD_DEFAULT_MS}). Not a timeout: the job keeps running.",
    },
    "yieldTimeMs": {
        "type": "integer",
        "minimum": YIELD_MIN_MS,
        "maximum": YIELD_MAX_MS,
        "description": "Same field as yield_time_ms.",
    },
    "max_output_tokens": {
        "type": "integer",
        "minimum": TOKENS_MIN,
        "maximum": TOKENS_MAX,
        "description": "Output budget in tokens, counted as 4 UTF-8 bytes each. With "
        "maxOutputBytes, the smaller budget applies.",
    },
    "maxOutputBytes": {
        "type": "integer",
        "minimum": OUTPUT_MIN_BYTES,
        "maximum": OUTPUT_MAX_BYTES,
        "description": f"Output budget in UTF-8 bytes for stdout+stderr together, stdout first "
        f"(default {OUTPUT_DEFAULT_BYTES}).",
    },
}

EXEC_COMMAND_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {
        "cmd": {"type": "string", "minLength": 1, "description": "Shell command line to run once."},
        "command": {"type": "string", "minLength": 1, "description": "Same field as cmd."},
        "workdir": {
            "type": "string",
            "minLength": 1,
            "description": "Working directory; relative paths resolve against the session's "
            "working directory, which is the default.",
        },
        "cwd": {"type": "string", "minLength": 1, "description": "Same field as workdir."},
        **_LIMIT_PROPERTIES,
    },
    "additionalProperties": False,
}

WRITE_STDIN_SCHEMA: JSONMapping = {
    "type": "object",
    "properties": {
        "session_id": {
            "type": "string",
            "minLength": 1,
            "description": "The session_id string exec_command returned (pct-shell-…).",
        },
        "sessionId": {"type": "string", "minLength": 1, "description": "Same field as session_id."},
        "chars": {
            "type": "string",
            "description": "Text written verbatim to stdin; empty or omitted only polls. End a "
            "line with a real newline character, not backslash-n.",
        },
        "input": {"type": "string", "description": "Same field as chars."},
        "closeStdin": {"type": "boolean", "description": "Close stdin after writing."},
        "terminate": {
            "type": "boolean",
            "description": "Stop the job's whole process group. Not combinable with chars.",
        },
        **_LIMIT_PROPERTIES,
    },
    "additionalProperties": False,
}

EXEC_COMMAND_SPEC = ToolSpec(
    name="exec_command",
    label="Exec Command",
    description=EXEC_COMMAND_DESCRIPTION,
    input_schema=EXEC_COMMAND_SCHEMA,
)
WRITE_STDIN_SPEC = ToolSpec(
    name="write_stdin",
    label="Write Stdin",
    description=WRITE_STDIN_DESCRIPTION,
    input_schema=WRITE_STDIN_SCHEMA,
)

Admission = Callable[[], None]


def exec_command_description(sandbox: Sandbox) -> str:
    """The description under `--sandbox`: what a command may write and reach, and what a
    refusal looks like, so the model plans for it instead of retrying."""
    return EXEC_COMMAND_DESCRIPTION.replace(
        _NO_SANDBOX,
        f"The command runs in {sandbox.summary()}; there is no timeout. A write or connection "
        "the sandbox does not allow fails (Permission denied / Operation not permitted) and "
        "the result then says `Command denied by sandbox`.",
    )


def _merge_env(*overlays: Mapping[str, str] | None) -> dict[str, str] | None:
    merged: dict[str, str] = {}
    for overlay in overlays:
        if overlay:
            merged.update(overlay)
    return merged or None


@dataclass(frozen=True)
class ExecCommandTool:
    runs_invocation_hooks: ClassVar[bool] = True  # hooks see the normalized call
    manager: ShellManager
    hooks: InvocationHooks | None = None
    admission: Admission | None = None
    #: The command policy, judged before anything runs (None: every command runs).
    gate: CommandGate | None = None

    @property
    def spec(self) -> ToolSpec:
        sandbox = self.manager.sandbox
        if sandbox is None or not sandbox.confined:
            return EXEC_COMMAND_SPEC
        return replace(EXEC_COMMAND_SPEC, description=exec_command_description(sandbox))

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        parsed = normalize_exec_command_args(args)
        workdir = resolve_workdir(ctx.cwd, parsed.workdir)
        call: InvocationCall = {"tool": "exec_command", "path": ctx.path, "cwd": str(workdir)}
        if ctx.cell_id:
            call["cellId"] = ctx.cell_id
        env = await invoke_hooks(self.hooks, call, self.admission)
        if self.gate is not None:
            await self.gate.check(parsed.command, ctx)
            if self.admission is not None:
                self.admission()  # an answer can take long: the capability may be off by now
        return await self.manager.start(
            replace(parsed, workdir=str(workdir)),  # the directory the hooks were told about
            cwd=ctx.cwd,
            env_overlay=_merge_env(ctx.env_overlay, env),
            path=ctx.path,
        )


@dataclass(frozen=True)
class WriteStdinTool:
    runs_invocation_hooks: ClassVar[bool] = True  # after the ownership check
    manager: ShellManager
    hooks: InvocationHooks | None = None
    admission: Admission | None = None

    @property
    def spec(self) -> ToolSpec:
        return WRITE_STDIN_SPEC

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        parsed = normalize_write_stdin_args(args)
        self.manager.check_session(parsed.session_id)
        call: InvocationCall = {
            "tool": "write_stdin",
            "path": ctx.path,
            "cwd": str(ctx.cwd),
            "sessionId": parsed.session_id,
        }
        if ctx.cell_id:
            call["cellId"] = ctx.cell_id
        await invoke_hooks(self.hooks, call, self.admission)
        return await self.manager.write(parsed, path=ctx.path)


def create_shell_tools(
    manager: ShellManager,
    hooks: InvocationHooks | None = None,
    admission: Admission | None = None,
    gate: CommandGate | None = None,
) -> list[Tool]:
    """`[exec_command, write_stdin]` bound to one session's manager.

    `hooks` are the embedder's invocation hooks; `admission` is called after an awaited hook
    and raises `ToolError` when the capability was disabled (or the session replaced) meanwhile.
    `gate` judges each `exec_command` line by the command policy; `write_stdin` input is
    never judged.
    """
    return [
        ExecCommandTool(manager, hooks, admission, gate),
        WriteStdinTool(manager, hooks, admission),
    ]
