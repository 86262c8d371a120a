"""Redaction of what the journal stores: no credential or token ever reaches the database.

Debug output keeps credentials out by admitting only identifiers; the journal must keep
free text (a command line, a result), so it applies the same rule the other way round:
known secret shapes (OpenAI, GitHub, GitLab, Hugging Face, Stripe, npm, Slack, Google and
AWS keys, JWTs, PEM private keys, bearer tokens, `key=value` pairs named like secrets),
the exact values of secrets this process knows (`PCT_TOKEN`, the pct token file,
environment variables named like credentials) and what a call typed into a shell session
(`write_stdin`: a program may echo a password back) become `<redacted>`.
Text is cut before redaction far beyond what is kept, so a cut never splits a kept secret.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "<redacted>"
#: Text longer than this is cut before redaction (the kept part is much shorter).
SCAN_LIMIT = 32_768

# A token's prefix may follow `_` or `-` (a file name `keys_ghp_….txt`), never a letter or digit.
_START = r"(?<![A-Za-z0-9])"
_SHAPES = (
    r"sk-[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style keys
    _START + r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
    _START + r"github_pat_[A-Za-z0-9_]{20,}",
    _START + r"gl(?:pat|ptt|dt|rt|ft|soat|cbt)-[A-Za-z0-9_\-]{20,}",  # GitLab
    _START + r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe secret / restricted keys
    _START + r"whsec_[A-Za-z0-9]{24,}",  # Stripe webhook secret
    _START + r"npm_[A-Za-z0-9]{30,}",  # npm
    # AWS access key id, with the secret key written next to it (a credentials CSV line).
    _START + r"(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"(?:[\s,:;=\"'|]{1,5}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+]))?(?![A-Za-z0-9])",
    _START + r"AIza[0-9A-Za-z_\-]{30,}",  # Google API key
    _START + r"xox[abeprs]-[A-Za-z0-9-]{10,}",  # Slack
    _START + r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
    # A PEM private key, to its END line (or to the cut, when the text ends first).
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
)
# The value after a marker is replaced, the marker kept (so the line stays readable).
_MARKERS = (
    r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{6,}",
    r"(?i)(\bbasic\s+)[A-Za-z0-9+/=]{8,}",
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer\b|basic\b)[^\s\"',;]{4,}",
    r"(?i)((?:api[_-]?key|apikey|access[_-]?key|secret|token|passw(?:or)?d|pwd|credential)"
    r"[A-Za-z0-9_]*[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]{4,}",
    r"(?i)(://[^/\s:@]+:)[^/\s@]{3,}(?=@)",  # user:password@host
)
#: Lower-case text no shape or marker can match without: text holding none of them skips
#: the patterns, which compile on first need (1.4 ms that `pct apply-patch` rarely pays).
_TRIGGERS = (
    "sk-", "gh", "github_pat_", "glpat-", "glptt-", "gldt-", "glrt-", "glft-", "glsoat-",
    "glcbt-", "hf_", "sk_", "rk_", "whsec_", "npm_", "akia", "asia", "aiza", "xox", "eyj",
    "private key", "bearer", "basic", "authorization", "key", "secret", "token", "passw",
    "pwd", "credential", "://",
)  # fmt: skip
_SECRET_NAME = re.compile(r"(?i)(token|secret|passw|api[_-]?key|access[_-]?key|credential|auth)")


@functools.cache
def _compiled() -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    return re.compile("|".join(_SHAPES)), tuple(re.compile(marker) for marker in _MARKERS)


def _may_hold_a_shape(text: str) -> bool:
    folded = text.casefold()  # as (?i) matches: the Kelvin sign is a k, a long s an s
    return any(trigger in folded for trigger in _TRIGGERS)


_MIN_SECRET = 8


def _env_secrets(env: Mapping[str, str]) -> list[str]:
    return [
        value.strip()
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET
    ]


def _token_file(agent_dir: str | os.PathLike[str] | None) -> list[str]:
    if agent_dir is None:
        return []
    try:
        # As `Path.read_text` reads it; no pathlib on `pct apply-patch`'s path.
        with open(os.path.join(agent_dir, "pct", "token"), encoding="ascii") as handle:
            value = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return []
    return [value] if len(value) >= _MIN_SECRET else []


#: Typed input shorter than this is not redacted from output (`y`, `ls` would blank it).
MIN_TYPED = 4


def typed_pieces(chars: str) -> tuple[str, ...]:
    """The lines a `write_stdin` typed, as a program may echo them back (each stripped; at
    least `MIN_TYPED` characters)."""
    pieces = {piece.strip() for piece in chars[:SCAN_LIMIT].replace("\r", "\n").split("\n")}
    return tuple(piece for piece in pieces if len(piece) >= MIN_TYPED)


class Redactor:
    """Replaces secrets in text; built once per journal writer (secrets read at build)."""

    def __init__(
        self,
        agent_dir: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        extra: Iterable[str] = (),
    ) -> None:
        environ = os.environ if env is None else env
        values = {*_env_secrets(environ), *_token_file(agent_dir)}
        values.update(v for v in extra if len(v) >= _MIN_SECRET)
        # Longest first: a secret containing another is replaced whole.
        self._exact = sorted(values, key=len, reverse=True)
        # The token file may be made after us (`pct serve --http` creates it on first use).
        self._agent_dir = agent_dir if not _token_file(agent_dir) else None

    def add_secret(self, value: str) -> None:
        """A secret learned later (the HTTP server's token)."""
        if len(value) >= _MIN_SECRET and value not in self._exact:
            self._exact.append(value)
            self._exact.sort(key=len, reverse=True)

    def __call__(self, text: str, limit: int | None = None, also: Iterable[str] = ()) -> str:
        """`text` without secrets (and without the strings in `also`: input a call typed),
        at most `limit` characters (an ellipsis marks a cut)."""
        if self._agent_dir is not None:
            token = _token_file(self._agent_dir)
            if token:
                self._agent_dir = None
                self.add_secret(token[0])
        if len(text) > SCAN_LIMIT:
            text = text[:SCAN_LIMIT]
        for secret in (*self._exact, *sorted(also, key=len, reverse=True)):
            if secret in text:
                text = text.replace(secret, REDACTED)
        if _may_hold_a_shape(text):
            shapes, marked = _compiled()
            text = shapes.sub(REDACTED, text)
            for pattern in marked:
                text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        if limit is not None and len(text) > limit:
            text = text[: max(0, limit - 1)] + "…"
        return text
