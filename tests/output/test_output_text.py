"""Code-point-safe cuts and the rolling preview."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pct_runtime.output import RollingPreview, truncate_text, utf8_head, utf8_tail_start


def test_utf8_head_never_splits_a_code_point() -> None:
    data = "aé€😀".encode()  # 1 + 2 + 3 + 4 bytes
    assert utf8_head(data, 1) == b"a"
    assert utf8_head(data, 2) == b"a"
    assert utf8_head(data, 3) == "aé".encode()
    assert utf8_head(data, 5) == "aé".encode()
    assert utf8_head(data, 6) == "aé€".encode()
    assert utf8_head(data, 9) == "aé€".encode()
    assert utf8_head(data, 10) == data
    assert utf8_head(data, 0) == b""


def test_utf8_tail_start_moves_to_next_boundary() -> None:
    data = "é€".encode()
    assert utf8_tail_start(data, 1) == 2
    assert utf8_tail_start(data, 2) == 2
    assert utf8_tail_start(data, 3) == 5


def test_truncate_text_reports_cut_bytes() -> None:
    assert truncate_text("héllo", 2) == ("h", 5)
    assert truncate_text("abc", 10) == ("abc", 0)


@given(st.text(), st.integers(min_value=0, max_value=64))
def test_utf8_head_is_valid_and_maximal(text: str, limit: int) -> None:
    data = text.encode()
    head = utf8_head(data, limit)
    head.decode("utf-8")
    assert len(head) <= limit
    assert data.startswith(head)
    if len(head) < len(data):
        # the next code point would not have fitted
        nxt = utf8_tail_start(data, len(head) + 1)
        assert nxt > limit


def test_rolling_preview_keeps_latest_and_counts_dropped() -> None:
    preview = RollingPreview(limit=8)
    preview.append(b"12345")
    preview.append(b"6789A")
    assert preview.pending == 8
    assert preview.dropped == 2
    read = preview.read(100)
    assert read.data == b"3456789A"
    assert (read.dropped, read.omitted) == (2, 0)
    assert preview.pending == 0
    assert preview.dropped == 0
    assert preview.total == 10


def test_rolling_preview_drops_whole_code_points() -> None:
    preview = RollingPreview(limit=7)
    preview.append("€€€".encode())  # 9 bytes; must drop a whole 3-byte euro
    read = preview.read(100)
    assert read.text == "€€"
    assert read.dropped == 3


def test_rolling_preview_huge_single_append() -> None:
    preview = RollingPreview(limit=5)
    preview.append(b"ab")
    preview.append("x€€".encode())
    read = preview.read(100)
    assert read.text == "€"
    assert read.dropped == 2 + 4


def test_preview_read_budget_cuts_inside_multibyte() -> None:
    preview = RollingPreview(limit=100)
    preview.append("ab😀cd".encode())
    read = preview.read(4)
    assert read.text == "ab"
    assert read.omitted == 6
    assert preview.read(100).data == b""


@given(st.lists(st.text(min_size=0, max_size=20), max_size=20), st.integers(4, 30))
def test_rolling_preview_always_valid(chunks: list[str], limit: int) -> None:
    preview = RollingPreview(limit=limit)
    total = 0
    for chunk in chunks:
        preview.append(chunk.encode())
        total += len(chunk.encode())
        assert preview.pending <= limit
    read = preview.read(limit)
    joined = "".join(chunks).encode()
    assert joined.endswith(read.data)
    assert read.dropped + len(read.data) + read.omitted == total
