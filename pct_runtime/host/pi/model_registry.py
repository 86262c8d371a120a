"""Pi's model registry: the built-in catalog merged with `models.json`, and `settings.json`.

Merge rules, as Pi applies them: a built-in provider entry re-routes all its models
to its `baseUrl` (and `api`/`headers` when given); `modelOverrides` patch single built-in
models; `models` are upserted by id, inheriting `api`/`baseUrl` from their provider.
A model is *available* when its provider has a credential (`credentials.py`).
An invalid `models.json` leaves the built-in catalog in force and records the error,
as Pi's registry does.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pct_runtime.datarecord import datarecord, field, replace
from pct_runtime.host.pi.catalog import BUILTIN_PROVIDERS, XHIGH_ID_MARKERS
from pct_runtime.host.pi.credentials import Credentials
from pct_runtime.jsontypes import JSONMapping, JSONObject

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_DEFAULT_REASONING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high")
_INPUT_KINDS = ("text", "image")


@datarecord
class Model:
    """One registry model: identity, route (api + baseUrl), modalities and reasoning."""

    provider: str
    id: str
    api: str
    base_url: str
    name: str = ""
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    context_window: int = 128000
    max_tokens: int = 16384
    #: level -> provider value, or None = unsupported (Pi's tristate `thinkingLevelMap`).
    thinking_level_map: Mapping[str, str | None] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.id}"

    @property
    def has_image_input(self) -> bool:
        return "image" in self.input


def supported_thinking_levels(model: Model) -> tuple[str, ...]:
    """Pi's `getSupportedThinkingLevels(model)`.

    Non-reasoning models support only `off`. Reasoning models support off..high, plus
    `xhigh` for ids Pi marks as xhigh-capable; a `thinkingLevelMap` string enables a level
    (including `xhigh`/`max`) and `null` hides it.
    """
    if not model.reasoning:
        return ("off",)
    levels = set(_DEFAULT_REASONING_LEVELS)
    if any(marker in model.id for marker in XHIGH_ID_MARKERS):
        levels.add("xhigh")
    for level, value in model.thinking_level_map.items():
        if value is None:
            levels.discard(level)
        elif level in THINKING_LEVELS:
            levels.add(level)
    return tuple(level for level in THINKING_LEVELS if level in levels)


class ModelsFileError(ValueError):
    """`models.json` does not match Pi's schema; str() names the first problem."""


def _builtin_models() -> dict[tuple[str, str], Model]:
    models: dict[tuple[str, str], Model] = {}
    for provider, (api, base_url, entries) in BUILTIN_PROVIDERS.items():
        for entry in entries:
            models[(provider, entry.id)] = Model(
                provider=provider,
                id=entry.id,
                api=api,
                base_url=base_url,
                name=entry.id,
                reasoning=entry.reasoning,
                input=("text", "image") if entry.image else ("text",),
                context_window=entry.context_window,
                max_tokens=entry.max_tokens,
            )
    return models


def _opt_str(obj: JSONMapping, key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ModelsFileError(f"{where}.{key} must be a non-empty string")
    return value


def _model_fields(obj: JSONMapping, where: str) -> JSONObject:
    """Validate the overridable model fields and map them to `Model` attribute names."""
    out: JSONObject = {}
    if (name := _opt_str(obj, "name", where)) is not None:
        out["name"] = name
    if (api := _opt_str(obj, "api", where)) is not None:
        out["api"] = api
    if (base := _opt_str(obj, "baseUrl", where)) is not None:
        out["base_url"] = base
    if "reasoning" in obj:
        if not isinstance(obj["reasoning"], bool):
            raise ModelsFileError(f"{where}.reasoning must be true or false")
        out["reasoning"] = obj["reasoning"]
    if "input" in obj:
        kinds = obj["input"]
        if (
            not isinstance(kinds, list)
            or not kinds
            or any(kind not in _INPUT_KINDS for kind in kinds)
        ):
            raise ModelsFileError(f'{where}.input must be ["text"] or ["text","image"]')
        out["input"] = tuple(kind for kind in _INPUT_KINDS if kind in kinds)
    for key, attr in (("contextWindow", "context_window"), ("maxTokens", "max_tokens")):
        if key in obj:
            value = obj[key]
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ModelsFileError(f"{where}.{key} must be a positive integer")
            out[attr] = value
    if "thinkingLevelMap" in obj:
        raw = obj["thinkingLevelMap"]
        if not isinstance(raw, dict) or any(
            level not in THINKING_LEVELS or not (value is None or isinstance(value, str))
            for level, value in raw.items()
        ):
            raise ModelsFileError(
                f"{where}.thinkingLevelMap must map thinking levels to a string or null"
            )
        out["thinking_level_map"] = dict(raw)
    return out


def merge_models_json(
    obj: object, base: Mapping[tuple[str, str], Model] | None = None
) -> tuple[dict[tuple[str, str], Model], dict[str, str]]:
    """Merge a decoded `models.json` over the catalog.

    Returns (models by (provider, id), provider apiKey values). Raises `ModelsFileError`.
    """
    models = dict(_builtin_models() if base is None else base)
    keys: dict[str, str] = {}
    if not isinstance(obj, dict):
        raise ModelsFileError("models.json must be a JSON object")
    providers = obj.get("providers", {})
    if not isinstance(providers, dict):
        raise ModelsFileError("providers must be an object")
    for provider, cfg in providers.items():
        where = f"providers.{provider}"
        if not isinstance(cfg, dict):
            raise ModelsFileError(f"{where} must be an object")
        base_url = _opt_str(cfg, "baseUrl", where)
        api = _opt_str(cfg, "api", where)
        api_key = _opt_str(cfg, "apiKey", where)
        if api_key is not None:
            keys[provider] = api_key
        if provider in BUILTIN_PROVIDERS:
            _reroute_builtin(models, provider, base_url, api)
        _apply_overrides(models, provider, cfg, where)
        _upsert_custom(models, provider, cfg, where, base_url, api)
    return models, keys


def _reroute_builtin(
    models: dict[tuple[str, str], Model], provider: str, base_url: str | None, api: str | None
) -> None:
    """A built-in provider entry re-routes every one of its models."""
    patch: JSONObject = {}
    if base_url is not None:
        patch["base_url"] = base_url
    if api is not None:
        patch["api"] = api
    if not patch:
        return
    for model_key, model in list(models.items()):
        if model.provider == provider:
            models[model_key] = replace(model, **patch)


def _apply_overrides(
    models: dict[tuple[str, str], Model], provider: str, cfg: JSONObject, where: str
) -> None:
    """`modelOverrides` patch single models that already exist (others are ignored)."""
    overrides = cfg.get("modelOverrides", {})
    if not isinstance(overrides, dict):
        raise ModelsFileError(f"{where}.modelOverrides must be an object")
    for model_id, override in overrides.items():
        if not isinstance(override, dict):
            raise ModelsFileError(f"{where}.modelOverrides.{model_id} must be an object")
        fields = _model_fields(override, f"{where}.modelOverrides.{model_id}")
        existing = models.get((provider, model_id))
        if existing is not None:
            models[(provider, model_id)] = replace(existing, **fields)


def _upsert_custom(
    models: dict[tuple[str, str], Model],
    provider: str,
    cfg: JSONObject,
    where: str,
    base_url: str | None,
    api: str | None,
) -> None:
    """`models` are upserted by id, inheriting `api`/`baseUrl` from their provider entry
    (or, for a built-in provider, from its built-in route)."""
    custom = cfg.get("models", [])
    if not isinstance(custom, list):
        raise ModelsFileError(f"{where}.models must be an array")
    builtin = BUILTIN_PROVIDERS.get(provider)
    for index, entry in enumerate(custom):
        mwhere = f"{where}.models[{index}]"
        if not isinstance(entry, dict):
            raise ModelsFileError(f"{mwhere} must be an object")
        model_id = _opt_str(entry, "id", mwhere)
        if model_id is None:
            raise ModelsFileError(f"{mwhere}.id is required")
        fields = _model_fields(entry, mwhere)
        fields.setdefault("api", api or (builtin[0] if builtin else None))
        fields.setdefault("base_url", base_url or (builtin[1] if builtin else None))
        if fields["api"] is None:
            raise ModelsFileError(f"{mwhere}.api is required (on the model or its provider)")
        if fields["base_url"] is None:
            raise ModelsFileError(f"{mwhere}.baseUrl is required (on the model or its provider)")
        fields.setdefault("name", model_id)
        models[(provider, model_id)] = Model(provider=provider, id=model_id, **fields)


@datarecord
class Settings:
    """The model keys of Pi's `settings.json` (global, with the project file merged over)."""

    default_provider: str | None = None
    default_model: str | None = None
    enabled_models: tuple[str, ...] = ()
    error: str | None = None


#: Where Pi keeps a project's settings, relative to the working directory.
PROJECT_SETTINGS = Path(".pi") / "settings.json"


def _read_settings_file(path: Path, label: str) -> tuple[JSONObject, str | None]:
    """The file's top-level object ({} when absent) and a problem text naming `label`."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError):
        return {}, f"{label} unreadable or not valid JSON"
    if not isinstance(raw, dict):
        return {}, f"{label} must be a JSON object"
    return raw, None


def load_settings(agent_dir: Path, cwd: Path | None = None) -> Settings:
    """Pi's settings as Pi merges them (`SettingsManager`): `<agent dir>/settings.json`,
    then `<cwd>/.pi/settings.json` over it — one level deep, so each model key the project
    file sets wins. A broken file contributes nothing and is named in `error`; the other
    file still counts. Without `cwd` only the global file is read."""
    merged, problem = _read_settings_file(agent_dir / "settings.json", "settings.json")
    problems = [problem] if problem else []
    if cwd is not None:
        project_path = Path(cwd) / PROJECT_SETTINGS
        project, problem = _read_settings_file(project_path, str(project_path))
        if problem:
            problems.append(problem)
        for key, value in project.items():
            base = merged.get(key)
            if isinstance(base, dict) and isinstance(value, dict):
                merged[key] = {**base, **value}
            else:
                merged[key] = value
    provider = merged.get("defaultProvider")
    model = merged.get("defaultModel")
    enabled = merged.get("enabledModels")
    return Settings(
        default_provider=provider if isinstance(provider, str) and provider else None,
        default_model=model if isinstance(model, str) and model else None,
        enabled_models=tuple(p for p in enabled if isinstance(p, str) and p)
        if isinstance(enabled, list)
        else (),
        error="; ".join(problems) or None,
    )


class ModelRegistry:
    """`getAll` / `getAvailable` / `find` / `isUsingOAuth` over merged models and credentials."""

    def __init__(
        self,
        models: Iterable[Model],
        credentials: Credentials,
        error: str | None = None,
    ) -> None:
        self._models: dict[tuple[str, str], Model] = {(m.provider, m.id): m for m in models}
        self.credentials = credentials
        self.error = error

    @classmethod
    def builtin(cls, credentials: Credentials | None = None) -> ModelRegistry:
        return cls(_builtin_models().values(), credentials or Credentials({}, env={}))

    @classmethod
    def load(cls, agent_dir: Path, env: Mapping[str, str] | None = None) -> ModelRegistry:
        """Read `models.json` and `auth.json` under `agent_dir` (both optional)."""
        models: dict[tuple[str, str], Model] = _builtin_models()
        keys: dict[str, str] = {}
        error: str | None = None
        path = agent_dir / "models.json"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except OSError as exc:
            text, error = None, f"models.json unreadable ({exc.__class__.__name__})"
        if text is not None:
            try:
                models, keys = merge_models_json(json.loads(text))
            except json.JSONDecodeError:
                error = "models.json is not valid JSON"
            except ModelsFileError as exc:
                message = str(exc)
                error = message if message.startswith("models.json") else f"models.json: {message}"
        credentials = Credentials.load(agent_dir, env, keys)
        return cls(models.values(), credentials, error)

    def all(self) -> list[Model]:
        return list(self._models.values())

    def find(self, provider: str, model_id: str) -> Model | None:
        return self._models.get((provider, model_id))

    def has_auth(self, model: Model) -> bool:
        return self.credentials.has_auth(model.provider)

    def available(self) -> list[Model]:
        return [m for m in self._models.values() if self.credentials.has_auth(m.provider)]

    def is_available(self, model: Model) -> bool:
        return self.has_auth(model)

    def is_using_oauth(self, model: Model) -> bool:
        return self.credentials.is_using_oauth(model.provider)

    def default_model(self, settings: Settings) -> Model | None:
        """Pi's default: `defaultProvider` + `defaultModel` when the registry knows it."""
        if settings.default_provider and settings.default_model:
            return self.find(settings.default_provider, settings.default_model)
        return None

    def scoped(self, settings: Settings) -> list[Model]:
        """Models selected by `enabledModels` (empty pattern list selects none)."""
        chosen: list[Model] = []
        for pattern in settings.enabled_models:
            for model in self._match_scope(pattern):
                if model not in chosen:
                    chosen.append(model)
        return chosen

    def _match_scope(self, pattern: str) -> list[Model]:
        head, sep, tail = pattern.rpartition(":")
        if sep and tail in THINKING_LEVELS:
            pattern = head
        models = list(self._models.values())
        if "/" in pattern:
            hits = [m for m in models if fnmatch.fnmatchcase(m.key.lower(), pattern.lower())]
        else:
            hits = [m for m in models if fnmatch.fnmatchcase(m.id.lower(), pattern.lower())]
        if hits or any(ch in pattern for ch in "*?["):
            return hits
        needle = pattern.lower()
        return [m for m in models if needle in m.key.lower()]
