"""Projection sync: only the newest plan commits; a failed apply keeps the last commit.

The runtime drives one sync per trigger (session start, model change, config save,
reload):

    ticket = sync.begin(session_id)          # newest generation wins
    plan = plan_projection(inputs)           # pure
    ... await owned-resource cleanup ...
    sync.commit(ticket, plan, ...)           # or sync.reject(ticket, ...)

`commit` of a superseded ticket changes nothing and publishes nothing. A committed sync
publishes the execution diagnostics record (channel `pi-codex-toolkit.execution-
diagnostics`, `version: 1`); a rejected apply keeps the last committed projection, sets
the `Apply error:` text and publishes a record describing that still-committed
projection with `cleanupPending: true`. The record carries names, flags and a config
revision only — never environment, commands, patches or program text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pct_runtime import TOOLKIT_NAME
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.events import EXECUTION_DIAGNOSTICS_CHANNEL, EventBus
from pct_runtime.jsontypes import JSONObject
from pct_runtime.version import version

DIAGNOSTICS_VERSION = 1

#: The fixed `Apply error:` text after a rejected apply (never the rejection's detail).
APPLY_ERROR_TEXT = (
    "applying the configuration failed during owned-resource cleanup; "
    "the previously committed tool projection remains active"
)
#: The fixed text while a Code Mode manager's cleanup is unconfirmed.
CODE_CLEANUP_PENDING_TEXT = (
    "Code Mode cleanup did not confirm; that manager admits no new cell until the cleanup "
    "succeeds. Retained cells keep wait/terminate, and the next lifecycle recovery "
    "(/pct reload, a model change or session replacement) retries the cleanup before "
    "rebinding"
)


def toolkit_identity() -> dict[str, str]:
    """The packaged name and version; an unknown version is reported, never guessed."""
    return {"name": TOOLKIT_NAME, "version": version()}


def build_diagnostics(
    plan: ProjectionPlan,
    *,
    cleanup_pending: bool,
    config_revision: str,
    toolkit: dict[str, str] | None = None,
) -> JSONObject:
    """The version-1 record for a committed projection (JSON-ready, camelCase keys)."""
    routes = plan.routes
    requested = routes.requested
    active = set(plan.active)
    record: JSONObject = {"version": DIAGNOSTICS_VERSION}
    if plan.model is not None:
        record["model"] = {"provider": plan.model.provider, "id": plan.model.id}
    record["source"] = requested.source
    if requested.rule_id is not None:
        record["ruleId"] = requested.rule_id
    record.update(
        {
            "requested": {
                "patch": requested.patch,
                "shell": requested.shell,
                "code": requested.code,
            },
            "effective": {
                "directPatch": routes.direct_patch,
                "nestedPatch": routes.nested_patch,
                "directShell": routes.direct_shell,
                "code": routes.code,
            },
            "admittedNames": list(plan.admitted_names),
            "visibleNames": [name for name in plan.admitted_names if name in active],
            "nestedNames": list(plan.nested_only),
            "hiddenNatives": list(plan.hidden_natives),
            "notes": list(routes.notes),
            "approvalTransport": plan.approval_transport,
            "cleanupPending": cleanup_pending,
            "configRevision": config_revision,
            "toolkit": dict(toolkit or toolkit_identity()),
        }
    )
    return record


@dataclass(frozen=True)
class SyncTicket:
    session_id: str
    generation: int


@dataclass
class _SessionSync:
    generation: int = 0
    committed: ProjectionPlan | None = None
    apply_error: str | None = None
    cleanup_pending: bool = False
    config_revision: str = "missing"


@dataclass
class ProjectionSync:
    """Per-session generations, last committed plan and apply error; publishes diagnostics."""

    bus: EventBus
    toolkit: dict[str, str] = field(default_factory=toolkit_identity)
    _sessions: dict[str, _SessionSync] = field(default_factory=dict)

    def _state(self, session_id: str) -> _SessionSync:
        return self._sessions.setdefault(session_id, _SessionSync())

    def begin(self, session_id: str) -> SyncTicket:
        """Start a sync; every older ticket of this session is superseded from now on."""
        state = self._state(session_id)
        state.generation += 1
        return SyncTicket(session_id, state.generation)

    def is_current(self, ticket: SyncTicket) -> bool:
        return self._state(ticket.session_id).generation == ticket.generation

    def committed(self, session_id: str) -> ProjectionPlan | None:
        return self._state(session_id).committed

    def apply_error(self, session_id: str) -> str | None:
        state = self._state(session_id)
        if state.apply_error is not None:
            return state.apply_error
        return CODE_CLEANUP_PENDING_TEXT if state.cleanup_pending else None

    def commit(
        self,
        ticket: SyncTicket,
        plan: ProjectionPlan,
        *,
        config_revision: str,
        cleanup_pending: bool = False,
    ) -> bool:
        """Commit `plan` if `ticket` is still the newest. Returns False (and publishes
        nothing) when a newer sync superseded it."""
        if not self.is_current(ticket):
            return False
        state = self._state(ticket.session_id)
        state.committed = plan
        state.apply_error = None
        state.cleanup_pending = state.cleanup_pending or cleanup_pending
        state.config_revision = config_revision
        self._publish(plan, cleanup_pending=state.cleanup_pending, config_revision=config_revision)
        return True

    def reject(self, ticket: SyncTicket, *, error_text: str = APPLY_ERROR_TEXT) -> bool:
        """Record a failed apply. The last committed projection stays in force; its record
        is republished with `cleanupPending: true`. Superseded → nothing happens."""
        if not self.is_current(ticket):
            return False
        state = self._state(ticket.session_id)
        state.apply_error = error_text
        if state.committed is not None:
            self._publish(
                state.committed, cleanup_pending=True, config_revision=state.config_revision
            )
        return True

    def set_cleanup_pending(self, session_id: str, pending: bool) -> None:
        """Record an unconfirmed Code Mode cleanup (or its later success).

        Tracked apart from generations: a newer commit can supersede the sync that saw
        the failure while the retained manager stays fenced, so status keeps reporting it.
        """
        self._state(session_id).cleanup_pending = pending

    def forget(self, session_id: str) -> None:
        """Session ended: drop its generations and committed plan."""
        self._sessions.pop(session_id, None)

    def _publish(
        self, plan: ProjectionPlan, *, cleanup_pending: bool, config_revision: str
    ) -> None:
        self.bus.publish(
            EXECUTION_DIAGNOSTICS_CHANNEL,
            build_diagnostics(
                plan,
                cleanup_pending=cleanup_pending,
                config_revision=config_revision,
                toolkit=self.toolkit,
            ),
        )
