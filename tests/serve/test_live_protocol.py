"""The live protocol's wire shape: round trips, and the versioning rule (unknown fields
and unknown message types are ignored; a bad field is an error, not a guess)."""

from __future__ import annotations

import pytest

from pct_runtime.serve.live.protocol import (
    ApprovalClosed,
    ApprovalInfo,
    DiffInfo,
    EventInfo,
    OutputChunk,
    RuntimeInfo,
    SessionInfo,
    Snapshot,
    WorkInfo,
    approval_message,
    closed_message,
    event_message,
    output_from_json,
    output_message,
    snapshot_message,
    update_from_json,
)

RUNTIME = RuntimeInfo(42, "serve", "stdio", "stdio", "127.0.0.1:9", 1.5)
SNAPSHOT = Snapshot(
    RUNTIME,
    (SessionInfo("s1", "mcp", "codex", "0.63", "openai/gpt-5.1"),),
    (WorkInfo("pct-shell-1", "shell", "s1", "running", None, "npm test", ("a.txt",)),),
    "status",
)
APPROVAL = ApprovalInfo(
    "approval-1", "confirm", "Apply?", "preview", (), "s1", "codex 0.63", (DiffInfo("a", "+x"),), 42
)


@pytest.mark.parametrize(
    ("update", "encode"),
    [
        (SNAPSHOT, snapshot_message),
        (EventInfo(2.0, "runtime", "call-started"), event_message),
        (APPROVAL, approval_message),
        (ApprovalClosed("approval-1", "answered"), closed_message),
    ],
)
def test_updates_round_trip_and_ignore_unknown_fields(update: object, encode: object) -> None:
    message = encode(update)  # type: ignore[operator]
    assert update_from_json(message) == update
    assert update_from_json({**message, "added_in_a_later_version": [1, 2]}) == update


def test_output_round_trip() -> None:
    chunk = OutputChunk("cell-1", 10, "hé\n", True)
    assert output_from_json(output_message(chunk)) == chunk


def test_unknown_types_are_ignored_and_bad_fields_are_errors() -> None:
    assert update_from_json({"type": "heartbeat", "time": 1}) is None
    with pytest.raises(ValueError, match="request_id must be a string"):
        update_from_json({"type": "approval_closed", "request_id": 3, "reason": "answered"})
    with pytest.raises(ValueError, match="runtime must be an object"):
        update_from_json({"type": "snapshot"})
