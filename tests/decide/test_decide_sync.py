"""Projection sync: newest plan commits, rejected apply keeps the last commit, diagnostics."""

from __future__ import annotations

from typing import Any

from decide_fixtures import CODEX, plan, rules

from pct_runtime.decide.sync import (
    APPLY_ERROR_TEXT,
    ProjectionSync,
    build_diagnostics,
)
from pct_runtime.host.events import EXECUTION_DIAGNOSTICS_CHANNEL, EventBus

TOOLKIT = {"name": "pct", "version": "0.1.0"}


def make() -> tuple[ProjectionSync, list[dict[str, Any]]]:
    bus = EventBus()
    records: list[dict[str, Any]] = []
    bus.subscribe(EXECUTION_DIAGNOSTICS_CHANNEL, records.append)
    return ProjectionSync(bus, toolkit=TOOLKIT), records


def test_committed_sync_publishes_exact_record() -> None:
    sync, records = make()
    p = plan(rules(("astra", "gpt-5.4", True, False, True)), ui=False)
    ticket = sync.begin("s1")
    assert sync.commit(ticket, p, config_revision="abc123")
    assert sync.committed("s1") is p
    assert sync.apply_error("s1") is None
    assert records == [
        {
            "version": 1,
            "model": {"provider": "openai-codex", "id": "gpt-5.4"},
            "source": "rules",
            "ruleId": "astra",
            "requested": {"patch": True, "shell": False, "code": True},
            "effective": {
                "directPatch": False,
                "nestedPatch": True,
                "directShell": False,
                "code": True,
            },
            "admittedNames": ["apply_patch", "exec_command", "write_stdin", "exec", "wait"],
            "visibleNames": ["exec", "wait"],
            "nestedNames": ["apply_patch", "exec_command", "write_stdin"],
            "hiddenNatives": ["bash", "edit", "write"],
            "notes": [],
            "approvalTransport": "unavailable",
            "cleanupPending": False,
            "configRevision": "abc123",
            "toolkit": TOOLKIT,
        }
    ]


def test_record_without_model_or_rule() -> None:
    record = build_diagnostics(
        plan({}, model=None), cleanup_pending=False, config_revision="missing", toolkit=TOOLKIT
    )
    assert "model" not in record
    assert "ruleId" not in record
    assert record["source"] == "legacy"
    assert record["approvalTransport"] == "dialog"


def test_superseded_sync_publishes_nothing() -> None:
    sync, records = make()
    old = sync.begin("s1")
    new = sync.begin("s1")
    assert not sync.commit(old, plan({}), config_revision="r1")
    assert records == []
    assert sync.committed("s1") is None
    assert not sync.reject(old)
    assert records == []
    assert sync.apply_error("s1") is None
    p = plan({"applyPatch": {"enabled": True}})
    assert sync.commit(new, p, config_revision="r2")
    assert len(records) == 1
    # Sessions are independent.
    other = sync.begin("s2")
    assert sync.is_current(other)
    assert sync.is_current(new)


def test_rejected_apply_keeps_last_commit_and_reports() -> None:
    sync, records = make()
    first = plan(rules(("r", "*", True, False, False)))
    sync.commit(sync.begin("s1"), first, config_revision="r1")
    records.clear()
    ticket = sync.begin("s1")
    assert sync.reject(ticket)
    assert sync.committed("s1") is first
    assert sync.apply_error("s1") == APPLY_ERROR_TEXT
    assert len(records) == 1
    assert records[0]["cleanupPending"] is True
    assert records[0]["effective"]["directPatch"] is True  # the still-committed route
    assert records[0]["configRevision"] == "r1"
    # The next successful commit clears the error.
    sync.commit(sync.begin("s1"), plan({}, model=CODEX), config_revision="r2")
    assert sync.apply_error("s1") is None


def test_rejection_before_any_commit_publishes_nothing() -> None:
    sync, records = make()
    assert sync.reject(sync.begin("s1"))
    assert records == []
    assert sync.apply_error("s1") == APPLY_ERROR_TEXT


def test_record_never_carries_text_payloads() -> None:
    p = plan(rules(("r", "*", True, True, True)))
    record = build_diagnostics(p, cleanup_pending=False, config_revision="r", toolkit=TOOLKIT)

    def leaves(value: Any) -> list[Any]:
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]
        if isinstance(value, list):
            return [x for v in value for x in leaves(v)]
        return [value]

    for leaf in leaves(record):
        assert isinstance(leaf, bool | int) or (
            isinstance(leaf, str) and "\n" not in leaf and len(leaf) < 64
        )


def test_unconfirmed_code_cleanup_survives_a_newer_commit() -> None:
    from pct_runtime.decide.sync import CODE_CLEANUP_PENDING_TEXT

    sync, records = make()
    sync.set_cleanup_pending("s1", True)
    assert sync.commit(sync.begin("s1"), plan({}), config_revision="r1")
    assert sync.apply_error("s1") == CODE_CLEANUP_PENDING_TEXT
    assert records[-1]["cleanupPending"] is True
    # A rejected apply's own text takes the line while it is outstanding.
    sync.reject(sync.begin("s1"))
    assert sync.apply_error("s1") == APPLY_ERROR_TEXT
    sync.set_cleanup_pending("s1", False)
    sync.commit(sync.begin("s1"), plan({}), config_revision="r2")
    assert sync.apply_error("s1") is None
    assert records[-1]["cleanupPending"] is False
