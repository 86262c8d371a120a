"""Pi's credentials: `auth.json` entries, `OPENAI_API_KEY`, and `models.json` provider keys.

The runtime only ever *reads* Pi's `auth.json` (no lock, no writes). Whether a model is
available, and which kind of credential its route uses, is decided without resolving a
value, so `pct status` never runs a `!command` key. Credential objects redact themselves:
their `repr`/`str` never contain a key or token, so an accidental log line leaks nothing.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from pct_runtime.datarecord import datarecord, field

CredentialKind = Literal["api-key", "codex-oauth"]

#: Provider -> environment variable Pi consults after `auth.json`.
ENV_API_KEYS: dict[str, str] = {"openai": "OPENAI_API_KEY"}

ACCOUNT_CLAIM = "https://api.openai.com/auth"

_REDACTED = "<redacted>"


@datarecord(repr=False)
class ApiKeyCredential:
    """`{"type": "api_key", "key": ...}`; `key` keeps Pi's value syntax unresolved."""

    provider: str
    key: str = field(compare=False)
    source: Literal["auth.json", "env", "models.json"] = "auth.json"

    @property
    def kind(self) -> Literal["api_key"]:
        return "api_key"

    def __repr__(self) -> str:
        return (
            f"ApiKeyCredential(provider={self.provider!r}, source={self.source!r}, key={_REDACTED})"
        )

    __str__ = __repr__


@datarecord(repr=False)
class OAuthCredential:
    """`{"type": "oauth", access, refresh, expires (epoch ms), accountId?}`."""

    provider: str
    access: str = field(compare=False)
    refresh: str = field(compare=False)
    expires_ms: int
    account_id: str | None = field(default=None, compare=False)

    @property
    def kind(self) -> Literal["oauth"]:
        return "oauth"

    def expired(self, now_ms: int | None = None) -> bool:
        """Pi refreshes when `now >= expires` (no skew buffer)."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return now >= self.expires_ms

    def chatgpt_account_id(self) -> str | None:
        """The account claim of the access token, else the stored `accountId`."""
        return chatgpt_account_id(self.access) or self.account_id

    def __repr__(self) -> str:
        return (
            f"OAuthCredential(provider={self.provider!r}, expires_ms={self.expires_ms}, "
            f"access={_REDACTED}, refresh={_REDACTED})"
        )

    __str__ = __repr__


Credential = ApiKeyCredential | OAuthCredential


def chatgpt_account_id(token: str) -> str | None:
    """Decode `["https://api.openai.com/auth"].chatgpt_account_id` from a JWT access token.

    The signature is not verified: the claim only selects the `chatgpt-account-id` header,
    and the server checks the token itself. Malformed tokens give None.
    """
    parts = token.split(".")
    if len(parts) != 3 or not parts[1]:
        return None
    import base64  # deferred, as `subprocess` below: `pct status` reads no token

    payload_b64 = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        payload = json.loads(base64.urlsafe_b64decode(payload_b64.encode("ascii")))
    except (ValueError, UnicodeError):
        return None
    if not isinstance(payload, dict):
        return None
    auth = payload.get(ACCOUNT_CLAIM)
    if not isinstance(auth, dict):
        return None
    account = auth.get("chatgpt_account_id")
    if isinstance(account, str) and account.strip():
        return account
    return None


class AuthFileError(ValueError):
    """`auth.json` exists but is not a JSON object of credentials; no entry is used."""


def parse_auth(obj: object) -> dict[str, Credential]:
    """Parse the decoded `auth.json`. Malformed entries are skipped, never guessed."""
    if not isinstance(obj, dict):
        raise AuthFileError("auth.json must be a JSON object")
    out: dict[str, Credential] = {}
    for provider, entry in obj.items():
        if not isinstance(provider, str) or not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "api_key":
            key = entry.get("key")
            if isinstance(key, str) and key:
                out[provider] = ApiKeyCredential(provider, key)
        elif kind == "oauth":
            access, refresh, expires = (
                entry.get("access"),
                entry.get("refresh"),
                entry.get("expires"),
            )
            if (
                isinstance(access, str)
                and access
                and isinstance(refresh, str)
                and isinstance(expires, int | float)
                and not isinstance(expires, bool)
            ):
                account = entry.get("accountId")
                out[provider] = OAuthCredential(
                    provider,
                    access,
                    refresh,
                    int(expires),
                    account if isinstance(account, str) and account else None,
                )
    return out


def load_auth(path: Path) -> tuple[dict[str, Credential], str | None]:
    """Read `auth.json`: (credentials, error). A missing file is no credentials, no error."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"auth.json unreadable ({exc.__class__.__name__})"
    try:
        return parse_auth(json.loads(text)), None
    except json.JSONDecodeError:
        return {}, "auth.json is not valid JSON"
    except AuthFileError as exc:
        return {}, str(exc)


#: `$VAR` or `${VAR}`, compiled on first use (by `re`'s cache): `pct status` resolves no key.
_VAR = r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
_command_cache: dict[str, str | None] = {}


def _run_command(command: str) -> str | None:
    """Run a `!command` key once per process (Pi caches it for the process lifetime)."""
    if command in _command_cache:
        return _command_cache[command]
    import subprocess  # deferred: only a `!command` key runs one

    try:
        done = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=30, check=False
        )
        value = done.stdout.strip() if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        value = None
    _command_cache[command] = value or None
    return _command_cache[command]


def resolve_config_value(
    value: str,
    env: Mapping[str, str] | None = None,
    run_command: Callable[[str], str | None] = _run_command,
) -> str | None:
    """Resolve Pi's key value syntax (newer Pi).

    `!cmd` runs a shell command (stdout, trimmed); `$VAR` / `${VAR}` interpolate the
    environment (unset -> empty); `$$` is a literal `$` and a leading `$!` a literal `!`;
    anything else, including a plain uppercase word, is the literal key.
    Returns None when the result is empty.
    """
    environ = os.environ if env is None else env
    if value.startswith("!"):
        return run_command(value[1:])
    if value.startswith("$!"):
        value = value[1:]
        prefix, value = value[0], value[1:]
    else:
        prefix = ""
    out: list[str] = [prefix]
    variable = re.compile(_VAR)
    i = 0
    while i < len(value):
        if value.startswith("$$", i):
            out.append("$")
            i += 2
            continue
        match = variable.match(value, i)
        if match:
            out.append(environ.get(match.group(1) or match.group(2), ""))
            i = match.end()
            continue
        out.append(value[i])
        i += 1
    resolved = "".join(out)
    return resolved or None


class Credentials:
    """Credential lookup in Pi's resolution order, without resolving values.

    Order: `auth.json` (api_key, then oauth) → provider env var (`openai` →
    `OPENAI_API_KEY`) → a `models.json` provider `apiKey` (the fallback resolver).
    """

    def __init__(
        self,
        stored: Mapping[str, Credential] | None = None,
        env: Mapping[str, str] | None = None,
        provider_keys: Mapping[str, str] | None = None,
        error: str | None = None,
    ) -> None:
        self._stored = dict(stored or {})
        self._env = dict(os.environ if env is None else env)
        self._provider_keys = dict(provider_keys or {})
        self.error = error

    @classmethod
    def load(
        cls,
        agent_dir: Path,
        env: Mapping[str, str] | None = None,
        provider_keys: Mapping[str, str] | None = None,
    ) -> Credentials:
        stored, error = load_auth(agent_dir / "auth.json")
        return cls(stored, env, provider_keys, error)

    def with_provider_keys(self, provider_keys: Mapping[str, str]) -> Credentials:
        return Credentials(self._stored, self._env, provider_keys, self.error)

    def get(self, provider: str) -> Credential | None:
        """The credential Pi would use for `provider`, or None."""
        stored = self._stored.get(provider)
        if stored is not None:
            return stored
        env_name = ENV_API_KEYS.get(provider)
        if env_name and self._env.get(env_name):
            return ApiKeyCredential(provider, self._env[env_name], "env")
        key = self._provider_keys.get(provider)
        if key:
            return ApiKeyCredential(provider, key, "models.json")
        return None

    def has_auth(self, provider: str) -> bool:
        return self.get(provider) is not None

    def is_using_oauth(self, provider: str) -> bool:
        """Pi's `isUsingOAuth(model)`: the provider's stored credential is OAuth."""
        return isinstance(self._stored.get(provider), OAuthCredential)

    def resolve_api_key(self, provider: str) -> str | None:
        """The bearer value: a resolved api key or the OAuth access token (not refreshed)."""
        credential = self.get(provider)
        if credential is None:
            return None
        if isinstance(credential, OAuthCredential):
            return credential.access
        if credential.source == "env":
            return credential.key
        return resolve_config_value(credential.key, self._env)

    def __repr__(self) -> str:
        return f"Credentials(providers={sorted(self._stored)!r})"
