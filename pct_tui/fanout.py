"""Save and Reload govern every runtime the console shows, as `pct reload` does.

The console's own runtime adopts a save at once; every other runtime of the agent dir (an
agent's stdio `pct serve`, another console) is asked over its control channel to re-read
the file, so turning Shell Sessions off in the console takes `exec_command` away from the
agent's session too. Each answer is shown: reloaded, a config error (the runtime keeps its
last known good settings or the all-off defaults, as its message says), an apply error,
or that it did not answer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pct_runtime.jsontypes import JSONMapping
    from pct_runtime.serve.live.control import RuntimeEntry
    from pct_tui.remote import LiveBackend

#: How long one runtime gets to answer: a reload resyncs its sessions.
ANSWER_SECONDS = 10.0


@dataclass(frozen=True)
class ReloadResult:
    """One other runtime's answer to a reload."""

    label: str
    #: `reloaded` | `config error` | `apply error` | `no answer`
    state: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "reloaded"

    @property
    def line(self) -> str:
        return f"{self.label}: {self.state}" + (f" — {self.detail}" if self.detail else "")


def judge(label: str, reply: JSONMapping) -> ReloadResult:
    """What a runtime's control reply to `reload` means for the operator."""
    message = str(reply.get("message") or reply.get("error") or "")
    if not reply.get("ok"):
        return ReloadResult(label, "config error", message or "no message")
    apply_error = reply.get("apply_error")
    if apply_error:
        return ReloadResult(label, "apply error", str(apply_error))
    return ReloadResult(label, "reloaded")


async def reload_others(
    backend: LiveBackend, entries: list[tuple[RuntimeEntry, str]]
) -> list[ReloadResult]:
    """Ask every listed runtime to reload, all at once; one result each, in order."""

    async def one(entry: RuntimeEntry, label: str) -> ReloadResult:
        try:
            reply = await asyncio.wait_for(backend.reload(entry), ANSWER_SECONDS)
        except (OSError, TimeoutError, ValueError) as exc:
            return ReloadResult(label, "no answer", str(exc) or type(exc).__name__)
        return judge(label, reply)

    return list(await asyncio.gather(*(one(e, label) for e, label in entries)))


def summary(results: list[ReloadResult]) -> str:
    """The lines a Save or Reload appends for the other runtimes ('' when there are none)."""
    if not results:
        return ""
    return "\n".join(["Other runtimes:", *(f"  {r.line}" for r in results)])
