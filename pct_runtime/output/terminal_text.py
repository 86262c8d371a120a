"""Text from the journal made safe to print on a terminal.

Summaries, client names and paths are what the model or an MCP client wrote. Printed raw,
an escape sequence among them reaches the reader's terminal: it can clear the screen, set
the title, write the clipboard (OSC 52) or move the cursor back to hide part of a line; a
bidirectional override makes a command read differently from what ran. Each such
character is shown as a Python-style escape instead. The console uses it too: Textual
writes a widget's text to the terminal as it is.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_UNSAFE_IN_LINES = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}]")


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control, line-separator and bidi-override character escaped;
    with `lines`, newline and tab are kept (the console lays out multi-line text)."""
    return (_UNSAFE_IN_LINES if lines else _UNSAFE).sub(_escape, text)
