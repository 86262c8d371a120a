"""Pure `exec`/`wait` argument handling: the pragma, spellings, limits, handles."""

from __future__ import annotations

import pytest

from pct_runtime.capabilities.base import ToolError
from pct_runtime.capabilities.code.dialect import (
    parse_exec_args,
    parse_pragma,
    parse_wait_args,
)


def _code(exc: pytest.ExceptionInfo[ToolError]) -> str:
    return exc.value.code


@pytest.mark.parametrize("prefix", ["# @exec:", "// @exec:", "   # @exec:"])
def test_pragma_line_is_replaced_by_an_empty_line(prefix: str) -> None:
    program, fields = parse_pragma(
        f'{prefix} {{"yield_time_ms": 5, "max_output_tokens": 300}}\nx = 1\ny'
    )
    assert program == "\nx = 1\ny"
    assert fields == {"yield_time_ms": 5, "max_output_tokens": 300}


def test_pragma_applies_to_limits() -> None:
    req = parse_exec_args({"code": '# @exec: {"yield_time_ms": 0, "max_output_tokens": 256}\n1'})
    assert req.yield_ms == 0
    assert req.budget_bytes == 1024
    assert req.code == "\n1"


def test_no_pragma_keeps_code_verbatim() -> None:
    assert parse_pragma("# a comment\nx")[0] == "# a comment\nx"


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (
            '# @exec: {"timeout": 1}\nx',
            "only supports `yield_time_ms` and `max_output_tokens`; got `timeout`",
        ),
        ("# @exec: {nope}\nx", "exec pragma must be valid JSON"),
        ("# @exec: [1]\nx", "must be a JSON object"),
        ("# @exec:\nx", "must be a JSON object"),
        ('# @exec: {"yield_time_ms": -1}\nx', "non-negative safe integers"),
        ('# @exec: {"yield_time_ms": 1.5}\nx', "non-negative safe integers"),
        ('# @exec: {"yield_time_ms": 9007199254740992}\nx', "must be a non-negative safe integer"),
        ('# @exec: {"yield_time_ms": 5}\n   \n', "must be followed by Python source"),
        ('# @exec: {"yield_time_ms": 5}', "must be followed by Python source"),
        ("   \n\t", "non-empty"),
    ],
)
def test_pragma_rejections(code: str, needle: str) -> None:
    with pytest.raises(ToolError) as exc:
        parse_exec_args({"code": code})
    assert _code(exc) == "invalid-code"
    assert needle in exc.value.message


def test_pragma_contradicting_call_argument_is_rejected() -> None:
    with pytest.raises(ToolError, match="contradicts the call's yield_time_ms"):
        parse_exec_args({"code": '# @exec: {"yield_time_ms": 5}\nx', "yield_time_ms": 6})
    with pytest.raises(ToolError, match="contradicts the call's max_output_tokens"):
        parse_exec_args(
            {"code": '// @exec: {"max_output_tokens": 300}\nx', "max_output_tokens": 400}
        )
    # The same value twice is not a contradiction.
    req = parse_exec_args({"code": '# @exec: {"yield_time_ms": 5}\nx', "yieldTimeMs": 5})
    assert req.yield_ms == 5


def test_pragma_out_of_range_value_is_a_limit_error() -> None:
    with pytest.raises(ToolError) as exc:
        parse_exec_args({"code": '# @exec: {"yield_time_ms": 60001}\nx'})
    assert _code(exc) == "invalid-limit"


def test_exec_spellings_limits_and_unknown_fields() -> None:
    assert parse_exec_args({"code": "x"}).yield_ms == 10_000
    assert parse_exec_args({"code": "x"}).budget_bytes == 51_200
    assert parse_exec_args({"code": "x", "yieldTimeMs": 7}).yield_ms == 7
    both = parse_exec_args({"code": "x", "max_output_tokens": 1000, "maxOutputBytes": 2000})
    assert both.budget_bytes == 2000
    assert parse_exec_args({"code": "x", "max_output_tokens": 65536}).budget_bytes == 262_144
    with pytest.raises(ToolError) as exc:
        parse_exec_args({"code": "x", "yield_time_ms": 1, "yieldTimeMs": 2})
    assert _code(exc) == "invalid-input"
    for bad in (
        {"yield_time_ms": 60_001},
        {"yield_time_ms": True},
        {"max_output_tokens": 255},
        {"maxOutputBytes": 1023},
        {"maxOutputBytes": 262_145},
    ):
        with pytest.raises(ToolError) as exc:
            parse_exec_args({"code": "x", **bad})
        assert _code(exc) == "invalid-limit"
    with pytest.raises(ToolError) as exc:
        parse_exec_args({"code": "x", "timeout_ms": 5})
    assert _code(exc) == "invalid-input"
    with pytest.raises(ToolError) as exc:
        parse_exec_args({"code": 5})
    assert _code(exc) == "invalid-code"


def test_uses_validation() -> None:
    assert parse_exec_args({"code": "x"}).uses is None
    assert parse_exec_args({"code": "x", "uses": []}).uses == ()
    assert parse_exec_args({"code": "x", "uses": ["apply_patch"]}).uses == ("apply_patch",)
    for bad in (["exec_command", "exec_command"], ["bash"], "exec_command", [1]):
        with pytest.raises(ToolError) as exc:
            parse_exec_args({"code": "x", "uses": bad})
        assert _code(exc) == "invalid-uses"


def test_wait_handles_are_opaque_strings() -> None:
    assert parse_wait_args({"cellId": "cell-abc"}).cell_id == "cell-abc"
    for bad in ({"cell_id": 12}, {"cell_id": "12345"}, {"cell_id": "pct-shell-ab12"}, {}):
        with pytest.raises(ToolError) as exc:
            parse_wait_args(bad)
        assert _code(exc) == "invalid-input"
    with pytest.raises(ToolError, match="write_stdin"):
        parse_wait_args({"cell_id": "pct-shell-ab12"})


def test_wait_budgets_and_spellings() -> None:
    req = parse_wait_args({"cell_id": "c-1", "max_tokens": 256, "maxOutputBytes": 4096})
    assert req.budget_bytes == 1024
    assert parse_wait_args({"cell_id": "c-1", "max_output_tokens": 300}).budget_bytes == 1200
    with pytest.raises(ToolError) as exc:
        parse_wait_args({"cell_id": "c-1", "max_tokens": 300, "max_output_tokens": 400})
    assert _code(exc) == "invalid-input"
    with pytest.raises(ToolError):
        parse_wait_args({"cell_id": "c-1", "cellId": "c-2"})
    with pytest.raises(ToolError):
        parse_wait_args({"cell_id": "c-1", "terminate": "yes"})
    assert parse_wait_args({"cell_id": "c-1", "terminate": True}).terminate


def test_exec_grammar_accepts_raw_source_with_or_without_pragma() -> None:
    import lark

    from pct_runtime.capabilities.code.tools import EXEC_LARK_GRAMMAR

    parser = lark.Lark(EXEC_LARK_GRAMMAR, parser="lalr")
    assert parser.parse('# @exec: {"yield_time_ms": 1}\nprint(1)\n').children[0].data == (
        "pragma_source"
    )
    assert parser.parse('// @exec: {"yield_time_ms": 1}\nx').children[0].data == "pragma_source"
    assert parser.parse("print(1)").children[0].data == "plain_source"


def test_pragma_line_with_crlf_is_trimmed_with_the_directive() -> None:
    program, fields = parse_pragma('# @exec: {"yield_time_ms": 1}\r\nx = 1')
    assert fields == {"yield_time_ms": 1}
    assert program == "\nx = 1"
