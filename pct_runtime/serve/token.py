"""The bearer token of pct's HTTP endpoints: `PCT_TOKEN`, else a private file made on first use.

The file lives at `<agent dir>/pct/token`, created exclusively with mode 0600 inside a
0700 directory; it is never printed by pct (attach snippets name the file instead).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

TOKEN_ENV = "PCT_TOKEN"


def state_dir(agent_dir: Path) -> Path:
    """`<agent dir>/pct`, created 0700 when missing."""
    path = agent_dir / "pct"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def token_path(agent_dir: Path) -> Path:
    return agent_dir / "pct" / "token"


def load_or_create_token(agent_dir: Path, env: Mapping[str, str] | None = None) -> str:
    """`PCT_TOKEN` when set (non-empty), else the token file, created on first use."""
    environ = os.environ if env is None else env
    override = environ.get(TOKEN_ENV, "").strip()
    if override:
        return override
    path = token_path(agent_dir)
    with contextlib.suppress(FileNotFoundError):
        existing = path.read_text(encoding="ascii").strip()
        if existing:
            return existing
    state_dir(agent_dir)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race: use its token
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    return token


def token_matches(expected: str, presented: str | None) -> bool:
    """Constant-time comparison; a missing token never matches."""
    if not presented:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), presented.encode("utf-8"))
