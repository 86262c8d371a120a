"""Tool Discovery eligibility reasons and load validation (pure)."""

from __future__ import annotations

from decide_fixtures import CODEX, THIRD_PARTY, plan, rules, tools

from pct_runtime.decide.discovery import eligibility, load_names, managed_eligibility

DISC = {"toolDiscovery": {"enabled": True}}
CU = (
    "computer_use_list_apps",
    "computer_use_get_app_state",
    "computer_use_click",
    "computer_use_type_text",
    "computer_use_press_key",
    "computer_use_scroll",
)


def reason(name: str, p: object) -> str:
    result = eligibility(name, p)  # type: ignore[arg-type]
    return "ok" if result.ok else result.reason


def test_ownership_reasons() -> None:
    cfg = {**DISC, "imageGeneration": {"enabled": True}}
    assert (
        reason(
            "openai_generate_image", plan(cfg, snapshot=tools(foreign=["openai_generate_image"]))
        )
        == "conflicting-tool-name"
    )
    snap = tools(allow=["read", "find_tools"])
    assert reason("openai_generate_image", plan(cfg, snapshot=snap)) == "not-registered"
    assert reason("openai_generate_image", plan(cfg)) == "ok"


def test_feature_reasons() -> None:
    assert reason("openai_generate_image", plan(DISC)) == "disabled"
    assert (
        reason(
            "openai_generate_image",
            plan({**DISC, "imageGeneration": {"enabled": True}}, model=None),
        )
        == "current-model-missing"
    )
    ws_native = {**DISC, "webSearch": {"enabled": True, "backend": "native"}}
    assert reason("openai_web_search", plan(ws_native)) == "native-backend"
    assert reason("openai_web_search", plan(DISC)) == "disabled"
    assert (
        reason(
            "openai_web_search", plan({**DISC, "webSearch": {"enabled": True}}, model=THIRD_PARTY)
        )
        == "missing-sidecar-model"
    )
    cu = {**DISC, "computerUse": {"enabled": True}}
    assert reason("computer_use_click", plan(cu, platform="linux")) == "unsupported-platform"
    assert reason("computer_use_click", plan(cu, ui=False)) == "no-interactive-ui"
    assert reason("computer_use_click", plan(cu)) == "ok"


def test_execution_names_follow_routes() -> None:
    p = plan(rules(("r", "*", True, False, True), **DISC))
    assert reason("apply_patch", p) == "nested-only"
    assert reason("exec_command", p) == "nested-only"
    assert reason("exec", p) == "ok"
    assert reason("apply_patch", plan(DISC)) == "disabled"


def test_pair_siblings_checked_jointly() -> None:
    shell = {**DISC, "shellSessions": {"enabled": True}}
    assert (
        reason("exec_command", plan(shell, snapshot=tools(foreign=["write_stdin"])))
        == "conflicting-tool-name"
    )
    snap = tools(allow=["read", "find_tools", "exec_command"])
    assert reason("exec_command", plan(shell, snapshot=snap)) == "not-registered"
    assert reason("write_stdin", plan(shell)) == "ok"


def test_not_managed() -> None:
    p = plan(
        {"toolDiscovery": {"enabled": True, "deferred": []}, "applyPatch": {"enabled": True}},
        model=CODEX,
    )
    result = managed_eligibility("apply_patch", p)
    assert (result.ok, result.reason) == (False, "not-managed")


def test_load_groups_and_rejections() -> None:
    cu = {**DISC, "computerUse": {"enabled": True}, "imageGeneration": {"enabled": True}}
    ok = load_names(["computer_use_click", "openai_generate_image", "find_tools"], plan(cu))
    assert ok.add == (*CU, "openai_generate_image")
    assert ok.rejected == (("find_tools", "not-managed"),)
    blocked = load_names(["computer_use_scroll"], plan(cu, ui=False))
    assert blocked.add == ()
    assert blocked.rejected == tuple(
        (n, "group blocked by computer_use_list_apps: no-interactive-ui") for n in CU
    )


def test_load_incomplete_group() -> None:
    # A programmatic managed set that lists only part of the group (config forbids it).
    p = plan({**DISC, "computerUse": {"enabled": True}})
    from dataclasses import replace

    partial = replace(p, managed_deferred=("computer_use_click",))
    result = load_names(["computer_use_click"], partial)
    assert result.rejected[0] == (
        "computer_use_list_apps",
        "group incomplete: computer_use_list_apps is not managed",
    )
    assert len(result.rejected) == 6
