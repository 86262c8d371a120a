"""Tool registry: owners, winners, allowlist; owned / foreign / absent are distinct."""

from __future__ import annotations

from pct_runtime.host.pi.tool_registry import (
    BUILTIN_OWNER,
    RUNTIME_OWNER,
    Registration,
    ToolRegistry,
)


def test_natives_are_builtin_registrations() -> None:
    reg = ToolRegistry.with_natives()
    snap = reg.snapshot()
    assert snap.names == ["read", "bash", "edit", "write"]
    assert all(snap.is_builtin_winner(n) for n in snap.names)


def test_owned_foreign_absent() -> None:
    reg = ToolRegistry.with_natives()
    reg.register("apply_patch", RUNTIME_OWNER)
    reg.register("exec", RUNTIME_OWNER)
    reg.register("exec", "other-extension")  # a later registration wins the name
    snap = reg.snapshot()
    assert snap.ownership("apply_patch").state == "owned"
    assert snap.ownership("exec").state == "foreign"
    assert snap.ownership("wait").state == "absent"
    assert snap.visibly_foreign("exec")
    assert not snap.visibly_foreign("wait")
    assert snap.unavailable("exec")
    assert snap.unavailable("wait")


def test_allowlist_filters_to_absent_not_foreign() -> None:
    reg = ToolRegistry.with_natives(allowlist=["read", "bash", "edit", "write"])
    reg.register("apply_patch", RUNTIME_OWNER)
    snap = reg.snapshot()
    assert snap.ownership("apply_patch").state == "absent"
    assert "apply_patch" not in snap.names


def test_unresolved_identity_owns_nothing() -> None:
    reg = ToolRegistry.with_natives()
    reg.register("apply_patch", RUNTIME_OWNER)
    assert reg.snapshot().ownership("apply_patch", None).state == "absent"


def test_foreign_override_of_a_native_is_not_builtin() -> None:
    reg = ToolRegistry.with_natives()
    reg.register("bash", "other")
    snap = reg.snapshot()
    assert not snap.is_builtin_winner("bash")
    winner = snap.winner("bash")
    assert winner == Registration("bash", "other")
    reg.unregister("bash", "other")
    assert reg.snapshot().winner("bash") == Registration("bash", BUILTIN_OWNER)
