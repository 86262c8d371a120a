"""The embedding surface is pinned: an agent that embeds pct imports these names (README
"Embedding the runtime", the Config API of the design), so adding or removing one is a
decision, made here on purpose, not a side effect of a refactor. Each name must also resolve
(a name in `__all__` that fails to import is no API)."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

#: `pct_runtime.runtime`: the runtime, its sessions and what an embedder passes or catches.
RUNTIME_NAMES = {
    "EMBEDDER_OWNER",
    "RUNTIME_EVENTS_CHANNEL",
    "CapabilityBinding",
    "InvocationHooks",
    "ModelRef",
    "Projection",
    "ReloadOutcome",
    "Runtime",
    "RuntimeSession",
    "SessionContext",
    "UnknownModelError",
    "default_bindings",
    "native_names",
}

#: `pct_runtime.config`: the synchronous Config API (parse, read, save) and its models.
CONFIG_NAMES = {
    "COMPUTER_USE_TOOL_NAMES",
    "DEFAULT_DEFERRED_TOOLS",
    "DEFERRABLE_TOOL_NAMES",
    "MISSING_REVISION",
    "ApplyPatchConfig",
    "CodeModeConfig",
    "ComputerUseConfig",
    "ConfigRead",
    "ConfigReadError",
    "ConfigSaveError",
    "ConfigStore",
    "ConfigValidationError",
    "ExecutionConfig",
    "ExecutionRule",
    "ImageGenerationConfig",
    "RemoteCompactionConfig",
    "ShellSessionsConfig",
    "SidecarModel",
    "ToolDiscoveryConfig",
    "ToolkitConfig",
    "WebSearchConfig",
    "agent_dir",
    "config_path",
    "default_config",
    "parse_config",
    "reload_file",
    "reload_message",
    "reload_store",
    "to_json_obj",
}

#: The package itself, and the invocation seam the README's example imports.
PACKAGE_NAMES = {"TOOLKIT_NAME", "__version__"}
INVOCATION_NAMES = {"InvocationHooks"}

SURFACES = [
    ("pct_runtime", PACKAGE_NAMES),
    ("pct_runtime.runtime", RUNTIME_NAMES),
    ("pct_runtime.config", CONFIG_NAMES),
]


@pytest.mark.parametrize(("module_name", "names"), SURFACES, ids=[s[0] for s in SURFACES])
def test_public_names_are_exactly_the_pinned_ones(module_name: str, names: set[str]) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    assert len(module.__all__) == len(exported), f"{module_name}.__all__ repeats a name"
    added, removed = sorted(exported - names), sorted(names - exported)
    assert (added, removed) == ([], []), (
        f"{module_name}.__all__ changed: added {added}, removed {removed}. Update the pinned "
        "list here (and README/docs) only if the embedding API is meant to change."
    )
    for name in names:
        assert getattr(module, name) is not None, f"{module_name}.{name} does not resolve"


def test_the_readme_example_imports_resolve() -> None:
    from pct_runtime.invocation import InvocationHooks
    from pct_runtime.runtime import Runtime, RuntimeSession

    assert {"open_session", "__aenter__", "__aexit__"} <= set(dir(Runtime))
    assert "call" in dir(RuntimeSession)
    assert {f.name for f in dataclasses.fields(InvocationHooks)} >= {"context", "policy"}
    assert set(dir(importlib.import_module("pct_runtime.invocation"))) >= INVOCATION_NAMES


def test_the_config_api_has_its_pinned_shape() -> None:
    """The design's Config API: `parse_config`, `ConfigStore(path).read()` giving
    (config, revision, error), `.save(config, expected_revision)`, and both error types."""
    from pct_runtime.config import ConfigRead, ConfigSaveError, ConfigStore, ConfigValidationError

    assert {"read", "save"} <= set(dir(ConfigStore))
    assert {"config", "revision", "error"} <= set(_field_names(ConfigRead))
    assert issubclass(ConfigValidationError, Exception)
    assert issubclass(ConfigSaveError, Exception)


def _field_names(cls: type) -> list[str]:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    fields = getattr(cls, "_fields", None) or getattr(cls, "model_fields", None) or ()
    return list(fields)
