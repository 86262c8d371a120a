"""Projection: conflict vs absence, deferred overlay, eager replacement, hide/restore natives."""

from __future__ import annotations

from decide_fixtures import CODEX, THIRD_PARTY, plan, rules, tools

NATIVES = ("read", "bash", "edit", "write")
ALL_ON_LEGACY = {
    "applyPatch": {"enabled": True},
    "shellSessions": {"enabled": True},
    "codeMode": {"enabled": True},
}


def test_new_install_projection_keeps_only_natives() -> None:
    p = plan({})
    assert p.active == NATIVES
    assert p.hidden_natives == ()
    assert all(d.effective == "off" for d in p.decisions.values())


def test_legacy_switches_are_additive() -> None:
    p = plan(ALL_ON_LEGACY)
    assert p.active == (*NATIVES, "apply_patch", "exec_command", "write_stdin", "exec", "wait")
    assert p.hidden_natives == ()


def test_rules_hide_and_restore_natives() -> None:
    on = plan(rules(("r", "*", True, True, False)))
    assert on.active == ("read", "apply_patch", "exec_command", "write_stdin")
    assert on.hidden_natives == ("bash", "edit", "write")
    # Model change to an unmatched model: only what we hid comes back.
    off = plan(
        rules(("r", "gpt-5.4", True, True, False)),
        model=THIRD_PARTY,
        active=on.active,
        suppressed=on.native_suppressed,
    )
    assert off.hidden_natives == ()
    assert set(off.active) == {"read", "bash", "edit", "write"}


def test_user_disabled_native_is_never_revived() -> None:
    # `edit` was already inactive before the route hid anything.
    active = ("read", "bash", "write", "apply_patch")
    on = plan(rules(("r", "*", True, False, False)), active=active)
    assert on.hidden_natives == ("write",)
    off = plan(
        rules(("r", "nothing", True, False, False)),
        active=on.active,
        suppressed=on.native_suppressed,
    )
    assert "write" in off.active
    assert "edit" not in off.active


def test_foreign_native_winner_is_never_hidden() -> None:
    snap = tools(extra_foreign=["bash"])
    p = plan(rules(("r", "*", False, True, False)), snapshot=snap)
    assert "bash" in p.active
    assert p.hidden_natives == ()


def test_read_is_never_hidden() -> None:
    p = plan(rules(("r", "*", True, True, True)))
    assert "read" in p.active


def test_conflict_vs_absence_in_projection() -> None:
    # Foreign winner: not touched, reported as conflict.
    foreign = plan(ALL_ON_LEGACY, snapshot=tools(foreign=["exec_command"]))
    assert "exec_command" in foreign.active  # the foreign winner keeps its own state
    assert "write_stdin" not in foreign.active  # our sibling is removed with the pair
    # Filtered (absent): simply not there, nothing added.
    snap = tools(allow=[*NATIVES, "apply_patch"])
    absent = plan(ALL_ON_LEGACY, snapshot=snap)
    assert absent.active == (*NATIVES, "apply_patch")


def test_deferred_names_hidden_until_loaded_and_overlay() -> None:
    cfg = {
        "imageGeneration": {"enabled": True},
        "toolDiscovery": {"enabled": True},
    }
    p = plan(cfg)
    assert "openai_generate_image" not in p.active
    assert "find_tools" in p.active
    assert p.decisions["image_generation"].effective == "deferred"
    assert p.decisions["image_generation"].backend == "codex-oauth"
    assert p.decisions["image_generation"].reason == ""
    assert p.decisions["tool_discovery"].managed == 7
    loaded = plan(cfg, discovered=["openai_generate_image"])
    assert "openai_generate_image" in loaded.active
    assert loaded.decisions["image_generation"].effective == "active"
    assert loaded.decisions["tool_discovery"].loaded == 1


def test_losing_the_loader_restores_ordinary_exposure() -> None:
    cfg = {"imageGeneration": {"enabled": True}, "toolDiscovery": {"enabled": True}}
    p = plan(cfg, snapshot=tools(foreign=["find_tools"]))
    assert "openai_generate_image" in p.active
    assert p.decisions["image_generation"].effective == "active"
    d = p.decisions["tool_discovery"]
    assert (d.effective, d.reason, d.managed, d.loaded) == (
        "unavailable",
        "conflicting-tool-name",
        0,
        0,
    )
    # Discovery off forgets loads and hides nothing.
    off = plan({"imageGeneration": {"enabled": True}}, discovered=["openai_generate_image"])
    assert "openai_generate_image" in off.active


def test_deferred_overlay_needs_every_deferred_member_hidden() -> None:
    cfg = {
        "shellSessions": {"enabled": True},
        "toolDiscovery": {"enabled": True, "deferred": ["exec_command", "write_stdin"]},
    }
    assert plan(cfg).decisions["shell_sessions"].effective == "deferred"
    partly = plan(cfg, discovered=["exec_command"])
    assert partly.decisions["shell_sessions"].effective == "active"
    # Only one member managed: the unmanaged sibling stays active, the row is deferred.
    one = plan({**cfg, "toolDiscovery": {"enabled": True, "deferred": ["exec_command"]}})
    assert "write_stdin" in one.active
    assert "exec_command" not in one.active
    assert one.decisions["shell_sessions"].effective == "deferred"
    # Nothing managed: never deferred.
    none = plan({**cfg, "toolDiscovery": {"enabled": True, "deferred": []}})
    assert none.decisions["shell_sessions"].effective == "active"


def test_eager_replacement_ignores_deferred() -> None:
    cfg = rules(
        ("r", "*", True, True, False),
        toolDiscovery={"enabled": True, "deferred": ["apply_patch", "exec_command", "write_stdin"]},
    )
    p = plan(cfg)
    assert {"apply_patch", "exec_command", "write_stdin"} <= set(p.active)
    assert p.deferred_hidden == ()
    assert p.decisions["apply_patch"].effective == "active"


def test_nested_only_names_are_not_visible() -> None:
    p = plan(rules(("r", "*", True, False, True)))
    assert "apply_patch" not in p.active
    assert "exec_command" not in p.active
    assert {"exec", "wait"} <= set(p.active)
    assert p.nested_only == ("apply_patch", "exec_command", "write_stdin")
    assert p.decisions["apply_patch"].effective == "active"  # nested Patch route is effective


def test_unresolved_identity_owns_nothing() -> None:
    from decide_fixtures import config, registry

    from pct_runtime.capabilities.table import CAPABILITIES
    from pct_runtime.decide.projection import ProjectionInputs, plan_projection

    snap = tools()
    p = plan_projection(
        ProjectionInputs(
            config=config(rules(("r", "*", True, True, True))),
            model=CODEX,
            registry=registry(),
            tools=snap,
            active=tuple(snap.names),
            identity=None,
        ),
        CAPABILITIES,
    )
    assert p.admitted_names == ()
    assert p.hidden_natives == ()
    assert p.decisions["code_mode"].reason == "code-pair-unavailable"  # absence, not conflict


def test_active_list_order_is_stable() -> None:
    active = ("write", "read", "custom", "edit", "bash")
    p = plan({"applyPatch": {"enabled": True}}, active=active)
    assert p.active == ("write", "read", "custom", "edit", "bash", "apply_patch")


def test_sidecar_search_can_be_deferred_but_native_cannot() -> None:
    sidecar = {"provider": "openai-codex", "model": "gpt-5.4", "thinkingLevel": "auto"}
    cfg = {
        "webSearch": {"enabled": True, "backend": "sidecar", "sidecarModel": sidecar},
        "toolDiscovery": {"enabled": True, "deferred": ["openai_web_search"]},
    }
    p = plan(cfg)
    d = p.decisions["web_search"]
    assert (d.effective, d.effective_backend, d.reason) == ("deferred", "sidecar", "")
    assert "openai_web_search" not in p.active
    native = plan({**cfg, "webSearch": {"enabled": True, "backend": "native"}})
    assert native.decisions["web_search"].effective == "active"
    assert "openai_web_search" not in native.active  # the native path needs no tool


def test_foreign_search_tool_kept_and_warned_when_deferred_row_is_quiet() -> None:
    sidecar = {"provider": "openai-codex", "model": "gpt-5.4", "thinkingLevel": "auto"}
    cfg = {
        "webSearch": {"enabled": True, "backend": "sidecar", "sidecarModel": sidecar},
        "toolDiscovery": {"enabled": True, "deferred": ["openai_web_search"]},
    }
    p = plan(cfg, snapshot=tools(extra_foreign=["web_search"]))
    assert "web_search" in p.active  # never touched
    assert p.decisions["web_search"].reason == ""  # deferred rows carry no reason
    loaded = plan(
        cfg, snapshot=tools(extra_foreign=["web_search"]), discovered=["openai_web_search"]
    )
    assert loaded.decisions["web_search"].reason == "conflicting-tool-name"


def test_disabling_discovery_forgets_loads() -> None:
    cfg = {"imageGeneration": {"enabled": True}, "toolDiscovery": {"enabled": True}}
    on = plan(cfg, discovered=["openai_generate_image"])
    assert on.discovered == frozenset({"openai_generate_image"})
    off = plan({"imageGeneration": {"enabled": True}}, discovered=on.discovered)
    assert off.discovered == frozenset()
    again = plan(cfg, discovered=off.discovered)
    assert "openai_generate_image" not in again.active
