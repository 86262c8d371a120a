"""Pure argument handling of `exec` / `wait`: spellings, ranges and the `# @exec:` pragma.

Everything here runs before a worker is created, so a rejected call changes nothing. Each
pair of spellings names one field: send one spelling, or both with the same value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeGuard

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

ADAPTER_NAMES = ("exec_command", "write_stdin", "apply_patch")

MAX_CODE_BYTES = 256 * 1024

PRAGMA_EXAMPLE = '# @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}'
_PRAGMA_FIELDS = ("yield_time_ms", "max_output_tokens")
_SAFE_INT = 2**53 - 1


@dataclass(frozen=True)
class ExecRequest:
    """A validated `exec` call: the program with its pragma line blanked, and its limits."""

    code: str
    uses: tuple[str, ...] | None
    yield_ms: int
    budget_bytes: int


@dataclass(frozen=True)
class WaitRequest:
    cell_id: str
    yield_ms: int
    budget_bytes: int
    terminate: bool


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _pick(args: JSONMapping, tool: str, *names: str) -> object:
    """One field under several spellings; differing values are rejected before any work."""
    present = [(n, args[n]) for n in names if n in args and args[n] is not None]
    if not present:
        return None
    first_name, first = present[0]
    for name, value in present[1:]:
        if value != first or type(value) is not type(first):
            raise ToolError(
                "invalid-input",
                f"{tool} received {first_name} and {name} with different values; they are "
                "the same field: send one spelling, or the same value in both.",
            )
    return first


def _check_unknown(args: JSONMapping, tool: str, allowed: tuple[str, ...]) -> None:
    for key in args:
        if key not in allowed:
            raise ToolError(
                "invalid-input",
                f"{tool} does not accept the field {key!r}. Accepted fields: {', '.join(allowed)}.",
            )


def _yield_ms(value: object) -> int:
    if value is None:
        return YIELD_DEFAULT_MS
    if not _is_int(value) or not YIELD_MIN_MS <= value <= YIELD_MAX_MS:
        raise ToolError(
            "invalid-limit",
            f"yield_time_ms must be an integer from {YIELD_MIN_MS} to {YIELD_MAX_MS} "
            f"(default {YIELD_DEFAULT_MS}).",
        )
    return int(value)


def output_budget(tokens: object, token_field: str, max_bytes: object) -> int:
    """Bytes per read: both limits apply when both are given, and the smaller wins."""
    budget = OUTPUT_DEFAULT_BYTES
    limits: list[int] = []
    if tokens is not None:
        if not _is_int(tokens) or not TOKENS_MIN <= tokens <= TOKENS_MAX:
            raise ToolError(
                "invalid-limit",
                f"{token_field} must be an integer from {TOKENS_MIN} to {TOKENS_MAX} "
                f"(a conservative proxy of {BYTES_PER_TOKEN} bytes per token).",
            )
        limits.append(min(int(tokens) * BYTES_PER_TOKEN, OUTPUT_MAX_BYTES))
    if max_bytes is not None:
        if not _is_int(max_bytes) or not OUTPUT_MIN_BYTES <= max_bytes <= OUTPUT_MAX_BYTES:
            raise ToolError(
                "invalid-limit",
                f"maxOutputBytes must be an integer from {OUTPUT_MIN_BYTES} to "
                f"{OUTPUT_MAX_BYTES} (default {OUTPUT_DEFAULT_BYTES}).",
            )
        limits.append(int(max_bytes))
    if limits:
        budget = min(limits)
    return budget


def _pragma_error(detail: str) -> ToolError:
    return ToolError("invalid-code", detail)


def parse_pragma(source: str) -> tuple[str, dict[str, int]]:
    """Split an optional first-line `# @exec: {...}` (or `// @exec:`) pragma off the program.

    The pragma line is replaced by an empty line so line numbers in errors do not shift.
    """
    if not source.strip():
        raise ToolError(
            "invalid-code",
            "exec expects raw Python source text (non-empty). Provide Python only, optionally "
            f"with first-line `{PRAGMA_EXAMPLE}`.",
        )
    first, newline, rest = source.partition("\n")
    head = first.lstrip()
    for prefix in ("# @exec:", "// @exec:"):
        if head.startswith(prefix):
            break
    else:
        return source, {}
    directive = head[len(prefix) :].strip()
    fields_text = "`yield_time_ms` and `max_output_tokens`"
    if not directive:
        raise _pragma_error(
            f"exec pragma must be a JSON object with supported fields {fields_text}"
        )
    try:
        value = json.loads(directive)
    except json.JSONDecodeError as exc:
        raise _pragma_error(
            f"exec pragma must be valid JSON with supported fields {fields_text}: {exc}"
        ) from None
    if not isinstance(value, dict):
        raise _pragma_error(
            f"exec pragma must be a JSON object with supported fields {fields_text}"
        )
    for key in value:
        if key not in _PRAGMA_FIELDS:
            raise _pragma_error(f"exec pragma only supports {fields_text}; got `{key}`")
    for key, item in value.items():
        if not _is_int(item) or item < 0:
            raise _pragma_error(
                f"exec pragma fields {fields_text} must be non-negative safe integers: "
                f"`{key}` is {json.dumps(item)}"
            )
        if item > _SAFE_INT:
            raise _pragma_error(f"exec pragma field `{key}` must be a non-negative safe integer")
    if not rest.strip():
        raise _pragma_error("exec pragma must be followed by Python source on subsequent lines")
    return newline + rest, {k: int(v) for k, v in value.items()}


_EXEC_FIELDS = (
    "code",
    "uses",
    "yield_time_ms",
    "yieldTimeMs",
    "max_output_tokens",
    "maxOutputBytes",
)
_WAIT_FIELDS = (
    "cell_id",
    "cellId",
    "yield_time_ms",
    "yieldTimeMs",
    "max_tokens",
    "max_output_tokens",
    "maxOutputBytes",
    "terminate",
)


def parse_exec_args(args: JSONMapping) -> ExecRequest:
    """Validate an `exec` call, pragma included. Raises `ToolError`; never starts anything."""
    if not isinstance(args, Mapping):
        raise ToolError("invalid-input", "exec expects a JSON object with a `code` string.")
    _check_unknown(args, "exec", _EXEC_FIELDS)
    code = args.get("code")
    if not isinstance(code, str):
        raise ToolError(
            "invalid-code",
            "exec expects `code`: raw Python source text (non-empty). Optionally start with "
            f"`{PRAGMA_EXAMPLE}`.",
        )
    if len(code.encode("utf-8", "surrogatepass")) > MAX_CODE_BYTES:
        raise ToolError(
            "invalid-code",
            f"exec code is larger than {MAX_CODE_BYTES} bytes; keep cells short and compose "
            "tools instead of embedding data.",
        )
    uses = parse_uses(args.get("uses", None), "uses" in args)
    yield_arg = _pick(args, "exec", "yield_time_ms", "yieldTimeMs")
    tokens_arg = args.get("max_output_tokens")
    program, pragma = parse_pragma(code)
    if "yield_time_ms" in pragma:
        if yield_arg is not None and yield_arg != pragma["yield_time_ms"]:
            raise _pragma_error(
                f"exec pragma `yield_time_ms` ({pragma['yield_time_ms']}) contradicts the "
                f"call's yield_time_ms ({yield_arg}); give it once."
            )
        yield_arg = pragma["yield_time_ms"]
    if "max_output_tokens" in pragma:
        if tokens_arg is not None and tokens_arg != pragma["max_output_tokens"]:
            raise _pragma_error(
                f"exec pragma `max_output_tokens` ({pragma['max_output_tokens']}) contradicts "
                f"the call's max_output_tokens ({tokens_arg}); give it once."
            )
        tokens_arg = pragma["max_output_tokens"]
    return ExecRequest(
        code=program,
        uses=uses,
        yield_ms=_yield_ms(yield_arg),
        budget_bytes=output_budget(tokens_arg, "max_output_tokens", args.get("maxOutputBytes")),
    )


def parse_uses(raw: object, present: bool) -> tuple[str, ...] | None:
    """`None` when omitted (every adapter admitted at cell start), else the exact list."""
    if not present or raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ToolError(
            "invalid-uses",
            f"uses must be a list of adapter names from: {', '.join(ADAPTER_NAMES)}.",
        )
    if len(set(raw)) != len(raw):
        raise ToolError("invalid-uses", "uses must not repeat a name.")
    for name in raw:
        if name not in ADAPTER_NAMES:
            raise ToolError(
                "invalid-uses",
                f"uses names an unknown adapter {name!r}; adapters are: "
                f"{', '.join(ADAPTER_NAMES)}.",
            )
    return tuple(raw)


_NUMERIC = re.compile(r"^\s*[+-]?\d+\s*$")


def parse_cell_id(raw: object) -> str:
    """Cell handles are opaque strings; numbers, PIDs and shell session ids are rejected."""
    if raw is None:
        raise ToolError("invalid-input", "wait requires `cell_id`: the id returned by exec.")
    if not isinstance(raw, str):
        raise ToolError(
            "invalid-input",
            "cell_id must be the opaque string returned by exec; numbers are not cell ids.",
        )
    if raw.startswith("pct-shell-"):
        raise ToolError(
            "invalid-input",
            f"{raw} is a Shell session id, not a cell id. Continue a shell with write_stdin "
            "session_id; wait only controls Code Mode cells.",
        )
    if not raw or _NUMERIC.match(raw):
        raise ToolError(
            "invalid-input",
            "cell_id must be the opaque string returned by exec; numbers and process ids are "
            "not cell ids.",
        )
    return raw


def parse_wait_args(args: JSONMapping) -> WaitRequest:
    if not isinstance(args, Mapping):
        raise ToolError("invalid-input", "wait expects a JSON object with `cell_id`.")
    _check_unknown(args, "wait", _WAIT_FIELDS)
    cell_id = parse_cell_id(_pick(args, "wait", "cell_id", "cellId"))
    terminate = args.get("terminate", False)
    if terminate is None:
        terminate = False
    if not isinstance(terminate, bool):
        raise ToolError("invalid-input", "terminate must be a boolean.")
    tokens = _pick(args, "wait", "max_tokens", "max_output_tokens")
    token_field = "max_tokens" if "max_tokens" in args else "max_output_tokens"
    return WaitRequest(
        cell_id=cell_id,
        yield_ms=_yield_ms(_pick(args, "wait", "yield_time_ms", "yieldTimeMs")),
        budget_bytes=output_budget(tokens, token_field, args.get("maxOutputBytes")),
        terminate=terminate,
    )
