"""The live-control protocol's messages: one JSON object per line, each way.

A console opens the runtime's control socket and sends `subscribe`; from then on the
connection is a duplex stream (docs/LIVE_PROTOCOL.md). This module is the one place that
knows the wire shape: the dataclasses both sides use, and their encoding. Decoding ignores
unknown fields, so a newer peer can add some without breaking an older one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pct_runtime.jsontypes import JSONObject

PROTOCOL_VERSION = 1

ROLES = ("console", "monitor")
Role = Literal["console", "monitor"]

#: Runtime → client message types.
SNAPSHOT = "snapshot"
EVENT = "event"
APPROVAL = "approval"
APPROVAL_CLOSED = "approval_closed"
OUTPUT = "output"
REPLY = "reply"

#: Client → runtime message types (every one carries an `id` its `reply` echoes).
FOLLOW = "follow"
UNFOLLOW = "unfollow"
STOP = "stop"
END_SESSION = "end_session"
ANSWER = "answer"
TYPE_INPUT = "type_input"
CLIENT_TYPES = (FOLLOW, UNFOLLOW, STOP, END_SESSION, ANSWER, TYPE_INPUT)
#: Longest `data` of one `type_input`, in UTF-8 bytes (a password or a short answer).
MAX_TYPED_BYTES = 4096

#: What a monitor connection's acts are refused with.
READ_ONLY_MESSAGE = "this console is read-only (--monitor)"

#: Longest `data` of one output message, in characters.
MAX_OUTPUT_CHUNK = 32 * 1024
#: Longest title of a work row, in characters.
MAX_TITLE = 200


def speaks(version: object) -> bool:
    """Only the integer itself: JSON `true` and `1.0` equal 1 in Python but are not it."""
    return type(version) is int and version == PROTOCOL_VERSION


def version_refusal(version: object) -> str:
    # As JSON, so a string "1" does not read as the 1 this runtime speaks.
    shown = json.dumps(version)
    return f"unsupported protocol version {shown}; this runtime speaks {PROTOCOL_VERSION}"


@dataclass(frozen=True)
class RuntimeInfo:
    pid: int
    kind: str  # "serve" | "console"
    transport: str  # "stdio" | "http"
    mcp: str  # MCP endpoint ("stdio" or the URL)
    control: str  # control endpoint host:port
    started: float


@dataclass(frozen=True)
class SessionInfo:
    id: str
    kind: str
    client_name: str | None
    client_version: str | None
    model: str | None  # "provider/model"


WorkKind = Literal["shell", "cell"]


@dataclass(frozen=True)
class WorkInfo:
    id: str
    kind: WorkKind
    session_id: str
    state: str  # running | stopping | completed | terminated | failed
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


DiffOperation = Literal["add", "update", "delete", "move"]
DIFF_OPERATIONS: tuple[DiffOperation, ...] = ("add", "update", "delete", "move")


@dataclass(frozen=True)
class DiffInfo:
    path: str  # the destination of a move
    diff: str
    #: Added in version 1 (additive): a peer that does not send it means `update`.
    operation: DiffOperation = "update"
    source: str | None = None  # a move's origin


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
    #: The asking runtime's pid (0 when a peer did not say).
    runtime_pid: int = 0


ClosedReason = Literal["answered", "withdrawn", "timeout"]


@dataclass(frozen=True)
class ApprovalClosed:
    request_id: str
    reason: ClosedReason


Update = Snapshot | EventInfo | ApprovalInfo | ApprovalClosed


@dataclass(frozen=True)
class OutputChunk:
    work_id: str
    offset: int  # character offset of `data` in the work's whole output
    data: str
    ended: bool  # True on the last chunk (the work finished)


@dataclass(frozen=True)
class ActionResult:
    ok: bool
    message: str


# -- encoding ---------------------------------------------------------------------------------
def encode_line(message: JSONObject) -> bytes:
    """One wire line. The hub encodes a broadcast once and every connection shares the bytes."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


def runtime_to_json(info: RuntimeInfo) -> JSONObject:
    return {
        "pid": info.pid,
        "kind": info.kind,
        "transport": info.transport,
        "mcp": info.mcp,
        "control": info.control,
        "started": info.started,
    }


def snapshot_message(snapshot: Snapshot) -> JSONObject:
    return {
        "type": SNAPSHOT,
        "runtime": runtime_to_json(snapshot.runtime),
        "sessions": [
            {
                "id": s.id,
                "kind": s.kind,
                "client_name": s.client_name,
                "client_version": s.client_version,
                "model": s.model,
            }
            for s in snapshot.sessions
        ],
        "work": [
            {
                "id": w.id,
                "kind": w.kind,
                "session_id": w.session_id,
                "state": w.state,
                "exit_code": w.exit_code,
                "title": w.title,
                "recovery_paths": list(w.recovery_paths),
            }
            for w in snapshot.work
        ],
        "status_text": snapshot.status_text,
    }


def event_message(event: EventInfo) -> JSONObject:
    return {"type": EVENT, "time": event.time, "kind": event.kind, "text": event.text}


def approval_message(approval: ApprovalInfo) -> JSONObject:
    return {
        "type": APPROVAL,
        "request_id": approval.request_id,
        "kind": approval.kind,
        "title": approval.title,
        "message": approval.message,
        "options": list(approval.options),
        "session_id": approval.session_id,
        "client": approval.client,
        "diffs": [_diff_to_json(d) for d in approval.diffs],
        "runtime_pid": approval.runtime_pid,
    }


def _diff_to_json(diff: DiffInfo) -> JSONObject:
    out: JSONObject = {"path": diff.path, "diff": diff.diff, "operation": diff.operation}
    if diff.source is not None:
        out["source"] = diff.source
    return out


def closed_message(closed: ApprovalClosed) -> JSONObject:
    return {"type": APPROVAL_CLOSED, "request_id": closed.request_id, "reason": closed.reason}


def output_message(chunk: OutputChunk) -> JSONObject:
    return {
        "type": OUTPUT,
        "work_id": chunk.work_id,
        "offset": chunk.offset,
        "data": chunk.data,
        "ended": chunk.ended,
    }


def reply_message(request_id: object, result: ActionResult) -> JSONObject:
    return {"type": REPLY, "id": request_id, "ok": result.ok, "message": result.message}


# -- decoding (unknown fields ignored; a missing or mistyped field raises ValueError) -------
def _str(raw: Mapping[str, object], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _opt_str(raw: Mapping[str, object], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def _int(raw: Mapping[str, object], key: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer")
    return value


def _float(raw: Mapping[str, object], key: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")
    return float(value)


def _list(raw: Mapping[str, object], key: str) -> list[object]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list")
    return value


def _objects(raw: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    return [item for item in _list(raw, key) if isinstance(item, dict)]


def runtime_from_json(raw: Mapping[str, object]) -> RuntimeInfo:
    return RuntimeInfo(
        pid=_int(raw, "pid"),
        kind=_str(raw, "kind"),
        transport=_str(raw, "transport"),
        mcp=_str(raw, "mcp"),
        control=_str(raw, "control"),
        started=_float(raw, "started"),
    )


def snapshot_from_json(raw: Mapping[str, object]) -> Snapshot:
    runtime = raw.get("runtime")
    if not isinstance(runtime, dict):
        raise ValueError("runtime must be an object")
    sessions = tuple(
        SessionInfo(
            id=_str(s, "id"),
            kind=_str(s, "kind"),
            client_name=_opt_str(s, "client_name"),
            client_version=_opt_str(s, "client_version"),
            model=_opt_str(s, "model"),
        )
        for s in _objects(raw, "sessions")
    )
    work: list[WorkInfo] = []
    for w in _objects(raw, "work"):
        kind = _str(w, "kind")
        exit_code = w.get("exit_code")
        work.append(
            WorkInfo(
                id=_str(w, "id"),
                kind="cell" if kind == "cell" else "shell",
                session_id=_str(w, "session_id"),
                state=_str(w, "state"),
                exit_code=exit_code if isinstance(exit_code, int) else None,
                title=_opt_str(w, "title") or "",
                recovery_paths=tuple(p for p in _list(w, "recovery_paths") if isinstance(p, str)),
            )
        )
    return Snapshot(
        runtime=runtime_from_json(runtime),
        sessions=sessions,
        work=tuple(work),
        status_text=_opt_str(raw, "status_text") or "",
    )


def event_from_json(raw: Mapping[str, object]) -> EventInfo:
    return EventInfo(time=_float(raw, "time"), kind=_str(raw, "kind"), text=_str(raw, "text"))


def approval_from_json(raw: Mapping[str, object]) -> ApprovalInfo:
    kind = _str(raw, "kind")
    return ApprovalInfo(
        request_id=_str(raw, "request_id"),
        kind="select" if kind == "select" else "confirm",
        title=_str(raw, "title"),
        message=_opt_str(raw, "message") or "",
        options=tuple(o for o in _list(raw, "options") if isinstance(o, str)),
        session_id=_opt_str(raw, "session_id"),
        client=_opt_str(raw, "client"),
        diffs=tuple(_diff_from_json(d) for d in _objects(raw, "diffs")),
        runtime_pid=pid if isinstance(pid := raw.get("runtime_pid"), int) else 0,
    )


def _diff_from_json(raw: Mapping[str, object]) -> DiffInfo:
    """An unknown or missing `operation` reads as `update` (an older or newer peer)."""
    operation = raw.get("operation")
    return DiffInfo(
        path=_str(raw, "path"),
        diff=_str(raw, "diff"),
        operation=next((o for o in DIFF_OPERATIONS if o == operation), "update"),
        source=_opt_str(raw, "source"),
    )


def closed_from_json(raw: Mapping[str, object]) -> ApprovalClosed:
    reason = _str(raw, "reason")
    closed: ClosedReason = (
        "answered" if reason == "answered" else "timeout" if reason == "timeout" else "withdrawn"
    )
    return ApprovalClosed(request_id=_str(raw, "request_id"), reason=closed)


def output_from_json(raw: Mapping[str, object]) -> OutputChunk:
    return OutputChunk(
        work_id=_str(raw, "work_id"),
        offset=_int(raw, "offset"),
        data=_str(raw, "data"),
        ended=raw.get("ended") is True,
    )


def update_from_json(raw: Mapping[str, object]) -> Update | None:
    """The update a runtime message carries; None for a type this version does not know."""
    kind = raw.get("type")
    if kind == SNAPSHOT:
        return snapshot_from_json(raw)
    if kind == EVENT:
        return event_from_json(raw)
    if kind == APPROVAL:
        return approval_from_json(raw)
    if kind == APPROVAL_CLOSED:
        return closed_from_json(raw)
    return None
