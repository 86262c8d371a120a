"""Unknown keys: kept (the spec preserves unknown fields) but worth a warning.

A typo in a key, at the top or inside a section (`enable` for `enabled`), is valid JSON
and a valid configuration: what it meant simply stays at its default. `pct reload`, `pct status` and
the console say so, naming the full dotted path and the nearest known key, without
rejecting the file. Every section is checked, the spec's and pct's own (`pct.sandbox`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pct_runtime.config.pct_section import PCT_SECTION, known_fields
from pct_runtime.config.schema import SECTION_KEYS, default_config, to_json_obj
from pct_runtime.config.sections import OPTIONAL_OBJECTS
from pct_runtime.config.store import decode_document, read_regular_file
from pct_runtime.jsontypes import JSONMapping

KNOWN_TOP_LEVEL_KEYS: tuple[str, ...] = (*SECTION_KEYS, "execution", "debug", PCT_SECTION)


#: A known object's fields: a field maps to its own fields, or to None for a value.
KnownTree = dict[str, "KnownTree | None"]


def _tree(value: object) -> KnownTree | None:
    if not isinstance(value, dict):
        return None
    return {key: _tree(inner) for key, inner in value.items()}


def known_keys() -> KnownTree:
    """Every key the configuration knows, nested: the spec's sections as a new file writes
    them, the optional objects a new file leaves out, and pct's own section."""
    tree = _tree(to_json_obj(default_config())) or {}
    for (section, key), fields in OPTIONAL_OBJECTS.items():
        known = tree.get(section)
        if known is not None:
            known[key] = {field: None for field in fields}
    tree["execution"] = {"version": None, "rules": None}
    tree[PCT_SECTION] = _tree(known_fields())
    return tree


def _nearest(key: str, known: KnownTree) -> str | None:
    import difflib  # deferred: only an unknown key is matched, and most files have none

    lowered = {name.lower(): name for name in known}
    return lowered.get(key.lower()) or next(
        iter(difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)), None
    )


def _nested(section: JSONMapping, known: KnownTree, path: str, out: list[str]) -> None:
    for key, value in section.items():
        where = f"{path}.{key}"
        if key not in known:
            near = _nearest(key, known)
            hint = f"; did you mean {path}.{near}?" if near else ""
            out.append(f'unknown key "{where}" is ignored{hint}')
            continue
        inner = known[key]
        if inner is not None and isinstance(value, dict):
            _nested(value, inner, where, out)


def unknown_key_warnings(document: JSONMapping) -> list[str]:
    """One warning per key the configuration does not know, at any depth, in file order.

    A section that is not an object is the read error's business, not a typo."""
    warnings: list[str] = []
    known = known_keys()
    for key, value in document.items():
        if key not in known:
            near = _nearest(key, known)
            hint = f"; did you mean {near}?" if near else ""
            warnings.append(f'unknown top-level key "{key}" is ignored{hint}')
            continue
        inner = known[key]
        if inner is not None and isinstance(value, dict):
            _nested(value, inner, key, warnings)
    return warnings


def file_warnings(path: str | os.PathLike[str]) -> list[str]:
    """Warnings for the file at `path` as it is now; none when it is missing or unreadable
    (the read error says that)."""
    try:  # never a blocking open: the path may be a FIFO (its read error says so)
        document = decode_document(read_regular_file(Path(path)))
    except (OSError, ValueError):
        return []
    return unknown_key_warnings(document) if isinstance(document, dict) else []
