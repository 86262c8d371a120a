"""Execution rules: which rule a model matches, and the migration preview.

Pure functions over plain values; the decision layer turns the requested capabilities into
routes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from pct_runtime.config.schema import ExecutionRule, ToolkitConfig

#: Id of the catch-all rule the migration preview proposes.
MIGRATED_RULE_ID = "migrated"


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    for char in pattern:
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def match_execution_pattern(
    pattern: str, model_id: str | None, provider: str | None = None
) -> bool:
    """Whole-string, case-sensitive glob: `*` any run, `?` one code point, all else literal.

    A pattern containing `/` is matched against `provider/modelId` (false when either is
    unknown); any other pattern against `modelId` alone.
    """
    if "/" in pattern:
        if provider is None or model_id is None:
            return False
        target = f"{provider}/{model_id}"
    else:
        if model_id is None:
            return False
        target = model_id
    return _compile(pattern).fullmatch(target) is not None


def first_matching_rule(
    rules: Sequence[ExecutionRule], model_id: str | None, provider: str | None = None
) -> ExecutionRule | None:
    """The first rule whose `match` matches the model; later rules never override it."""
    for rule in rules:
        if match_execution_pattern(rule.match, model_id, provider):
            return rule
    return None


def preview_legacy_migration(config: ToolkitConfig) -> list[ExecutionRule]:
    """The rules a legacy file would migrate to: none when all three switches are off,
    otherwise one catch-all rule carrying the three legacy switches.

    Only a preview: nothing is written until the user saves.
    """
    patch = config.apply_patch.enabled
    shell = config.shell_sessions.enabled
    code = config.code_mode.enabled
    if not (patch or shell or code):
        return []
    return [ExecutionRule(id=MIGRATED_RULE_ID, match="*", patch=patch, shell=shell, code=code)]
