"""Model registry: catalog, models.json merge rules, settings.json, thinking levels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pct_runtime.host.pi.model_registry import (
    Model,
    ModelRegistry,
    ModelsFileError,
    load_settings,
    merge_models_json,
    supported_thinking_levels,
)


def write(agent: Path, name: str, obj: object) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / name).write_text(json.dumps(obj), encoding="utf-8")


def test_builtin_catalog_has_both_official_providers() -> None:
    reg = ModelRegistry.builtin()
    codex = reg.find("openai-codex", "gpt-5.4")
    assert codex is not None
    assert (codex.api, codex.base_url) == (
        "openai-codex-responses",
        "https://chatgpt.com/backend-api",
    )
    assert codex.reasoning
    assert codex.has_image_input
    api = reg.find("openai", "gpt-5.4")
    assert api is not None
    assert (api.api, api.base_url) == ("openai-responses", "https://api.openai.com/v1")
    spark = reg.find("openai-codex", "gpt-5.3-codex-spark")
    assert spark is not None
    assert spark.input == ("text",)
    assert reg.find("openai-codex", "gpt-4o") is None


def test_provider_base_url_reroutes_all_builtin_models() -> None:
    models, _ = merge_models_json(
        {"providers": {"openai": {"baseUrl": "https://proxy.example/v1"}}}
    )
    openai = [m for m in models.values() if m.provider == "openai"]
    assert openai
    assert all(m.base_url == "https://proxy.example/v1" for m in openai)
    assert models[("openai-codex", "gpt-5.4")].base_url == "https://chatgpt.com/backend-api"


def test_model_overrides_patch_one_model() -> None:
    models, _ = merge_models_json(
        {
            "providers": {
                "openai-codex": {
                    "modelOverrides": {
                        "gpt-5.4": {
                            "input": ["text"],
                            "thinkingLevelMap": {"max": "max", "low": None},
                        }
                    }
                }
            }
        }
    )
    m = models[("openai-codex", "gpt-5.4")]
    assert m.input == ("text",)
    assert supported_thinking_levels(m) == ("off", "minimal", "medium", "high", "xhigh", "max")
    assert models[("openai-codex", "gpt-5.2")].input == ("text", "image")


def test_custom_provider_models_inherit_api_and_base_url() -> None:
    models, keys = merge_models_json(
        {
            "providers": {
                "my-proxy": {
                    "baseUrl": "https://proxy.example/v1",
                    "api": "openai-responses",
                    "apiKey": "$PROXY_KEY",
                    "models": [
                        {"id": "gpt-5.4", "reasoning": True, "input": ["text", "image"]},
                        {
                            "id": "vendor/model",
                            "api": "openai-completions",
                            "baseUrl": "https://x.example",
                        },
                    ],
                }
            }
        }
    )
    m = models[("my-proxy", "gpt-5.4")]
    assert (m.api, m.base_url, m.reasoning, m.input) == (
        "openai-responses",
        "https://proxy.example/v1",
        True,
        ("text", "image"),
    )
    m2 = models[("my-proxy", "vendor/model")]
    assert (m2.api, m2.base_url, m2.name) == (
        "openai-completions",
        "https://x.example",
        "vendor/model",
    )
    assert keys == {"my-proxy": "$PROXY_KEY"}


def test_custom_model_in_builtin_provider_is_upserted_with_provider_route() -> None:
    models, _ = merge_models_json(
        {"providers": {"openai-codex": {"models": [{"id": "gpt-6-astra", "reasoning": True}]}}}
    )
    m = models[("openai-codex", "gpt-6-astra")]
    assert (m.api, m.base_url) == ("openai-codex-responses", "https://chatgpt.com/backend-api")


def test_model_level_api_and_base_url_win() -> None:
    models, _ = merge_models_json(
        {
            "providers": {
                "openai": {
                    "models": [
                        {
                            "id": "gpt-5.4",
                            "api": "openai-completions",
                            "baseUrl": "https://api.openai.com/v2",
                        }
                    ]
                }
            }
        }
    )
    m = models[("openai", "gpt-5.4")]
    assert (m.api, m.base_url) == ("openai-completions", "https://api.openai.com/v2")


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "models.json must be a JSON object"),
        ({"providers": []}, "providers must be an object"),
        ({"providers": {"x": {"models": [{"id": "m"}]}}}, "providers.x.models[0].api is required"),
        (
            {"providers": {"x": {"api": "a", "models": [{"id": "m"}]}}},
            "providers.x.models[0].baseUrl is required",
        ),
        (
            {
                "providers": {
                    "x": {"api": "a", "baseUrl": "b", "models": [{"id": "m", "input": ["audio"]}]}
                }
            },
            "input must be",
        ),
        (
            {"providers": {"openai": {"modelOverrides": {"gpt-5": {"reasoning": "yes"}}}}},
            "reasoning",
        ),
    ],
)
def test_invalid_models_json_is_rejected(obj: object, message: str) -> None:
    with pytest.raises(ModelsFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        merge_models_json(obj)


def test_invalid_models_json_keeps_builtin_catalog(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text("{not json", encoding="utf-8")
    reg = ModelRegistry.load(tmp_path, env={})
    assert reg.error == "models.json is not valid JSON"
    assert reg.find("openai-codex", "gpt-5.4") is not None


def test_models_json_error_names_the_file_once(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text("[]", encoding="utf-8")
    assert ModelRegistry.load(tmp_path, env={}).error == "models.json must be a JSON object"
    (tmp_path / "models.json").write_text('{"providers": []}', encoding="utf-8")
    assert ModelRegistry.load(tmp_path, env={}).error == "models.json: providers must be an object"


def test_availability_follows_credentials(tmp_path: Path) -> None:
    write(
        tmp_path,
        "auth.json",
        {"openai-codex": {"type": "oauth", "access": "a.b.c", "refresh": "r", "expires": 1}},
    )
    reg = ModelRegistry.load(tmp_path, env={})
    providers = {m.provider for m in reg.available()}
    assert providers == {"openai-codex"}
    reg2 = ModelRegistry.load(tmp_path, env={"OPENAI_API_KEY": "sk-test"})
    assert {m.provider for m in reg2.available()} == {"openai", "openai-codex"}


def test_models_json_api_key_makes_custom_provider_available(tmp_path: Path) -> None:
    write(
        tmp_path,
        "models.json",
        {
            "providers": {
                "p": {
                    "baseUrl": "https://p.example",
                    "api": "openai-responses",
                    "apiKey": "K",
                    "models": [{"id": "m"}],
                }
            }
        },
    )
    reg = ModelRegistry.load(tmp_path, env={})
    assert [m.key for m in reg.available()] == ["p/m"]


def test_thinking_levels() -> None:
    base = Model(
        "openai-codex",
        "gpt-5.1",
        "openai-codex-responses",
        "https://chatgpt.com/backend-api",
        reasoning=True,
    )
    assert supported_thinking_levels(base) == ("off", "minimal", "low", "medium", "high")
    xhigh = Model("openai-codex", "gpt-5.4", "openai-codex-responses", "u", reasoning=True)
    assert "xhigh" in supported_thinking_levels(xhigh)
    plain = Model("openai", "gpt-4o", "openai-responses", "u")
    assert supported_thinking_levels(plain) == ("off",)


def test_settings_default_and_scope(tmp_path: Path) -> None:
    write(
        tmp_path,
        "settings.json",
        {
            "defaultProvider": "openai-codex",
            "defaultModel": "gpt-5.4",
            "enabledModels": ["openai-codex/*:high", "gpt-4o"],
        },
    )
    settings = load_settings(tmp_path)
    reg = ModelRegistry.builtin()
    default = reg.default_model(settings)
    assert default is not None
    assert default.key == "openai-codex/gpt-5.4"
    scoped = {m.key for m in reg.scoped(settings)}
    assert "openai-codex/gpt-5.1" in scoped
    assert "openai/gpt-4o" in scoped
    assert "openai/gpt-5.4" not in scoped


def test_missing_or_broken_settings(tmp_path: Path) -> None:
    assert load_settings(tmp_path).default_model is None
    (tmp_path / "settings.json").write_text("[]", encoding="utf-8")
    assert load_settings(tmp_path).error == "settings.json must be a JSON object"


def test_project_settings_win_per_key_over_the_global_file(tmp_path: Path) -> None:
    """Pi merges `<cwd>/.pi/settings.json` over the global file (one level deep)."""
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    write(agent, "settings.json", {"defaultProvider": "openai-codex", "defaultModel": "gpt-5.4"})
    write(project / ".pi", "settings.json", {"defaultModel": "gpt-5.1", "enabledModels": ["o3"]})
    settings = load_settings(agent, project)
    assert (settings.default_provider, settings.default_model) == ("openai-codex", "gpt-5.1")
    assert settings.enabled_models == ("o3",)
    assert settings.error is None
    # without a cwd (or without a project file) only the global file counts
    assert load_settings(agent).default_model == "gpt-5.4"
    assert load_settings(agent, tmp_path).default_model == "gpt-5.4"


def test_a_broken_project_settings_file_is_named_and_the_global_file_still_counts(
    tmp_path: Path,
) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    write(agent, "settings.json", {"defaultProvider": "openai", "defaultModel": "gpt-5"})
    (project / ".pi" / "settings.json").write_text("{", encoding="utf-8")
    settings = load_settings(agent, project)
    assert (settings.default_provider, settings.default_model) == ("openai", "gpt-5")
    assert settings.error == f"{project / '.pi' / 'settings.json'} unreadable or not valid JSON"
    (agent / "settings.json").write_text("[]", encoding="utf-8")
    assert load_settings(agent, project).error == (
        "settings.json must be a JSON object; "
        f"{project / '.pi' / 'settings.json'} unreadable or not valid JSON"
    )
