"""Applying a planned projection: the start fence and the owned-resource cleanups.

A sync (`RuntimeSession.sync`) plans a candidate projection and, before it may commit,
applies it (toolkit §1.1 step 3, spec `/pct status` and the Shell/Code/Computer Use
lifecycles):

1. The candidate's **start fence** takes effect at once, before any await: new
   `apply_patch`, `exec_command` and `exec` starts are refused for the routes the
   candidate no longer admits, while `write_stdin` and `wait` keep control of work the
   session already owns.
2. The cleanups run: the Code Mode manager is closed when Code is no longer routed (or a
   previous close of it did not confirm); a confirmed close drops it, so the next call
   binds a fresh manager. The shell manager is closed when the shell backend is no longer
   wanted (or a previous close did not confirm) and reopened once the route is back — the
   output owner stays, so recovery files live until the session ends. The Computer Use
   client is reset when its decision is no longer active (off, ineligible, conflict) or
   the approval mode changed. An unconfirmed close keeps its manager (and its real
   ownership): new starts stay refused, retained work stays reachable, and the next sync
   retries.

A model change or an unchanged reload plans the same routes, so nothing is closed and the
session's running work and files are preserved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pct_runtime.config.schema import ApprovalMode, ToolkitConfig
from pct_runtime.decide.projection import ProjectionPlan
from pct_runtime.host.names import APPLY_PATCH_TOOL
from pct_runtime.runtime.managers import built_code, built_computer_use, built_shell
from pct_runtime.runtime.services import SessionServices

if TYPE_CHECKING:
    from pct_runtime.capabilities.code.manager import CodeManager

_log = logging.getLogger(__name__)

#: The tool that starts new work on each fenced route.
SHELL_START_TOOL = "exec_command"
CODE_START_TOOL = "exec"

#: How often a sync re-plans on fresh state before it commits (toolkit §1.1 step 4).
MAX_APPLY_PASSES = 3

_COMPUTER_USE_KEPT = frozenset({"active", "deferred"})


@dataclass(frozen=True)
class Transition:
    """What applying one plan requires: the start fence and the Computer Use state.

    Two plans with equal transitions need the same cleanups, so a re-plan that yields the
    same transition may commit without running them again.
    """

    deny_patch: bool
    deny_shell: bool
    deny_code: bool
    computer_use_kept: bool
    computer_use_mode: ApprovalMode

    @property
    def denied_starts(self) -> frozenset[str]:
        """Names whose new starts the fence refuses."""
        denied: set[str] = set()
        if self.deny_patch:
            denied.add(APPLY_PATCH_TOOL)
        if self.deny_shell:
            denied.add(SHELL_START_TOOL)
        if self.deny_code:
            denied.add(CODE_START_TOOL)
        return frozenset(denied)


def transition_of(plan: ProjectionPlan, config: ToolkitConfig | None) -> Transition:
    """The fence and Computer Use state `plan` asks for under `config`.

    Computer Use is kept while its decision is active or only deferred by Tool Discovery
    (hidden until loaded is not disabled); off, ineligible and conflict reset the client.
    """
    routes = plan.routes
    mode: ApprovalMode = config.computer_use.approval_mode if config is not None else "confirm"
    return Transition(
        deny_patch=not (routes.direct_patch or routes.nested_patch),
        deny_shell=not routes.needs_shell_backend,
        deny_code=not routes.code,
        computer_use_kept=plan.decisions["computer_use"].effective in _COMPUTER_USE_KEPT,
        computer_use_mode=mode,
    )


def _code_busy(manager: CodeManager) -> bool:
    """A Code Mode manager with cells or worker processes (an idle one needs no cleanup,
    and keeping it keeps viewers subscribed)."""
    return bool(manager.cells() or manager.worker_pids())


async def apply_cleanups(
    transition: Transition,
    services: SessionServices,
    *,
    code_pending: Callable[[bool], None],
) -> list[Exception]:
    """Run the cleanups `transition` needs; return the failures (empty = applied).

    Every step runs even when an earlier one failed, so one stuck process does not keep
    the others alive. `code_pending(flag)` records whether a Code Mode manager is left
    with an unconfirmed cleanup (status reports it until a retry confirms it).
    """
    errors: list[Exception] = []
    code = built_code(services)
    if code is not None and (code.closed or (transition.deny_code and _code_busy(code))):
        try:
            await code.close()
        except Exception as exc:
            _log.warning("Code Mode cleanup did not confirm: %s", exc)
            code_pending(True)
            errors.append(exc)
        else:
            services.drop("code")
            code_pending(False)
    shell = built_shell(services)
    if shell is not None and (transition.deny_shell or shell.closed):
        try:
            await shell.close()  # the output owner stays: files live until session end
        except Exception as exc:
            _log.warning("Shell Sessions cleanup did not confirm: %s", exc)
            errors.append(exc)
        else:
            if not transition.deny_shell:
                shell.reopen()
    lifecycle = built_computer_use(services)
    if lifecycle is not None:
        try:
            if not transition.computer_use_kept:
                await lifecycle.reset()
            else:
                await lifecycle.set_approval_mode(transition.computer_use_mode)
        except Exception as exc:
            _log.warning("Computer Use cleanup failed: %s", exc)
            errors.append(exc)
    return errors
