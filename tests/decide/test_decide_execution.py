"""Execution rules: glob matching through the config rules, first match, every route and
note combination, legacy vs rules, and child sessions."""

from __future__ import annotations

from dataclasses import replace

import pytest
from decide_fixtures import CODEX, OPENAI, config, plan, rules

from pct_runtime.decide.execution import (
    ExecutionAdmission,
    RequestedCapabilities,
    format_execution_block,
    is_eager_replacement,
    is_nested_only,
    request_capabilities,
    resolve_execution_routes,
    resolve_legacy_routes,
)
from pct_runtime.host.pi.model_registry import Model

ALL = ExecutionAdmission(True, True, True)


def req(p: bool, s: bool, c: bool, source: str = "rules") -> RequestedCapabilities:
    return RequestedCapabilities(p, s, c, source, "r" if source == "rules" else None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "model", "matches"),
    [
        ("gpt-5.4", CODEX, True),
        ("gpt-5.*", CODEX, True),
        ("gpt-5.?", CODEX, True),
        ("gpt-5.??", CODEX, False),
        ("GPT-5.4", CODEX, False),  # case-sensitive
        ("gpt-5", CODEX, False),  # whole string
        ("*", CODEX, True),
        ("openai-codex/*", CODEX, True),
        ("openai-codex/*", OPENAI, False),
        ("openai/gpt-5.4", OPENAI, True),
        ("*/gpt-5.4", OPENAI, True),
        ("gpt-5[.]4", CODEX, False),  # brackets are literal
        ("vendor/x", replace(CODEX, id="vendor/x"), False),  # '/' pattern matches provider/id
        ("openai-codex/vendor/*", replace(CODEX, id="vendor/x"), True),
    ],
)
def test_rule_glob(pattern: str, model: Model, matches: bool) -> None:
    got = request_capabilities(config(rules(("r", pattern, True, False, False))), model)
    assert (got.source, got.rule_id) == (("rules", "r") if matches else ("unmatched", None))


def test_first_match_wins_and_unmatched() -> None:
    cfg = config(rules(("a", "gpt-5.*", True, False, False), ("b", "*", False, True, True)))
    first = request_capabilities(cfg, CODEX)
    assert (first.rule_id, first.patch, first.shell, first.code) == ("a", True, False, False)
    other = request_capabilities(cfg, replace(CODEX, id="o3"))
    assert (other.rule_id, other.patch, other.shell, other.code) == ("b", False, True, True)
    assert request_capabilities(cfg, None) == RequestedCapabilities()
    empty = request_capabilities(config(rules()), CODEX)
    assert empty.source == "unmatched"


def test_legacy_without_execution_section() -> None:
    cfg = config({"applyPatch": {"enabled": True}, "codeMode": {"enabled": True}})
    requested = request_capabilities(cfg, None)
    assert requested == RequestedCapabilities(True, False, True, "legacy", None)


# requested (P, S, C), admission (patch, shell pair, code pair) -> effective, hides, notes
ROUTE_CASES = [
    ((0, 0, 0), ALL, "native", (False, False), ()),
    ((1, 0, 0), ALL, "directPatch", (False, True), ()),
    ((0, 1, 0), ALL, "directShell", (True, False), ()),
    ((0, 0, 1), ALL, "code", (True, False), ()),
    ((1, 1, 0), ALL, "directPatch+directShell", (True, True), ()),
    ((1, 0, 1), ALL, "nestedPatch+code", (True, True), ()),
    ((0, 1, 1), ALL, "directShell+code", (True, False), ()),
    ((1, 1, 1), ALL, "nestedPatch+directShell+code", (True, True), ()),
    (
        (1, 0, 0),
        ExecutionAdmission(False, True, True),
        "native",
        (False, False),
        ("patch-unavailable",),
    ),
    (
        (0, 1, 0),
        ExecutionAdmission(True, False, True),
        "native",
        (False, False),
        ("shell-pair-unavailable",),
    ),
    (
        (0, 0, 1),
        ExecutionAdmission(True, True, False),
        "native",
        (False, False),
        ("code-pair-unavailable",),
    ),
    (
        (0, 0, 1),
        ExecutionAdmission(True, False, True),
        "native",
        (False, False),
        ("code-shell-pair-unavailable",),
    ),
    (
        (1, 0, 1),
        ExecutionAdmission(True, True, False),
        "native",
        (False, False),
        ("code-pair-unavailable", "code-unavailable-did-not-promote-patch"),
    ),
    (
        (1, 0, 1),
        ExecutionAdmission(False, True, True),
        "code",
        (True, False),
        ("patch-unavailable-kept-native-editing",),
    ),
    (
        (0, 1, 1),
        ExecutionAdmission(True, False, True),
        "native",
        (False, False),
        ("shell-pair-unavailable", "code-shell-pair-unavailable"),
    ),
    (
        (1, 1, 1),
        ExecutionAdmission(False, False, False),
        "native",
        (False, False),
        (
            "shell-pair-unavailable",
            "code-pair-unavailable",
            "code-unavailable-did-not-promote-patch",
        ),
    ),
    (
        (1, 1, 1),
        ExecutionAdmission(False, True, True),
        "directShell+code",
        (True, False),
        ("patch-unavailable-kept-native-editing",),
    ),
    (
        (1, 1, 0),
        ExecutionAdmission(False, False, True),
        "native",
        (False, False),
        ("shell-pair-unavailable", "patch-unavailable"),
    ),
]


@pytest.mark.parametrize(("requested", "admission", "effective", "hides", "notes"), ROUTE_CASES)
def test_routes_and_notes(
    requested: tuple[int, int, int],
    admission: ExecutionAdmission,
    effective: str,
    hides: tuple[bool, bool],
    notes: tuple[str, ...],
) -> None:
    routes = resolve_execution_routes(req(*map(bool, requested)), admission)
    block = format_execution_block(routes).split("\n")
    assert block[4] == f"  effective: {effective}"
    assert (routes.hide_bash, routes.hide_edit_write) == hides
    assert routes.notes == notes
    assert routes.needs_shell_backend == (routes.direct_shell or routes.code)
    # A failed Code route never becomes direct Patch or direct Shell by omission.
    if requested[2] and not routes.code:
        assert not routes.direct_patch


def test_nested_only_and_eager_names() -> None:
    code_only = resolve_execution_routes(req(True, False, True), ALL)
    assert is_nested_only("apply_patch", code_only)
    assert is_nested_only("exec_command", code_only)
    assert is_nested_only("write_stdin", code_only)
    assert not is_nested_only("exec", code_only)
    assert is_eager_replacement("exec", code_only)
    assert is_eager_replacement("wait", code_only)
    assert not is_eager_replacement("apply_patch", code_only)
    direct = resolve_execution_routes(req(True, True, False), ALL)
    assert is_eager_replacement("apply_patch", direct)
    assert is_eager_replacement("exec_command", direct)
    assert not is_nested_only("exec_command", direct)


def test_legacy_routes_are_additive() -> None:
    routes = resolve_legacy_routes(req(True, True, True, "legacy"), ALL)
    assert (routes.direct_patch, routes.nested_patch, routes.direct_shell, routes.code) == (
        True,
        True,
        True,
        True,
    )
    assert (routes.hide_bash, routes.hide_edit_write, routes.notes) == (False, False, ())
    code_only = resolve_legacy_routes(req(False, False, True, "legacy"), ALL)
    assert code_only.needs_shell_backend is False
    missing = resolve_legacy_routes(
        req(True, True, True, "legacy"), ExecutionAdmission(False, False, False)
    )
    assert missing.notes == ()


def test_execution_block_text() -> None:
    routes = resolve_execution_routes(
        RequestedCapabilities(True, False, True, "rules", "astra"),
        ExecutionAdmission(False, True, True),
    )
    assert format_execution_block(routes) == (
        "Execution rules:\n"
        "  schema: rules\n"
        "  rule: astra\n"
        "  requested: P+C\n"
        "  effective: code\n"
        "  hide bash: yes\n"
        "  hide edit/write: no\n"
        "  notes: patch-unavailable-kept-native-editing"
    )
    unmatched = resolve_execution_routes(RequestedCapabilities(), ALL)
    assert format_execution_block(unmatched).split("\n")[1:4] == [
        "  schema: unmatched",
        "  rule: —",
        "  requested: none",
    ]


def test_rules_rows_distinguish_conflict_from_absence() -> None:
    cfg = rules(("r", "*", True, True, True))
    natives = ["read", "bash", "edit", "write"]
    absent = plan(cfg, snapshot=None, host_admitted=natives)
    assert absent.decisions["apply_patch"].reason == "code-unavailable-did-not-promote-patch"
    assert absent.decisions["shell_sessions"].reason == "shell-pair-unavailable"
    assert absent.decisions["code_mode"].reason == "code-pair-unavailable"
    from decide_fixtures import tools

    foreign = plan(cfg, snapshot=tools(foreign=["apply_patch", "exec", "write_stdin"]))
    for cap in ("apply_patch", "shell_sessions", "code_mode"):
        assert foreign.decisions[cap].reason == "conflicting-tool-name"
    # Not requested: plain off, no reason, even with a foreign winner.
    off = plan(rules(("r", "*", False, False, False)), snapshot=tools(foreign=["apply_patch"]))
    assert (off.decisions["apply_patch"].effective, off.decisions["apply_patch"].reason) == (
        "off",
        "",
    )


def test_rules_shell_row_reports_missing_shell_runtime() -> None:
    p = plan(rules(("r", "*", False, True, False)), shell=False)
    d = p.decisions["shell_sessions"]
    assert (d.effective, d.reason) == ("unavailable", "shell-unavailable")


def test_child_session_with_native_only_allowlist_keeps_natives() -> None:
    natives = ["read", "bash", "edit", "write"]
    child = plan(rules(("r", "*", True, True, True)), host_admitted=natives, active=natives)
    assert child.active == ("read", "bash", "edit", "write")
    assert child.hidden_natives == ()
    assert child.admitted_names == ()
    assert child.routes.notes == (
        "shell-pair-unavailable",
        "code-pair-unavailable",
        "code-unavailable-did-not-promote-patch",
    )


def test_child_session_intersects_rule_with_host_admission() -> None:
    admitted = ["read", "bash", "edit", "write", "exec", "wait", "apply_patch"]
    child = plan(
        rules(("r", "gpt-5.4", True, False, True)), host_admitted=admitted, active=admitted
    )
    # Code needs the nested Shell pair the host did not admit; nothing is promoted.
    assert child.routes.notes == (
        "code-shell-pair-unavailable",
        "code-unavailable-did-not-promote-patch",
    )
    assert "bash" in child.active
    assert "exec" not in child.active
    # The parent (everything admitted) gets the full route from the same rule.
    parent = plan(rules(("r", "gpt-5.4", True, False, True)))
    assert parent.routes.code
    assert parent.routes.nested_patch
    assert parent.hidden_natives == ("bash", "edit", "write")
