"""Properties of loading over random configurations (pure decision layer): every requested
name is answered exactly once, loaded names become active after the re-plan, loading never
removes an active name, a second identical load changes nothing, and the query state agrees
with the load verdict."""

from __future__ import annotations

from typing import Any

from discovery_support import CODEX, CU, registry
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pct_runtime.capabilities.table import CAPABILITIES
from pct_runtime.config import parse_config
from pct_runtime.decide.discovery import discovery_state, load_names
from pct_runtime.decide.projection import ProjectionInputs, ProjectionPlan, plan_projection
from pct_runtime.host.pi.names import DEFERRABLE_TOOL_NAMES, OWNED_TOOL_NAMES
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry

SINGLE = [name for name in DEFERRABLE_TOOL_NAMES if name not in CU]
FEATURES = ["imageGeneration", "applyPatch", "computerUse", "shellSessions", "codeMode"]
REQUESTABLE = [*DEFERRABLE_TOOL_NAMES, "find_tools", "bash", "unknown_tool"]
REG = registry()


def plan_for(
    cfg: dict[str, Any], foreign: frozenset[str], discovered: frozenset[str], active: Any
) -> ProjectionPlan:
    reg = ToolRegistry.with_natives()
    for name in OWNED_TOOL_NAMES:
        reg.register(name, RUNTIME_OWNER)
    for name in sorted(foreign):
        reg.register(name, "other-extension")
    snapshot = reg.snapshot()
    return plan_projection(
        ProjectionInputs(
            config=parse_config(cfg),
            model=CODEX,
            registry=REG,
            tools=snapshot,
            active=tuple(snapshot.names) if active is None else active,
            ui_available=True,
            platform="darwin",
            discovered=discovered,
        ),
        CAPABILITIES,
    )


configs = st.builds(
    lambda deferred, with_cu, enabled, web: {
        "toolDiscovery": {
            "enabled": True,
            "deferred": [*deferred, *(CU if with_cu else ())],
        },
        **{feature: {"enabled": True} for feature in enabled},
        **(
            {
                "webSearch": {
                    "enabled": True,
                    "backend": "sidecar",
                    "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"},
                }
            }
            if web
            else {}
        ),
    },
    st.lists(st.sampled_from(SINGLE), unique=True),
    st.booleans(),
    st.lists(st.sampled_from(FEATURES), unique=True),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(
    cfg=configs,
    foreign=st.frozensets(st.sampled_from(list(DEFERRABLE_TOOL_NAMES)), max_size=2),
    request=st.lists(st.sampled_from(REQUESTABLE), min_size=1, max_size=5, unique=True),
)
def test_load_properties(cfg: dict[str, Any], foreign: frozenset[str], request: list[str]) -> None:
    before = plan_for(cfg, foreign, frozenset(), None)
    result = load_names(request, before)
    loaded = set(result.loaded)
    rejected = {name for name, _ in result.rejected}
    assert not loaded & rejected
    for name in request:  # every requested name is answered
        assert name in loaded | rejected
    for name in request:  # the query state agrees with the load verdict for a managed name
        if name not in before.managed_deferred:
            assert name in rejected
            continue
        state = discovery_state(name, before)
        if name in loaded:
            assert state in ("active", "eligible")
        else:
            assert state.startswith("unavailable: ")
    event("loaded something" if loaded else "loaded nothing")
    event("added something" if result.add else "added nothing")
    if loaded & set(CU):  # the atomic group loads whole
        assert set(CU) <= loaded
    after = plan_for(cfg, foreign, frozenset(loaded), before.active)
    assert loaded <= set(after.active)
    assert set(before.active) <= set(after.active)  # additive: nothing removed
    again = load_names(request, after)
    assert again.loaded == result.loaded
    assert again.add == ()
    steady = plan_for(cfg, foreign, frozenset(loaded), after.active)
    assert steady.active == after.active
