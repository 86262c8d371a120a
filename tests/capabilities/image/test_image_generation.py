"""Image Generation against a local fake Images endpoint (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    Reply,
    codex_token,
    json_reply,
)

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.image import (
    ImageGenerationError,
    OpenAIImageTool,
    artifacts_dir,
    generate_image,
)
from pct_runtime.capabilities.image import generate as generate_module
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable
from pct_runtime.debug import DEBUG_CHANNEL, DebugSink
from pct_runtime.host.events import EventBus

CANARY = "sk-IMAGE-CANARY-77aa"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + os.urandom(64)
B64 = base64.b64encode(PNG).decode()
API_PATH = "/v1/images/generations"
CODEX_PATH = "/backend-api/codex/images/generations"

API_ROUTE = ResolvedRoute(
    "openai", "openai-responses", "gpt-5.4", "https://api.openai.com/v1", "api-key", CANARY
)


def codex_route(token: str | None = None) -> ResolvedRoute:
    return ResolvedRoute(
        "openai-codex",
        "openai-codex-responses",
        "gpt-5.4",
        "https://chatgpt.com/backend-api/codex",
        "codex-oauth",
        token if token is not None else codex_token("acct-img"),
    )


def image_reply(b64: Any = B64) -> Reply:
    return json_reply(
        {"created": 1, "data": [{"b64_json": b64}]}, headers={"x-request-id": "req_i"}
    )


async def run(route: ResolvedRoute, agent: Path, transport: Any, **kw: Any) -> Any:
    return await generate_image(
        prompt=kw.pop("prompt", "a red fox"),
        size=kw.pop("size", None),
        quality=kw.pop("quality", None),
        tool_call_id=kw.pop("tool_call_id", "call_1"),
        route=route,
        agent_dir=agent,
        transport=transport,
        **kw,
    )


async def test_api_key_request_headers_and_exclusive_artifact(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(API_PATH, image_reply())
    image = await run(API_ROUTE, tmp_path, loopback, size="1024x1024", quality="high")
    assert loopback.urls == ["https://api.openai.com/v1/images/generations"]
    req = fake.requests[0]
    assert req.headers["host"] == "api.openai.com"
    assert req.json() == {
        "prompt": "a red fox",
        "model": "gpt-image-2",
        "background": "auto",
        "quality": "high",
        "size": "1024x1024",
    }
    assert req.headers["authorization"] == f"Bearer {CANARY}"
    assert req.headers["accept"] == "application/json"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["originator"] == "pi"
    assert req.headers["x-codex-image-turn-id"] == "call_1"
    for absent in ("chatgpt-account-id", "openai-beta", "x-openai-beta", "x-codex-beta-features"):
        assert absent not in req.headers
    directory = artifacts_dir(tmp_path).resolve()
    assert image.path.parent == directory
    assert image.path.is_absolute()
    uuid.UUID(image.path.stem)
    assert image.path.suffix == ".png"
    assert image.path.read_bytes() == PNG
    assert image.data == PNG


async def test_codex_oauth_route_defaults_and_account_header(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(CODEX_PATH, image_reply())
    await run(codex_route(), tmp_path, loopback)
    req = fake.requests[0]
    assert req.headers["host"] == "chatgpt.com"
    assert req.path == CODEX_PATH
    assert req.headers["chatgpt-account-id"] == "acct-img"
    assert req.json()["quality"] == "auto"
    assert req.json()["size"] == "auto"


async def test_missing_account_claim_sends_nothing(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    with pytest.raises(ImageGenerationError) as info:
        await run(codex_route(codex_token(None)), tmp_path, loopback)
    assert str(info.value) == "Image Generation failed: missing-account-claim."
    assert fake.requests == []


async def test_two_images_never_overwrite_each_other(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(API_PATH, image_reply(), image_reply())
    first = await run(API_ROUTE, tmp_path, loopback)
    second = await run(API_ROUTE, tmp_path, loopback)
    assert first.path != second.path
    assert len(os.listdir(artifacts_dir(tmp_path))) == 2


async def test_exclusive_create_refuses_an_existing_name(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed = uuid.UUID("12345678-1234-5678-1234-567812345678")
    directory = artifacts_dir(tmp_path)
    directory.mkdir(parents=True)
    (directory / f"{fixed}.png").write_bytes(b"user file")
    monkeypatch.setattr(generate_module.uuid, "uuid4", lambda: fixed)
    fake.script(API_PATH, image_reply())
    with pytest.raises(ImageGenerationError) as info:
        await run(API_ROUTE, tmp_path, loopback)
    assert str(info.value) == (
        "Image Generation failed: artifact-write-error."
        " The hosted generation result may be unknown."
    )
    assert (directory / f"{fixed}.png").read_bytes() == b"user file"


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (Reply(status=500, chunks=[b"{}"]), "http-error"),
        (Reply(status=307, headers={"location": "https://evil.example/x"}), "http-error"),
        (Reply(status=200, chunks=[b"not json"]), "invalid-json"),
        (json_reply({"data": []}), "missing-image"),
        (json_reply({"nodata": 1}), "missing-image"),
        (image_reply(""), "missing-image"),
        (image_reply(123), "missing-image"),
        (image_reply(base64.b64encode(b"GIF89a....").decode()), "invalid-image"),
        (image_reply("!!!notbase64!!!"), "invalid-image"),
    ],
)
async def test_failure_categories_carry_the_unknown_result_note(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport, reply: Reply, category: str
) -> None:
    fake.script(API_PATH, reply)
    with pytest.raises(ImageGenerationError) as info:
        await run(API_ROUTE, tmp_path, loopback)
    assert info.value.category == category
    assert str(info.value) == (
        f"Image Generation failed: {category}. The hosted generation result may be unknown."
    )
    assert len(fake.requests) == 1, "never retried, redirects never followed"
    assert not artifacts_dir(tmp_path).exists() or os.listdir(artifacts_dir(tmp_path)) == []


async def test_timeout(tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport) -> None:
    fake.script(API_PATH, Reply(hang_before_headers=True))
    with pytest.raises(ImageGenerationError) as info:
        await run(API_ROUTE, tmp_path, loopback, timeout_s=0.3)
    assert info.value.category == "timeout"
    assert info.value.unknown_result


async def test_connection_refused_is_a_known_network_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ImageGenerationError) as info:
        await run(API_ROUTE, tmp_path, LoopbackTransport(port))
    assert str(info.value) == "Image Generation failed: network-error."


async def test_cancellation_propagates(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(API_PATH, Reply(hang_before_headers=True))
    out = io.StringIO()
    task = asyncio.create_task(
        run(API_ROUTE, tmp_path, loopback, debug=DebugSink(True, stream=out))
    )
    while not fake.requests:  # noqa: ASYNC110 - the request arrives in another thread
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert json.loads(out.getvalue())["errorCategory"] == "aborted"


# --- the tool --------------------------------------------------------------------------


def make_tool(
    route: ResolvedRoute | None, agent: Path, transport: Any, **kw: Any
) -> OpenAIImageTool:
    async def resolve() -> ResolvedRoute:
        if route is None:
            raise RouteUnavailable("missing-openai-auth")
        return route

    return OpenAIImageTool(
        resolve_route=resolve, agent_dir=lambda: agent, transport=transport, **kw
    )


async def test_tool_result_text_image_and_details(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(CODEX_PATH, image_reply(), image_reply())
    tool = make_tool(codex_route(), tmp_path, loopback, model_has_vision=lambda: True)
    assert tool.spec.name == "openai_generate_image"
    assert tool.spec.label == "OpenAI Image Generation"
    assert "background" not in tool.spec.input_schema["properties"]
    ctx = CallContext(cwd=tmp_path, tool_call_id="toolu_9")
    result = await tool({"prompt": "fox", "quality": "low"}, ctx)
    path = result.details["path"]
    assert result.text == f"Generated image saved to {path}."
    assert result.details == {"path": path, "mime_type": "image/png"}
    assert [(i.mime_type, i.data) for i in result.images] == [("image/png", PNG)]
    assert fake.requests[0].headers["x-codex-image-turn-id"] == "toolu_9"

    blind = make_tool(codex_route(), tmp_path, loopback, model_has_vision=lambda: False)
    result = await blind({"prompt": "fox"}, ctx)
    assert result.text.endswith(". The current model cannot visually inspect this image.")


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"prompt": ""},
        {"prompt": "x", "background": "transparent"},
        {"prompt": "x", "quality": "ultra"},
        {"prompt": "x", "size": ""},
        {"prompt": "x", "size": 5},
    ],
)
async def test_tool_rejects_bad_arguments_before_any_request(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport, args: dict[str, Any]
) -> None:
    with pytest.raises(ToolError) as info:
        await make_tool(API_ROUTE, tmp_path, loopback)(args, CallContext(cwd=tmp_path))
    assert info.value.code == "invalid-arguments"
    # the model may have several tools in flight: every refusal names this one
    assert info.value.message.startswith("openai_generate_image ")
    assert fake.requests == []


async def test_tool_unavailable_and_unofficial_route(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    ctx = CallContext(cwd=tmp_path)
    with pytest.raises(ToolError) as info:
        await make_tool(None, tmp_path, loopback)({"prompt": "x"}, ctx)
    assert info.value.message == "OpenAI Image Generation is unavailable: missing-openai-auth."
    for base in (
        "http://api.openai.com/v1",
        "https://api.openai.com.evil.example/v1",
        "https://user@api.openai.com/v1",
        "https://api.openai.com:8443/v1",
        "https://api.openai.com/v1/proxy",
    ):
        bad = ResolvedRoute(**{**API_ROUTE.__dict__, "base_url": base})
        with pytest.raises(ToolError) as info:
            await make_tool(bad, tmp_path, loopback)({"prompt": "x"}, ctx)
        assert info.value.message == "OpenAI Image Generation is unavailable: unofficial-endpoint."
    mismatch = ResolvedRoute(**{**API_ROUTE.__dict__, "credential_kind": "codex-oauth"})
    with pytest.raises(ToolError) as info:
        await make_tool(mismatch, tmp_path, loopback)({"prompt": "x"}, ctx)
    assert info.value.message == "OpenAI Image Generation is unavailable: credential-mismatch."
    assert fake.requests == []


async def test_tool_failure_message(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(API_PATH, Reply(status=400))
    with pytest.raises(ToolError) as info:
        await make_tool(API_ROUTE, tmp_path, loopback)({"prompt": "x"}, CallContext(cwd=tmp_path))
    assert info.value.message == (
        "Image Generation failed: http-error. The hosted generation result may be unknown."
    )


async def test_debug_never_carries_prompt_token_or_image(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    fake.script(API_PATH, image_reply())
    out = io.StringIO()
    bus = EventBus()
    seen: list[Any] = []
    bus.subscribe(DEBUG_CHANNEL, seen.append)
    image = await run(
        API_ROUTE, tmp_path, loopback, prompt="PROMPT-CANARY", debug=DebugSink(True, bus, out)
    )
    record = json.loads(out.getvalue())
    assert record == seen[0]
    assert record["feature"] == "image-generation"
    assert record["model"] == "gpt-image-2"
    assert record["endpointHost"] == "api.openai.com"
    assert record["status"] == 200
    assert record["requestId"] == "req_i"
    blob = out.getvalue() + json.dumps(seen)
    for secret in (CANARY, "PROMPT-CANARY", B64[:16], str(image.path), "call_1"):
        assert secret not in blob
