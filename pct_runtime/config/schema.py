"""The 0.2.0 configuration document: models, validation and serialization.

Validation walks the raw JSON object by hand, in a fixed order, so that the first failing
field and its detail text are exactly the spec's (`<section>.enabled must be true or false`)
and the rejected value is never echoed. The frozen dataclasses are the typed, immutable
snapshot the rest of the runtime reads; each capability's section model, parser
and writer is its row in `sections.py`, and this module names none of them.

Check order (first failure wins), the same as the original Toolkit:
1. the document is an object;
2. each section that is present (JSON `null` counts as present) is an object, in the
   order of `sections.SECTIONS` (the registry's config rows);
3. the whole `execution` section (object, version, rules array, each rule in order);
4. the fields, section by section in the same order, then `debug`;
5. pct's own `pct` section (`pct_section.py`), subsection by subsection.
"""

from __future__ import annotations

from typing import Any, Literal

from pct_runtime.config.pct_section import PctSettingError, check_pct_section
from pct_runtime.config.sections import (
    COMPUTER_USE_TOOL_NAMES,
    DEFAULT_DEFERRED_TOOLS,
    DEFERRABLE_TOOL_NAMES,
    SECTIONS,
    ApplyPatchConfig,
    ApprovalMode,
    CapabilitySections,
    CodeModeConfig,
    ComputerUseConfig,
    ImageGenerationConfig,
    RemoteCompactionConfig,
    SearchContextSize,
    SectionModel,
    ShellSessionsConfig,
    SidecarModel,
    SidecarProvider,
    ThinkingLevel,
    ToolDiscoveryConfig,
    WebSearchBackend,
    WebSearchConfig,
    WebSearchMode,
)
from pct_runtime.config.validation import (
    ConfigValidationError,
    Frozen,
    boolean,
    copy_json,
    is_object,
    overlay,
    raw_section,
)
from pct_runtime.datarecord import datarecord, field
from pct_runtime.jsontypes import JSONMapping, JSONObject

__all__ = [
    "COMPUTER_USE_TOOL_NAMES",
    "DEFAULT_DEFERRED_TOOLS",
    "DEFERRABLE_TOOL_NAMES",
    "EXECUTION_SCHEMA_VERSION",
    "SECTIONS",
    "SECTION_KEYS",
    "ApplyPatchConfig",
    "ApprovalMode",
    "CodeModeConfig",
    "ComputerUseConfig",
    "ConfigValidationError",
    "ExecutionConfig",
    "ExecutionRule",
    "ImageGenerationConfig",
    "RemoteCompactionConfig",
    "SearchContextSize",
    "SectionModel",
    "ShellSessionsConfig",
    "SidecarModel",
    "SidecarProvider",
    "ThinkingLevel",
    "ToolDiscoveryConfig",
    "ToolkitConfig",
    "WebSearchBackend",
    "WebSearchConfig",
    "WebSearchMode",
    "default_config",
    "parse_config",
    "to_json_obj",
]

EXECUTION_SCHEMA_VERSION = 1

_RULE_KEYS = frozenset({"id", "match", "patch", "shell", "code"})

#: Root sections whose object-ness is checked first, in this order (`execution` follows).
SECTION_KEYS: tuple[str, ...] = tuple(section.JSON_KEY for section in SECTIONS)


# -- Models ------------------------------------------------------------------------------


@datarecord
class ExecutionRule(Frozen):
    id: str
    match: str
    patch: bool
    shell: bool
    code: bool


@datarecord
class ExecutionConfig(Frozen):
    version: Literal[1] = 1
    rules: list[ExecutionRule] = field(default_factory=list)


@datarecord
class ToolkitConfig(CapabilitySections):
    """The effective configuration. `execution is None` means the legacy additive switches."""

    execution: ExecutionConfig | None = None
    debug: bool = False


def default_config() -> ToolkitConfig:
    """The configuration of a new file: everything off, no `execution`."""
    return ToolkitConfig()


# -- Validation --------------------------------------------------------------------------


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
    if not is_object(value):
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
    everywhere except Web Search's sidecar model. Unknown fields are ignored here (the
    store preserves them). Raises `ConfigValidationError` for the first failing field.
    """
    if not isinstance(obj, dict):
        raise ConfigValidationError("configuration", "be a JSON object")
    sections: dict[str, JSONObject] = {}
    for key in SECTION_KEYS:
        if key in obj:
            if not is_object(obj[key]):
                raise ConfigValidationError(key, "be an object")
            sections[key] = obj[key]
        else:
            sections[key] = {}
    execution = _execution(obj)
    fields: dict[str, Any] = {  # one keyword per section, typed by its row
        section.KEY: section.parse(sections[section.JSON_KEY]) for section in SECTIONS
    }
    fields["execution"] = execution
    fields["debug"] = boolean(obj, "", "debug", False)
    try:  # pct's own section, held to the same standard as the spec's
        check_pct_section(obj)
    except PctSettingError as exc:
        raise ConfigValidationError(exc.path, exc.requirement) from None
    return ToolkitConfig(**fields)


# -- Serialization -----------------------------------------------------------------------


def to_json_obj(config: ToolkitConfig, raw: JSONMapping | None = None) -> JSONObject:
    """The JSON document for `config`, merged into the stored document `raw`.

    Unknown keys of `raw` (at the root and inside known sections) are kept in place; known
    sections are rewritten from `config`. A fresh document comes out in the spec's key
    order. When `config.execution` is set, the rules replace the legacy switches: the
    `enabled` fields of the sections marked `LEGACY_SWITCH` are removed, and their other
    fields (an `approvalMode`) stay.
    """
    stored: JSONMapping = raw if raw is not None else {}
    doc: JSONObject = copy_json(dict(stored))
    execution = config.execution
    known: JSONObject = {}
    later: JSONObject = {}
    for row in SECTIONS:
        section = config.section(row.KEY).known(raw_section(stored, row.JSON_KEY))
        if execution is not None and row.LEGACY_SWITCH:
            section.pop("enabled", None)
        (later if row.AFTER_EXECUTION else known)[row.JSON_KEY] = section
    if execution is not None:
        known["execution"] = overlay(
            raw_section(stored, "execution"),
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
    known.update(later)
    known["debug"] = config.debug
    return overlay(doc, known)
