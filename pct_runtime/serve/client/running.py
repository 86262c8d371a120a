"""The command-line side of live control: `pct reload` and `pct status --live`.

Control requests carry the token file's value (never `PCT_TOKEN`), so only the user who
owns the agent dir can drive a running runtime.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pct_runtime.jsontypes import JSONMapping
from pct_runtime.serve.live.control import RuntimeEntry, forget, list_runtimes, request
from pct_runtime.serve.token import load_or_create_token


def control_token(agent_dir: Path) -> str:
    """The control channel's token: the private token file, created on first use."""
    return load_or_create_token(agent_dir, env={})


async def _ask_all(agent_dir: Path, op: str) -> list[tuple[RuntimeEntry, JSONMapping | Exception]]:
    entries = list_runtimes(agent_dir, report=lambda text: print(f"pct: {text}", file=sys.stderr))
    if not entries:
        return []
    token = control_token(agent_dir)

    async def one(entry: RuntimeEntry) -> tuple[RuntimeEntry, JSONMapping | Exception]:
        try:
            return entry, await request(entry, token, op)
        except (OSError, TimeoutError, ValueError) as exc:
            return entry, exc

    replies = list(await asyncio.gather(*(one(e) for e in entries)))
    kept: list[tuple[RuntimeEntry, JSONMapping | Exception]] = []
    for entry, reply in replies:
        if isinstance(reply, ConnectionRefusedError):
            # A runtime listens before it registers and unregisters before it stops
            # listening: nothing listening means it died without cleanup (SIGKILL, crash).
            # Drop the stale entry silently instead of reporting it on every call.
            forget(entry)
            continue
        kept.append((entry, reply))
    return kept


def reload_running(agent_dir: Path) -> int | None:
    """Ask every running runtime to reload; print each one's message.

    Returns the exit status (0 all reloaded cleanly, 1 otherwise), or None when no runtime
    answered — then the caller validates the file itself.
    """
    replies = asyncio.run(_ask_all(agent_dir, "reload"))
    reached = [(e, r) for e, r in replies if not isinstance(r, BaseException)]
    for entry, reply in replies:
        if isinstance(reply, BaseException):
            print(
                f"pct: {entry.label} did not answer ({reply or type(reply).__name__})",
                file=sys.stderr,
            )
    if not reached:
        return None
    status = 0
    for entry, reply in reached:
        message = reply.get("message") or reply.get("error") or "no answer"
        ok = bool(reply.get("ok"))
        print(f"{entry.label}: {message}", file=sys.stdout if ok else sys.stderr)
        apply_error = reply.get("apply_error")
        if apply_error:
            print(f"{entry.label}: {apply_error}", file=sys.stderr)
        if not ok or apply_error:
            status = 1
    return status


def status_running(agent_dir: Path) -> int:
    """Print the live status of every running runtime; exit 1 when none answers."""
    replies = asyncio.run(_ask_all(agent_dir, "status"))
    shown = 0
    for entry, reply in replies:
        if isinstance(reply, BaseException) or not reply.get("ok"):
            detail = reply if isinstance(reply, BaseException) else reply.get("error")
            print(f"pct: {entry.label} did not answer ({detail})", file=sys.stderr)
            continue
        if shown:
            print()
        print(reply.get("text", ""))
        shown += 1
    if not shown:
        print(
            "pct: no running pct runtime answered; start one with `pct serve` (or the console).",
            file=sys.stderr,
        )
        return 1
    return 0
