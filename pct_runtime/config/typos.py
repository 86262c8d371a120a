"""Unknown top-level keys: kept (the spec preserves unknown fields) but worth a warning.

A typo such as `applyPach` is valid JSON and a valid configuration — the section it meant
simply stays at its all-off default. `pct reload`, `pct status` and the console say so,
naming the nearest known key, without rejecting the file.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from pct_runtime.config.pct_section import PCT_SECTION
from pct_runtime.config.schema import SECTION_KEYS
from pct_runtime.config.store import decode_document, read_regular_file
from pct_runtime.jsontypes import JSONMapping

KNOWN_TOP_LEVEL_KEYS: tuple[str, ...] = (*SECTION_KEYS, "execution", "debug", PCT_SECTION)


def unknown_key_warnings(document: JSONMapping) -> list[str]:
    """One warning per top-level key the schema does not know, in file order."""
    warnings: list[str] = []
    lowered = {key.lower(): key for key in KNOWN_TOP_LEVEL_KEYS}
    for key in document:
        if key in KNOWN_TOP_LEVEL_KEYS:
            continue
        near = lowered.get(key.lower()) or next(
            iter(difflib.get_close_matches(key, KNOWN_TOP_LEVEL_KEYS, n=1, cutoff=0.6)), None
        )
        hint = f"; did you mean {near}?" if near else ""
        warnings.append(f'unknown top-level key "{key}" is ignored{hint}')
    return warnings


def file_warnings(path: str | os.PathLike[str]) -> list[str]:
    """Warnings for the file at `path` as it is now; none when it is missing or unreadable
    (the read error says that)."""
    try:  # never a blocking open: the path may be a FIFO (its read error says so)
        document = decode_document(read_regular_file(Path(path)))
    except (OSError, ValueError):
        return []
    return unknown_key_warnings(document) if isinstance(document, dict) else []
