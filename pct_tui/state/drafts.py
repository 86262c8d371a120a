"""The console's config draft: the `/pct config` menu semantics as plain functions.

Nothing here touches Textual or the disk. The config and rules screens edit one shared
`ConfigDraft`; only `Save` (through `ConfigStore.save` with the draft's base revision)
writes the file. Labels and messages are the original Toolkit's, byte for byte, so a user
of either sees the same menu.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pct_runtime.capabilities.table import MENU_ROWS
from pct_runtime.config import (
    ConfigValidationError,
    ExecutionConfig,
    ExecutionRule,
    SidecarModel,
    ToolkitConfig,
)
from pct_runtime.config.commands import (
    COMMAND_DECISIONS,
    CommandRuleFields,
    CommandsConfigError,
    CommandsFields,
    commands_document,
    commands_in,
)
from pct_runtime.config.commands import (
    commands_fields as commands_in_strict,
)
from pct_runtime.config.rules import first_matching_rule, preview_legacy_migration
from pct_runtime.config.sections import SECTIONS
from pct_runtime.decide.rows import MenuEntry
from pct_runtime.jsontypes import JSONObject

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

#: Every capability's menu items, in the menu's order, with their row's key.
_ENTRIES: tuple[tuple[str, MenuEntry], ...] = tuple(
    (row.key, entry) for row in MENU_ROWS for entry in row.menu
)

#: The core tools' legacy switches (menu key → menu title).
CORE_TITLES: dict[str, str] = {e.key: e.title for _, e in _ENTRIES if e.kind == "legacy"}

#: The help line of each menu item, by key.
MENU_HELP: dict[str, str] = {
    **{entry.key: entry.help for _, entry in _ENTRIES},
    "debug": "Debug metadata on/off (metadata only, never payloads).",
    "save": "Write the draft (refused if the file changed since it was read).",
    "cancel": "Discard the draft and start again from the settings in use.",
}

#: Which capability decision a menu item affects (for the draft preview).
MENU_CAPABILITY: dict[str, str] = {entry.key: key for key, entry in _ENTRIES if entry.previews}

_BY_MENU_KEY: dict[str, tuple[str, MenuEntry]] = {
    entry.key: (key, entry) for key, entry in _ENTRIES
}


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
    raw: JSONObject = field(default_factory=dict)
    #: The config the draft started from: an edit undone by hand leaves nothing unsaved.
    original: ToolkitConfig | None = None
    migrating: bool = False
    #: `execution` of the config the draft started from (None: a legacy file).
    legacy: bool = False
    #: While previewing a migration: the legacy config before it, and the preview itself
    #: (an unedited preview is undone when the rules page is left; it is not an edit).
    premigration: ToolkitConfig | None = None
    preview: ToolkitConfig | None = None
    #: `pct.commands` of the document the draft started from.
    original_commands: CommandsFields = field(default_factory=CommandsFields)

    @classmethod
    def start(cls, config: ToolkitConfig, revision: str, raw: JSONObject) -> ConfigDraft:
        return cls(
            config,
            revision,
            dict(raw),
            original=config,
            legacy=config.execution is None,
            original_commands=commands_in(raw),
        )

    @property
    def dirty(self) -> bool:
        """The draft differs from what it started from (an unedited migration preview is
        not a difference)."""
        base = self.preview if self.migrating and self.preview is not None else self.original
        return self.commands_dirty or (base is not None and self.config != base)

    @property
    def commands_dirty(self) -> bool:
        """The command policy differs from the file's: a save writes `pct.commands` too."""
        return self.commands != self.original_commands

    # -- generic edits -------------------------------------------------------------------
    def _set(self, config: ToolkitConfig) -> None:
        self.config = config

    def _section(self, name: str, **update: object) -> None:
        section = getattr(self.config, name)
        self._set(self.config.model_copy(update={name: section.model_copy(update=update)}))

    # -- menu ----------------------------------------------------------------------------
    def rules_label(self) -> str:
        execution = self.config.execution
        if execution is None:
            if any(self.config.section(s.KEY).enabled for s in SECTIONS if s.LEGACY_SWITCH):
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
            return f"{title}: {on_off(self.config.section(key).enabled)}"
        return f"{title}: by execution rules (opens Rules)"

    def _label(self, row_key: str, entry: MenuEntry) -> str:
        if entry.kind == "legacy":
            return self.core_label(entry.key)
        if entry.kind == "rules":
            return self.rules_label()
        if entry.kind == "pick":
            assert entry.value is not None, entry.key
            return f"{entry.title}: {entry.value(self.config)}"
        value = getattr(self.config.section(row_key), entry.field)
        if entry.kind == "switch":
            return f"{entry.title}: {on_off(value)}"
        if entry.kind == "approval":
            return f"{entry.title}: {approval_label(value)}"
        return f"{entry.title}: {value}"

    def menu(self) -> list[MenuItem]:
        """Every item of the spec's `/pct config` list, in its order (the registry rows'
        items), plus the deferred list (the console's addition) before Debug."""
        return [
            *(MenuItem(entry.key, self._label(key, entry)) for key, entry in _ENTRIES),
            MenuItem("commands", self.commands_label()),
            MenuItem("debug", f"Debug metadata: {on_off(self.config.debug)}"),
            MenuItem("save", "Save"),
            MenuItem("cancel", "Cancel"),
        ]

    def toggle(self, key: str) -> bool:
        """Flip an on/off item or cycle a choice item; False when `key` is not one."""
        c = self.config
        if key == "debug":
            self._set(c.model_copy(update={"debug": not c.debug}))
            return True
        if key not in _BY_MENU_KEY:
            return False
        row_key, entry = _BY_MENU_KEY[key]
        value = getattr(c.section(row_key), entry.field)
        if entry.kind == "switch" or (entry.kind == "legacy" and c.execution is None):
            self._section(row_key, **{entry.field: not value})
        elif entry.kind == "choice":
            self._section(row_key, **{entry.field: _next(entry.choices, value)})
        elif entry.kind == "approval":
            mode = "confirm" if value == "always" else "always"
            self._section(row_key, **{entry.field: mode})
        else:
            return False
        return True

    # -- pickers (their edits are the config registry's, `config/sections.py`) -------------
    def sidecar_model(self) -> SidecarModel | None:
        """The draft's Web Search executor (None: not picked)."""
        return self.config.search_executor()

    def deferred(self) -> tuple[str, ...]:
        """The draft's Tool Discovery deferred list."""
        return self.config.deferred_tools()

    def set_executor(self, provider: str | None, model: str | None) -> None:
        """Pick the Web Search executor (`None` clears it); a new model resets the effort."""
        self._set(self.config.with_search_executor(provider, model))

    def set_effort(self, level: str) -> None:
        self._set(self.config.with_search_effort(level))

    def set_deferred(self, names: Sequence[str]) -> str | None:
        """Replace the deferred list; returns the validation error instead (nothing changed).

        Only deferrable Toolkit names; the Computer Use group is all six or none.
        """
        try:  # the file's own rule and its exact error text
            config = self.config.with_deferred_tools(names)
        except ConfigValidationError as exc:
            return str(exc)
        self._set(config)
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

    def unreachable_notes(self) -> list[str]:
        """A warning for each rule no model can reach: a catch-all before it matches first."""
        notes: list[str] = []
        for index, rule in enumerate(self.rules):
            ahead = shadowing_rule(self.rules[:index], rule.match)
            if ahead is not None:
                first = self.rules.index(ahead)
                notes.append(
                    f"Rule {index + 1} ({rule.id}) is never reached: rule {first + 1} "
                    f"({ahead.id}, match {ahead.match}) matches every model first."
                )
        return notes

    def matching_rule(self, model_id: str | None, provider: str | None) -> ExecutionRule | None:
        return first_matching_rule(self.rules, model_id, provider)

    # -- command policy (pct.commands, kept in the raw document) ---------------------------
    @property
    def commands(self) -> CommandsFields:
        return commands_in(self.raw)

    def commands_label(self) -> str:
        fields = self.commands
        count = len(fields.rules)
        rules = "no rules" if not count else f"{count} rule{'s' if count != 1 else ''}"
        return f"Command policy: {rules}, default {fields.default}"

    def _set_commands(self, fields: CommandsFields) -> None:
        if fields == self.commands:
            return
        section = self.raw.get("pct")
        pct: JSONObject = dict(section) if isinstance(section, dict) else {}
        pct["commands"] = commands_document(fields)
        self.raw = {**self.raw, "pct": pct}

    def cycle_command_default(self) -> None:
        fields = self.commands
        self._set_commands(CommandsFields(_next(COMMAND_DECISIONS, fields.default), fields.rules))

    def add_command_rule(self) -> int:
        fields = self.commands
        rules = (*fields.rules, CommandRuleFields("new-command", "ask"))
        self._set_commands(CommandsFields(fields.default, rules))
        return len(rules) - 1

    def update_command_rule(self, index: int, prefix: str, decision: str) -> str | None:
        """Set rule `index`; the section's own error text when the values are invalid."""
        fields = self.commands
        rules = list(fields.rules)
        rules[index] = CommandRuleFields(prefix.strip(), decision)
        document = commands_document(CommandsFields(fields.default, tuple(rules)))
        try:
            checked = commands_in_strict({"pct": {"commands": document}})
        except CommandsConfigError as exc:
            return str(exc)
        self._set_commands(checked)
        return None

    def delete_command_rule(self, index: int) -> None:
        fields = self.commands
        rules = tuple(r for i, r in enumerate(fields.rules) if i != index)
        self._set_commands(CommandsFields(fields.default, rules))

    def move_command_rule(self, index: int, delta: int) -> int:
        fields = self.commands
        target = index + delta
        if not 0 <= target < len(fields.rules):
            return index
        rules = list(fields.rules)
        rules[index], rules[target] = rules[target], rules[index]
        self._set_commands(CommandsFields(fields.default, tuple(rules)))
        return target

    def for_save(self) -> ToolkitConfig:
        """The config a save writes (the rules, once present, replace the legacy switches)."""
        return self.config


def shadowing_rule(earlier: Sequence[ExecutionRule], match: str) -> ExecutionRule | None:
    """The first of `earlier` that matches every model `match` could (a catch-all: `*`,
    or `*/*` before a `provider/model` pattern), or None."""
    for rule in earlier:
        if set(rule.match) <= {"*"}:
            return rule
        provider, slash, model = rule.match.partition("/")
        stars = bool(provider and model) and set(provider + model) <= {"*"}
        if slash and stars and "/" in match:
            return rule
    return None


def _next(options: Sequence[str], current: str) -> str:
    try:
        return options[(options.index(current) + 1) % len(options)]
    except ValueError:
        return options[0]
