"""Bounded argument summaries: what a person needs to recognise a call, nothing more.

A patch is its file list and size (never its content), a command its command line, a
cell its first lines, `write_stdin` only how much it wrote (typed input may be a
password). Everything is redacted afterwards by the writer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from pct_runtime.journal.redact import SCAN_LIMIT

SUMMARY_LIMIT = 600
RESULT_LIMIT = 4000
_PATCH_HEADER = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$", re.M)
_VERBS = {"Add File": "add", "Update File": "update", "Delete File": "delete", "Move to": "to"}
_CELL_LINES = 3


def _patch(patch: str) -> str:
    headers = _PATCH_HEADER.findall(patch[: SCAN_LIMIT * 4])
    parts: list[str] = []
    for kind, path in headers:
        if kind == "Move to" and parts:
            parts[-1] = f"move {parts[-1].split(' ', 1)[1]} -> {path.strip()}"
        else:
            parts.append(f"{_VERBS[kind]} {path.strip()}")
    size = len(patch.encode("utf-8", errors="replace"))
    return f"{', '.join(parts) or '(no file sections)'} ({size} bytes)"


def _command(args: Mapping[str, object]) -> str:
    cmd = args.get("cmd", args.get("command"))
    if isinstance(cmd, list):
        text = " ".join(str(part) for part in cmd)
    else:
        text = str(cmd) if cmd is not None else ""
    workdir = args.get("workdir", args.get("cwd"))
    return f"{text}  (in {workdir})" if isinstance(workdir, str) and workdir else text


def _cell(code: object) -> str:
    if not isinstance(code, str):
        return ""
    lines = [line for line in code[:SCAN_LIMIT].splitlines() if line.strip()]
    head = " ⏎ ".join(lines[:_CELL_LINES])
    return head + (f" … (+{len(lines) - _CELL_LINES} lines)" if len(lines) > _CELL_LINES else "")


def summarize(tool: str, args: Mapping[str, object] | None) -> str:
    """The summary of one call's arguments, before redaction (the writer redacts and cuts).

    Chosen by the arguments' shape, so every tool (and a foreign one) gets the right one:
    `patch` → files and size, `cmd` → the command line, `chars` → only a count, `code` →
    the cell's first lines, anything else its JSON.
    """
    args = args or {}
    patch = args.get("patch")
    if isinstance(patch, str):
        return _patch(patch)
    if "cmd" in args or "command" in args:
        return _command(args)
    if "chars" in args and "session_id" in args:
        chars = args.get("chars")
        wrote = f"{len(chars)} chars" if isinstance(chars, str) and chars else "poll"
        return f"session {args.get('session_id')}: {wrote}"
    if isinstance(args.get("code"), str):
        return _cell(args["code"])
    try:
        text = json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(dict(args))
    return text[:SCAN_LIMIT]


def recovery_paths(details: Mapping[str, object] | None) -> tuple[str, ...]:
    """Recovery files named in a shell job's or a cell's details (`recovery.<stream>.path`)."""
    if not details:
        return ()
    recovery = details.get("recovery")
    if not isinstance(recovery, Mapping):
        return ()
    paths = []
    for entry in recovery.values():
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            paths.append(str(entry["path"]))
    return tuple(paths)
