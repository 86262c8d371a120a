"""The registry's config rows: each capability's section of the configuration document.

One frozen dataclass per capability, in the spec's section order, each knowing its JSON key,
how to parse its raw object (the spec's exact first error) and how to write its known
fields back. `schema.py` assembles the document from `SECTIONS` and names none of them;
the config layer sits below the decision layer and the capabilities, so these rows live
here rather than in each capability's declaration (`capabilities/<name>/declaration.py`,
whose row keys are the `KEY`s below — a test keeps the two in step). See
docs/adding-a-capability.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal, Self

from pct_runtime.config.validation import (
    ApprovalModes,
    ConfigValidationError,
    Frozen,
    boolean,
    choice,
    is_object,
    overlay,
    raw_section,
)
from pct_runtime.datarecord import datarecord, field
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

WebSearchBackend = Literal["auto", "native", "sidecar"]
WebSearchMode = Literal["live", "cached"]
SearchContextSize = Literal["low", "medium", "high"]
ApprovalMode = Literal["confirm", "always"]
SidecarProvider = Literal["openai", "openai-codex"]
ThinkingLevel = Literal["auto", "off", "minimal", "low", "medium", "high", "xhigh", "max"]

_BACKENDS: tuple[WebSearchBackend, ...] = ("auto", "native", "sidecar")
_MODES: tuple[WebSearchMode, ...] = ("live", "cached")
_CONTEXT_SIZES: tuple[SearchContextSize, ...] = ("low", "medium", "high")
_SIDECAR_PROVIDERS: tuple[SidecarProvider, ...] = ("openai", "openai-codex")
_THINKING_LEVELS: tuple[ThinkingLevel, ...] = (
    "auto",
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)


#: Objects a new file leaves out (default null) and their fields, by (section, key): what
#: the typo check knows inside them.
OPTIONAL_OBJECTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("webSearch", "sidecarModel"): ("provider", "model", "thinkingLevel"),
}


@datarecord
class SectionModel(Frozen):
    """One capability's section: its keys, its parser and its writer."""

    #: The `ToolkitConfig` attribute (also the decision key of the capability's row).
    KEY: ClassVar[str]
    #: The document's key.
    JSON_KEY: ClassVar[str]
    #: Its `enabled` is a legacy switch the `execution` rules replace (and remove on save).
    LEGACY_SWITCH: ClassVar[bool] = False
    #: The spec's document writes `execution` before this section.
    AFTER_EXECUTION: ClassVar[bool] = False

    enabled: bool = False

    @classmethod
    def parse(cls, section: JSONMapping) -> Self:
        """The section from its raw object; raises the first failing field's error."""
        return cls(enabled=boolean(section, cls.JSON_KEY, "enabled", False))

    def known(self, stored: JSONObject) -> JSONObject:
        """The known fields, written over the stored section `stored` (a copy)."""
        return overlay(stored, {"enabled": self.enabled})


@datarecord
class SidecarModel(Frozen):
    provider: SidecarProvider
    model: str
    thinking_level: ThinkingLevel = "auto"


def _picked_sidecar(provider: str, model: str, level: str) -> SidecarModel:
    """A picker's executor, checked as the file's value is but for the openai-only-auto
    rule (the console offers each model only the levels it has)."""
    if provider not in _SIDECAR_PROVIDERS or not isinstance(model, str):
        raise ConfigValidationError(
            "webSearch.sidecarModel", "name provider openai or openai-codex and a model"
        )
    if level not in _THINKING_LEVELS:
        raise ConfigValidationError(
            "webSearch.sidecarModel.thinkingLevel", f"be one of {', '.join(_THINKING_LEVELS)}"
        )
    return SidecarModel(provider=provider, model=model, thinking_level=level)


def _sidecar_model(section: JSONMapping) -> SidecarModel | None:
    # The one field where JSON null means "none": it is the documented default value.
    value = section.get("sidecarModel")
    if value is None:
        return None
    path = "webSearch.sidecarModel"
    expected = "name provider openai or openai-codex and a non-empty model"
    if not is_object(value):
        raise ConfigValidationError(path, expected)
    thinking = choice(value, path, "thinkingLevel", _THINKING_LEVELS, "auto")
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
    return SidecarModel(provider=provider, model=model, thinking_level=thinking)


@datarecord
class WebSearchConfig(SectionModel):
    KEY = "web_search"
    JSON_KEY = "webSearch"

    backend: WebSearchBackend = "auto"
    mode: WebSearchMode = "live"
    context_size: SearchContextSize = "medium"
    sidecar_model: SidecarModel | None = None

    @classmethod
    def parse(cls, section: JSONMapping) -> Self:
        path = cls.JSON_KEY
        return cls(
            enabled=boolean(section, path, "enabled", False),
            backend=choice(section, path, "backend", _BACKENDS, "auto"),
            mode=choice(section, path, "mode", _MODES, "live"),
            context_size=choice(section, path, "contextSize", _CONTEXT_SIZES, "medium"),
            sidecar_model=_sidecar_model(section),
        )

    def known(self, stored: JSONObject) -> JSONObject:
        stored_model = raw_section(stored, "sidecarModel")
        section = overlay(
            stored,
            {
                "enabled": self.enabled,
                "backend": self.backend,
                "mode": self.mode,
                "contextSize": self.context_size,
            },
        )
        if self.sidecar_model is None:
            section["sidecarModel"] = None
        else:
            section["sidecarModel"] = overlay(
                stored_model,
                {
                    "provider": self.sidecar_model.provider,
                    "model": self.sidecar_model.model,
                    "thinkingLevel": self.sidecar_model.thinking_level,
                },
            )
        return section


class RemoteCompactionConfig(SectionModel):
    KEY = "remote_compaction"
    JSON_KEY = "remoteCompaction"


class ImageGenerationConfig(SectionModel):
    KEY = "image_generation"
    JSON_KEY = "imageGeneration"


class ApplyPatchConfig(SectionModel):
    KEY = "apply_patch"
    JSON_KEY = "applyPatch"
    LEGACY_SWITCH = True


@datarecord
class _Approving(SectionModel):
    """A section with an `approvalMode` beside its switch."""

    approval_mode: ApprovalMode = "confirm"

    @classmethod
    def parse(cls, section: JSONMapping) -> Self:
        path = cls.JSON_KEY
        return cls(
            enabled=boolean(section, path, "enabled", False),
            approval_mode=choice(section, path, "approvalMode", ApprovalModes, "confirm"),
        )

    def known(self, stored: JSONObject) -> JSONObject:
        return overlay(stored, {"enabled": self.enabled, "approvalMode": self.approval_mode})


class ComputerUseConfig(_Approving):
    KEY = "computer_use"
    JSON_KEY = "computerUse"


class ShellSessionsConfig(SectionModel):
    KEY = "shell_sessions"
    JSON_KEY = "shellSessions"
    LEGACY_SWITCH = True


class CodeModeConfig(_Approving):
    KEY = "code_mode"
    JSON_KEY = "codeMode"
    LEGACY_SWITCH = True


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


@datarecord
class ToolDiscoveryConfig(SectionModel):
    KEY = "tool_discovery"
    JSON_KEY = "toolDiscovery"
    AFTER_EXECUTION = True

    deferred: tuple[str, ...] = DEFAULT_DEFERRED_TOOLS

    @classmethod
    def parse(cls, section: JSONMapping) -> Self:
        return cls(
            enabled=boolean(section, cls.JSON_KEY, "enabled", False), deferred=_deferred(section)
        )

    def known(self, stored: JSONObject) -> JSONObject:
        return overlay(stored, {"enabled": self.enabled, "deferred": list(self.deferred)})


#: Every capability's section, in the spec's order (the order validation checks them).
SECTIONS: tuple[type[SectionModel], ...] = (
    WebSearchConfig,
    RemoteCompactionConfig,
    ImageGenerationConfig,
    ApplyPatchConfig,
    ComputerUseConfig,
    ShellSessionsConfig,
    CodeModeConfig,
    ToolDiscoveryConfig,
)


@datarecord
class CapabilitySections(Frozen):
    """The typed capability fields of `ToolkitConfig`, one per row of `SECTIONS`."""

    web_search: WebSearchConfig = field(default_factory=WebSearchConfig)
    remote_compaction: RemoteCompactionConfig = field(default_factory=RemoteCompactionConfig)
    image_generation: ImageGenerationConfig = field(default_factory=ImageGenerationConfig)
    apply_patch: ApplyPatchConfig = field(default_factory=ApplyPatchConfig)
    computer_use: ComputerUseConfig = field(default_factory=ComputerUseConfig)
    shell_sessions: ShellSessionsConfig = field(default_factory=ShellSessionsConfig)
    code_mode: CodeModeConfig = field(default_factory=CodeModeConfig)
    tool_discovery: ToolDiscoveryConfig = field(default_factory=ToolDiscoveryConfig)

    def section(self, key: str) -> SectionModel:
        """The section under attribute `key` (a row's `KEY`)."""
        value = getattr(self, key)
        assert isinstance(value, SectionModel), key
        return value

    # -- The console's pickers (`pct_tui/state/drafts.py`): each returns a new config ----------
    def search_executor(self) -> SidecarModel | None:
        """The Web Search executor (None: not picked)."""
        return self.web_search.sidecar_model

    def with_search_executor(self, provider: str | None, model: str | None) -> Self:
        """Pick the Web Search executor (`None` clears it). A new model resets the effort
        to `auto`, because levels differ between models."""
        sidecar = None
        if provider is not None and model is not None:
            current = self.web_search.sidecar_model
            level = "auto"
            if current is not None and (current.provider, current.model) == (provider, model):
                level = current.thinking_level
            sidecar = _picked_sidecar(provider, model, level)
        return self._with_web_search(sidecar)

    def with_search_effort(self, level: str) -> Self:
        """The executor's thinking level; unchanged while no executor is picked."""
        current = self.web_search.sidecar_model
        if current is None:
            return self
        return self._with_web_search(_picked_sidecar(current.provider, current.model, level))

    def _with_web_search(self, sidecar: SidecarModel | None) -> Self:
        section = self.web_search.model_copy(update={"sidecar_model": sidecar})
        return self.model_copy(update={"web_search": section})

    def deferred_tools(self) -> tuple[str, ...]:
        """Tool Discovery's deferred list."""
        return self.tool_discovery.deferred

    def with_deferred_tools(self, names: Sequence[str]) -> Self:
        """Replace the deferred list, in the deferrable names' order. Raises the file's own
        `ConfigValidationError` (only deferrable Toolkit names; Computer Use all six or none)."""
        ToolDiscoveryConfig.parse({"deferred": list(names)})
        chosen = tuple(n for n in DEFERRABLE_TOOL_NAMES if n in set(names))
        section = self.tool_discovery.model_copy(update={"deferred": chosen})
        return self.model_copy(update={"tool_discovery": section})
