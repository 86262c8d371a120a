"""The live-control client API as pinned for the console (the live room implements it).

TRANSIENT in room/consoles: the pinned names only, so the console can be built and tested
with a double before `room/live` is merged; the merge takes the live room's module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pct_runtime.serve.control import RuntimeEntry


@dataclass(frozen=True)
class RuntimeInfo:
    pid: int
    kind: str
    transport: str
    mcp: str
    control: str
    started: float


@dataclass(frozen=True)
class SessionInfo:
    id: str
    kind: str
    client_name: str | None
    client_version: str | None
    model: str | None


@dataclass(frozen=True)
class WorkInfo:
    id: str
    kind: Literal["shell", "cell"]
    session_id: str
    state: str
    exit_code: int | None
    title: str
    recovery_paths: tuple[str, ...]


@dataclass(frozen=True)
class Snapshot:
    runtime: RuntimeInfo
    sessions: tuple[SessionInfo, ...]
    work: tuple[WorkInfo, ...]
    status_text: str


@dataclass(frozen=True)
class EventInfo:
    time: float
    kind: str
    text: str


@dataclass(frozen=True)
class DiffInfo:
    path: str
    diff: str


@dataclass(frozen=True)
class ApprovalInfo:
    request_id: str
    kind: Literal["confirm", "select"]
    title: str
    message: str
    options: tuple[str, ...]
    session_id: str | None
    client: str | None
    diffs: tuple[DiffInfo, ...]


@dataclass(frozen=True)
class ApprovalClosed:
    request_id: str
    reason: Literal["answered", "withdrawn", "timeout"]


Update = Snapshot | EventInfo | ApprovalInfo | ApprovalClosed


@dataclass(frozen=True)
class OutputChunk:
    work_id: str
    offset: int
    data: str
    ended: bool


@dataclass(frozen=True)
class ActionResult:
    ok: bool
    message: str


class LiveError(Exception):
    """Cannot connect, token refused, unsupported version, connection lost."""


class LiveClient:
    runtime: RuntimeInfo

    @classmethod
    async def connect(
        cls, entry: RuntimeEntry, token: str, *, role: Literal["console", "monitor"]
    ) -> LiveClient:
        raise LiveError("the live-control client is not merged into this branch yet")

    def updates(self) -> AsyncIterator[Update]:
        raise LiveError("not merged yet")

    def follow(self, work_id: str, offset: int = 0) -> AsyncIterator[OutputChunk]:
        raise LiveError("not merged yet")

    async def stop(self, work_id: str) -> ActionResult:
        raise LiveError("not merged yet")

    async def end_session(self, session_id: str) -> ActionResult:
        raise LiveError("not merged yet")

    async def answer(self, request_id: str, value: bool | str | None) -> ActionResult:
        raise LiveError("not merged yet")

    async def aclose(self) -> None:
        return None


async def watch_runtimes(
    agent_dir: Path, *, exclude_pid: int | None = None, interval: float = 0.5
) -> AsyncIterator[tuple[Literal["added", "removed"], RuntimeEntry]]:
    raise LiveError("not merged yet")
    yield  # pragma: no cover
