"""Every rejection rule of the Shell Sessions dialect, with no process involved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.shell import (
    UNSUPPORTED_FIELDS,
    normalize_exec_command_args,
    normalize_write_stdin_args,
    resolve_workdir,
)

CODEX_UNSUPPORTED = [
    "tty",
    "shell",
    "login",
    "sandbox_permissions",
    "justification",
    "with_escalated_permissions",
    "prefix_rule",
    "timeout_ms",
]


def _err(fn: Any, args: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        fn(args)
    return info.value


def test_unsupported_list_is_exactly_the_spec_list() -> None:
    assert sorted(UNSUPPORTED_FIELDS) == sorted(CODEX_UNSUPPORTED)


def test_both_spellings_are_one_field() -> None:
    a = normalize_exec_command_args({"cmd": "ls", "workdir": "x", "yield_time_ms": 5})
    b = normalize_exec_command_args({"command": "ls", "cwd": "x", "yieldTimeMs": 5})
    c = normalize_exec_command_args(
        {
            "cmd": "ls",
            "command": "ls",
            "workdir": "x",
            "cwd": "x",
            "yieldTimeMs": 5,
            "yield_time_ms": 5,
        }
    )
    assert a == b == c
    w1 = normalize_write_stdin_args({"session_id": "pct-shell-1", "chars": "x\n"})
    w2 = normalize_write_stdin_args({"sessionId": "pct-shell-1", "input": "x\n"})
    w3 = normalize_write_stdin_args(
        {"sessionId": "pct-shell-1", "session_id": "pct-shell-1", "input": "x\n", "chars": "x\n"}
    )
    assert w1 == w2 == w3
    assert w1.input == "x\n"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"cmd": "ls", "command": "pwd"}, "invalid-command"),
        ({"cmd": "ls", "workdir": "a", "cwd": "b"}, "invalid-command"),
        ({"cmd": "ls", "yield_time_ms": 1, "yieldTimeMs": 2}, "invalid-command"),
        ({"cmd": "ls", "yield_time_ms": 1, "yieldTimeMs": 1.5}, "invalid-command"),
    ],
)
def test_exec_conflicting_spellings_rejected(args: dict[str, Any], code: str) -> None:
    err = _err(normalize_exec_command_args, args)
    assert err.code == code
    assert "same field" in err.message
    assert err.message.endswith("Nothing ran.")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"session_id": "pct-shell-1", "sessionId": "pct-shell-2"}, "invalid-session"),
        ({"session_id": "pct-shell-1", "chars": "a", "input": "b"}, "invalid-command"),
        ({"session_id": "pct-shell-1", "yield_time_ms": 1, "yieldTimeMs": 2}, "invalid-command"),
    ],
)
def test_write_conflicting_spellings_rejected(args: dict[str, Any], code: str) -> None:
    err = _err(normalize_write_stdin_args, args)
    assert err.code == code
    assert "same field" in err.message
    assert err.message.endswith("Nothing was sent.")


@pytest.mark.parametrize("field", CODEX_UNSUPPORTED)
def test_unsupported_codex_fields_rejected_by_name(field: str) -> None:
    err = _err(normalize_exec_command_args, {"cmd": "ls", field: False})
    assert err.code == "invalid-command"
    assert f"`{field}`" in err.message
    err = _err(normalize_write_stdin_args, {"session_id": "pct-shell-1", field: "x"})
    assert err.code == "invalid-command"
    assert f"`{field}`" in err.message


def test_unknown_fields_rejected() -> None:
    err = _err(normalize_exec_command_args, {"cmd": "ls", "env": {}})
    assert err.code == "invalid-command"
    assert "`env`" in err.message
    assert "cmd, workdir" in err.message
    err = _err(normalize_write_stdin_args, {"session_id": "x", "bytes": "y"})
    assert "`bytes`" in err.message


@pytest.mark.parametrize("handle", [1000, 12.0, True, 0])
def test_numeric_handles_rejected_never_coerced(handle: Any) -> None:
    err = _err(normalize_write_stdin_args, {"session_id": handle})
    assert err.code == "invalid-session"
    assert "not a number" in err.message
    err = _err(normalize_write_stdin_args, {"sessionId": handle})
    assert err.code == "invalid-session"


@pytest.mark.parametrize("handle", [None, "", ["pct-shell-1"]])
def test_bad_handles_rejected(handle: Any) -> None:
    assert _err(normalize_write_stdin_args, {"session_id": handle}).code == "invalid-session"


def test_missing_handle_rejected() -> None:
    assert _err(normalize_write_stdin_args, {}).code == "invalid-session"


@pytest.mark.parametrize(
    "args", [{}, {"cmd": ""}, {"cmd": "   "}, {"cmd": 5}, {"command": None}, {"cmd": "a\0b"}]
)
def test_bad_commands_rejected(args: dict[str, Any]) -> None:
    assert _err(normalize_exec_command_args, args).code == "invalid-command"


def test_non_object_arguments_rejected() -> None:
    assert _err(normalize_exec_command_args, "ls").code == "invalid-command"
    assert _err(normalize_write_stdin_args, ["x"]).code == "invalid-command"


@pytest.mark.parametrize("workdir", ["", 5, "a\0b"])
def test_bad_workdir_rejected(workdir: Any) -> None:
    assert _err(normalize_exec_command_args, {"cmd": "ls", "workdir": workdir}).code == (
        "invalid-cwd"
    )


def test_resolve_workdir(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "file").write_text("")
    assert resolve_workdir(tmp_path, None) == tmp_path
    assert resolve_workdir(tmp_path, "sub") == tmp_path / "sub"
    assert resolve_workdir(tmp_path, str(tmp_path / "sub")) == tmp_path / "sub"
    for bad in ("missing", "file"):
        with pytest.raises(ToolError) as info:
            resolve_workdir(tmp_path, bad)
        assert info.value.code == "invalid-cwd"
        assert f"'{bad}' ({tmp_path / bad})" in info.value.message
    # an absolute workdir is already the resolved path: shown once
    with pytest.raises(ToolError) as info:
        resolve_workdir(tmp_path, str(tmp_path / "file"))
    assert info.value.message.startswith(f"exec_command working directory '{tmp_path / 'file'}' ")
    assert info.value.message.count(str(tmp_path / "file")) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("yield_time_ms", -1),
        ("yield_time_ms", 60_001),
        ("yieldTimeMs", "100"),
        ("yield_time_ms", True),
        ("yield_time_ms", 1.5),
        ("maxOutputBytes", 1023),
        ("maxOutputBytes", 262_145),
        ("max_output_tokens", 255),
        ("max_output_tokens", 65_537),
        ("max_output_tokens", None),
    ],
)
def test_limits_out_of_range_rejected(field: str, value: Any) -> None:
    err = _err(normalize_exec_command_args, {"cmd": "ls", field: value})
    assert err.code == "invalid-limit"
    assert f"`{field}`" in err.message
    err = _err(normalize_write_stdin_args, {"session_id": "pct-shell-1", field: value})
    assert err.code == "invalid-limit"


@pytest.mark.parametrize(
    ("extra", "yield_ms", "budget"),
    [
        ({}, 10_000, 51_200),
        ({"yield_time_ms": 0}, 0, 51_200),
        ({"yieldTimeMs": 60_000}, 60_000, 51_200),
        ({"maxOutputBytes": 1024}, 10_000, 1024),
        ({"maxOutputBytes": 262_144}, 10_000, 262_144),
        ({"max_output_tokens": 256}, 10_000, 1024),
        ({"max_output_tokens": 300}, 10_000, 1200),
        ({"max_output_tokens": 65_536}, 10_000, 262_144),
        ({"max_output_tokens": 300, "maxOutputBytes": 1100}, 10_000, 1100),
        ({"max_output_tokens": 300, "maxOutputBytes": 5000}, 10_000, 1200),
        ({"maxOutputBytes": 2048.0}, 10_000, 2048),
    ],
)
def test_limits_and_defaults(extra: dict[str, Any], yield_ms: int, budget: int) -> None:
    limits = normalize_exec_command_args({"cmd": "ls", **extra}).limits
    assert (limits.yield_ms, limits.max_output_bytes) == (yield_ms, budget)
    limits = normalize_write_stdin_args({"session_id": "s", **extra}).limits
    assert (limits.yield_ms, limits.max_output_bytes) == (yield_ms, budget)


def test_input_with_terminate_rejected() -> None:
    err = _err(normalize_write_stdin_args, {"session_id": "s", "chars": "x", "terminate": True})
    assert err.code == "invalid-command"
    assert normalize_write_stdin_args({"session_id": "s", "chars": "", "terminate": True}).terminate


@pytest.mark.parametrize("field", ["closeStdin", "terminate"])
def test_flags_must_be_booleans(field: str) -> None:
    assert _err(normalize_write_stdin_args, {"session_id": "s", field: "yes"}).code == (
        "invalid-command"
    )


def test_input_must_be_string() -> None:
    assert _err(normalize_write_stdin_args, {"session_id": "s", "chars": 5}).code == (
        "invalid-command"
    )
    assert normalize_write_stdin_args({"session_id": "s"}).input == ""
