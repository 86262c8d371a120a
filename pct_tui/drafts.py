"""The console's config draft: the `/pct config` menu semantics as plain functions.

Nothing here touches Textual or the disk. The config and rules screens edit one shared
`ConfigDraft`; only `Save` (through `ConfigStore.save` with the draft's base revision)
writes the file. Labels and messages are the original Toolkit's, byte for byte
(`reference/toolkit.md` §3.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pct_runtime.config import (
    COMPUTER_USE_TOOL_NAMES,
    DEFERRABLE_TOOL_NAMES,
    ExecutionConfig,
    ExecutionRule,
    SidecarModel,
    ToolkitConfig,
)
from pct_runtime.config.rules import first_matching_rule, preview_legacy_migration

SAVED_MESSAGE = "Pi Codex Toolkit configuration saved."
SAVE_FAILED_MESSAGE = (
    "Could not save Pi Codex Toolkit configuration; the existing file was left untouched."
)
APPLY_FAILED_MESSAGE = (
    "Pi Codex Toolkit configuration saved, but applying it failed. Reload or retry; "
    "the file was written."
)
MIGRATE_EMPTY_NOTICE = (
    "Save will store an empty rule list (native baseline) and remove the legacy Apply Patch "
    "/ Shell / Code switches."
)
CU_ALL_OR_NONE = "toolDiscovery.deferred must list all six Computer Use tools or none"

#: The core tools' legacy switches (config attribute → menu title).
CORE_TITLES: dict[str, str] = {
    "apply_patch": "Apply Patch",
    "shell_sessions": "Shell Sessions",
    "code_mode": "Code Mode",
}

#: The help line of each menu item, by key.
MENU_HELP: dict[str, str] = {
    "web_search": "Web Search on/off.",
    "backend": "Web Search backend: auto, native or sidecar.",
    "mode": "Web Search mode: live or cached.",
    "context_size": "Search context size: low, medium or high.",
    "executor": "The model that runs sidecar searches: an official OpenAI/Codex Responses "
    "route from the model registry.",
    "effort": "auto, or a thinking level the chosen Codex model supports.",
    "remote_compaction": "Remote Compaction on/off.",
    "image_generation": "Image Generation on/off.",
    "computer_use": "Computer Use on/off.",
    "computer_use_approval": "Confirm asks once per app (Yes is remembered in memory, No is "
    "not); Always accepts every valid request without asking.",
    "apply_patch": "Apply Patch on/off (the legacy switch). Once the file has execution "
    "rules, the rules decide per model: Enter opens them.",
    "shell_sessions": "Shell Sessions (exec_command / write_stdin) on/off (the legacy "
    "switch). Once the file has execution rules, Enter opens them.",
    "code_mode": "Code Mode (exec / wait) on/off (the legacy switch). Once the file has "
    "execution rules, Enter opens them.",
    "rules": "Ordered model rules for Patch / direct Shell / Code (opens the rules editor).",
    "code_approval": "Confirm asks before each nested apply_patch in a Code Mode cell; "
    "Always skips only that extra confirmation.",
    "tool_discovery": "Tool Discovery on/off.",
    "deferred": "Which Toolkit tools stay hidden until find_tools loads them (Computer Use: "
    "all six or none).",
    "debug": "Debug metadata on/off (metadata only, never payloads).",
    "save": "Write the draft (refused if the file changed since it was read).",
    "cancel": "Discard the draft and start again from the settings in use.",
}


#: Which capability decision a menu item affects (for the draft preview).
MENU_CAPABILITY: dict[str, str] = {
    "web_search": "web_search",
    "backend": "web_search",
    "mode": "web_search",
    "context_size": "web_search",
    "executor": "web_search",
    "effort": "web_search",
    "remote_compaction": "remote_compaction",
    "image_generation": "image_generation",
    "computer_use": "computer_use",
    "computer_use_approval": "computer_use",
    "code_approval": "code_mode",
    "apply_patch": "apply_patch",
    "shell_sessions": "shell_sessions",
    "code_mode": "code_mode",
    "tool_discovery": "tool_discovery",
    "deferred": "tool_discovery",
}

BACKENDS: tuple[str, ...] = ("auto", "native", "sidecar")
MODES: tuple[str, ...] = ("live", "cached")
CONTEXT_SIZES: tuple[str, ...] = ("low", "medium", "high")


def migrate_notice(rule: ExecutionRule) -> str:
    return (
        f"Save will store one catch-all rule migrated ({rule_flags(rule)}) and remove the "
        "legacy enabled flags. Code-only also starts the nested Shell backend."
    )


def duplicate_id_message(rule_id: str) -> str:
    return f'Rule id "{rule_id}" is already used by another rule.'


def on_off(value: bool) -> str:
    return "on" if value else "off"


def approval_label(mode: str) -> str:
    return "Always" if mode == "always" else "Confirm"


def rule_flags(rule: ExecutionRule) -> str:
    flags = [f for f, on in (("P", rule.patch), ("S", rule.shell), ("C", rule.code)) if on]
    return "+".join(flags) if flags else "none"


def rule_label(index: int, rule: ExecutionRule) -> str:
    """`<n>. <id>  <match>  <flags>` (1-based)."""
    return f"{index + 1}. {rule.id}  {rule.match}  {rule_flags(rule)}"


def executor_label(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return f"{sidecar.provider}/{sidecar.model}" if sidecar else "none"


def effort_label(config: ToolkitConfig) -> str:
    sidecar = config.web_search.sidecar_model
    return sidecar.thinking_level if sidecar else "-"


@dataclass(frozen=True)
class MenuItem:
    """One row of the config menu: a stable key (for actions and tests) and its label."""

    key: str
    label: str


@dataclass
class ConfigDraft:
    """The unsaved configuration both editors work on.

    `base_revision` is the file revision the draft started from (a save names it, so a file
    changed meanwhile is refused with `stale-revision`). `migrating` is true while the rules
    page previews the legacy migration: the draft then carries the previewed rules, and the
    file keeps the legacy switches until Save.
    """

    config: ToolkitConfig
    base_revision: str
    raw: dict[str, Any] = field(default_factory=dict)
    dirty: bool = False
    migrating: bool = False
    #: `execution` of the config the draft started from (None: a legacy file).
    legacy: bool = False
    #: While previewing a migration: the legacy config before it, and the preview itself
    #: (an unedited preview is undone when the rules page is left; it is not an edit).
    premigration: ToolkitConfig | None = None
    preview: ToolkitConfig | None = None

    @classmethod
    def start(cls, config: ToolkitConfig, revision: str, raw: dict[str, Any]) -> ConfigDraft:
        return cls(config, revision, dict(raw), legacy=config.execution is None)

    # -- generic edits -------------------------------------------------------------------
    def _set(self, config: ToolkitConfig) -> None:
        if config != self.config:
            self.config = config
            self.dirty = True

    def _section(self, name: str, **update: Any) -> None:
        section = getattr(self.config, name)
        self._set(self.config.model_copy(update={name: section.model_copy(update=update)}))

    # -- menu ----------------------------------------------------------------------------
    def rules_label(self) -> str:
        execution = self.config.execution
        if execution is None:
            c = self.config
            if c.apply_patch.enabled or c.shell_sessions.enabled or c.code_mode.enabled:
                return "Execution rules: legacy flags (open to migrate)"
            return "Execution rules: none (native baseline)"
        if not execution.rules:
            return "Execution rules: none (native baseline)"
        return f"Execution rules: {len(execution.rules)} rule(s)"

    def core_label(self, key: str) -> str:
        """Apply Patch / Shell Sessions / Code Mode: the legacy switch, or a pointer to the
        rules page when the draft has an `execution` section (the switches are ignored)."""
        title = CORE_TITLES[key]
        if self.config.execution is None:
            return f"{title}: {on_off(getattr(self.config, key).enabled)}"
        return f"{title}: by execution rules (opens Rules)"

    def menu(self) -> list[MenuItem]:
        """Every item of the spec's `/pct config` list, in its order, plus the deferred
        list (the console's addition) before Debug."""
        c = self.config
        ws = c.web_search
        deferred = c.tool_discovery.deferred
        return [
            MenuItem("web_search", f"Web Search: {on_off(ws.enabled)}"),
            MenuItem("backend", f"Backend: {ws.backend}"),
            MenuItem("mode", f"Mode: {ws.mode}"),
            MenuItem("context_size", f"Context size: {ws.context_size}"),
            MenuItem("executor", f"Web Search executor: {executor_label(c)}"),
            MenuItem("effort", f"Web Search executor effort: {effort_label(c)}"),
            MenuItem(
                "remote_compaction", f"Remote Compaction: {on_off(c.remote_compaction.enabled)}"
            ),
            MenuItem("image_generation", f"Image Generation: {on_off(c.image_generation.enabled)}"),
            MenuItem("computer_use", f"Computer Use: {on_off(c.computer_use.enabled)}"),
            MenuItem(
                "computer_use_approval",
                f"Computer Use approval: {approval_label(c.computer_use.approval_mode)}",
            ),
            *(MenuItem(key, self.core_label(key)) for key in CORE_TITLES),
            MenuItem("rules", self.rules_label()),
            MenuItem(
                "code_approval",
                "Code Mode nested Apply Patch confirmation: "
                f"{approval_label(c.code_mode.approval_mode)}",
            ),
            MenuItem("tool_discovery", f"Tool Discovery: {on_off(c.tool_discovery.enabled)}"),
            MenuItem(
                "deferred", f"Deferred tools: {len(deferred)} of {len(DEFERRABLE_TOOL_NAMES)}"
            ),
            MenuItem("debug", f"Debug metadata: {on_off(c.debug)}"),
            MenuItem("save", "Save"),
            MenuItem("cancel", "Cancel"),
        ]

    def toggle(self, key: str) -> bool:
        """Flip an on/off item or cycle a choice item; False when `key` is not one."""
        c = self.config
        ws = c.web_search
        if key == "web_search":
            self._section("web_search", enabled=not ws.enabled)
        elif key == "backend":
            self._section("web_search", backend=_next(BACKENDS, ws.backend))
        elif key == "mode":
            self._section("web_search", mode=_next(MODES, ws.mode))
        elif key == "context_size":
            self._section("web_search", context_size=_next(CONTEXT_SIZES, ws.context_size))
        elif key == "remote_compaction":
            self._section("remote_compaction", enabled=not c.remote_compaction.enabled)
        elif key == "image_generation":
            self._section("image_generation", enabled=not c.image_generation.enabled)
        elif key == "computer_use":
            self._section("computer_use", enabled=not c.computer_use.enabled)
        elif key == "computer_use_approval":
            mode = "confirm" if c.computer_use.approval_mode == "always" else "always"
            self._section("computer_use", approval_mode=mode)
        elif key == "code_approval":
            mode = "confirm" if c.code_mode.approval_mode == "always" else "always"
            self._section("code_mode", approval_mode=mode)
        elif key == "tool_discovery":
            self._section("tool_discovery", enabled=not c.tool_discovery.enabled)
        elif key in CORE_TITLES and c.execution is None:
            self._section(key, enabled=not getattr(c, key).enabled)
        elif key == "debug":
            self._set(c.model_copy(update={"debug": not c.debug}))
        else:
            return False
        return True

    # -- reads the screens need -------------------------------------------------------
    def sidecar_model(self) -> SidecarModel | None:
        """The draft's Web Search executor (None: not picked)."""
        return self.config.web_search.sidecar_model

    def deferred(self) -> tuple[str, ...]:
        """The draft's Tool Discovery deferred list."""
        return self.config.tool_discovery.deferred

    # -- executor ------------------------------------------------------------------------
    def set_executor(self, provider: str | None, model: str | None) -> None:
        """Pick the Web Search executor (`None` clears it). A new model resets the effort
        to `auto`, because levels differ between models."""
        if provider is None or model is None:
            self._section("web_search", sidecar_model=None)
            return
        current = self.config.web_search.sidecar_model
        level = "auto"
        if current is not None and (current.provider, current.model) == (provider, model):
            level = current.thinking_level
        self._section(
            "web_search",
            sidecar_model=SidecarModel.model_validate(
                {"provider": provider, "model": model, "thinking_level": level}
            ),
        )

    def set_effort(self, level: str) -> None:
        current = self.config.web_search.sidecar_model
        if current is None:
            return
        self._section(
            "web_search",
            sidecar_model=SidecarModel.model_validate(
                {"provider": current.provider, "model": current.model, "thinking_level": level}
            ),
        )

    # -- deferred list -------------------------------------------------------------------
    def set_deferred(self, names: Sequence[str]) -> str | None:
        """Replace the deferred list; returns the validation error instead (nothing changed).

        Only deferrable Toolkit names; the Computer Use group is all six or none.
        """
        chosen = [n for n in DEFERRABLE_TOOL_NAMES if n in set(names)]
        unknown = [n for n in names if n not in DEFERRABLE_TOOL_NAMES]
        if unknown:
            return "toolDiscovery.deferred must be an array of deferrable Toolkit tool names"
        members = sum(1 for n in COMPUTER_USE_TOOL_NAMES if n in chosen)
        if members not in (0, len(COMPUTER_USE_TOOL_NAMES)):
            return CU_ALL_OR_NONE
        self._section("tool_discovery", deferred=tuple(chosen))
        return None

    # -- rules ---------------------------------------------------------------------------
    def open_rules(self) -> str | None:
        """Enter the rules page. A legacy draft previews its migration (notice returned);
        nothing is written until Save."""
        if self.config.execution is not None:
            return None
        rules = preview_legacy_migration(self.config)
        self.migrating = True
        self.premigration = self.config
        # A preview, not an edit: it does not make the draft dirty.
        self.config = self.config.model_copy(update={"execution": ExecutionConfig(rules=rules)})
        self.preview = self.config
        return self.rules_notice()

    def leave_rules(self) -> None:
        """Leaving the rules page undoes a migration preview nobody edited, so the config
        menu shows the legacy switches again and nothing is pending."""
        if self.migrating and self.premigration is not None and self.config == self.preview:
            self.config = self.premigration
            self.migrating = False
            self.premigration = self.preview = None

    def rules_notice(self) -> str:
        """What Save will do to a legacy file, from the draft as it is now ("" otherwise)."""
        if not self.migrating:
            return ""
        rules = self.rules
        if not rules:
            return MIGRATE_EMPTY_NOTICE
        if self.preview is not None and self.config.execution == self.preview.execution:
            return migrate_notice(rules[0])
        return (
            f"Save will store these {len(rules)} rule(s) and remove the legacy Apply Patch / "
            "Shell / Code switches."
        )

    @property
    def rules(self) -> list[ExecutionRule]:
        execution = self.config.execution
        return list(execution.rules) if execution is not None else []

    def _set_rules(self, rules: list[ExecutionRule]) -> None:
        execution = self.config.execution or ExecutionConfig()
        self._set(
            self.config.model_copy(
                update={"execution": execution.model_copy(update={"rules": rules})}
            )
        )

    def add_rule(self) -> int:
        """`Add rule`: id `rule-<k>` (first unused k ≥ 1), match `*`, every switch off."""
        used = {rule.id for rule in self.rules}
        k = 1
        while f"rule-{k}" in used:
            k += 1
        rules = self.rules
        rules.append(ExecutionRule(id=f"rule-{k}", match="*", patch=False, shell=False, code=False))
        self._set_rules(rules)
        return len(rules) - 1

    def check_rule(self, index: int | None, rule_id: str, match: str) -> str | None:
        """The error a rule page would show for these fields, or None."""
        if not rule_id.strip():
            return "id must be a nonempty string."
        if not match.strip():
            return "match must be a nonempty glob."
        for i, rule in enumerate(self.rules):
            if i != index and rule.id == rule_id:
                return duplicate_id_message(rule_id)
        return None

    def update_rule(
        self, index: int, *, rule_id: str, match: str, patch: bool, shell: bool, code: bool
    ) -> str | None:
        """`Done` on a rule page: validated; returns the error (nothing changed) or None."""
        error = self.check_rule(index, rule_id, match)
        if error is not None:
            return error
        rules = self.rules
        rules[index] = ExecutionRule(
            id=rule_id, match=match.strip(), patch=patch, shell=shell, code=code
        )
        self._set_rules(rules)
        return None

    def delete_rule(self, index: int) -> None:
        rules = self.rules
        if 0 <= index < len(rules):
            del rules[index]
            self._set_rules(rules)

    def move_rule(self, index: int, delta: int) -> int:
        """Move a rule up (-1) or down (+1); returns its new index."""
        rules = self.rules
        target = index + delta
        if not (0 <= index < len(rules) and 0 <= target < len(rules)):
            return index
        rules[index], rules[target] = rules[target], rules[index]
        self._set_rules(rules)
        return target

    def matching_rule(self, model_id: str | None, provider: str | None) -> ExecutionRule | None:
        return first_matching_rule(self.rules, model_id, provider)

    def for_save(self) -> ToolkitConfig:
        """The config a save writes (the rules, once present, replace the legacy switches)."""
        return self.config


def _next(options: Sequence[str], current: str) -> str:
    try:
        return options[(options.index(current) + 1) % len(options)]
    except ValueError:
        return options[0]
