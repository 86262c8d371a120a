"""A runtime's control reply to `reload` names an apply error, so `pct reload` and the
console do not call a config that loaded but could not be applied "reloaded"."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from pct_runtime.serve.run import control_handler

RELOADED = "Pi Codex Toolkit configuration reloaded."


@dataclass
class _Sync:
    errors: dict[str, str] = field(default_factory=dict)

    def apply_error(self, session_id: str) -> str | None:
        return self.errors.get(session_id)


class _Runtime:
    def __init__(self, errors: dict[str, str]) -> None:
        self.projection_sync = _Sync(errors)
        self.sessions = [SimpleNamespace(id="a"), SimpleNamespace(id="b")]

    async def reload(self) -> SimpleNamespace:
        return SimpleNamespace(ok=True, message=RELOADED)


async def test_a_clean_reload_has_no_apply_error() -> None:
    reply = await control_handler(_Runtime({}), "x")("reload")  # type: ignore[arg-type]
    assert dict(reply) == {"ok": True, "message": RELOADED}


async def test_an_apply_error_is_named_once() -> None:
    runtime = _Runtime({"a": "Could not apply.", "b": "Could not apply."})
    reply = await control_handler(runtime, "x")("reload")  # type: ignore[arg-type]
    assert reply["apply_error"] == "Could not apply."
    assert reply["ok"] is True
