"""Imports sit at the top of a module: at most 5% of the internal imports (of `pct_runtime`
and `pct_tui` modules) may be deferred into a function, as `scripts/arch_metrics.py` counts
them, and a module is imported by name only at the declared places below.

The CLI loads each subcommand's modules by name from one table (`pct_runtime.cli.SUBCOMMANDS`)
instead of deferring imports in every handler; the packages' `lazy.exports` load their names
by name too. Those points are pinned here so the deferred-import figure cannot move into
them unseen (docs/ARCHITECTURE.md, "Deferred imports").
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.arch import metrics as _metrics

ROOT = Path(__file__).resolve().parent.parent
MAX_DEFERRED_SHARE = 0.05

#: file -> its calls that import a module by name (`importlib.import_module`), each with why.
BY_NAME = {
    # The subcommand table: a command's parser and run modules (`pct --help` builds every
    # parser, `pct <command>` loads only its own two).
    "pct_runtime/cli.py": 1,
    # The packages' lazy exports: a name loads its module on first use.
    "pct_runtime/lazy.py": 1,
    # Each capability's descriptor, and its host probe (`pct status`), loads on first use;
    # one that fails to import disables only itself.
    "pct_runtime/capabilities/table.py": 2,
    # The Code Mode zygote preloads the cells' allowed modules before it forks.
    "pct_runtime/capabilities/code/worker.py": 1,
    # The interpreter's own SHA-256 module, whose name changed in 3.12.
    "pct_runtime/journal/spool.py": 1,
    # The console's boot thread imports, off the loop, what serving will import.
    "pct_tui/serving.py": 1,
}


def test_at_most_5_percent_of_internal_imports_are_deferred() -> None:
    figures = _metrics().import_figures()
    deferred, internal = figures["internal deferred"], figures["internal"]
    assert deferred <= MAX_DEFERRED_SHARE * internal, (
        f"{deferred} of {internal} internal imports are inside functions "
        f"(at most {MAX_DEFERRED_SHARE:.0%}): import at the top of the module"
    )


def test_modules_are_imported_by_name_only_at_the_declared_places() -> None:
    sites: dict[str, int] = {}
    for site in _metrics().by_name_imports():
        path = site.rsplit(":", 1)[0]
        sites[path] = sites.get(path, 0) + 1
    assert sites == BY_NAME


def _defines(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _module_path(name: str) -> Path:
    return ROOT / (name.replace(".", "/") + ".py")


def test_each_subcommand_has_a_parser_module_and_a_run_module() -> None:
    table = _metrics().subcommand_table()
    assert table, "the subcommand table was not found"
    for command, (parser, run) in table.items():
        assert "register" in _defines(_module_path(parser)), command
        assert "run" in _defines(_module_path(run)), command


def test_a_parser_module_imports_no_run_module() -> None:
    """`pct --help` imports every parser module: a run module's imports would come with it."""
    runs = {run for _, run in _metrics().subcommand_table().values()}
    for path in sorted((ROOT / "pct_runtime/cli_commands/args").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
                assert not names & runs, f"{path.name} imports {names & runs}"
            elif isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & runs, path.name
