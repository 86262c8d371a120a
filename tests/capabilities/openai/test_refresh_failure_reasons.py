"""A Codex login whose token refresh fails is `provider-unavailable`, not `missing-openai-auth`.

The user has a login; the refresh failed (offline, token endpoint 5xx or a bad answer, Pi's
lock held). Telling the model `missing-openai-auth` sends the user to log in again for
nothing. Only a missing credential keeps `missing-openai-auth`. Every failure leaves
auth.json exactly as it was.
"""

from __future__ import annotations

import functools
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from openai_fakes import (  # type: ignore[import-not-found]
    FakeServer,
    LoopbackTransport,
    json_reply,
)

from pct_runtime.capabilities.base import CallContext, ToolError
from pct_runtime.capabilities.openai import resolve
from pct_runtime.capabilities.openai.factory import build_image_tool, build_web_search_tool
from pct_runtime.capabilities.openai.resolve import refresh_failure_reason, resolve_model_route
from pct_runtime.capabilities.openai.routes import RouteUnavailable
from pct_runtime.config import parse_config
from pct_runtime.host.pi.credentials import Credentials
from pct_runtime.host.pi.model_registry import Model, ModelRegistry
from pct_runtime.host.pi.oauth import fresh_codex_credential, lock_path_for

CODEX = Model(
    "openai-codex", "gpt-5.4", "openai-codex-responses", "https://chatgpt.com/backend-api"
)
EXPIRED = {"openai-codex": {"type": "oauth", "access": "old", "refresh": "rt", "expires": 1}}


def expired_login(agent: Path) -> str:
    text = json.dumps(EXPIRED)
    (agent / "auth.json").write_text(text)
    return text


def closed_port() -> int:
    """A local port nothing listens on (connecting is refused: "offline")."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("category", "reason"),
    [
        ("missing-credential", "missing-openai-auth"),
        ("lock-held", "provider-unavailable"),
        ("refresh-failed", "provider-unavailable"),
        ("invalid-response", "provider-unavailable"),
        ("write-failed", "provider-unavailable"),
        ("missing-account-claim", "missing-account-claim"),
    ],
)
def test_every_refresh_category_has_its_reason(category: str, reason: str) -> None:
    assert refresh_failure_reason(category) == reason


async def reason_of(agent: Path, transport: Any) -> str:
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(
            CODEX, Credentials.load(agent, env={}), agent, oauth_transport=transport
        )
    return info.value.reason


@pytest.mark.parametrize(
    "reply",
    [
        json_reply({"error": "server_error"}, status=503),
        json_reply(["not", "an", "object"]),
    ],
    ids=["token-endpoint-5xx", "invalid-answer"],
)
async def test_a_failed_refresh_is_provider_unavailable(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport, reply: Any
) -> None:
    before = expired_login(tmp_path)
    fake.script("/oauth/token", reply)
    assert await reason_of(tmp_path, loopback) == "provider-unavailable"
    assert [r.path for r in fake.requests] == ["/oauth/token"]
    assert (tmp_path / "auth.json").read_text() == before


async def test_offline_refresh_is_provider_unavailable(tmp_path: Path) -> None:
    before = expired_login(tmp_path)
    assert await reason_of(tmp_path, LoopbackTransport(closed_port())) == "provider-unavailable"
    assert (tmp_path / "auth.json").read_text() == before


async def test_a_held_lock_is_provider_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = expired_login(tmp_path)
    lock = lock_path_for(tmp_path / "auth.json")
    lock.mkdir()  # Pi holds auth.json.lock (fresh mtime: not stale)
    # Give up at once instead of Pi's ~30 s of retries; the category is the same.
    monkeypatch.setattr(
        resolve,
        "fresh_codex_credential",
        functools.partial(fresh_codex_credential, lock_retries=0, lock_min_wait_s=0.001),
    )
    try:
        assert await reason_of(tmp_path, LoopbackTransport(closed_port())) == (
            "provider-unavailable"
        )
    finally:
        lock.rmdir()
    assert (tmp_path / "auth.json").read_text() == before


async def test_tools_tell_the_model_the_provider_is_unavailable(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    """Web Search (sidecar) and Image Generation both say `provider-unavailable`."""
    expired_login(tmp_path)
    registry = ModelRegistry.load(tmp_path, env={})
    model = registry.find("openai-codex", "gpt-5.4")
    assert model is not None
    fake.script(
        "/oauth/token",
        json_reply({"error": "server_error"}, status=500),
        json_reply({"error": "server_error"}, status=500),
    )
    config = parse_config(
        {
            "webSearch": {
                "enabled": True,
                "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"},
            }
        }
    )
    search = build_web_search_tool(
        config=lambda: config,
        registry=lambda: registry,
        agent_dir=lambda: tmp_path,
        transport=loopback,
    )
    with pytest.raises(ToolError) as info:
        await search({"query": "q"}, CallContext(cwd=tmp_path))
    assert info.value.message == "OpenAI Web Search is unavailable: provider-unavailable."
    image = build_image_tool(
        pick_model=lambda: model,
        registry=lambda: registry,
        agent_dir=lambda: tmp_path,
        transport=loopback,
    )
    with pytest.raises(ToolError) as info:
        await image({"prompt": "p"}, CallContext(cwd=tmp_path, tool_call_id="c1"))
    assert info.value.message == "OpenAI Image Generation is unavailable: provider-unavailable."
    # Only the two refresh attempts reached the network; no generation or search was sent.
    assert [r.path for r in fake.requests] == ["/oauth/token", "/oauth/token"]


async def test_no_codex_credential_at_all_is_still_missing_openai_auth(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    """The login is gone by the time of the call (logged out): logging in is the fix."""
    expired_login(tmp_path)
    creds = Credentials.load(tmp_path, env={})
    assert creds.is_using_oauth("openai-codex")
    (tmp_path / "auth.json").unlink()
    with pytest.raises(RouteUnavailable) as info:
        await resolve_model_route(CODEX, creds, tmp_path, oauth_transport=loopback)
    assert info.value.reason == "missing-openai-auth"
    assert fake.requests == []
