"""Codex OAuth refresh under Pi's `auth.json.lock` convention, against a fake token server."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from openai_fakes import FakeServer, LoopbackTransport, codex_token, json_reply  # type: ignore[import-not-found]

from pct_runtime.host.pi.oauth import (
    CLIENT_ID,
    OAuthRefreshError,
    fresh_codex_credential,
    lock_path_for,
)

OLD_ACCESS = codex_token("acct-old", {"n": 1})
NEW_ACCESS = codex_token("acct-new", {"n": 2})
PI_ACCESS = codex_token("acct-pi", {"n": 3})
NOW = 1_800_000_000_000


def write_auth(agent: Path, expires: int, **extra: Any) -> dict[str, Any]:
    data = {
        "openai": {"type": "api_key", "key": "sk-keep-me"},
        "openai-codex": {
            "type": "oauth",
            "access": OLD_ACCESS,
            "refresh": "rt-old",
            "expires": expires,
            "accountId": "acct-old",
            **extra,
        },
        "anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1},
    }
    (agent / "auth.json").write_text(json.dumps(data, indent=2))
    os.chmod(agent / "auth.json", 0o600)
    return data


def token_reply(access: str = NEW_ACCESS) -> Any:
    return json_reply({"access_token": access, "refresh_token": "rt-new", "expires_in": 3600})


async def test_unexpired_token_is_used_without_lock_or_request(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW + 1)
    cred = await fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW)
    assert cred.access == OLD_ACCESS
    assert fake.requests == []
    assert not lock_path_for(tmp_path / "auth.json").exists()


async def test_expired_token_is_refreshed_and_only_that_entry_rewritten(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    before = write_auth(tmp_path, NOW, custom="kept")  # now >= expires -> refresh
    fake.script("/oauth/token", token_reply())
    cred = await fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW)
    assert cred.access == NEW_ACCESS
    assert cred.account_id == "acct-new"
    assert len(fake.requests) == 1
    req = fake.requests[0]
    assert req.headers["host"] == "auth.openai.com"
    assert req.headers["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qs(req.body.decode()) == {
        "grant_type": ["refresh_token"],
        "refresh_token": ["rt-old"],
        "client_id": [CLIENT_ID],
    }
    after = json.loads((tmp_path / "auth.json").read_text())
    assert after["openai"] == before["openai"]
    assert after["anthropic"] == before["anthropic"]
    assert after["openai-codex"] == {
        "type": "oauth",
        "access": NEW_ACCESS,
        "refresh": "rt-new",
        "expires": NOW + 3_600_000,
        "accountId": "acct-new",
        "custom": "kept",
    }
    assert stat.S_IMODE(os.stat(tmp_path / "auth.json").st_mode) == 0o600
    assert not lock_path_for(tmp_path / "auth.json").exists()
    assert sorted(os.listdir(tmp_path)) == ["auth.json"]


async def test_waits_for_a_pi_lock_holder_and_uses_its_refreshed_token(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW)
    lock = lock_path_for(tmp_path / "auth.json")
    os.mkdir(lock)  # Pi holds the lock and is refreshing right now
    released = threading.Event()

    def pi_refreshes() -> None:
        time.sleep(0.4)
        data = json.loads((tmp_path / "auth.json").read_text())
        data["openai-codex"].update(access=PI_ACCESS, refresh="rt-pi", expires=NOW + 10_000)
        (tmp_path / "auth.json").write_text(json.dumps(data))
        os.rmdir(lock)
        released.set()

    holder = threading.Thread(target=pi_refreshes)
    holder.start()
    try:
        cred = await fresh_codex_credential(
            tmp_path, transport=loopback, now_ms=NOW, lock_min_wait_s=0.05
        )
    finally:
        holder.join()
    assert released.is_set()
    assert cred.access == PI_ACCESS
    assert fake.requests == [], "the single-use refresh token must not be spent twice"
    assert not lock.exists()


async def test_lock_released_without_refresh_then_we_refresh(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW)
    lock = lock_path_for(tmp_path / "auth.json")
    os.mkdir(lock)
    fake.script("/oauth/token", token_reply())
    timer = threading.Timer(0.3, os.rmdir, args=(lock,))
    timer.start()
    try:
        cred = await fresh_codex_credential(
            tmp_path, transport=loopback, now_ms=NOW, lock_min_wait_s=0.05
        )
    finally:
        timer.join()
    assert cred.access == NEW_ACCESS
    assert len(fake.requests) == 1


async def test_lock_held_too_long_fails_without_touching_the_file(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW)
    original = (tmp_path / "auth.json").read_bytes()
    lock = lock_path_for(tmp_path / "auth.json")
    os.mkdir(lock)
    with pytest.raises(OAuthRefreshError) as info:
        await fresh_codex_credential(
            tmp_path, transport=loopback, now_ms=NOW, lock_retries=2, lock_min_wait_s=0.01
        )
    assert info.value.category == "lock-held"
    assert lock.is_dir(), "someone else's lock is never removed"
    assert (tmp_path / "auth.json").read_bytes() == original
    assert fake.requests == []


async def test_stale_lock_is_reclaimed(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW)
    lock = lock_path_for(tmp_path / "auth.json")
    os.mkdir(lock)
    old = time.time() - 120
    os.utime(lock, (old, old))
    fake.script("/oauth/token", token_reply())
    cred = await fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW)
    assert cred.access == NEW_ACCESS
    assert not lock.exists()


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (json_reply({"error": "invalid_grant"}, status=400), "refresh-failed"),
        (json_reply({"access_token": "x"}), "invalid-response"),
        (json_reply([1, 2]), "invalid-response"),
        (token_reply(codex_token(None)), "missing-account-claim"),
    ],
)
async def test_refresh_failures_leave_auth_json_unchanged(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport, reply: Any, category: str
) -> None:
    write_auth(tmp_path, NOW)
    original = (tmp_path / "auth.json").read_bytes()
    fake.script("/oauth/token", reply)
    with pytest.raises(OAuthRefreshError) as info:
        await fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW)
    assert info.value.category == category
    assert "rt-old" not in str(info.value)
    assert OLD_ACCESS not in repr(info.value)
    assert (tmp_path / "auth.json").read_bytes() == original
    assert not lock_path_for(tmp_path / "auth.json").exists()


async def test_missing_credential(tmp_path: Path) -> None:
    with pytest.raises(OAuthRefreshError) as info:
        await fresh_codex_credential(tmp_path)
    assert info.value.category == "missing-credential"


async def test_refresh_through_a_symlinked_auth_json_keeps_the_link(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    write_auth(real_dir, NOW)
    (agent / "auth.json").symlink_to(real_dir / "auth.json")
    fake.script("/oauth/token", token_reply())
    await fresh_codex_credential(agent, transport=loopback, now_ms=NOW)
    assert (agent / "auth.json").is_symlink()
    assert json.loads((real_dir / "auth.json").read_text())["openai-codex"]["access"] == NEW_ACCESS
    assert not (real_dir / "auth.json.lock").exists()


async def test_two_concurrent_refreshers_spend_the_refresh_token_once(
    tmp_path: Path, fake: FakeServer, loopback: LoopbackTransport
) -> None:
    write_auth(tmp_path, NOW)
    fake.script("/oauth/token", token_reply())
    results = await asyncio.gather(
        fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW, lock_min_wait_s=0.02),
        fresh_codex_credential(tmp_path, transport=loopback, now_ms=NOW, lock_min_wait_s=0.02),
    )
    assert [r.access for r in results] == [NEW_ACCESS, NEW_ACCESS]
    assert len(fake.requests) == 1
