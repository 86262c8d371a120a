"""Measure the shape of the code: the numbers docs/ARCHITECTURE.md tracks.

Run `python scripts/arch_metrics.py` from the repository root. It reads the code's own imports
with an AST scan (no import is executed) and prints:

- files outside each capability package that import it, and that name it (its identifier or
  config key, e.g. `computer_use`/`computerUse`); then, per capability, where its declaration
  lives (`capabilities/<name>/declaration.py`, listed by `capabilities/table.py`) and the
  modules outside its package that name it or import it;
- `Any` used as a type (names and attributes spelled `Any`);
- imports inside functions (deferred imports): their count, and the share of internal imports
  (of `pct_runtime`/`pct_tui` modules) that are deferred, in the CLI and elsewhere
  (`tests/test_deferred_imports.py` keeps the share at most 5%); then the declared
  lazy-loading points, whose modules are imported by name and so are no import statement:
  the CLI's subcommand table (`pct_runtime/cli.py` `SUBCOMMANDS`) and the packages'
  `lazy.exports` homes, the share with each of their modules counted as one deferred
  import, and every place that imports a module by name (`importlib.import_module`);
- citations left in comments and docstrings (`§` references, issue numbers, untranslated
  CJK text): `tests/test_comments.py` keeps them at 0;
- the highest McCabe complexity of a function (ruff's C901 count, the cap in pyproject.toml);
- modules per folder: the largest folder;
- import cycles between modules (strongly connected components of the import graph);
- the largest module;
- the call pipeline: the places that call the invocation hooks (`invoke_hooks`, must be 1:
  the pipeline) and that start a journal row (`journal.trace`, `observer.start`);
- the session context: string-keyed `shared(...)` lookups and `cast(...)` calls in the
  runtime package and the capabilities' bindings (both 0: typed `Slots` keys instead),
  and the modules of `pct_runtime.runtime`;
- the console's model: work-row classes (and the ones screens name), classes keeping a
  collection of approval requests, `isinstance` checks in screens against a runtime-side
  class (a local/remote branch), and `Answer` definitions.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pct_runtime", "pct_tui")
#: The modules that name every capability on purpose: the list of declarations and the
#: config rows (the config layer parses the document below every capability).
REGISTRIES = ("pct_runtime/capabilities/table.py", "pct_runtime/config/sections.py")
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


#: What a comment or docstring may not cite: a reader of the repository cannot open it.
CITATION = re.compile(
    r"§"  # a section of a document outside the repository
    r"|\bissues? #?\d+"  # an issue number
    r"|[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f]",  # untranslated CJK (spec headings)
    re.IGNORECASE,
)


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Lines where a bare string statement starts: module, class and function docstrings and
    the attribute docstrings after an assignment. Every other string is product text."""
    starts: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            starts.add(node.lineno)
    return starts


def citations(text: str) -> list[tuple[int, str]]:
    """(line, excerpt) of every comment or docstring in `text` that cites a place a reader
    cannot open. String literals other than docstrings are product text and are not read."""
    docstrings = _docstring_lines(ast.parse(text))
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        is_comment = token.type == tokenize.COMMENT
        is_docstring = token.type == tokenize.STRING and token.start[0] in docstrings
        if not (is_comment or is_docstring):
            continue
        for offset, line in enumerate(token.string.splitlines()):
            match = CITATION.search(line)
            if match:
                found.append((token.start[0] + offset, line.strip()[:120]))
    return found


def package_citations() -> dict[str, list[tuple[int, str]]]:
    """File -> its citations, for every module of the packages that has one."""
    found: dict[str, list[tuple[int, str]]] = {}
    for path in modules().values():
        hits = citations(path.read_text(encoding="utf-8"))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    return found


#: The CLI's modules: their deferred imports are counted apart.
CLI_MODULES = ("pct_runtime.cli", "pct_runtime.cli_commands")
#: Where the CLI's subcommand table is, and its name.
SUBCOMMAND_TABLE = ("pct_runtime/cli.py", "SUBCOMMANDS")
#: The calls that import a module by name.
BY_NAME = ("importlib.import_module", "import_module", "__import__")


def import_figures() -> dict[str, int]:
    """Import statements of the packages: all internal ones, and the deferred (inside a
    function) ones, all and internal, and the internal deferred ones in the CLI."""
    mods = modules()
    counts: Counter[str] = Counter()
    for module, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(node)
            if isinstance(inner, (ast.Import, ast.ImportFrom))
        }
        in_cli = any(module == cli or module.startswith(cli + ".") for cli in CLI_MODULES)
        for node in ast.walk(tree):
            targets = imported(node, module, path.name == "__init__.py")
            if not targets:
                continue
            internal = any(target.split(".")[0] in PACKAGES for target in targets)
            deferred = id(node) in in_function
            counts["deferred"] += deferred
            counts["internal"] += internal
            counts["internal deferred"] += internal and deferred
            counts["internal deferred in the CLI"] += internal and deferred and in_cli
    return dict(counts)


def _module_dicts(tree: ast.Module) -> dict[str, ast.Dict]:
    """The module-level `NAME = {...}` (or `NAME: T = {...}`) dict literals of a module."""
    found: dict[str, ast.Dict] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
            found[target.id] = value
    return found


def subcommand_table() -> dict[str, list[str]]:
    """The CLI's subcommand table: command -> the modules it imports by name."""
    path, name = SUBCOMMAND_TABLE
    table = _module_dicts(ast.parse((ROOT / path).read_text(encoding="utf-8")))[name]
    return {
        ast.literal_eval(key): list(ast.literal_eval(value))
        for key, value in zip(table.keys, table.values, strict=True)
        if key is not None
    }


def lazy_homes() -> dict[str, dict[str, str]]:
    """package -> {exported name: the module it loads from} of each `lazy.exports(...)`:
    a dict literal, or a comprehension over one whose values are relative to the package."""
    found: dict[str, dict[str, str]] = {}
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        dicts = _module_dicts(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _callee(node) in ("lazy.exports", "exports")):
                continue
            homes = node.args[1]
            if isinstance(homes, ast.Name):
                table, prefix = dicts[homes.id], ""
            elif isinstance(homes, ast.DictComp) and isinstance(homes.generators[0].iter, ast.Call):
                source = homes.generators[0].iter.func
                assert isinstance(source, ast.Attribute)
                assert isinstance(source.value, ast.Name)
                table, prefix = dicts[source.value.id], module + "."
            else:
                raise SystemExit(f"{path}: lazy.exports homes this script cannot read")
            found[module] = {
                ast.literal_eval(key): prefix + ast.literal_eval(value)
                for key, value in zip(table.keys, table.values, strict=True)
                if key is not None
            }
    return found


def by_name_imports() -> list[str]:
    """Every call that imports a module by name (`path:line`)."""
    sites: list[str] = []
    for path in modules().values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) in BY_NAME:
                sites.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    return sites


def max_complexity() -> tuple[int, str]:
    """The highest McCabe complexity of any function, as ruff's C901 counts it (the figure
    `max-complexity` caps), and where. (0, reason) when ruff cannot be run."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "C901"]
            + ["--config", "lint.mccabe.max-complexity=0", "--output-format", "json"]
            + [str(ROOT / package) for package in PACKAGES],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        found = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return 0, f"ruff did not run: {exc}"
    best = (0, "")
    for item in found:
        match = re.search(r"`(.+)` is too complex \((\d+) >", item["message"])
        if match and int(match.group(2)) > best[0]:
            where = Path(item["filename"]).relative_to(ROOT).as_posix()
            best = (int(match.group(2)), f"{where}: {match.group(1)}")
    return best


def largest_folder() -> tuple[str, int]:
    """The folder holding the most modules (files directly in it)."""
    folders = Counter(
        path.parent.relative_to(ROOT).as_posix()
        for path in modules().values()
        if path.name != "__init__.py"
    )
    return folders.most_common(1)[0]


#: pct_tui modules whose classes are one side of a runtime (a screen testing for one of
#: them with `isinstance` branches on local vs remote).
RUNTIME_SIDES = ("pct_tui.console", "pct_tui.remote", "pct_tui.own", "pct_tui.state.work")
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


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        owner = func.value
        base = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        return f"{base}.{func.attr}"
    return ""


def call_sites(callees: set[str], defined_in: str) -> list[str]:
    """`file:line` of every call whose callee is spelled as one of `callees` (`f` or
    `owner.f`), outside the module `defined_in` that defines it."""
    found: list[str] = []
    for module, path in modules().items():
        if module == defined_in:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) in callees:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sorted(found)


def _in(site: str, module_names: list[str]) -> bool:
    """Whether a `file:line` site is in one of `module_names`."""
    path = site.rsplit(":", 1)[0]
    return any(modules()[m].relative_to(ROOT).as_posix() == path for m in module_names)


def main() -> int:
    mods = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    any_count = 0
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
        for node in ast.walk(tree):
            if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"
            ):
                any_count += 1
            targets = imported(node, module, is_package)
            graph[module].update(t for t in targets if t in mods and t != module)
        _note_capability_names(module, path, text, naming, words)
    cycles = strongly_connected(graph)
    print("files outside a capability's package that import it / name it:")
    for name, files in naming.items():
        print(f"  {name:13} {len(files):3} / {len(words[name]):3}")
    print("declarations (the list: pct_runtime/capabilities/table.py):")
    for name in CAPABILITIES:
        declaration = ROOT / "pct_runtime" / "capabilities" / name / "declaration.py"
        where = declaration.relative_to(ROOT).as_posix() if declaration.exists() else "none"
        outside = naming[name] | words[name]
        others = outside - set(REGISTRIES)
        print(
            f"  {name:13} {where}; named outside its package in {len(outside)} modules, "
            f"{len(others)} besides the list and the config rows"
        )
    print(f"Any: {any_count}")
    hooks = call_sites({"invoke_hooks"}, "pct_runtime.invocation")
    print(f"invocation hook call sites: {len(hooks)} ({', '.join(hooks)})")
    bindings = [
        m
        for m in modules()
        if m.startswith("pct_runtime.runtime.")
        or m.endswith(".descriptor")
        or m == "pct_runtime.capabilities.openai.factory"
    ]
    shared = [s for s in call_sites({"services.shared", "shared"}, "") if _in(s, bindings)]
    casts = [s for s in call_sites({"cast", "typing.cast"}, "") if _in(s, bindings)]
    print(f"session context: shared() lookups {len(shared)}, casts {len(casts)}")
    for site in (*shared, *casts):
        print(f"  {site}")
    runtime_modules = sorted(
        m.rsplit(".", 1)[-1] for m in modules() if m.startswith("pct_runtime.runtime.")
    )
    print(f"pct_runtime.runtime modules: {len(runtime_modules)} ({', '.join(runtime_modules)})")
    traces = call_sites({"journal.trace", "observer.start"}, "pct_runtime.runtime.journaling")
    print(f"journal row starts (a call's gate, a console action): {len(traces)}")
    for site in traces:
        print(f"  {site}")
    _print_imports()
    print(f"import cycles: {len(cycles)}")
    for cycle in cycles:
        print("  " + " <-> ".join(sorted(cycle)))
    print(f"largest module: {largest[0]} ({largest[1]} lines)")
    folder, count = largest_folder()
    print(f"modules per folder: the largest is {folder} ({count} modules)")
    score, where = max_complexity()
    print(f"max complexity: {score} ({where})")
    cited = package_citations()
    print(f"citations left in comments/docstrings: {sum(len(h) for h in cited.values())}")
    for file, hits in cited.items():
        for line, excerpt in hits:
            print(f"  {file}:{line}: {excerpt}")
    texts = {module: path.read_text(encoding="utf-8") for module, path in mods.items()}
    print("console model:")
    for figure, value in console_figures(texts).items():
        print(f"  {figure}: {value}")
    return 0


def _note_capability_names(
    module: str, path: Path, text: str, naming: dict[str, set[str]], words: dict[str, set[str]]
) -> None:
    """Record `module` under each capability (outside its package) it imports or names."""
    for name in CAPABILITIES:
        own = f"pct_runtime.capabilities.{name}"
        if module == own or module.startswith(own + "."):
            continue
        if f"capabilities.{name}" in text or f"capabilities import {name}" in text:
            naming[name].add(str(path.relative_to(ROOT)))
        if any(re.search(rf"\b{word}\b", text) for word in CAPABILITIES[name]):
            words[name].add(str(path.relative_to(ROOT)))


def _print_imports() -> None:
    figures = import_figures()
    internal = figures.get("internal", 0) or 1
    inner = figures.get("internal deferred", 0)
    cli = figures.get("internal deferred in the CLI", 0)
    print(
        f"deferred imports: {figures.get('deferred', 0)}; internal: {inner} of "
        f"{figures.get('internal', 0)} internal imports ({100 * inner / internal:.1f}%)"
    )
    print(
        f"  the CLI's: {cli}; the rest: {inner - cli} "
        f"({100 * (inner - cli) / internal:.1f}% of internal imports)"
    )
    table = subcommand_table()
    commands = {module for pair in table.values() for module in pair}
    homes = lazy_homes()
    home_modules = {module for names in homes.values() for module in names.values()}
    print("declared lazy-loading points (modules imported by name, in no count above):")
    print(
        f"  the subcommand table ({':'.join(SUBCOMMAND_TABLE)}): {len(table)} commands, "
        f"{len(commands)} modules"
    )
    print(
        f"  lazy.exports homes: {len(homes)} packages export "
        f"{sum(len(names) for names in homes.values())} names from {len(home_modules)} modules"
    )
    for label, extra in (
        ("the table's modules as deferred imports", commands),
        ("the homes' modules too", home_modules),
    ):
        inner, internal = inner + len(extra), internal + len(extra)
        print(f"  counting {label}: {inner} of {internal} ({100 * inner / internal:.1f}%)")
    sites = by_name_imports()
    print(f"imports by name ({', '.join(BY_NAME)}): {len(sites)}")
    for site in sites:
        print(f"  {site}")


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
