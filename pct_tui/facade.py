"""The console's one door onto the runtime.

Screens read and act through a `RuntimeFacade` the app hands them at construction, so no
screen imports `pct_runtime.config`, `host` or `decide`, and none imports the app: what a
screen asks of the app goes up as a message (see `screens/base.py`). This module is the one
place in `pct_tui` that knows those runtime modules for the screens' sake.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from pct_runtime.config import (
    DEFERRABLE_TOOL_NAMES,
    MISSING_REVISION,
    ConfigRead,
    SidecarModel,
    reload_message,
)
from pct_runtime.config.typos import unknown_key_warnings
from pct_runtime.decide.execution import format_execution_block
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.decide.routes import sidecar_candidates, sidecar_efforts
from pct_runtime.host.pi.model_registry import Model, load_settings
from pct_runtime.runtime import Runtime, RuntimeSession
from pct_runtime.runtime.command_policy import preview
from pct_runtime.status import NO_MODEL_LINE
from pct_tui.console import Console, SaveOutcome
from pct_tui.fanout import ReloadResult, reload_others, summary
from pct_tui.journal_access import JournalAccess
from pct_tui.model import RuntimeView
from pct_tui.own import OwnRuntime
from pct_tui.remote import RemoteRuntimes
from pct_tui.serving import AttachInfo
from pct_tui.state.drafts import ConfigDraft
from pct_tui.state.planning import fresh_plan

__all__ = ["DEFERRABLE_TOOL_NAMES", "NO_MODEL_LINE", "Model", "RuntimeFacade", "describe_read"]


def describe_read(result: ConfigRead) -> str:
    """The console's config line, from the store's state now: loaded, or the same error
    text `/pct reload` prints; then a warning per unknown top-level key."""
    if result.error is None:
        if result.revision == MISSING_REVISION:
            line = "Configuration loaded (no file yet: all-off defaults)."
        else:
            line = "Configuration loaded."
        warnings = unknown_key_warnings(result.raw)
        return "\n".join([line, *(f"Warning: {w}" for w in warnings)])
    return reload_message(result.error, result.has_last_known_good)


class RuntimeFacade:
    """What screens need from the runtime and the console state, typed."""

    def __init__(self, console: Console, attach_info: AttachInfo | None = None) -> None:
        self.console = console
        #: The MCP endpoint's attach text once serving started (or the one given for tests).
        self.attach_info = attach_info
        #: Why the MCP endpoint failed to start, if it did.
        self.serve_error: str | None = None
        #: The other runtimes of the agent dir (set by the app).
        self.remotes: RemoteRuntimes | None = None
        #: This console's own runtime, as the screens see every runtime.
        self.own = OwnRuntime(console, lambda: self.attach_info)
        #: The call journal (History screen), opened lazily in its own thread on first use.
        self.journal = JournalAccess(
            lambda: self.runtime.agent_dir, read_only=lambda: self.read_only
        )

    def runtimes(self) -> list[RuntimeView]:
        """Every runtime the console shows: its own first, then each other one found."""
        return [self.own, *(self.remotes.all() if self.remotes is not None else [])]

    # -- config across runtimes ---------------------------------------------------------
    async def save(self) -> SaveOutcome:
        """Save the draft; the console's runtime adopts it and every other one reloads."""
        outcome = await self.console.save()
        if outcome.code not in (None, "apply-failed"):  # nothing was written
            return outcome
        results = await self.reload_others()
        if not results:
            return outcome
        ok = outcome.ok and all(r.ok for r in results)
        return SaveOutcome(ok, f"{outcome.message}\n{summary(results)}", outcome.code)

    async def reload(self) -> tuple[str, list[ReloadResult]]:
        """`/pct reload` for every runtime shown: this one's message, the others' results."""
        message = await self.console.reload()
        return message, await self.reload_others()

    async def reload_others(self) -> list[ReloadResult]:
        """Ask every other runtime to reload (a `--monitor` console asks none: read-only)."""
        if self.remotes is None or self.read_only:
            return []
        results = await reload_others(self.remotes.backend, self.remotes.registered())
        for result in results:
            self.console.log_event("runtime", f"reload {result.line}")
        return results

    @property
    def read_only(self) -> bool:
        """`pct-tui --monitor`: watch only."""
        return self.console.read_only

    @property
    def runtime(self) -> Runtime:
        return self.console.runtime

    @property
    def ready(self) -> bool:
        return self.console.ready

    @property
    def draft(self) -> ConfigDraft:
        return self.console.draft

    # -- status ------------------------------------------------------------------------
    @property
    def load_message(self) -> str:
        """The Status screen's config line, derived from the store now (never left over)."""
        if not self.console.ready:
            return "Reading configuration…"
        return describe_read(self.runtime.store.current())

    @property
    def load_error(self) -> bool:
        return self.console.ready and self.runtime.store.current().error is not None

    @property
    def config_path(self) -> Path:
        return self.runtime.config_path

    @property
    def sessions(self) -> Sequence[RuntimeSession]:
        return tuple(self.runtime.sessions)

    def current_model(self) -> Model | None:
        """The first live session's model, else the runtime's default (the rule preview's)."""
        for session in self.runtime.sessions:
            if session.model is not None:
                return session.model
        return self.runtime.default_model

    @property
    def journal_recording(self) -> bool:
        """Whether this runtime records new calls (`pct.journal.enabled`, read at start and
        on reload); History still lists what was recorded before."""
        return self.runtime.journal.settings.enabled

    @property
    def journal_off_reason(self) -> str | None:
        """Why new calls are not recorded (the field and its rule), or None."""
        journal = self.runtime.journal
        if journal.settings.enabled:
            return None
        return journal.off_reason or "pct.journal.enabled is false"

    # -- draft previews ----------------------------------------------------------------
    def draft_plan(self, model: Model | None = None) -> ProjectionPlan:
        """What a new session would get with the draft."""
        return fresh_plan(self.runtime, config=self.draft.config, model=model)

    def command_preview(self, line: str) -> tuple[str, str]:
        """What `line` would get under the draft's command policy: the line with the part
        the decision is about between ⟦ and ⟧, and the decision with its reason."""
        _, shown, why = preview(line, self.draft.commands)
        return shown, why

    @staticmethod
    def execution_block(plan: ProjectionPlan) -> str:
        return format_execution_block(plan.routes)

    async def sidecar_candidates(self) -> list[str]:
        """Models allowed as the web-search sidecar, read from Pi's settings off the loop."""
        runtime = self.runtime
        settings = await asyncio.to_thread(load_settings, runtime.agent_dir, runtime.cwd)
        scoped = runtime.models.scoped(settings) if settings.enabled_models else None
        return [m.key for m in sidecar_candidates(runtime.models, scoped)]

    def sidecar_efforts(self, current: SidecarModel) -> tuple[str, ...]:
        model = self.runtime.models.find(current.provider, current.model)
        return tuple(sidecar_efforts(model)) if model is not None else ("auto",)
