"""A capability's name appears outside its package only in the capability list.

Each package declares itself (`capabilities/<name>/declaration.py`) and one list imports
the declarations (`pct_runtime/capabilities/table.py`). Not true yet everywhere, so this
pins the files that still name a capability (or import its package) outside it, as
measured by `scripts/arch_metrics.py`. The set may only shrink: a new file naming a
capability fails here — iterate the list instead; a file that stopped naming one fails
until its entry is removed, so the pin stays tight. See docs/adding-a-capability.md.
"""

from __future__ import annotations

from pathlib import Path

from tests.arch import metrics as _metrics

ROOT = Path(__file__).resolve().parent.parent

#: The only places every capability is named on purpose: the list of declarations (which
#: also loads each declared binding), and the config rows, in the config layer because it
#: parses the document below every capability.
REGISTRY = "pct_runtime/capabilities/table.py"
CONFIG_REGISTRY = "pct_runtime/config/sections.py"

#: file -> capabilities it still names outside their packages (shrink only), each with why.
ALLOWED: dict[str, set[str]] = {
    # The tool name in text (descriptions, docstrings, examples, the server's instructions).
    "pct_runtime/capabilities/base.py": {"apply_patch"},
    "pct_runtime/capabilities/discovery/search.py": {"apply_patch", "computer_use"},
    "pct_runtime/config/errors.py": {"apply_patch"},
    "pct_runtime/pids.py": {"apply_patch"},
    "pct_runtime/runtime/core.py": {"apply_patch"},
    "pct_runtime/serve/mcp/server.py": {"apply_patch"},
    "pct_runtime/serve/mcp/stateless.py": {"apply_patch"},
    # Code Mode's nested calls name the `apply_patch` tool (it imports no capability); its
    # declaration's menu help names it too.
    "pct_runtime/capabilities/code/declaration.py": {"apply_patch"},
    "pct_runtime/capabilities/code/dialect.py": {"apply_patch"},
    "pct_runtime/capabilities/code/dispatch.py": {"apply_patch"},
    "pct_runtime/capabilities/code/tools.py": {"apply_patch"},
    "pct_runtime/capabilities/code/worker.py": {"apply_patch"},
    # Declared seam: the OpenAI factory and pipeline assemble compaction, image, web search.
    "pct_runtime/capabilities/openai/factory.py": {"web_search", "image", "compaction"},
    "pct_runtime/capabilities/openai/pipeline.py": {"web_search", "compaction"},
    # The list and the config rows (REGISTRY, CONFIG_REGISTRY above).
    "pct_runtime/capabilities/table.py": {
        "apply_patch",
        "shell",
        "code",
        "discovery",
        "web_search",
        "image",
        "compaction",
        "computer_use",
    },
    "pct_runtime/config/sections.py": {
        "apply_patch",
        "shell",
        "code",
        "discovery",
        "web_search",
        "image",
        "compaction",
        "computer_use",
    },
    # Cross-capability rules the spec couples: execution routes over Patch/Shell/Code.
    "pct_runtime/config/rules.py": {"apply_patch", "shell", "code"},
    "pct_runtime/decide/execution.py": {"apply_patch", "shell", "code"},
    # Tool names and the deferrable list (`toolDiscovery.deferred`), below every layer.
    "pct_runtime/host/pi/names.py": {"apply_patch", "discovery"},
    # The spec's list of names the embedder's invocation hooks see.
    "pct_runtime/invocation.py": {"apply_patch"},
    # `pct apply-patch` (a pinned interface) runs the executor itself, journaled.
    "pct_runtime/cli_commands/apply_patch_cmd.py": {"apply_patch"},
    # Viewers' typed read access to the shell and Code Mode managers a session built
    # (the console's sessions screen and live control; never builds one).
    "pct_runtime/runtime/context.py": {"shell", "code"},
    # The command policy's judge for the console's preview, which imports no capability.
    "pct_runtime/runtime/command_policy.py": {"shell"},
    # The console's apply_patch approval modal renders the patch's file diffs.
    "pct_tui/screens/approval.py": {"apply_patch"},
    "pct_tui/widgets/patch_view.py": {"apply_patch"},
}


def _naming() -> dict[str, set[str]]:
    by_file: dict[str, set[str]] = {}
    for capability, files in _metrics().naming_files().items():
        for file in files:
            by_file.setdefault(file, set()).add(capability)
    return by_file


def test_no_new_file_names_a_capability_outside_the_registry() -> None:
    new = {
        file: names - ALLOWED.get(file, set())
        for file, names in _naming().items()
        if names - ALLOWED.get(file, set())
    }
    assert new == {}, "iterate pct_runtime.capabilities.table instead of naming these"


def test_the_pin_has_no_stale_entries() -> None:
    naming = _naming()
    stale = {
        file: names - naming.get(file, set())
        for file, names in ALLOWED.items()
        if names - naming.get(file, set())
    }
    assert stale == {}, "these no longer name the capability: remove them from ALLOWED"


def test_status_refusals_and_config_screens_name_no_capability() -> None:
    naming = _naming()
    assert "pct_runtime/status.py" not in naming
    assert "pct_runtime/runtime/projection.py" not in naming
    assert "pct_tui/screens/config.py" not in naming
    assert "pct_tui/screens/deferred.py" not in naming
    assert set(naming[REGISTRY]) == set(_metrics().CAPABILITIES)
    assert set(naming[CONFIG_REGISTRY]) == set(_metrics().CAPABILITIES)
    assert "pct_runtime/capabilities/discovery/catalog.py" not in naming
    assert "pct_runtime/runtime/descriptors.py" not in naming
    # Sync cleanups, host facts and payload hooks iterate the descriptors' hooks.
    assert "pct_runtime/runtime/inputs.py" not in naming
    assert "pct_runtime/cli_commands/status_cmd.py" not in naming
    assert "pct_tui/state/drafts.py" not in naming
    # The decision layer takes the rows as data: it names no capability outside its
    # cross-capability execution rules.
    assert {file for file in naming if file.startswith("pct_runtime/decide/")} == {
        "pct_runtime/decide/execution.py"
    }
