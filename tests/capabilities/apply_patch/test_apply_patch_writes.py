"""Writing the new content: batches of pieces, short writes, positions in messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apply_patch_helpers import envelope

from pct_runtime.capabilities.apply_patch.errors import MatchError
from pct_runtime.capabilities.apply_patch.executor import apply_patch_text


def many_hunks(lines: int, step: int) -> tuple[bytes, str, bytes]:
    source = [f"line {i}" for i in range(lines)]
    patch = ["*** Update File: big.txt"]
    expected = list(source)
    for at in range(step // 2, lines - 2, step):
        patch += ["@@", f" {source[at - 1]}", f"-{source[at]}", f"+changed {at}", f" line {at + 1}"]
        expected[at] = f"changed {at}"
    data = ("\n".join(source) + "\n").encode()
    return data, envelope(*patch), ("\n".join(expected) + "\n").encode()


def test_short_writes_are_resumed_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.writev
    calls = {"n": 0}

    def short_writev(fd: int, buffers: list[memoryview]) -> int:
        calls["n"] += 1
        # Write at most 7 bytes per call, cutting through pieces and iovec boundaries.
        budget, head = 7, []
        for view in buffers:
            take = view[:budget]
            head.append(take)
            budget -= len(take)
            if not budget:
                break
        return real(fd, head)

    monkeypatch.setattr(os, "writev", short_writev)
    data, patch, expected = many_hunks(2_000, 10)
    (tmp_path / "big.txt").write_bytes(data)
    apply_patch_text(patch, tmp_path)
    assert (tmp_path / "big.txt").read_bytes() == expected
    assert calls["n"] >= len(expected) // 7


def test_more_pieces_than_one_batch(tmp_path: Path) -> None:
    data, patch, expected = many_hunks(20_000, 8)  # ~2,500 edits: several writev batches
    (tmp_path / "big.txt").write_bytes(data)
    apply_patch_text(patch, tmp_path)
    assert (tmp_path / "big.txt").read_bytes() == expected


def test_line_numbers_past_an_unterminated_last_line(tmp_path: Path) -> None:
    # The cursor after the last line of a file without a final newline is on "line 2".
    (tmp_path / "f.txt").write_bytes(b"  beta")
    patch = envelope("*** Update File: f.txt", "@@", "-  beta", "+x", "@@   beta", "+y")
    with pytest.raises(MatchError) as info:
        apply_patch_text(patch, tmp_path)
    assert "was not found in the file at or after line 2 (after the previous hunk)" in str(
        info.value
    )
