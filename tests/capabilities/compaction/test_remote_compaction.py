"""Remote Compaction v2: create against a fake streamed Codex endpoint, then replay."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    Reply,
    codex_token,
    sse_reply,
)

from pct_runtime.capabilities.compaction import (
    FALLBACK_LIMIT,
    MARKER_PREFIX,
    CompactionPreparation,
    Compatibility,
    PriorCompaction,
    RemoteCompaction,
    RemoteCompactionError,
    build_summary,
    compatibility_for,
    create_checkpoint,
    parse_details,
    replay_checkpoint,
    select_retained_input,
)
from pct_runtime.capabilities.compaction.remote import OMITTED, bound_text
from pct_runtime.capabilities.openai.pipeline import transform_provider_request
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable
from pct_runtime.debug import DEBUG_CHANNEL, DebugSink
from pct_runtime.host.events import EventBus

PATH = "/backend-api/codex/responses"
SECRET_CHECKPOINT = "ENCRYPTED-CHECKPOINT-CANARY"
TOKEN = codex_token("acct-c")


def route(token: str = TOKEN, model: str = "gpt-5.4", **kw: Any) -> ResolvedRoute:
    fields: dict[str, Any] = {
        "provider": "openai-codex",
        "api": "openai-codex-responses",
        "model_id": model,
        "base_url": "https://chatgpt.com/backend-api",
        "credential_kind": "codex-oauth",
        "token": token,
        **kw,
    }
    return ResolvedRoute(**fields)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


CHECKPOINT = {"type": "compaction", "id": "cmp_1", "encrypted_content": SECRET_CHECKPOINT}


def stream(*items: dict[str, Any], completed: bool = True) -> Reply:
    events: list[Any] = [{"type": "response.created", "response": {"status": "in_progress"}}]
    for item in items:
        events.append({"type": "response.output_item.done", "item": item})
    if completed:
        events.append(
            {
                "type": "response.completed",
                "response": {"status": "completed", "usage": {"input_tokens": 9}},
            }
        )
    return sse_reply(*events, headers={"x-request-id": "req_c"})


def prep(**kw: Any) -> CompactionPreparation:
    fields: dict[str, Any] = {
        "input_items": [user("first question"), assistant("an answer"), user("second")],
        "transcript": "[User]: first question\n\n[Assistant]: an answer\n\n[User]: second",
        "first_kept_entry_id": "entry-9",
        "tokens_before": 12345,
        "system_prompt": "You are pi.",
        "tools": [{"type": "function", "name": "read"}],
        "files_read": ["b.py", "a.py", "a.py"],
        "files_modified": ["c.py"],
        **kw,
    }
    return CompactionPreparation(**fields)


async def test_create_request_headers_and_checkpoint(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(PATH, stream({"type": "reasoning"}, CHECKPOINT))
    result = await create_checkpoint(prep(), route(), transport=loopback)
    assert result is not None
    req = fake.requests[0]
    assert req.headers["host"] == "chatgpt.com"
    assert req.headers["authorization"] == f"Bearer {TOKEN}"
    assert req.headers["chatgpt-account-id"] == "acct-c"
    assert req.headers["originator"] == "pi"
    assert req.headers["openai-beta"] == "responses=experimental"
    assert req.headers["accept"] == "text/event-stream"
    assert req.headers["x-codex-beta-features"] == "remote_compaction_v2"
    assert req.json() == {
        "model": "gpt-5.4",
        "store": False,
        "stream": True,
        "instructions": "You are pi.",
        "input": [
            user("first question"),
            assistant("an answer"),
            user("second"),
            {"type": "compaction_trigger"},
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "tools": [{"type": "function", "name": "read"}],
    }
    details = result.details
    assert details["kind"] == "pi-codex-toolkit.remote-compaction-v2"
    assert details["version"] == 1
    assert details["checkpoint"] == CHECKPOINT
    assert details["retainedInput"] == [user("first question"), user("second")]
    compat = details["compatibility"]
    assert compat["provider"] == "openai-codex"
    assert compat["api"] == "openai-codex-responses"
    assert compat["model"] == "gpt-5.4"
    assert compat["endpoint"] == "https://chatgpt.com/backend-api/codex/responses"
    assert compat["authKind"] == "codex-oauth"
    assert compat["accountFingerprint"].startswith("sha256:")
    assert "acct-c" not in json.dumps(details)
    assert result.first_kept_entry_id == "entry-9"
    assert result.tokens_before == 12345
    marker = details["marker"]
    assert marker.startswith(MARKER_PREFIX)
    assert result.summary == (
        f"{marker}\n\nRemote Compaction checkpoint fallback (transcript excerpt; not a semantic"
        " summary):\n\n[User]: first question\n\n[Assistant]: an answer\n\n[User]: second"
        "\n\nFiles read:\n- a.py\n- b.py\n\nFiles modified:\n- c.py"
    )
    assert SECRET_CHECKPOINT not in result.summary


async def test_default_instructions_and_no_tools(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(PATH, stream(CHECKPOINT))
    await create_checkpoint(prep(system_prompt="", tools=[]), route(), transport=loopback)
    body = fake.requests[0].json()
    assert body["instructions"] == "You are a helpful assistant."
    assert "tools" not in body


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (stream(), "checkpoint-count"),
        (stream(CHECKPOINT, dict(CHECKPOINT, id="cmp_2")), "checkpoint-count"),
        (stream({**CHECKPOINT, "status": "in_progress"}), "checkpoint-count"),
        (stream(CHECKPOINT, completed=False), "incomplete-stream"),
        (sse_reply({"type": "response.failed", "response": {}}), "incomplete-response"),
        (sse_reply({"type": "error"}), "incomplete-response"),
        (sse_reply(b"data: {broken\n\n"), "invalid-sse"),
        (Reply(status=500), "http-error"),
        (Reply(status=301, headers={"location": "https://evil.example/"}), "http-error"),
    ],
)
async def test_create_failure_categories(
    fake: FakeServer, loopback: LoopbackTransport, reply: Reply, category: str
) -> None:
    fake.script(PATH, reply)
    with pytest.raises(RemoteCompactionError) as info:
        await create_checkpoint(prep(), route(), transport=loopback)
    assert info.value.category == category
    assert len(fake.requests) == 1


async def test_timeout(fake: FakeServer, loopback: LoopbackTransport) -> None:
    fake.script(PATH, Reply(headers={"content-type": "text/event-stream"}, hang=True))
    with pytest.raises(RemoteCompactionError) as info:
        await create_checkpoint(prep(), route(), transport=loopback, timeout_s=0.3)
    assert info.value.category == "timeout"


async def test_ineligible_routes_send_nothing(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    api_key = ResolvedRoute(
        "openai", "openai-responses", "gpt-5.4", "https://api.openai.com/v1", "api-key", "sk-x"
    )
    assert await create_checkpoint(prep(), api_key, transport=loopback) is None
    assert await create_checkpoint(prep(), route(codex_token(None)), transport=loopback) is None
    assert fake.requests == []


# --- summary bounds and retained window --------------------------------------------------


def test_fallback_summary_is_bounded_with_head_and_tail() -> None:
    transcript = "H" * 10_000 + "M" * 10_000 + "T" * 10_000
    marker = f"{MARKER_PREFIX}00000000-0000-0000-0000-000000000000]"
    summary = build_summary(marker, prep(transcript=transcript, files_read=[], files_modified=[]))
    assert len(summary) == FALLBACK_LIMIT
    assert summary.startswith(marker + "\n\n")
    assert OMITTED in summary
    body = summary.split("not a semantic summary):\n\n", 1)[1]
    head, tail = body.split(OMITTED)
    assert set(head) == {"H"}
    assert set(tail) == {"T"}
    assert len(head) - len(tail) in (0, 1)


def test_bound_text_keeps_short_text_and_previous_summary_loses_its_marker() -> None:
    assert bound_text("short", 100) == "short"
    marker = f"{MARKER_PREFIX}x]"
    prior = f"{MARKER_PREFIX}old]\n\nolder excerpt"
    summary = build_summary(marker, prep(previous_summary=prior, files_read=[], files_modified=[]))
    assert summary.count(MARKER_PREFIX) == 1
    assert "\n\nolder excerpt\n\n[User]: first question" in summary


def test_retained_window_keeps_newest_user_messages_within_64000_chars() -> None:
    big = [user("x" * 30_000) for _ in range(3)]
    items = [
        user("old"),
        *big,
        assistant("not user"),
        {"type": "function_call_output"},
        user("new"),
    ]
    retained = select_retained_input(items)
    assert retained == [big[1], big[2], user("new")]
    total = sum(len(json.dumps(i, separators=(",", ":"))) for i in retained)
    assert total <= 64_000


# --- second compaction and replay ---------------------------------------------------------


async def make_checkpoint(fake: FakeServer, loopback: LoopbackTransport) -> Any:
    fake.script(PATH, stream(CHECKPOINT))
    result = await create_checkpoint(prep(), route(), transport=loopback)
    assert result is not None
    return result


async def test_second_compaction_sends_retained_input_and_prior_checkpoint(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    first = await make_checkpoint(fake, loopback)
    fake.script(PATH, stream(dict(CHECKPOINT, id="cmp_2")))
    prior = PriorCompaction(summary=first.summary, details=first.details)
    second = await create_checkpoint(
        prep(input_items=[user("third")], previous_summary=first.summary, previous=prior),
        route(),
        transport=loopback,
    )
    assert second is not None
    assert fake.requests[1].json()["input"] == [
        user("first question"),
        user("second"),
        CHECKPOINT,
        user("third"),
        {"type": "compaction_trigger"},
    ]
    assert second.details["retainedInput"] == [
        user("first question"),
        user("second"),
        user("third"),
    ]


async def test_prior_checkpoint_of_another_account_or_model_falls_back(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    first = await make_checkpoint(fake, loopback)
    prior = PriorCompaction(summary=first.summary, details=first.details)
    p = prep(previous_summary=first.summary, previous=prior)
    assert await create_checkpoint(p, route(codex_token("acct-other")), transport=loopback) is None
    assert await create_checkpoint(p, route(model="gpt-5.2"), transport=loopback) is None
    damaged = PriorCompaction(summary=first.summary, details={**first.details, "version": 2})
    assert await create_checkpoint(prep(previous=damaged), route(), transport=loopback) is None
    assert len(fake.requests) == 1


async def test_previous_native_summary_is_sent_as_the_agents_summary_message(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(PATH, stream(CHECKPOINT))
    prior = PriorCompaction(summary="native summary text")
    await create_checkpoint(
        prep(previous_summary="native summary text", previous=prior), route(), transport=loopback
    )
    first_input = fake.requests[0].json()["input"][0]
    assert first_input["role"] == "user"
    assert "native summary text" in first_input["content"][0]["text"]


async def test_replay_only_when_everything_matches(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    first = await make_checkpoint(fake, loopback)
    marker = first.details["marker"]
    payload = {
        "model": "gpt-5.4",
        "input": [user(f"summary:\n{first.summary}"), user("next question")],
        "unknown": True,
    }
    compat = compatibility_for(route())
    assert compat is not None
    replayed = replay_checkpoint(payload, first.details, compat[0])
    assert replayed["input"] == [
        user("first question"),
        user("second"),
        CHECKPOINT,
        user("next question"),
    ]
    assert replayed["unknown"] is True
    assert payload["input"][0]["content"][0]["text"].startswith("summary:")  # not mutated

    base = compat[0]
    mismatches = [
        Compatibility(
            "openai", base.api, base.model, base.endpoint, base.auth_kind, base.account_fingerprint
        ),
        Compatibility(
            base.provider,
            "openai-responses",
            base.model,
            base.endpoint,
            base.auth_kind,
            base.account_fingerprint,
        ),
        Compatibility(
            base.provider,
            base.api,
            "gpt-5.2",
            base.endpoint,
            base.auth_kind,
            base.account_fingerprint,
        ),
        Compatibility(
            base.provider,
            base.api,
            base.model,
            "https://chatgpt.com/other",
            base.auth_kind,
            base.account_fingerprint,
        ),
        Compatibility(
            base.provider, base.api, base.model, base.endpoint, "api-key", base.account_fingerprint
        ),
        Compatibility(
            base.provider, base.api, base.model, base.endpoint, base.auth_kind, "sha256:" + "0" * 64
        ),
        None,
    ]
    for other in mismatches:
        assert replay_checkpoint(payload, first.details, other) is payload
    # two markers, no marker, or a non-list input: unchanged
    twice = {"input": [user(marker), user(marker)]}
    assert replay_checkpoint(twice, first.details, base) is twice
    none = {"input": [user("no marker")]}
    assert replay_checkpoint(none, first.details, base) is none
    assert replay_checkpoint({"input": "x"}, first.details, base) == {"input": "x"}
    assert replay_checkpoint(payload, {"kind": "other"}, base) is payload
    assert parse_details(first.details) is not None


async def test_hook_replays_through_the_request_pipeline_with_native_search(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    first = await make_checkpoint(fake, loopback)
    enabled = True

    async def resolve() -> ResolvedRoute:
        return route()

    hook = RemoteCompaction(enabled=lambda: enabled, resolve_route=resolve, transport=loopback)
    payload = {"input": [user(first.summary)], "tools": []}

    class Search:
        mode = "live"
        context_size = "low"

    out = transform_provider_request(
        payload,
        compaction=hook,
        newest_compaction_details=first.details,
        route=route(),
        native_search=Search(),
    )
    assert out["input"] == [user("first question"), user("second"), CHECKPOINT]
    assert out["tools"] == [
        {"type": "web_search", "search_context_size": "low", "external_web_access": True}
    ]
    enabled = False
    off = transform_provider_request(
        payload,
        compaction=hook,
        newest_compaction_details=first.details,
        route=route(),
        native_search=None,
    )
    assert off is payload, "disabled: the readable fallback is what the model sees"
    other_model = hook.before_provider_request(
        payload, newest_details=first.details, route=route(model="gpt-5.2")
    )
    assert other_model is payload


# --- the before_compact hook ---------------------------------------------------------------


def make_hook(
    route_or_reason: ResolvedRoute | str,
    loopback: LoopbackTransport,
    sink: DebugSink,
    on: bool = True,
) -> RemoteCompaction:
    async def resolve() -> ResolvedRoute:
        if isinstance(route_or_reason, str):
            raise RouteUnavailable(route_or_reason)
        return route_or_reason

    return RemoteCompaction(
        enabled=lambda: on, resolve_route=resolve, debug=sink, transport=loopback
    )


async def test_before_compact_success_and_native_fallbacks(
    fake: FakeServer, loopback: LoopbackTransport
) -> None:
    out = io.StringIO()
    bus = EventBus()
    seen: list[Any] = []
    bus.subscribe(DEBUG_CHANNEL, seen.append)
    sink = DebugSink(True, bus, out)
    fake.script(PATH, stream(CHECKPOINT), Reply(status=502))

    result = await make_hook(route(), loopback, sink).before_compact(prep())
    assert result is not None
    assert await make_hook(route(), loopback, sink).before_compact(prep()) is None  # 502
    assert await make_hook(route(), loopback, sink, on=False).before_compact(prep()) is None
    custom = prep(custom_instructions="focus on the API")
    assert await make_hook(route(), loopback, sink).before_compact(custom) is None
    assert await make_hook("unsupported-provider", loopback, sink).before_compact(prep()) is None
    no_claim = route(codex_token(None))
    assert await make_hook(no_claim, loopback, sink).before_compact(prep()) is None
    assert len(fake.requests) == 2, "custom instructions and fallbacks never reach the network"

    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records == seen
    assert [(r.get("outcome"), r.get("reason"), r.get("errorCategory")) for r in records] == [
        ("remote-success", None, None),
        ("remote-failure", None, "http-error"),
        ("native-fallback", "disabled", None),
        ("native-fallback", "custom-instructions", None),
        ("native-fallback", "unsupported-provider", None),
        ("native-fallback", "missing-account-claim", None),
    ]
    assert records[0]["compactionItems"] == 1
    assert records[0]["completedItems"] == 1
    assert records[0]["endpointHost"] == "chatgpt.com"
    blob = out.getvalue() + json.dumps(seen)
    for secret in (
        TOKEN,
        SECRET_CHECKPOINT,
        "first question",
        "You are pi.",
        "acct-c",
        "transcript excerpt",
    ):
        assert secret not in blob
