"""The 0.2.0 configuration document: models, validation and serialization.

Validation walks the raw JSON object by hand, in a fixed order, so that the first failing
field and its detail text are exactly the spec's (`applyPatch.enabled must be true or false`)
and the rejected value is never echoed. Pydantic's own messages would quote the input and
report every error at once; they never reach a user. The pydantic models are the typed,
immutable snapshot the rest of the runtime reads.

Check order (first failure wins), the same as the original Toolkit:
1. the document is an object;
2. each section that is present (JSON `null` counts as present) is an object, in the order
   webSearch, remoteCompaction, imageGeneration, applyPatch, computerUse, shellSessions,
   codeMode, toolDiscovery;
3. the whole `execution` section (object, version, rules array, each rule in order);
4. the fields, section by section in the same order, then `debug`.
"""

from __future__ import annotations

import copy
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from pct_runtime.jsontypes import JSONMapping, JSONObject

# -- Names -------------------------------------------------------------------------------

#: The six Computer Use tools: one capability, deferred all together or not at all.
COMPUTER_USE_TOOL_NAMES: tuple[str, ...] = (
    "computer_use_list_apps",
    "computer_use_get_app_state",
    "computer_use_click",
    "computer_use_type_text",
    "computer_use_press_key",
    "computer_use_scroll",
)

#: Names `toolDiscovery.deferred` may list (`find_tools` is never deferrable).
DEFERRABLE_TOOL_NAMES: tuple[str, ...] = (
    "openai_web_search",
    "openai_generate_image",
    "apply_patch",
    "exec_command",
    "write_stdin",
    "exec",
    "wait",
    *COMPUTER_USE_TOOL_NAMES,
)

#: The deferred list of a new file: Image Generation plus the Computer Use group.
DEFAULT_DEFERRED_TOOLS: tuple[str, ...] = ("openai_generate_image", *COMPUTER_USE_TOOL_NAMES)

EXECUTION_SCHEMA_VERSION = 1

WebSearchBackend = Literal["auto", "native", "sidecar"]
WebSearchMode = Literal["live", "cached"]
SearchContextSize = Literal["low", "medium", "high"]
ApprovalMode = Literal["confirm", "always"]
SidecarProvider = Literal["openai", "openai-codex"]
ThinkingLevel = Literal["auto", "off", "minimal", "low", "medium", "high", "xhigh", "max"]

_BACKENDS: tuple[str, ...] = ("auto", "native", "sidecar")
_MODES: tuple[str, ...] = ("live", "cached")
_CONTEXT_SIZES: tuple[str, ...] = ("low", "medium", "high")
_APPROVAL_MODES: tuple[str, ...] = ("confirm", "always")
_SIDECAR_PROVIDERS: tuple[str, ...] = ("openai", "openai-codex")
_THINKING_LEVELS: tuple[str, ...] = (
    "auto",
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)
_RULE_KEYS = frozenset({"id", "match", "patch", "shell", "code"})

#: Root sections whose object-ness is checked first, in this order (`execution` follows).
SECTION_KEYS: tuple[str, ...] = (
    "webSearch",
    "remoteCompaction",
    "imageGeneration",
    "applyPatch",
    "computerUse",
    "shellSessions",
    "codeMode",
    "toolDiscovery",
)


class ConfigValidationError(ValueError):
    """A rejected document: `str()` is the detail (`<path> must <requirement>`).

    Both parts are fixed text; the rejected value never appears, because a config file may
    hold anything (including pasted secrets) and the detail is shown in status lines.
    """

    def __init__(self, path: str, requirement: str) -> None:
        super().__init__(f"{path} must {requirement}")
        self.path = path
        self.requirement = requirement


# -- Models ------------------------------------------------------------------------------


class _Frozen(BaseModel):
    """Immutable snapshot: the runtime shares one config between sessions and threads.

    Edit a draft with `model_copy(update={...})`. Unknown JSON fields are not kept here;
    the store keeps the raw document beside the model and merges into it on save.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")


class SidecarModel(_Frozen):
    provider: SidecarProvider
    model: StrictStr
    thinking_level: ThinkingLevel = "auto"


class WebSearchConfig(_Frozen):
    enabled: StrictBool = False
    backend: WebSearchBackend = "auto"
    mode: WebSearchMode = "live"
    context_size: SearchContextSize = "medium"
    sidecar_model: SidecarModel | None = None


class RemoteCompactionConfig(_Frozen):
    enabled: StrictBool = False


class ImageGenerationConfig(_Frozen):
    enabled: StrictBool = False


class ApplyPatchConfig(_Frozen):
    enabled: StrictBool = False


class ComputerUseConfig(_Frozen):
    enabled: StrictBool = False
    approval_mode: ApprovalMode = "confirm"


class ShellSessionsConfig(_Frozen):
    enabled: StrictBool = False


class CodeModeConfig(_Frozen):
    enabled: StrictBool = False
    approval_mode: ApprovalMode = "confirm"


class ExecutionRule(_Frozen):
    id: StrictStr
    match: StrictStr
    patch: StrictBool
    shell: StrictBool
    code: StrictBool


class ExecutionConfig(_Frozen):
    version: Literal[1] = 1
    rules: list[ExecutionRule] = Field(default_factory=list)


class ToolDiscoveryConfig(_Frozen):
    enabled: StrictBool = False
    deferred: tuple[Annotated[str, Field(strict=True)], ...] = DEFAULT_DEFERRED_TOOLS


class ToolkitConfig(_Frozen):
    """The effective configuration. `execution is None` means the legacy additive switches."""

    web_search: WebSearchConfig = Field(default_factory=WebSearchConfig)
    remote_compaction: RemoteCompactionConfig = Field(default_factory=RemoteCompactionConfig)
    image_generation: ImageGenerationConfig = Field(default_factory=ImageGenerationConfig)
    apply_patch: ApplyPatchConfig = Field(default_factory=ApplyPatchConfig)
    computer_use: ComputerUseConfig = Field(default_factory=ComputerUseConfig)
    shell_sessions: ShellSessionsConfig = Field(default_factory=ShellSessionsConfig)
    code_mode: CodeModeConfig = Field(default_factory=CodeModeConfig)
    execution: ExecutionConfig | None = None
    tool_discovery: ToolDiscoveryConfig = Field(default_factory=ToolDiscoveryConfig)
    debug: StrictBool = False


def default_config() -> ToolkitConfig:
    """The configuration of a new file: everything off, no `execution`."""
    return ToolkitConfig()


# -- Validation --------------------------------------------------------------------------


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _field(path: str, key: str) -> str:
    return key if path == "" else f"{path}.{key}"


def _boolean(section: JSONMapping, path: str, key: str, default: bool) -> bool:
    if key not in section:
        return default
    value = section[key]
    if type(value) is not bool:
        raise ConfigValidationError(_field(path, key), "be true or false")
    return value


def _choice(
    section: JSONMapping, path: str, key: str, values: tuple[str, ...], default: str
) -> str:
    if key not in section:
        return default
    value = section[key]
    if not isinstance(value, str) or value not in values:
        raise ConfigValidationError(_field(path, key), f"be one of {', '.join(values)}")
    return value


def _sidecar_model(section: JSONMapping) -> SidecarModel | None:
    # The one field where JSON null means "none": it is the documented default value.
    value = section.get("sidecarModel")
    if value is None:
        return None
    path = "webSearch.sidecarModel"
    expected = "name provider openai or openai-codex and a non-empty model"
    if not _is_object(value):
        raise ConfigValidationError(path, expected)
    thinking = _choice(value, path, "thinkingLevel", _THINKING_LEVELS, "auto")
    provider = value.get("provider")
    model = value.get("model")
    if (
        not isinstance(provider, str)
        or provider not in _SIDECAR_PROVIDERS
        or not isinstance(model, str)
        or model.strip() == ""
    ):
        raise ConfigValidationError(path, expected)
    if provider == "openai" and thinking != "auto":
        raise ConfigValidationError(f"{path}.thinkingLevel", "be auto for provider openai")
    return SidecarModel.model_validate(
        {"provider": provider, "model": model, "thinking_level": thinking}
    )


def _deferred(section: JSONMapping) -> tuple[str, ...]:
    if "deferred" not in section:
        return DEFAULT_DEFERRED_TOOLS
    value = section["deferred"]
    path = "toolDiscovery.deferred"
    expected = "be an array of deferrable Toolkit tool names"
    if not isinstance(value, list):
        raise ConfigValidationError(path, expected)
    names: list[str] = []
    for entry in value:
        if not isinstance(entry, str) or entry not in DEFERRABLE_TOOL_NAMES:
            raise ConfigValidationError(path, expected)
        if entry not in names:  # duplicates collapse, first position kept
            names.append(entry)
    members = sum(1 for name in COMPUTER_USE_TOOL_NAMES if name in names)
    if members not in (0, len(COMPUTER_USE_TOOL_NAMES)):
        raise ConfigValidationError(path, "list all six Computer Use tools or none")
    return tuple(names)


def _execution_rule(value: object, path: str) -> ExecutionRule:
    expected = (
        "be an object with unique nonempty id, nonempty match, and boolean patch, shell, and code"
    )
    if not isinstance(value, dict) or any(key not in _RULE_KEYS for key in value):
        raise ConfigValidationError(path, expected)
    rule_id = value.get("id")
    match = value.get("match")
    if not isinstance(rule_id, str) or rule_id.strip() == "":
        raise ConfigValidationError(f"{path}.id", "be a nonempty string")
    if not isinstance(match, str) or match.strip() == "":
        raise ConfigValidationError(f"{path}.match", "be a nonempty glob")
    patch, shell, code = (value.get(key) for key in ("patch", "shell", "code"))
    if type(patch) is not bool or type(shell) is not bool or type(code) is not bool:
        raise ConfigValidationError(path, expected)
    return ExecutionRule(id=rule_id, match=match.strip(), patch=patch, shell=shell, code=code)


def _execution(document: JSONMapping) -> ExecutionConfig | None:
    if "execution" not in document:
        return None
    value = document["execution"]
    if not _is_object(value):
        raise ConfigValidationError("execution", "be an object")
    version = value.get("version")
    # JSON has one number type: 1 and 1.0 are the same value; true is not a number.
    if type(version) not in (int, float) or version != EXECUTION_SCHEMA_VERSION:
        raise ConfigValidationError("execution.version", "be 1")
    entries = value.get("rules")
    if not isinstance(entries, list):
        raise ConfigValidationError("execution.rules", "be an array")
    rules: list[ExecutionRule] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        path = f"execution.rules[{index}]"
        rule = _execution_rule(entry, path)
        if rule.id in seen:
            raise ConfigValidationError(f"{path}.id", "be unique")
        seen.add(rule.id)
        rules.append(rule)
    return ExecutionConfig(version=1, rules=rules)


def parse_config(obj: object) -> ToolkitConfig:
    """Validate a decoded JSON document and return its effective configuration.

    Absent fields take the all-off defaults; JSON `null` is a present, invalid value
    everywhere except `webSearch.sidecarModel`. Unknown fields are ignored here (the store
    preserves them). Raises `ConfigValidationError` for the first failing field.
    """
    if not isinstance(obj, dict):
        raise ConfigValidationError("configuration", "be a JSON object")
    sections: dict[str, JSONObject] = {}
    for key in SECTION_KEYS:
        if key in obj:
            if not _is_object(obj[key]):
                raise ConfigValidationError(key, "be an object")
            sections[key] = obj[key]
        else:
            sections[key] = {}
    execution = _execution(obj)

    ws = sections["webSearch"]
    web_search = WebSearchConfig.model_validate(
        {
            "enabled": _boolean(ws, "webSearch", "enabled", False),
            "backend": _choice(ws, "webSearch", "backend", _BACKENDS, "auto"),
            "mode": _choice(ws, "webSearch", "mode", _MODES, "live"),
            "context_size": _choice(ws, "webSearch", "contextSize", _CONTEXT_SIZES, "medium"),
            "sidecar_model": _sidecar_model(ws),
        }
    )
    remote_compaction = RemoteCompactionConfig(
        enabled=_boolean(sections["remoteCompaction"], "remoteCompaction", "enabled", False)
    )
    image_generation = ImageGenerationConfig(
        enabled=_boolean(sections["imageGeneration"], "imageGeneration", "enabled", False)
    )
    apply_patch = ApplyPatchConfig(
        enabled=_boolean(sections["applyPatch"], "applyPatch", "enabled", False)
    )
    cu = sections["computerUse"]
    computer_use = ComputerUseConfig.model_validate(
        {
            "enabled": _boolean(cu, "computerUse", "enabled", False),
            "approval_mode": _choice(cu, "computerUse", "approvalMode", _APPROVAL_MODES, "confirm"),
        }
    )
    shell_sessions = ShellSessionsConfig(
        enabled=_boolean(sections["shellSessions"], "shellSessions", "enabled", False)
    )
    cm = sections["codeMode"]
    code_mode = CodeModeConfig.model_validate(
        {
            "enabled": _boolean(cm, "codeMode", "enabled", False),
            "approval_mode": _choice(cm, "codeMode", "approvalMode", _APPROVAL_MODES, "confirm"),
        }
    )
    td = sections["toolDiscovery"]
    tool_discovery = ToolDiscoveryConfig(
        enabled=_boolean(td, "toolDiscovery", "enabled", False),
        deferred=_deferred(td),
    )
    debug = _boolean(obj, "", "debug", False)
    return ToolkitConfig(
        web_search=web_search,
        remote_compaction=remote_compaction,
        image_generation=image_generation,
        apply_patch=apply_patch,
        computer_use=computer_use,
        shell_sessions=shell_sessions,
        code_mode=code_mode,
        execution=execution,
        tool_discovery=tool_discovery,
        debug=debug,
    )


# -- Serialization -----------------------------------------------------------------------


def _raw_section(raw: JSONMapping, key: str) -> JSONObject:
    value = raw.get(key)
    return copy.deepcopy(value) if isinstance(value, dict) else {}


def _overlay(base: JSONObject, known: JSONMapping) -> JSONObject:
    """Known fields over a stored object: stored keys keep their position, new ones append."""
    for key, value in known.items():
        base[key] = value
    return base


def to_json_obj(config: ToolkitConfig, raw: JSONMapping | None = None) -> JSONObject:
    """The JSON document for `config`, merged into the stored document `raw`.

    Unknown keys of `raw` (at the root and inside known sections) are kept in place; known
    sections are rewritten from `config`. A fresh document comes out in the spec's key
    order. When `config.execution` is set, the rules replace the legacy switches: the
    `enabled` fields of applyPatch, shellSessions and codeMode are removed, and
    `codeMode.approvalMode` stays.
    """
    stored: JSONMapping = raw if raw is not None else {}
    doc: JSONObject = copy.deepcopy(dict(stored))

    ws = config.web_search
    web_search = _overlay(
        _raw_section(stored, "webSearch"),
        {
            "enabled": ws.enabled,
            "backend": ws.backend,
            "mode": ws.mode,
            "contextSize": ws.context_size,
        },
    )
    if ws.sidecar_model is None:
        web_search["sidecarModel"] = None
    else:
        stored_model = _raw_section(_raw_section(stored, "webSearch"), "sidecarModel")
        web_search["sidecarModel"] = _overlay(
            stored_model,
            {
                "provider": ws.sidecar_model.provider,
                "model": ws.sidecar_model.model,
                "thinkingLevel": ws.sidecar_model.thinking_level,
            },
        )

    def section(key: str, known: JSONMapping) -> JSONObject:
        return _overlay(_raw_section(stored, key), known)

    execution = config.execution
    rules_mode = execution is not None
    known: JSONObject = {
        "webSearch": web_search,
        "remoteCompaction": section(
            "remoteCompaction", {"enabled": config.remote_compaction.enabled}
        ),
        "imageGeneration": section("imageGeneration", {"enabled": config.image_generation.enabled}),
        "applyPatch": section(
            "applyPatch", {} if rules_mode else {"enabled": config.apply_patch.enabled}
        ),
        "computerUse": section(
            "computerUse",
            {
                "enabled": config.computer_use.enabled,
                "approvalMode": config.computer_use.approval_mode,
            },
        ),
        "shellSessions": section(
            "shellSessions", {} if rules_mode else {"enabled": config.shell_sessions.enabled}
        ),
        "codeMode": section(
            "codeMode",
            {"approvalMode": config.code_mode.approval_mode}
            if rules_mode
            else {
                "enabled": config.code_mode.enabled,
                "approvalMode": config.code_mode.approval_mode,
            },
        ),
    }
    if execution is not None:
        for key in ("applyPatch", "shellSessions", "codeMode"):
            known[key].pop("enabled", None)
        known["execution"] = section(
            "execution",
            {
                "version": EXECUTION_SCHEMA_VERSION,
                "rules": [
                    {
                        "id": rule.id,
                        "match": rule.match,
                        "patch": rule.patch,
                        "shell": rule.shell,
                        "code": rule.code,
                    }
                    for rule in execution.rules
                ],
            },
        )
    else:
        doc.pop("execution", None)
    known["toolDiscovery"] = section(
        "toolDiscovery",
        {
            "enabled": config.tool_discovery.enabled,
            "deferred": list(config.tool_discovery.deferred),
        },
    )
    known["debug"] = config.debug
    return _overlay(doc, known)
