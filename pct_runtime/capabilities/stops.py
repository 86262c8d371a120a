"""Who stopped a shell job or a code cell, or typed into a job's stdin, from outside the
model's own calls.

A person may stop work from the embedded pct console (pct-tui) or from a console attached
over live control. The model then reads a terminated job or cell it never stopped; without
a word it may simply rerun the command. Shell and Code Mode both add `stopper_line` to the
result and `stopped_by` to its details.
"""

from __future__ import annotations

from typing import Literal

#: `console`: the pct-tui that embeds this runtime; `live_console`: a console over live control.
StoppedBy = Literal["console", "live_console"]

_WHERE: dict[str, str] = {
    "console": "the pct console (pct-tui)",
    "live_console": "a pct console attached over live control (pct-tui)",
}


def stopper_line(stopped_by: str, what: str, *, done: bool) -> str:
    """The line after the status: who stopped it, and not to rerun `what` unasked."""
    where = _WHERE.get(stopped_by, "a pct console")
    head = "stopped" if done else "stop requested"
    return (
        f"{head} by the operator from {where}, not by you; do not rerun this {what} "
        "without asking the user"
    )


def typed_line(count: int, typed_by: str | None) -> str:
    """A person typed into the job's stdin from a console (a password prompt): the model
    learns how many bytes, never which."""
    where = _WHERE.get(typed_by or "", "a pct console")
    unit = "byte" if count == 1 else "bytes"
    return f"stdin: the operator typed {count} {unit} from {where}; they are not shown to you"
