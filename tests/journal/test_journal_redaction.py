"""Canaries: a credential in arguments, environment or results never reaches the journal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pct_runtime.journal import JournalWriter, Redactor
from pct_runtime.journal.store import db_path
from tests.journal.helpers import make_record

OPENAI_KEY = "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123456789"
BEARER = "CANARYbearer0123456789abcdefXYZ"
PCT_TOKEN = "CANARY-pct-token-9f8e7d6c5b4a"
FILE_TOKEN = "CANARYfiletoken_0123456789abcdef"


@pytest.mark.parametrize(
    "text",
    [
        f"curl -H 'Authorization: Bearer {BEARER}' https://api.example",
        f"OPENAI_API_KEY={OPENAI_KEY} python run.py",
        f"export TOKEN={PCT_TOKEN}",
        f"echo {PCT_TOKEN}",
        f"config: api_key: {OPENAI_KEY}",
        f"https://user:{BEARER}@example.com/repo.git",
        f"cat ~/.pi/agent/pct/token -> {FILE_TOKEN}",
    ],
)
def test_redactor_removes_every_canary(tmp_path: Path, text: str) -> None:
    (tmp_path / "pct").mkdir()
    (tmp_path / "pct" / "token").write_text(FILE_TOKEN + "\n")
    redact = Redactor(tmp_path, env={"PCT_TOKEN": PCT_TOKEN, "HOME": str(tmp_path / "home")})
    out = redact(text)
    for canary in (OPENAI_KEY, BEARER, PCT_TOKEN, FILE_TOKEN, "CANARY"):
        assert canary not in out
    assert "<redacted>" in out


def test_redactor_keeps_ordinary_text() -> None:
    redact = Redactor(None, env={})
    text = "pytest -q tests/journal && git status"
    assert redact(text) == text


def test_no_canary_in_the_database_file(tmp_path: Path) -> None:
    (tmp_path / "pct").mkdir(mode=0o700)
    (tmp_path / "pct" / "token").write_text(FILE_TOKEN + "\n")
    writer = JournalWriter(tmp_path, redactor=Redactor(tmp_path, env={"PCT_TOKEN": PCT_TOKEN}))
    try:
        writer.submit(
            make_record(
                summary=f"OPENAI_API_KEY={OPENAI_KEY} curl -H 'Authorization: Bearer {BEARER}'",
                result=f"token is {PCT_TOKEN} and {FILE_TOKEN}; key {OPENAI_KEY}",
            )
        )
        assert writer.flush()
    finally:
        writer.close()
    db = sqlite3.connect(db_path(tmp_path))
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = db.execute("SELECT summary, result_text FROM calls").fetchall()
    finally:
        db.close()
    assert len(rows) == 1
    raw = b"".join(p.read_bytes() for p in (tmp_path / "pct").glob("journal.sqlite3*"))
    for canary in (OPENAI_KEY, BEARER, PCT_TOKEN, FILE_TOKEN):
        assert canary.encode() not in raw
    assert b"CANARY" not in raw


def test_a_token_file_made_later_is_still_redacted(tmp_path: Path) -> None:
    redact = Redactor(tmp_path, env={})
    assert redact("nothing yet") == "nothing yet"
    (tmp_path / "pct").mkdir()
    (tmp_path / "pct" / "token").write_text(FILE_TOKEN + "\n")
    assert FILE_TOKEN not in redact(f"echo {FILE_TOKEN}")


_SHAPED = [
    "sk-proj-abcdefghijklmnopqrstuvwxyz",
    "ghp_" + "a" * 30,
    "github_pat_" + "B" * 30,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "AIza" + "x" * 35,
    "xoxb-1234567890-abc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIzNDU2",
    "Authorization: Bearer abcdef123456",
    "BASIC dXNlcjpwYXNzd29yZA==",
    "authorization=verysecretvalue",
    "API-KEY = abcd1234",
    # The Kelvin sign and the long s, which (?i) matches as k and s:
    "\u212aey=notasecret but \u017fecret=abcd1234 and pa\u017f\u017fword: hunter22",
    "PWD=" + "/" + "home/me",  # split: the machine-path guard
    "my Credentials: abcd1234",
    "https://me:pa55word@example.com/x",
    "update src/a.py (40 lines)",
    "Applied patch:\n- update " + "/" + "tmp/x/a.txt",
    "",
]


@pytest.mark.parametrize("text", _SHAPED)
def test_the_quick_check_never_skips_text_a_pattern_would_change(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text without a trigger skips the patterns (so `pct apply-patch` never compiles them):
    the result must be what the patterns alone give."""
    from pct_runtime.journal import redact as module

    quick = Redactor(None, env={})(text)
    monkeypatch.setattr(module, "_may_hold_a_shape", lambda _text: True)
    assert quick == Redactor(None, env={})(text)


_AWS_SECRET = ("CANARY" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYKEYKEY")[:40]
#: One canary per format the journal must never keep (each holds "CANARY").
TOKENS = {
    "gitlab": "glpat-CANARYgitlab0123456789ab",
    "huggingface": "hf_CANARYhuggingface0123456789abcdef",
    "stripe-live": "sk_live_CANARYstripe0123456789",
    "stripe-test": "sk_test_CANARYstripe0123456789",
    "stripe-restricted": "rk_live_CANARYstripe0123456789",
    "npm": "npm_CANARYnpm0123456789abcdefghijklmnop",
    "github-ghp": "ghp_CANARYgithub0123456789abcd",
    "github-gho": "gho_CANARYgithub0123456789abcd",
    "github-ghu": "ghu_CANARYgithub0123456789abcd",
    "github-ghs": "ghs_CANARYgithub0123456789abcd",
    "github-ghr": "ghr_CANARYgithub0123456789abcd",
    "github-pat": "github_pat_CANARY0123456789_abcdefghij",
    "slack-xoxb": "xoxb-CANARY-0123456789",
    "slack-xoxp": "xoxp-CANARY-0123456789",
    "slack-xoxa": "xoxa-CANARY-0123456789",
    "slack-xoxr": "xoxr-CANARY-0123456789",
    "slack-xoxs": "xoxs-CANARY-0123456789",
    "aws-akia": "AKIACANARY0123456789",
    "aws-asia": "ASIACANARY0123456789",
    "aws-secret": f"aws_secret_access_key = {_AWS_SECRET}",
    "aws-pair": f"AKIAQWERTY0123456789,{_AWS_SECRET}",
    "jwt": "eyJCANARYhdr0123.eyJCANARYbody0123.CANARYsig0123456",
    "pem": (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARYb3BlbnNzaC1rZXktdjEAAAAA\n"
        "CANARYmore+/==\n-----END OPENSSH PRIVATE KEY-----"
    ),
    "pem-cut": "-----BEGIN RSA PRIVATE KEY-----\nCANARYMIIEowIBAAKCAQEA\nCANARY…",
    "openai": OPENAI_KEY,
    "bearer": f"Authorization: Bearer {BEARER}",
}
#: Formats written as one word: they may be a file name too.
WORDS = [name for name, token in TOKENS.items() if not any(c in token for c in " \n,")]


@pytest.mark.parametrize("name", TOKENS)
@pytest.mark.parametrize(
    "context", ["{}", "run --key {} now", "line one\n{}\nline three", "'{}'", "x={}"]
)
def test_every_token_format_is_redacted(name: str, context: str) -> None:
    out = Redactor(None, env={})(context.format(TOKENS[name]))
    assert "CANARY" not in out
    assert "<redacted>" in out


@pytest.mark.parametrize("name", WORDS)
@pytest.mark.parametrize("path", ["secrets/{}.txt", "keys_{}.json", "a/b-{}/c.py"])
def test_a_token_in_a_file_name_is_redacted(name: str, path: str) -> None:
    out = Redactor(None, env={})(f"A {path.format(TOKENS[name])}")
    assert "CANARY" not in out
    assert out.startswith("A ")


def test_the_pem_redaction_keeps_what_follows_its_end() -> None:
    out = Redactor(None, env={})(f"key:\n{TOKENS['pem']}\nwritten to id_ed25519")
    assert out == "key:\n<redacted>\nwritten to id_ed25519"


def test_a_patch_with_a_secret_file_name_is_recorded_without_its_names(tmp_path: Path) -> None:
    from pct_runtime.journal import FileImage, PatchFile

    writer = JournalWriter(tmp_path, redactor=Redactor(tmp_path, env={}))
    secret = PatchFile(f"/w/secrets/{TOKENS['github-ghp']}.txt", None, FileImage("ab" * 32, 0o644))
    plain = PatchFile("/w/plain.txt", None, FileImage("cd" * 32, 0o644))
    stored = writer.redact(make_record("apply_patch", patch_files=(secret, plain)))
    assert stored.patch_files == ()  # recorded, not undoable (undo needs every real name)
    kept = writer.redact(make_record("apply_patch", patch_files=(plain,)))
    assert kept.patch_files == (plain,)


def test_typed_input_is_redacted_where_a_later_output_echoes_it(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path, redactor=Redactor(None, env={}))
    typed = writer.typed_for("s-1", {"session_id": "pct-shell-1", "chars": "CANARYpw99\nls\n"})
    assert typed == ("CANARYpw99",)  # `ls` is too short to hide from every output
    later = writer.typed_for("s-1", {"session_id": "pct-shell-1", "chars": ""})
    other = writer.typed_for("s-1", {"session_id": "pct-shell-2", "chars": ""})
    assert (later, other) == (("CANARYpw99",), ())
    stored = writer.redact(make_record("write_stdin", result="got:CANARYpw99 in ls"), later)
    assert stored.result_text == "got:<redacted> in ls"


@pytest.mark.parametrize("text", [*TOKENS.values(), *(f"keys_{TOKENS[n]}.txt" for n in WORDS)])
def test_the_quick_check_lets_every_new_format_through(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pct_runtime.journal import redact as module

    quick = Redactor(None, env={})(text)
    monkeypatch.setattr(module, "_may_hold_a_shape", lambda _text: True)
    assert quick == Redactor(None, env={})(text)
