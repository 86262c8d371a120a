"""Measure the shape of the code: the numbers docs/ARCHITECTURE.md tracks.

Run `python scripts/arch_metrics.py` from the repository root. It reads the code's own imports
with an AST scan (no import is executed) and prints:

- files outside each capability package that import it, and that name it (its identifier or
  config key, e.g. `computer_use`/`computerUse`);
- `Any` used as a type (names and attributes spelled `Any`);
- imports inside functions (deferred imports);
- import cycles between modules (strongly connected components of the import graph);
- the largest module;
- the console's model: work-row classes (and the ones screens name), classes keeping a
  collection of approval requests, `isinstance` checks in screens against a runtime-side
  class (a local/remote branch), and `Answer` definitions.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pct_runtime", "pct_tui")
#: capability package -> the words that name it in code (identifier and config key).
CAPABILITIES = {
    "apply_patch": ("apply_patch", "applyPatch"),
    "shell": ("shell_sessions", "shellSessions"),
    "code": ("code_mode", "codeMode"),
    "discovery": ("tool_discovery", "toolDiscovery"),
    "web_search": ("web_search", "webSearch"),
    "image": ("image_generation", "imageGeneration"),
    "compaction": ("remote_compaction", "remoteCompaction"),
    "computer_use": ("computer_use", "computerUse"),
}


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            keep = len(parts) - node.level + (1 if is_package else 0)
            base = ".".join(parts[:keep] + ([base] if base else []))
        return [base] + [f"{base}.{alias.name}" for alias in node.names]
    return []


def naming_files() -> dict[str, set[str]]:
    """Capability -> the files outside its package that import it or name it.

    `tests/test_capability_registry.py` pins this set so it can only shrink."""
    found: dict[str, set[str]] = {name: set() for name in CAPABILITIES}
    for module, path in modules().items():
        text = path.read_text(encoding="utf-8")
        for name, words in CAPABILITIES.items():
            own = f"pct_runtime.capabilities.{name}"
            if module == own or module.startswith(own + "."):
                continue
            if (
                f"capabilities.{name}" in text
                or f"capabilities import {name}" in text
                or any(re.search(rf"\b{word}\b", text) for word in words)
            ):
                found[name].add(path.relative_to(ROOT).as_posix())
    return found


#: pct_tui modules whose classes are one side of a runtime (a screen testing for one of
#: them with `isinstance` branches on local vs remote).
RUNTIME_SIDES = ("pct_tui.console", "pct_tui.remote", "pct_tui.own", "pct_tui.work")
#: What every work row answers; a class defining all of them is one.
WORK_ROW_FACE = {"follow", "recovery_lines", "initial_text"}


def _annotation_names(tree: ast.AST) -> set[str]:
    """Every name used inside a type annotation (arguments, returns, annotated fields)."""
    found: set[str] = set()
    annotations: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.annotation is not None:
                    annotations.append(arg.annotation)
            if node.returns is not None:
                annotations.append(node.returns)
    for annotation in annotations:
        for inner in ast.walk(annotation):
            if isinstance(inner, ast.Name):
                found.add(inner.id)
            elif isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                found.update(re.findall(r"[A-Za-z_]\w*", inner.value))
    return found


def console_figures(sources: dict[str, str]) -> dict[str, int]:
    """The console's model, from the AST of `sources` (module name -> text)."""
    trees = {module: ast.parse(text) for module, text in sources.items()}
    work_rows: set[str] = set()
    implementations = 0
    queues = 0
    answers = 0
    side_classes: set[str] = set()
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and node in getattr(tree, "body", []):
                answers += any(isinstance(t, ast.Name) and t.id == "Answer" for t in node.targets)
            if not isinstance(node, ast.ClassDef) or not module.startswith("pct_tui"):
                continue
            if module in RUNTIME_SIDES:
                side_classes.add(node.name)
            defined = {
                item.name
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
            if defined >= WORK_ROW_FACE:
                work_rows.add(node.name)
                is_protocol = any(
                    isinstance(base, ast.Name) and base.id == "Protocol" for base in node.bases
                )
                implementations += not is_protocol
            held = [
                ast.unparse(item.annotation)
                for item in ast.walk(node)
                if isinstance(item, ast.AnnAssign)
            ]
            if any(re.search(r"(deque|dict|list|set)\[.*ApprovalRequest", h) for h in held):
                queues += 1
    branches = 0
    screens = {m: t for m, t in trees.items() if m.startswith("pct_tui.screens")}
    seen: set[str] = set()
    for tree in screens.values():
        seen |= _annotation_names(tree) & work_rows
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
            ):
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                branches += bool(names & side_classes)
    return {
        "work-row classes": implementations,
        "work-row types screens name": len(seen),
        "approval queue classes": queues,
        "isinstance local/remote branches in screens": branches,
        "Answer definitions": answers,
    }


def main() -> int:
    mods = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    any_count = 0
    deferred = 0
    largest = ("", 0)
    naming: dict[str, set[str]] = {name: set() for name in CAPABILITIES}
    words: dict[str, set[str]] = {name: set() for name in CAPABILITIES}
    for module, path in mods.items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + 1
        if lines > largest[1]:
            largest = (str(path.relative_to(ROOT)), lines)
        tree = ast.parse(text)
        is_package = path.name == "__init__.py"
        func_nodes: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        func_nodes.add(id(inner))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"
            ):
                any_count += 1
            targets = imported(node, module, is_package)
            if not targets:
                continue
            if id(node) in func_nodes:
                deferred += 1
            for target in targets:
                if target in mods and target != module:
                    graph[module].add(target)
        for name in CAPABILITIES:
            own = f"pct_runtime.capabilities.{name}"
            if module == own or module.startswith(own + "."):
                continue
            if f"capabilities.{name}" in text or f"capabilities import {name}" in text:
                naming[name].add(str(path.relative_to(ROOT)))
            if any(re.search(rf"\b{word}\b", text) for word in CAPABILITIES[name]):
                words[name].add(str(path.relative_to(ROOT)))
    cycles = strongly_connected(graph)
    print("files outside a capability's package that import it / name it:")
    for name, files in naming.items():
        print(f"  {name:13} {len(files):3} / {len(words[name]):3}")
    print(f"Any: {any_count}")
    print(f"deferred imports: {deferred}")
    print(f"import cycles: {len(cycles)}")
    for cycle in cycles:
        print("  " + " <-> ".join(sorted(cycle)))
    print(f"largest module: {largest[0]} ({largest[1]} lines)")
    texts = {module: path.read_text(encoding="utf-8") for module, path in mods.items()}
    print("console model:")
    for figure, value in console_figures(texts).items():
        print(f"  {figure}: {value}")
    return 0


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm; components of more than one module are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[set[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.add(item)
                if item == node:
                    break
            if len(component) > 1:
                result.append(component)

    for node in list(graph):
        if node not in index:
            visit(node)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
