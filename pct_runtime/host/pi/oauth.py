"""Codex OAuth: refresh an expired `openai-codex` token the way Pi does, under Pi's lock.

Pi's `AuthStorage` refreshes when `now >= expires` with `grant_type=refresh_token` and
its client id at `https://auth.openai.com/oauth/token`, holding a `proper-lockfile` lock
on `auth.json` (a sibling directory `<realpath of auth.json>.lock`, stale after 30 s,
its mtime refreshed while held). We honour the same lock so a Pi process and pct never
refresh the same single-use refresh token twice: after taking the lock the file is
re-read, and a token another process already refreshed is used as-is. The write-back
replaces only the `openai-codex` entry (every other entry is kept), atomically, mode 0600.
Tokens never appear in an exception message or repr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.host.pi.credentials import OAuthCredential, chatgpt_account_id, parse_auth
from pct_runtime.jsontypes import JSONObject

if TYPE_CHECKING:  # httpx (and the rich it loads) is imported where a request is made
    import httpx

CODEX_PROVIDER = "openai-codex"
CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
TOKEN_URL = "https://auth.openai.com/oauth/token"

LOCK_STALE_S = 30.0
LOCK_UPDATE_S = LOCK_STALE_S / 2
REFRESH_TIMEOUT_S = 30.0
#: Pi's refresh lock retries: 10 retries, factor 2, 100 ms .. 10 s, randomized.
LOCK_RETRIES = 10
LOCK_MIN_WAIT_S = 0.1
LOCK_MAX_WAIT_S = 10.0


class OAuthRefreshError(Exception):
    """Refreshing failed; `category` is payload-free (`missing-credential`, `lock-held`,
    `refresh-failed`, `invalid-response`, `missing-account-claim`, `write-failed`)."""

    def __init__(self, category: str) -> None:
        super().__init__(f"Codex OAuth refresh failed: {category}.")
        self.category = category


def auth_path(agent_dir: Path) -> Path:
    return agent_dir / "auth.json"


def lock_path_for(path: Path) -> Path:
    """`proper-lockfile` locks `realpath(file) + ".lock"`."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + ".lock")


def _read_raw(path: Path) -> JSONObject:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        raise OAuthRefreshError("missing-credential") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise OAuthRefreshError("missing-credential") from None
    if not isinstance(data, dict):
        raise OAuthRefreshError("missing-credential")
    return data


def read_codex_credential(path: Path) -> OAuthCredential | None:
    """The stored `openai-codex` OAuth entry (read without the lock, as Pi's readers do)."""
    try:
        data = _read_raw(path)
    except OAuthRefreshError:
        return None
    credential = parse_auth(data).get(CODEX_PROVIDER)
    return credential if isinstance(credential, OAuthCredential) else None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _try_mkdir_lock(lock: Path, stale_s: float) -> bool:
    try:
        os.mkdir(lock)
        return True
    except FileExistsError:
        pass
    try:
        mtime = os.stat(lock).st_mtime
    except FileNotFoundError:
        return False  # released meanwhile: the next attempt may succeed
    if mtime < time.time() - stale_s:
        # A holder that stopped refreshing its mtime for `stale` seconds is gone.
        with contextlib.suppress(OSError):
            os.rmdir(lock)
        try:
            os.mkdir(lock)
            return True
        except FileExistsError:
            return False
    return False


@contextlib.asynccontextmanager
async def auth_file_lock(
    path: Path,
    *,
    retries: int = LOCK_RETRIES,
    min_wait_s: float = LOCK_MIN_WAIT_S,
    max_wait_s: float = LOCK_MAX_WAIT_S,
    stale_s: float = LOCK_STALE_S,
    update_s: float = LOCK_UPDATE_S,
) -> AsyncIterator[Path]:
    """Hold Pi's `auth.json.lock` directory; keep its mtime fresh while held."""
    lock = lock_path_for(path)
    attempt = 0
    while not await asyncio.to_thread(_try_mkdir_lock, lock, stale_s):
        if attempt >= retries:
            raise OAuthRefreshError("lock-held")
        wait = min(max_wait_s, min_wait_s * (2**attempt)) * (1 + random.random())
        attempt += 1
        await asyncio.sleep(min(wait, max_wait_s))

    async def keep_fresh() -> None:
        while True:
            await asyncio.sleep(update_s)
            with contextlib.suppress(OSError):
                os.utime(lock)

    toucher = asyncio.create_task(keep_fresh())
    try:
        yield lock
    finally:
        toucher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await toucher
        with contextlib.suppress(OSError):
            os.rmdir(lock)


def _write_entry(path: Path, entry: JSONObject) -> None:
    """Replace only the Codex entry: re-read, merge, write a 0600 temp file, rename."""
    real = Path(os.path.realpath(path))
    data = _read_raw(real)
    data[CODEX_PROVIDER] = entry
    text = json.dumps(data, indent=2)
    fd, tmp = tempfile.mkstemp(prefix=".auth.json.", suffix=".tmp", dir=real.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, real)
        os.chmod(real, 0o600)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OAuthRefreshError("write-failed") from None


async def _request_refresh(
    refresh_token: str, transport: httpx.AsyncBaseTransport | None
) -> tuple[str, str, int]:
    import httpx

    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": CLIENT_ID}
    try:
        async with (
            httpx.AsyncClient(
                transport=transport, follow_redirects=False, trust_env=False, timeout=None
            ) as client,
            asyncio.timeout(REFRESH_TIMEOUT_S),
        ):
            response = await client.post(
                TOKEN_URL, data=form, headers={"accept": "application/json"}
            )
    except (httpx.HTTPError, OSError, TimeoutError):
        raise OAuthRefreshError("refresh-failed") from None
    if not response.is_success:
        raise OAuthRefreshError("refresh-failed")
    try:
        value = response.json()
    except ValueError:
        raise OAuthRefreshError("invalid-response") from None
    if not isinstance(value, dict):
        raise OAuthRefreshError("invalid-response")
    access, refresh, expires_in = (
        value.get("access_token"),
        value.get("refresh_token"),
        value.get("expires_in"),
    )
    if (
        not isinstance(access, str)
        or not access
        or not isinstance(refresh, str)
        or not refresh
        or not isinstance(expires_in, int | float)
        or isinstance(expires_in, bool)
    ):
        raise OAuthRefreshError("invalid-response")
    return access, refresh, int(expires_in * 1000)


async def fresh_codex_credential(
    agent_dir: Path,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    now_ms: int | None = None,
    lock_retries: int = LOCK_RETRIES,
    lock_min_wait_s: float = LOCK_MIN_WAIT_S,
) -> OAuthCredential:
    """The `openai-codex` credential, refreshed first when `now >= expires`.

    `transport` is the test seam for the token endpoint. Raises `OAuthRefreshError`; on
    any failure `auth.json` is left exactly as it was.
    """
    path = auth_path(agent_dir)
    current = read_codex_credential(path)
    if current is None:
        raise OAuthRefreshError("missing-credential")
    if not current.expired(now_ms):
        return current
    async with auth_file_lock(path, retries=lock_retries, min_wait_s=lock_min_wait_s):
        # Another process (Pi, or a second pct) may have refreshed while we waited.
        current = await asyncio.to_thread(read_codex_credential, path)
        if current is None:
            raise OAuthRefreshError("missing-credential")
        if not current.expired(now_ms):
            return current
        access, refresh, lifetime_ms = await _request_refresh(current.refresh, transport)
        account = chatgpt_account_id(access)
        if account is None:
            raise OAuthRefreshError("missing-account-claim")
        expires = (_now_ms() if now_ms is None else now_ms) + lifetime_ms
        raw = await asyncio.to_thread(_read_raw, path)
        old = raw.get(CODEX_PROVIDER)
        entry: JSONObject = dict(old) if isinstance(old, dict) else {}
        entry.update({"type": "oauth", "access": access, "refresh": refresh, "expires": expires})
        entry["accountId"] = account
        await asyncio.to_thread(_write_entry, path, entry)
        return OAuthCredential(CODEX_PROVIDER, access, refresh, expires, account)
