"""The Shell Sessions request dialect: both spellings, limits and rejections, as pure functions.

`exec_command` and `write_stdin` accept the Codex spelling and the existing field names
(`cmd`/`command`, `workdir`/`cwd`, `session_id`/`sessionId`, `chars`/`input`,
`yield_time_ms`/`yieldTimeMs`). Everything is checked here, before anything runs: differing
values for one field, unsupported Codex fields (by name), unknown fields, numeric handles and
out-of-range limits each raise `ToolError` with a message that tells the model what to fix.

Error codes: shape errors (unknown or unsupported fields, wrong types, conflicting spellings,
input together with terminate) are `invalid-command`; session handle errors are
`invalid-session`; limits are `invalid-limit`; working directories are `invalid-cwd`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pct_runtime.capabilities.base import ToolError
from pct_runtime.jsontypes import JSONMapping
from pct_runtime.output.budgets import (
    BYTES_PER_TOKEN,
    OUTPUT_DEFAULT_BYTES,
    OUTPUT_MAX_BYTES,
    OUTPUT_MIN_BYTES,
    TOKENS_MAX,
    TOKENS_MIN,
    YIELD_DEFAULT_MS,
    YIELD_MAX_MS,
    YIELD_MIN_MS,
)

#: Codex fields this toolkit does not support, with the reason the model is told.
UNSUPPORTED_FIELDS: Mapping[str, str] = {
    "tty": "commands always run with pipes for stdin, stdout and stderr, never a TTY",
    "shell": "commands always run through the user's configured shell",
    "login": "the shell is never started as a login shell",
    "sandbox_permissions": "commands run with the user's own local process permissions; "
    "there is no sandbox to escalate",
    "justification": "there is no sandbox escalation to justify",
    "with_escalated_permissions": "there is no sandbox escalation",
    "prefix_rule": "there is no exec policy to extend",
    "timeout_ms": "there is no execution timeout; yield_time_ms bounds only the wait, and "
    "write_stdin with terminate=true stops a job",
}

_EXEC_FIELDS = (
    "cmd, workdir, yield_time_ms, max_output_tokens and maxOutputBytes "
    "(command, cwd and yieldTimeMs are accepted as the same fields)"
)
_WRITE_FIELDS = (
    "session_id, chars, closeStdin, terminate, yield_time_ms, max_output_tokens and "
    "maxOutputBytes (sessionId, input and yieldTimeMs are accepted as the same fields)"
)


@dataclass(frozen=True)
class OutputLimits:
    """How long one call waits for news, and how many UTF-8 bytes of output it may return."""

    yield_ms: int = YIELD_DEFAULT_MS
    max_output_bytes: int = OUTPUT_DEFAULT_BYTES


@dataclass(frozen=True)
class ExecCommandArgs:
    command: str
    workdir: str | None
    limits: OutputLimits


@dataclass(frozen=True)
class WriteStdinArgs:
    session_id: str
    input: str
    close_stdin: bool
    terminate: bool
    limits: OutputLimits


_MISSING = object()


def _pick(tool: str, args: JSONMapping, primary: str, alias: str, nothing: str) -> object:
    a = args.get(primary, _MISSING)
    b = args.get(alias, _MISSING)
    if a is not _MISSING and b is not _MISSING and (type(a) is not type(b) or a != b):
        raise ToolError(
            "invalid-command" if primary not in ("session_id",) else "invalid-session",
            f"{tool} received different values for `{primary}` and `{alias}`; they are the same "
            f"field. Send one spelling, or the same value in both. {nothing}",
        )
    return a if a is not _MISSING else b


def _check_fields(tool: str, args: object, allowed: frozenset[str], nothing: str) -> JSONMapping:
    if not isinstance(args, Mapping):
        raise ToolError("invalid-command", f"{tool} arguments must be a JSON object. {nothing}")
    for key in args:
        if key in UNSUPPORTED_FIELDS:
            raise ToolError(
                "invalid-command",
                f"{tool} does not support `{key}`: {UNSUPPORTED_FIELDS[key]}. Remove `{key}` "
                f"and call again. {nothing}",
            )
    unknown = sorted(str(k) for k in args if k not in allowed)
    if unknown:
        names = ", ".join(f"`{k}`" for k in unknown)
        fields = _EXEC_FIELDS if tool == "exec_command" else _WRITE_FIELDS
        raise ToolError(
            "invalid-command",
            f"{tool} does not accept {names}. Its fields are {fields}. {nothing}",
        )
    return args


def _int_value(tool: str, name: str, raw: object, lo: int, hi: int, nothing: str) -> int:
    value = int(raw) if isinstance(raw, float) and raw.is_integer() else raw
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        shown = repr(raw) if len(repr(raw)) <= 40 else f"{repr(raw)[:40]}…"
        raise ToolError(
            "invalid-limit",
            f"{tool} `{name}` must be an integer from {lo} to {hi}; got {shown}. {nothing}",
        )
    return value


def _limits(tool: str, args: JSONMapping, nothing: str) -> OutputLimits:
    raw_yield = _pick(tool, args, "yield_time_ms", "yieldTimeMs", nothing)
    yield_ms = YIELD_DEFAULT_MS
    if raw_yield is not _MISSING:
        name = "yield_time_ms" if "yield_time_ms" in args else "yieldTimeMs"
        yield_ms = _int_value(tool, name, raw_yield, YIELD_MIN_MS, YIELD_MAX_MS, nothing)
    budget = OUTPUT_DEFAULT_BYTES
    given = False
    if "maxOutputBytes" in args:
        budget = _int_value(
            tool,
            "maxOutputBytes",
            args["maxOutputBytes"],
            OUTPUT_MIN_BYTES,
            OUTPUT_MAX_BYTES,
            nothing,
        )
        given = True
    if "max_output_tokens" in args:
        tokens = _int_value(
            tool, "max_output_tokens", args["max_output_tokens"], TOKENS_MIN, TOKENS_MAX, nothing
        )
        token_bytes = min(tokens * BYTES_PER_TOKEN, OUTPUT_MAX_BYTES)
        budget = min(budget, token_bytes) if given else token_bytes
    return OutputLimits(yield_ms=yield_ms, max_output_bytes=budget)


_EXEC_ALLOWED = frozenset(
    {
        "cmd",
        "command",
        "workdir",
        "cwd",
        "yield_time_ms",
        "yieldTimeMs",
        "max_output_tokens",
        "maxOutputBytes",
    }
)
_WRITE_ALLOWED = frozenset(
    {
        "session_id",
        "sessionId",
        "chars",
        "input",
        "closeStdin",
        "terminate",
        "yield_time_ms",
        "yieldTimeMs",
        "max_output_tokens",
        "maxOutputBytes",
    }
)


def normalize_exec_command_args(args: object) -> ExecCommandArgs:
    """Validate and normalize `exec_command` arguments; raises `ToolError` before anything runs."""
    nothing = "Nothing ran."
    tool = "exec_command"
    args = _check_fields(tool, args, _EXEC_ALLOWED, nothing)
    command = _pick(tool, args, "cmd", "command", nothing)
    if command is _MISSING:
        raise ToolError(
            "invalid-command",
            f"exec_command needs `cmd`: the shell command line to run once. {nothing}",
        )
    if not isinstance(command, str) or not command.strip():
        raise ToolError(
            "invalid-command",
            f"exec_command `cmd` must be a non-empty string with the shell command line. {nothing}",
        )
    if "\0" in command:
        raise ToolError("invalid-command", f"exec_command `cmd` must not contain NUL. {nothing}")
    workdir = _pick(tool, args, "workdir", "cwd", nothing)
    if workdir is _MISSING:
        workdir = None
    elif not isinstance(workdir, str) or not workdir or "\0" in workdir:
        raise ToolError(
            "invalid-cwd",
            "exec_command `workdir` must be a non-empty path string (relative paths resolve "
            f"against the session's working directory); omit it to use that directory. {nothing}",
        )
    return ExecCommandArgs(command=command, workdir=workdir, limits=_limits(tool, args, nothing))


def normalize_write_stdin_args(args: object) -> WriteStdinArgs:
    """Validate and normalize `write_stdin` arguments; raises `ToolError` before sending."""
    nothing = "Nothing was sent."
    tool = "write_stdin"
    args = _check_fields(tool, args, _WRITE_ALLOWED, nothing)
    session = _pick(tool, args, "session_id", "sessionId", nothing)
    if session is _MISSING:
        raise ToolError(
            "invalid-session",
            f"write_stdin needs `session_id`: the exact string exec_command returned (for "
            f'example "pct-shell-…"). {nothing}',
        )
    if isinstance(session, int | float):  # bool is an int too
        raise ToolError(
            "invalid-session",
            f"write_stdin `session_id` must be the exact string exec_command returned (for "
            f'example "pct-shell-…"), not a number; numeric handles are never converted. '
            f"{nothing}",
        )
    if not isinstance(session, str) or not session:
        raise ToolError(
            "invalid-session",
            f"write_stdin `session_id` must be the non-empty string exec_command returned. "
            f"{nothing}",
        )
    text = _pick(tool, args, "chars", "input", nothing)
    if text is _MISSING or text is None:
        text = ""
    if not isinstance(text, str):
        raise ToolError(
            "invalid-command",
            f'write_stdin `chars` must be a string (it is written verbatim; omit it or send "" '
            f"to only poll). {nothing}",
        )
    flags: dict[str, bool] = {}
    for name in ("closeStdin", "terminate"):
        value = args.get(name, False)
        if not isinstance(value, bool):
            raise ToolError(
                "invalid-command", f"write_stdin `{name}` must be true or false. {nothing}"
            )
        flags[name] = value
    if flags["terminate"] and text:
        raise ToolError(
            "invalid-command",
            "write_stdin cannot send input and terminate in one call. Send the input first, or "
            f"terminate without input. {nothing}",
        )
    return WriteStdinArgs(
        session_id=session,
        input=text,
        close_stdin=flags["closeStdin"],
        terminate=flags["terminate"],
        limits=_limits(tool, args, nothing),
    )


def _shown(text: str) -> str:
    """A path as an error shows it: quoted, and at most 120 characters of a long one."""
    if len(text) <= 120:
        return repr(text)
    return f"{text[:60]!r}…{text[-40:]!r} ({len(text)} characters)"


def _path_limits(base: Path) -> tuple[int, int]:
    """(longest path, longest name) this system allows, in bytes."""
    limits: list[int] = []
    for name, fallback in (("PC_PATH_MAX", 4096), ("PC_NAME_MAX", 255)):
        try:
            limits.append(int(os.pathconf(base, name)))
        except (OSError, ValueError):
            limits.append(fallback)
    return limits[0], limits[1]


def resolve_workdir(base: Path, workdir: str | None) -> Path:
    """The directory a command runs in: `workdir` (relative to `base`) or `base` itself.

    Every way the directory can be unusable gets its own error (the OS's own words would
    reach the model as an unexpected failure), checked before anything runs."""
    target = base if workdir is None else base / os.path.expanduser(workdir)
    target = Path(os.path.abspath(target))
    shown = workdir if workdir is not None else str(base)
    # Name the resolved path too, unless it is what the caller wrote.
    full = str(target) if len(str(target)) <= 120 else _shown(str(target))
    resolved = "" if shown == str(target) else f" ({full})"
    where = f"exec_command working directory {_shown(shown)}{resolved}"
    instead = "Pass an existing directory as `workdir`, or omit it to use the session's."
    try:
        st = os.stat(target)
    except FileNotFoundError:
        problem = "does not exist"
    except NotADirectoryError:
        problem = "is not a directory (a part of the path is a file)"
    except PermissionError:
        problem = "cannot be reached (permission denied)"
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            problem = f"cannot be used ({exc.strerror or exc})"
        else:
            path_max, name_max = _path_limits(base)
            size = len(os.fsencode(target))
            longest = max(len(os.fsencode(part)) for part in target.parts)
            raise ToolError(
                "invalid-cwd",
                f"exec_command `workdir` is too long for this system: it resolves to {size} "
                f"bytes with a longest name of {longest} bytes, and a path may have at most "
                f"{path_max} bytes, each name at most {name_max}. Pass a shorter path to an "
                "existing directory (a relative one resolves against the session's working "
                "directory), or omit it. Nothing ran.",
            ) from None
    else:
        if not stat.S_ISDIR(st.st_mode):
            problem = "is a file, not a directory"
        elif not os.access(target, os.X_OK):
            problem = "cannot be entered (permission denied)"
        else:
            return target
    raise ToolError("invalid-cwd", f"{where} {problem}. {instead} Nothing ran.")
