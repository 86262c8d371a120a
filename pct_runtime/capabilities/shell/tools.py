"""The two Shell Sessions tools, `exec_command` and `write_stdin`, as `Tool` objects.

`prepare` normalizes (both spellings, limits, rejections), judges an `exec_command` line by
the command policy (a denied one is refused here, an asked one carries its question) and,
for `write_stdin`, checks that the session is ours; `execute` hands the call to the
manager. `write_stdin` input is never judged: the policy judges what starts. What runs between the
two (invocation hooks, admission rechecks) and whether Shell Sessions is enabled at all is
the runtime's call pipeline's job.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pct_runtime.capabilities.base import (
    CallContext,
    Prepared,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
    run_once,
)
from pct_runtime.capabilities.shell.dialect import (
    ExecCommandArgs,
    WriteStdinArgs,
    normalize_exec_command_args,
    normalize_write_stdin_args,
    resolve_workdir,
)
from pct_runtime.capabilities.shell.gate import CommandGate
from pct_runtime.capabilities.shell.manager import ShellManager
from pct_runtime.host.system.sandbox import Sandbox
from pct_runtime.jsontypes import JSONMapping, JSONObject
from pct_runtime.output.budgets import (
    OUTPUT_DEFAULT_BYTES,
    OUTPUT_MAX_BYTES,
    OUTPUT_MIN_BYTES,
    TOKENS_MAX,
    TOKENS_MIN,
    YIELD_DEFAULT_MS,
    YIELD_MAX_MS,
    YIELD_MIN_MS,
)

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


def exec_command_description(sandbox: Sandbox) -> str:
    """The description under `--sandbox`: what a command may write and reach, and what a
    refusal looks like, so the model plans for it instead of retrying."""
    return EXEC_COMMAND_DESCRIPTION.replace(
        _NO_SANDBOX,
        f"The command runs in {sandbox.summary()}; there is no timeout. A write or connection "
        "the sandbox does not allow fails (Permission denied / Operation not permitted) and "
        "the result then says `Command denied by sandbox`.",
    )


def _invalid(exc: ToolError, ctx: CallContext) -> ToolError:
    """A cell sees bad arguments as `invalid-arguments` (the tool's code in details); a
    direct call keeps the tool's own code."""
    if ctx.path != "nested":
        return exc
    details = dict(exc.details)
    details.setdefault("toolCode", exc.code)
    return ToolError("invalid-arguments", exc.message, details)


@dataclass(frozen=True)
class ExecCommandTool:
    manager: ShellManager
    #: The command policy, judged in `prepare` (None: every command runs).
    gate: CommandGate | None = None

    @property
    def spec(self) -> ToolSpec:
        sandbox = self.manager.sandbox
        if sandbox is None or not sandbox.confined:
            return EXEC_COMMAND_SPEC
        return replace(EXEC_COMMAND_SPEC, description=exec_command_description(sandbox))

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        try:
            parsed = normalize_exec_command_args(args)
            workdir = resolve_workdir(ctx.cwd, parsed.workdir)
        except ToolError as exc:
            raise _invalid(exc, ctx) from None
        approval = self.gate.check(parsed.command, ctx) if self.gate is not None else None
        # The resolved directory is the one the hooks are told about and the one it runs in.
        return Prepared(replace(parsed, workdir=str(workdir)), cwd=workdir, approval=approval)

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        parsed = prepared.args
        assert isinstance(parsed, ExecCommandArgs)
        return await self.manager.start(
            parsed, cwd=ctx.cwd, env_overlay=ctx.env_overlay, path=ctx.path
        )

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        return await run_once(self, args, ctx)


@dataclass(frozen=True)
class WriteStdinTool:
    manager: ShellManager

    @property
    def spec(self) -> ToolSpec:
        return WRITE_STDIN_SPEC

    async def prepare(self, args: JSONMapping, ctx: CallContext) -> Prepared:
        try:
            parsed = normalize_write_stdin_args(args)
        except ToolError as exc:
            raise _invalid(exc, ctx) from None
        self.manager.check_session(parsed.session_id)  # stale/unknown: the Shell's own error
        return Prepared(parsed, session_id=parsed.session_id)

    async def execute(self, prepared: Prepared, ctx: CallContext) -> ToolResult:
        parsed = prepared.args
        assert isinstance(parsed, WriteStdinArgs)
        return await self.manager.write(parsed, path=ctx.path)

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        return await run_once(self, args, ctx)


def create_shell_tools(manager: ShellManager, gate: CommandGate | None = None) -> list[Tool]:
    """`[exec_command, write_stdin]` bound to one session's manager; `gate` judges each
    `exec_command` line by the command policy."""
    return [ExecCommandTool(manager, gate), WriteStdinTool(manager)]
