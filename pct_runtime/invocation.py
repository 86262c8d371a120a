"""The invocation seam: embedder hooks applied identically to direct and nested calls.

The runtime's call pipeline (`runtime.calls`) runs them, the same for direct and nested
calls: normalized call → admission/ownership → `context(call)` → `policy(call)` → approval
→ executor. A refusal fails with the hook's reason and starts nothing (a refused nested
patch asks no question). The call record carries control identity only — never command,
patch or program text.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict

from pct_runtime.capabilities.base import ToolError
from pct_runtime.jsontypes import JSONMapping

InvocationTool = Literal["exec_command", "write_stdin", "apply_patch"]


class _InvocationCallRequired(TypedDict):
    tool: InvocationTool
    path: Literal["direct", "nested"]
    cwd: str


class InvocationCall(_InvocationCallRequired, total=False):
    cellId: str
    sessionId: str


@dataclass(frozen=True)
class PolicyDecision:
    allow: bool
    reason: str = ""


ContextHook = Callable[[InvocationCall], "JSONMapping | Awaitable[JSONMapping]"]
PolicyHook = Callable[
    [InvocationCall],
    "PolicyDecision | JSONMapping | Awaitable[PolicyDecision | JSONMapping]",
]


@dataclass(frozen=True)
class InvocationHooks:
    """Trusted, code-level hooks of an embedder; no configuration item enables them."""

    context: ContextHook | None = None
    policy: PolicyHook | None = None

    @property
    def empty(self) -> bool:
        return self.context is None and self.policy is None


@dataclass(frozen=True)
class Invocation:
    """The outcome of the seam: the per-spawn environment overlay and whether a hook awaited.

    `awaited` tells the caller to recheck admission (the capability may have been disabled
    or the session replaced while an async hook ran) before any effect.
    """

    env: Mapping[str, str] | None
    awaited: bool


def policy_denied_message(tool: str, reason: str) -> str:
    return f"{tool} was denied by the Toolkit invocation policy: {reason}. Nothing ran."


async def _resolve(value: object) -> tuple[object, bool]:
    if inspect.isawaitable(value):
        return await value, True
    return value, False


def _validate_env(raw: object) -> Mapping[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ToolError(
            "invalid-context",
            "The Toolkit invocation context hook returned a malformed result; expected "
            "{env: {NAME: string}}. Nothing ran.",
        )
    env = raw.get("env")
    if env is None:
        return None
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str)
        and k
        and "=" not in k
        and "\0" not in k
        and isinstance(v, str)
        and "\0" not in v
        for k, v in env.items()
    ):
        raise ToolError(
            "invalid-context",
            "The Toolkit invocation context hook returned a malformed env overlay; expected "
            "string names without '=' and string values. Nothing ran.",
        )
    return dict(env)


async def resolve_invocation(hooks: InvocationHooks | None, call: InvocationCall) -> Invocation:
    """Run the context hook, then the policy hook. Raises `ToolError('policy-denied')` on denial."""
    if hooks is None or hooks.empty:
        return Invocation(env=None, awaited=False)
    awaited = False
    env: Mapping[str, str] | None = None
    if hooks.context is not None:
        raw, was_awaited = await _resolve(hooks.context(call.copy()))
        awaited = awaited or was_awaited
        env = _validate_env(raw)
    if hooks.policy is not None:
        decision, was_awaited = await _resolve(hooks.policy(call.copy()))
        awaited = awaited or was_awaited
        if isinstance(decision, Mapping):
            allow = decision.get("allow") is True
            reason = str(decision.get("reason") or "no reason given")
        elif isinstance(decision, PolicyDecision):
            allow, reason = decision.allow, decision.reason or "no reason given"
        else:
            allow, reason = False, "the policy hook returned a malformed decision"
        if not allow:
            raise ToolError("policy-denied", policy_denied_message(call["tool"], reason))
    return Invocation(env=env, awaited=awaited)


async def invoke_hooks(
    hooks: InvocationHooks | None,
    call: InvocationCall,
    recheck: Callable[[], None] | None = None,
) -> Mapping[str, str] | None:
    """The one place that runs the hooks of a call: context, policy, then `recheck`.

    `recheck` re-runs admission after an awaited hook (the capability may have been
    disabled or the session replaced meanwhile). Returns the per-spawn env overlay.
    """
    invocation = await resolve_invocation(hooks, call)
    if invocation.awaited and recheck is not None:
        recheck()
    return invocation.env
