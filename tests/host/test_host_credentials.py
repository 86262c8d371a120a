"""Credentials: auth.json shapes, env fallback, value syntax, account claim, redaction."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from pct_runtime.host.pi.credentials import (
    ApiKeyCredential,
    Credentials,
    OAuthCredential,
    chatgpt_account_id,
    load_auth,
    parse_auth,
    resolve_config_value,
)


def jwt(payload: object) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    return f"eyJhbGciOiJub25lIn0.{body}.sig"


def test_parse_both_credential_types() -> None:
    creds = parse_auth(
        {
            "openai": {"type": "api_key", "key": "sk-secret"},
            "openai-codex": {
                "type": "oauth",
                "access": "tok",
                "refresh": "ref",
                "expires": 1767225600000,
                "accountId": "acct",
            },
            "broken": {"type": "oauth", "access": "x"},
            "other": "nope",
        }
    )
    assert isinstance(creds["openai"], ApiKeyCredential)
    oauth = creds["openai-codex"]
    assert isinstance(oauth, OAuthCredential)
    assert oauth.expires_ms == 1767225600000
    assert oauth.account_id == "acct"
    assert set(creds) == {"openai", "openai-codex"}


def test_credentials_never_print_secrets() -> None:
    api = ApiKeyCredential("openai", "sk-very-secret")
    oauth = OAuthCredential("openai-codex", "access-secret", "refresh-secret", 5)
    for text in (repr(api), str(api), repr(oauth), str(oauth), f"{[api, oauth]}"):
        assert "secret" not in text
        assert "<redacted>" in text


def test_expiry_is_milliseconds() -> None:
    oauth = OAuthCredential("openai-codex", "a", "r", 1000)
    assert oauth.expired(now_ms=1000)
    assert not oauth.expired(now_ms=999)


def test_account_claim_decoded_from_access_token() -> None:
    token = jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}})
    assert chatgpt_account_id(token) == "acct-123"
    assert (
        OAuthCredential("openai-codex", token, "r", 0, "stored").chatgpt_account_id() == "acct-123"
    )
    assert (
        OAuthCredential("openai-codex", "opaque", "r", 0, "stored").chatgpt_account_id() == "stored"
    )


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        "a..c",
        "a.!!!.c",
        jwt(["list"]),
        jwt({"https://api.openai.com/auth": "x"}),
        jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "  "}}),
        jwt({"https://api.openai.com/auth": {"chatgpt_account_id": 5}}),
    ],
)
def test_account_claim_missing(token: str) -> None:
    assert chatgpt_account_id(token) is None


def test_resolution_order(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_text(
        json.dumps({"openai": {"type": "api_key", "key": "stored"}})
    )
    creds = Credentials.load(
        tmp_path, env={"OPENAI_API_KEY": "from-env"}, provider_keys={"openai": "x"}
    )
    got = creds.get("openai")
    assert isinstance(got, ApiKeyCredential)
    assert got.source == "auth.json"
    creds2 = Credentials({}, env={"OPENAI_API_KEY": "from-env"}, provider_keys={"openai": "x"})
    got2 = creds2.get("openai")
    assert isinstance(got2, ApiKeyCredential)
    assert got2.source == "env"
    assert creds2.resolve_api_key("openai") == "from-env"
    creds3 = Credentials({}, env={}, provider_keys={"openai": "x"})
    got3 = creds3.get("openai")
    assert isinstance(got3, ApiKeyCredential)
    assert got3.source == "models.json"
    assert Credentials({}, env={}).get("openai-codex") is None


def test_is_using_oauth_only_for_stored_oauth() -> None:
    creds = Credentials(
        {
            "openai-codex": OAuthCredential("openai-codex", "a", "r", 0),
            "openai": ApiKeyCredential("openai", "k"),
        },
        env={},
    )
    assert creds.is_using_oauth("openai-codex")
    assert not creds.is_using_oauth("openai")
    assert creds.resolve_api_key("openai-codex") == "a"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sk-literal", "sk-literal"),
        ("OPENAI_API_KEY", "OPENAI_API_KEY"),  # a plain uppercase word is a literal
        ("$MY_KEY", "v1"),
        ("${MY_KEY}-x", "v1-x"),
        ("pre$MY_KEY", "prev1"),
        ("$$MY_KEY", "$MY_KEY"),
        ("$!cmd", "!cmd"),
        ("$UNSET", None),
    ],
)
def test_value_syntax(value: str, expected: str | None) -> None:
    assert resolve_config_value(value, {"MY_KEY": "v1"}, run_command=lambda c: None) == expected


def test_command_value_runs_the_command_once() -> None:
    calls: list[str] = []

    def run(command: str) -> str | None:
        calls.append(command)
        return "from-cmd"

    assert resolve_config_value("!pass show openai", {}, run_command=run) == "from-cmd"
    assert calls == ["pass show openai"]


def test_command_value_real_subprocess() -> None:
    assert resolve_config_value("!echo hello-key", {}) == "hello-key"


def test_auth_file_errors(tmp_path: Path) -> None:
    assert load_auth(tmp_path / "auth.json") == ({}, None)
    (tmp_path / "auth.json").write_text("{bad")
    assert load_auth(tmp_path / "auth.json") == ({}, "auth.json is not valid JSON")
    (tmp_path / "auth.json").write_text("[]")
    assert load_auth(tmp_path / "auth.json") == ({}, "auth.json must be a JSON object")
