"""Remote Compaction v2: create an opaque Codex checkpoint and replay it only when identical.

A compaction entry keeps two representations. `summary` is a unique marker followed by a
bounded, readable transcript excerpt (what any model sees when the checkpoint cannot be
used). `details` holds the raw opaque `compaction` item, a bounded window of real user
input to replay before it, and the exact provider/API/model/endpoint/account
fingerprint/auth kind it was created with. Replay swaps the one user item carrying the
marker for `retainedInput + checkpoint`, and only when every compatibility field matches.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pct_runtime.capabilities.openai.http import open_client, request_id
from pct_runtime.capabilities.openai.routes import (
    RESPONSES_ENDPOINTS,
    ResolvedRoute,
    account_id_from_token,
    endpoint_host,
)
from pct_runtime.capabilities.openai.sse import SSEDecodeError, SSEDecoder
from pct_runtime.debug import DISABLED, DebugRecord, DebugSink
from pct_runtime.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:  # httpx (and the rich it loads) is imported where a request is made
    import httpx

KIND = "pi-codex-toolkit.remote-compaction-v2"
MARKER_PREFIX = f"[{KIND}:"
FALLBACK_LABEL = (
    "Remote Compaction checkpoint fallback (transcript excerpt; not a semantic summary):"
)
OMITTED = "\n\n[… transcript excerpt omitted …]\n\n"
FALLBACK_LIMIT = 12_000
RETAINED_LIMIT = 64_000
TIMEOUT_S = 180.0
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
FEATURE = "remote-compaction-v2"
PROVIDER = "openai-codex"
API = "openai-codex-responses"
#: Pi's framing of a compaction summary when it is sent back to a model as a user message.
SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
SUMMARY_SUFFIX = "\n</summary>"

_FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")


class RemoteCompactionError(Exception):
    """A failed remote request; the caller falls back to native compaction."""

    def __init__(self, category: str) -> None:
        super().__init__(f"Remote Compaction failed: {category}.")
        self.category = category


@dataclass(frozen=True)
class Compatibility:
    """Everything a checkpoint is bound to; replay requires all of it to be identical."""

    provider: str
    api: str
    model: str
    endpoint: str
    auth_kind: str
    account_fingerprint: str

    def to_json(self) -> dict[str, str]:
        return {
            "provider": self.provider,
            "api": self.api,
            "model": self.model,
            "endpoint": self.endpoint,
            "authKind": self.auth_kind,
            "accountFingerprint": self.account_fingerprint,
        }

    @classmethod
    def from_json(cls, value: object) -> Compatibility | None:
        if not isinstance(value, dict):
            return None
        fields = ("provider", "api", "model", "endpoint", "authKind", "accountFingerprint")
        if not all(isinstance(value.get(k), str) and value.get(k) for k in fields):
            return None
        compat = cls(
            value["provider"],
            value["api"],
            value["model"],
            value["endpoint"],
            value["authKind"],
            value["accountFingerprint"],
        )
        if (
            compat.provider != PROVIDER
            or compat.api != API
            or compat.auth_kind != "codex-oauth"
            or not _FINGERPRINT.match(compat.account_fingerprint)
        ):
            return None
        return compat


def account_fingerprint(account_id: str) -> str:
    return "sha256:" + hashlib.sha256(account_id.encode("utf-8")).hexdigest()


def compatibility_for(route: ResolvedRoute) -> tuple[Compatibility, str] | None:
    """(compatibility, account id) of a route that may create or replay checkpoints."""
    if route.credential_kind != "codex-oauth" or route.provider != PROVIDER or route.api != API:
        return None
    account = account_id_from_token(route.token)
    if account is None:
        return None
    compat = Compatibility(
        provider=PROVIDER,
        api=API,
        model=route.model_id,
        endpoint=RESPONSES_ENDPOINTS["codex-oauth"],
        auth_kind="codex-oauth",
        account_fingerprint=account_fingerprint(account),
    )
    return compat, account


@dataclass(frozen=True)
class RemoteDetails:
    marker: str
    retained_input: list[object]
    checkpoint: JSONObject
    compatibility: Compatibility

    def to_json(self) -> JSONObject:
        return {
            "kind": KIND,
            "version": 1,
            "marker": self.marker,
            "retainedInput": self.retained_input,
            "checkpoint": self.checkpoint,
            "compatibility": self.compatibility.to_json(),
        }


def parse_details(value: object) -> RemoteDetails | None:
    """A stored `details` object, validated; anything malformed is not a checkpoint."""
    if not isinstance(value, dict) or value.get("kind") != KIND or value.get("version") != 1:
        return None
    marker = value.get("marker")
    retained = value.get("retainedInput")
    checkpoint = value.get("checkpoint")
    compat = Compatibility.from_json(value.get("compatibility"))
    if (
        not isinstance(marker, str)
        or not marker.startswith(MARKER_PREFIX)
        or not marker.endswith("]")
        or not isinstance(retained, list)
        or not isinstance(checkpoint, dict)
        or checkpoint.get("type") != "compaction"
        or compat is None
    ):
        return None
    return RemoteDetails(marker, retained, checkpoint, compat)


@dataclass(frozen=True)
class PriorCompaction:
    """The newest compaction entry on the branch (remote or not).

    `input_items` is that summary as the agent's provider would send it (Responses input);
    when omitted, Pi's user-message framing of the summary text is used.
    """

    summary: str
    details: object = None
    input_items: Sequence[JSONMapping] | None = None

    def remote(self) -> RemoteDetails | None:
        details = parse_details(self.details)
        if details is None or not self.summary.startswith(details.marker):
            return None
        return details

    def looks_remote(self) -> bool:
        return self.summary.startswith(MARKER_PREFIX) or (
            isinstance(self.details, dict) and self.details.get("kind") == KIND
        )


@dataclass(frozen=True)
class CompactionPreparation:
    """What the embedding agent knows when it is about to compact.

    `input_items` are the messages being summarized (plus a split turn's prefix) in the
    Responses input format the agent's provider sends, without system messages;
    `transcript` is their readable serialization (the fallback's source).
    """

    input_items: Sequence[JSONMapping]
    transcript: str
    first_kept_entry_id: str
    tokens_before: int
    previous_summary: str | None = None
    previous: PriorCompaction | None = None
    files_read: Sequence[str] = ()
    files_modified: Sequence[str] = ()
    system_prompt: str = ""
    tools: Sequence[JSONMapping] = ()
    custom_instructions: str | None = None


@dataclass(frozen=True)
class CompactionResult:
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: JSONObject
    usage: dict[str, int] | None = None


def strip_marker(summary: str) -> str:
    if not summary.startswith(MARKER_PREFIX):
        return summary
    end = summary.find("]")
    return summary if end == -1 else summary[end + 1 :].lstrip()


def bound_text(value: str, limit: int) -> str:
    """Head and tail of `value` within `limit` characters, with the omission line between."""
    if len(value) <= limit:
        return value
    available = max(0, limit - len(OMITTED))
    head = (available + 1) // 2
    tail = available // 2
    return value[:head] + OMITTED + (value[len(value) - tail :] if tail else "")


def build_summary(marker: str, prep: CompactionPreparation) -> str:
    """Marker + label + bounded excerpt (previous summary, transcript, file lists)."""
    sections: list[str] = []
    if prep.previous_summary:
        sections.append(strip_marker(prep.previous_summary))
    transcript = prep.transcript.strip()
    if transcript:
        sections.append(transcript)
    read = sorted(set(prep.files_read))
    modified = sorted(set(prep.files_modified))
    files: list[str] = []
    if read:
        files.append("Files read:\n" + "\n".join(f"- {f}" for f in read))
    if modified:
        files.append("Files modified:\n" + "\n".join(f"- {f}" for f in modified))
    if files:
        sections.append("\n\n".join(files))
    prefix = f"{marker}\n\n{FALLBACK_LABEL}\n\n"
    return prefix + bound_text("\n\n".join(sections), FALLBACK_LIMIT - len(prefix))


def _is_user_input(item: object) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") == "user"
        and item.get("type", "message") == "message"
    )


def _json_len(item: object) -> int:
    return len(json.dumps(item, separators=(",", ":"), ensure_ascii=False))


def select_retained_input(items: Sequence[object]) -> list[object]:
    """The newest real user messages that fit in 64,000 JSON characters, in order."""
    retained: list[object] = []
    used = 0
    for item in reversed(items):
        if not _is_user_input(item):
            continue
        size = _json_len(item)
        if used + size > RETAINED_LIMIT:
            break
        used += size
        retained.append(item)
    retained.reverse()
    return retained


def _summary_input(prior: PriorCompaction) -> list[object]:
    if prior.input_items is not None:
        return [dict(item) for item in prior.input_items]
    text = SUMMARY_PREFIX + prior.summary + SUMMARY_SUFFIX
    return [{"role": "user", "content": [{"type": "input_text", "text": text}]}]


@dataclass(frozen=True)
class PreparedInput:
    request_input: list[object]
    retained_input: list[object]


def prepare_input(prep: CompactionPreparation, compat: Compatibility) -> PreparedInput | None:
    """The request input, or None when this history cannot be compacted remotely."""
    prior = prep.previous
    prior_remote = prior.remote() if prior is not None else None
    if prior is not None and prior.looks_remote() and prior_remote is None:
        return None  # a damaged checkpoint: never guess
    if prior_remote is not None and prior_remote.compatibility != compat:
        return None
    request_input: list[object] = []
    candidates: list[object] = []
    if prior_remote is not None:
        request_input.extend(prior_remote.retained_input)
        request_input.append(prior_remote.checkpoint)
        candidates.extend(prior_remote.retained_input)
    elif prep.previous_summary and prior is not None:
        request_input.extend(_summary_input(prior))
    current = [dict(item) for item in prep.input_items]
    request_input.extend(current)
    candidates.extend(current)
    return PreparedInput(request_input, select_retained_input(candidates))


def build_request(
    model_id: str,
    system_prompt: str,
    request_input: Sequence[object],
    tools: Sequence[JSONMapping],
) -> JSONObject:
    body: JSONObject = {
        "model": model_id,
        "store": False,
        "stream": True,
        "instructions": system_prompt or DEFAULT_INSTRUCTIONS,
        "input": [*request_input, {"type": "compaction_trigger"}],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
    }
    if tools:
        body["tools"] = [dict(tool) for tool in tools]
    return body


def build_headers(token: str, account_id: str) -> dict[str, str]:
    return {
        "authorization": f"Bearer {token}",
        "chatgpt-account-id": account_id,
        "originator": "pi",
        "openai-beta": "responses=experimental",
        "accept": "text/event-stream",
        "content-type": "application/json",
        "x-codex-beta-features": "remote_compaction_v2",
    }


@dataclass
class _StreamResult:
    checkpoint: JSONObject | None = None
    checkpoints: int = 0
    completed_items: int = 0
    completed: bool = False
    usage: dict[str, int] | None = None


def _consume(event: JSONMapping, state: _StreamResult) -> None:
    kind = event.get("type")
    if kind in ("error", "response.failed", "response.incomplete"):
        raise RemoteCompactionError("incomplete-response")
    if kind == "response.output_item.done":
        state.completed_items += 1
        item = event.get("item")
        if (
            isinstance(item, dict)
            and item.get("type") == "compaction"
            and item.get("status", "completed") == "completed"
        ):
            state.checkpoints += 1
            state.checkpoint = item
    elif kind == "response.completed":
        state.completed = True
        response = event.get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            ints = {k: v for k, v in usage.items() if isinstance(v, int)}
            if ints:
                state.usage = ints


async def _read_checkpoint(response: httpx.Response) -> _StreamResult:
    import httpx

    state = _StreamResult()
    decoder = SSEDecoder()
    try:
        async for chunk in response.aiter_text():
            for event in decoder.feed(chunk):
                _consume(event, state)
        for event in decoder.flush():
            _consume(event, state)
    except SSEDecodeError:
        raise RemoteCompactionError("invalid-sse") from None
    except httpx.TransportError:
        raise RemoteCompactionError("network-error") from None
    if not state.completed:
        raise RemoteCompactionError("incomplete-stream")
    if state.checkpoints != 1 or state.checkpoint is None:
        raise RemoteCompactionError("checkpoint-count")
    return state


async def create_checkpoint(
    prep: CompactionPreparation,
    route: ResolvedRoute,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    debug: DebugSink = DISABLED,
    timeout_s: float = TIMEOUT_S,
) -> CompactionResult | None:
    """Create a checkpoint. None = this history is not eligible (use native compaction);
    raises `RemoteCompactionError` when the remote request fails."""
    import httpx

    identity = compatibility_for(route)
    if identity is None:
        return None
    compat, account = identity
    prepared = prepare_input(prep, compat)
    if prepared is None:
        return None
    body = build_request(route.model_id, prep.system_prompt, prepared.request_input, prep.tools)
    endpoint = RESPONSES_ENDPOINTS["codex-oauth"]
    started = time.monotonic()
    status: int | None = None
    req_id: str | None = None

    def emit(outcome: str, category: str | None = None, state: _StreamResult | None = None) -> None:
        counts = (
            {"completedItems": state.completed_items, "compactionItems": state.checkpoints}
            if state is not None
            else {}
        )
        debug.emit(
            DebugRecord(
                feature=FEATURE,
                outcome=outcome,
                provider=route.provider,
                api=route.api,
                model=route.model_id,
                endpoint_host=endpoint_host(endpoint),
                duration_ms=round((time.monotonic() - started) * 1000),
                status=status,
                request_id=req_id,
                error_category=category,
                extra_counts=counts,
            )
        )

    try:
        async with open_client(transport) as client, asyncio.timeout(timeout_s):
            request = client.build_request(
                "POST", endpoint, json=body, headers=build_headers(route.token, account)
            )
            response = await client.send(request, stream=True)
            try:
                status = response.status_code
                req_id = request_id(response)
                if not response.is_success:
                    raise RemoteCompactionError("http-error")
                state = await _read_checkpoint(response)
            finally:
                await response.aclose()
    except TimeoutError:
        emit("remote-failure", "timeout")
        raise RemoteCompactionError("timeout") from None
    except asyncio.CancelledError:
        emit("remote-failure", "aborted")
        raise
    except RemoteCompactionError as error:
        emit("remote-failure", error.category)
        raise
    except (httpx.HTTPError, OSError):
        emit("remote-failure", "network-error")
        raise RemoteCompactionError("network-error") from None
    emit("remote-success", state=state)
    if state.checkpoint is None:  # _read_checkpoint guarantees exactly one
        raise RemoteCompactionError("checkpoint-count")
    marker = f"{MARKER_PREFIX}{uuid.uuid4()}]"
    details = RemoteDetails(marker, prepared.retained_input, state.checkpoint, compat)
    return CompactionResult(
        summary=build_summary(marker, prep),
        first_kept_entry_id=prep.first_kept_entry_id,
        tokens_before=prep.tokens_before,
        details=details.to_json(),
        usage=state.usage,
    )


def _contains_marker(item: object, marker: str) -> bool:
    if not isinstance(item, dict) or item.get("role") != "user":
        return False
    content = item.get("content")
    if isinstance(content, str):
        return marker in content
    if isinstance(content, list):
        return any(
            isinstance(part, dict) and isinstance(part.get("text"), str) and marker in part["text"]
            for part in content
        )
    return False


def replay_checkpoint(
    payload: object, details: object, compatibility: Compatibility | None
) -> object:
    """Swap the single marker-carrying user item for `retainedInput + checkpoint`.

    Returns `payload` itself unless the stored details are valid, `compatibility` (the
    current request's route; None when disabled or ineligible) is identical to the
    checkpoint's, the payload has an `input` list, and exactly one item carries the marker.
    """
    parsed = parse_details(details)
    if (
        parsed is None
        or compatibility is None
        or parsed.compatibility != compatibility
        or not isinstance(payload, dict)
        or not isinstance(payload.get("input"), list)
    ):
        return payload
    items = payload["input"]
    hits = [i for i, item in enumerate(items) if _contains_marker(item, parsed.marker)]
    if len(hits) != 1:
        return payload
    index = hits[0]
    return {
        **payload,
        "input": [
            *items[:index],
            *parsed.retained_input,
            parsed.checkpoint,
            *items[index + 1 :],
        ],
    }
