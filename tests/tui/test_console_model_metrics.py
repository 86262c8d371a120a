"""The console models every runtime once: `scripts/arch_metrics.py` counts, from the AST,
the work-row types screens name, the classes keeping approval requests, the screens'
local/remote `isinstance` branches and the `Answer` definitions; this pins them."""

from __future__ import annotations

from pathlib import Path

from tests.arch import metrics as _metrics

ROOT = Path(__file__).resolve().parents[2]


def _sources() -> dict[str, str]:
    metrics = _metrics()
    return {m: p.read_text(encoding="utf-8") for m, p in metrics.modules().items()}


def test_one_work_row_type_one_queue_no_branch_one_answer() -> None:
    figures = _metrics().console_figures(_sources())
    assert figures == {
        "work-row classes": 2,  # this console's own and another runtime's, one protocol
        "work-row types screens name": 1,
        "approval queue classes": 1,
        "isinstance local/remote branches in screens": 0,
        "Answer definitions": 1,
    }


def test_a_screen_branching_on_a_runtime_side_is_counted() -> None:
    """The figures see what they pin: a second queue, a second row type named by a screen,
    an `isinstance` branch and a second `Answer` all show."""
    sources = _sources()
    sources["pct_tui.remote"] += (
        "\n\nclass Extra:\n    waiting: dict[str, ApprovalRequest]\n"
        "\n\nclass OtherRow:\n"
        "    def follow(self): ...\n    def recovery_lines(self): ...\n"
        "    def initial_text(self): ...\n"
        "\n\nAnswer = bool\n"
    )
    sources["pct_tui.screens.output"] += (
        "\n\ndef _where(row: OtherRow) -> bool:\n    return isinstance(row, OtherRow)\n"
    )
    figures = _metrics().console_figures(sources)
    assert figures["work-row classes"] == 3
    assert figures["work-row types screens name"] == 2
    assert figures["approval queue classes"] == 2
    assert figures["isinstance local/remote branches in screens"] == 1
    assert figures["Answer definitions"] == 2
