"""Approval diffs on the wire: `operation` and `source` are additive within version 1, so
an older peer's entry (no operation) and a newer one's (an operation this version does not
know) both read as an update, and a move keeps its source both ways."""

from __future__ import annotations

import json

from pct_runtime.serve.live.protocol import (
    ApprovalInfo,
    DiffInfo,
    approval_from_json,
    approval_message,
)


def _info(*diffs: DiffInfo) -> ApprovalInfo:
    return ApprovalInfo(
        "approval-1", "confirm", "Code Mode: apply patch?", "", (), None, None, diffs
    )


def test_operations_and_a_moves_source_round_trip() -> None:
    info = _info(
        DiffInfo("a.txt", "+a", "add"),
        DiffInfo("b.txt", "-b", "delete"),
        DiffInfo("new.py", "", "move", "old.py"),
        DiffInfo("c.txt", "-c\n+C"),
    )
    wire = json.loads(json.dumps(approval_message(info)))
    assert wire["diffs"][2] == {
        "path": "new.py",
        "diff": "",
        "operation": "move",
        "source": "old.py",
    }
    assert "source" not in wire["diffs"][0]
    assert approval_from_json(wire) == info


def test_an_older_or_newer_peers_diff_reads_as_an_update() -> None:
    wire = json.loads(json.dumps(approval_message(_info())))
    wire["diffs"] = [
        {"path": "old-peer.txt", "diff": "+x"},
        {"path": "new-peer.txt", "diff": "+y", "operation": "chmod", "mode": "0755"},
    ]
    assert approval_from_json(wire).diffs == (
        DiffInfo("old-peer.txt", "+x", "update", None),
        DiffInfo("new-peer.txt", "+y", "update", None),
    )
