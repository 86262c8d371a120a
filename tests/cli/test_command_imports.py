"""What each short `pct` command imports, read from the real process (its `sys.modules`).

Start-up is most of a short command's time: `pct apply-patch` applies a 400-hunk patch in
~18 ms but used to spend ~150 ms importing the log command, asyncio, the output capture and
the sandbox options. Each command loads only what it uses; the console's UI toolkit never.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PATCH = "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+c\n*** End Patch\n"


#: Runs `pct` (its `main`) and then lists every module the process holds. `sys.modules`,
#: not `-X importtime`: importtime does not see a module loaded by `importlib.import_module`
#: (the CLI's subcommand table, the packages' lazy exports), only what that module imports.
PROBE = """
import sys
from pct_runtime import cli
code = cli.main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n--modules--\\n" + "\\n".join(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""


def _imported(args: list[str], cwd: Path, agent: Path, stdin: str = "") -> set[str]:
    """Every module the real `pct <args>` imported (top-level and dotted names)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCT_")}
    env["PI_CODING_AGENT_DIR"] = str(agent)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set(done.stderr.rpartition("\n--modules--\n")[2].split())
    assert "pct_runtime.cli_commands.errors" in names, "the module list was not read"
    return names


def _loaded(names: set[str], package: str) -> bool:
    return any(name == package or name.startswith(package + ".") for name in names)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    return path


def test_apply_patch_imports_only_the_patch_engine(tmp_path: Path, agent: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    (tmp_path / "p.txt").write_text(PATCH)
    names = _imported(["apply-patch", "p.txt"], tmp_path, agent)
    assert (tmp_path / "f.txt").read_text() == "a\nc\n"
    assert "pct_runtime.capabilities.apply_patch.executor" in names
    for package in (
        "textual",
        "pct_tui",
        "asyncio",
        "sqlite3",
        "pydantic",
        "mcp",
        "lark",
        "uuid",  # imports `platform`
        "httpx",
        # Each cost more than the apply: dataclasses (with inspect, ast, dis), the tool
        # contract, threading, shutil (argparse's help width, with bz2 and lzma), hashlib.
        "dataclasses",
        "inspect",
        # Its arguments are read without argparse (with gettext and locale, ~5 ms).
        "argparse",
        "gettext",
        "locale",
        "threading",
        "shutil",
        "hashlib",
        "pct_runtime.capabilities.base",
        # `pct.journal` is validated only when a configuration file is there (none here).
        "pct_runtime.config",
        # Neither typing (~4 ms with its NamedTuple classes) nor pathlib (urllib.parse and
        # ipaddress under it, ~4 ms): see pct_runtime.tuples and host.system.folders.path_text.
        "typing",
        "pathlib",
        "urllib",
        "ipaddress",
        "pct_runtime.host.ui",
        "pct_runtime.cli_commands.log_cmd",
        "pct_runtime.cli_commands.sandbox_opts",
        # Its parser module too: `quick_args` reads the plain words.
        "pct_runtime.cli_commands.args",
        "pct_runtime.output.capture",
        "pct_runtime.runtime",
    ):
        assert not _loaded(names, package), package


def test_status_does_not_import_the_call_path(tmp_path: Path, agent: Path) -> None:
    names = _imported(["status"], tmp_path, agent)
    assert "pct_runtime.status" in names
    for package in (
        "textual",
        "pct_tui",
        "sqlite3",
        "mcp",
        "httpx",
        # The config models are frozen dataclasses: pydantic's import alone cost more than
        # the rest of the command. Only the MCP server needs it.
        "pydantic",
        "pydantic_core",
        # Its records are datarecords: no class compiles methods, and dataclasses (with
        # inspect, ast and dis) never loads; the config document is copied without `copy`.
        "dataclasses",
        "inspect",
        "copy",
        # What only a save, a typo, a session, a temp root or a `!command` key needs: uuid
        # (with `platform`), the config lock, difflib, tempfile and shutil (bz2, lzma),
        # subprocess.
        "uuid",
        "platform",
        "pct_runtime.config.lock",
        "difflib",
        "tempfile",
        "shutil",
        "subprocess",
        "asyncio",  # the Computer Use probe starts a loop only on macOS with the app
        "pct_runtime.capabilities.computer_use.client",
        "pct_runtime.journal.store",
        "pct_runtime.runtime.session",
        "pct_runtime.runtime.core",
        "pct_runtime.serve.mcp.server",
        "pct_runtime.cli_commands.log_cmd",
        # The capability list loads each package's declaration, never its tools.
        "pct_runtime.capabilities.apply_patch.executor",
        "pct_runtime.capabilities.shell.manager",
        "pct_runtime.capabilities.code.manager",
        "pct_runtime.capabilities.discovery.tool",
        "pct_runtime.capabilities.web_search.tool",
        "pct_runtime.capabilities.image.tool",
        "pct_runtime.capabilities.compaction.hook",
        "pct_runtime.capabilities.openai.factory",
        # The host probe is its own module: no binding loads, so neither the tool contract,
        # the UI port, the descriptor record nor Computer Use's tools (and their templates).
        # (`importlib.import_module` bypasses importtime: a binding shows by its imports.)
        "pct_runtime.capabilities.computer_use.tools",
        "pct_runtime.capabilities.computer_use.eligibility",  # macOS only
        "pct_runtime.capabilities.descriptor",
        "pct_runtime.capabilities.base",
        "pct_runtime.capabilities.context",
        "pct_runtime.host.ui",
        "pct_runtime.debug",
        "logging",
        # The config store's lock is a `_thread` lock; its records are datarecords.
        "threading",
        "pct_runtime.capabilities.discovery.catalog",
    ):
        assert not _loaded(names, package), package
    assert "pct_runtime.capabilities.table" in names


def test_log_does_not_import_the_event_loop(tmp_path: Path, agent: Path) -> None:
    names = _imported(["log"], tmp_path, agent)
    assert "pct_runtime.cli_commands.log_cmd" in names
    for package in (
        "textual",
        "pct_tui",
        "asyncio",
        "pydantic",
        "mcp",
        "httpx",
        "pct_runtime.runtime",
    ):
        assert not _loaded(names, package), package


def test_serve_over_stdio_never_imports_the_console(tmp_path: Path, agent: Path) -> None:
    # End of input right away: the server starts, sees EOF and exits 0.
    names = _imported(["serve"], tmp_path, agent)
    assert "pct_runtime.serve.mcp.server" in names
    for package in (
        "textual",
        "pct_tui",
        "pct_runtime.cli_commands.log_cmd",
        # httpx loads rich for its own command line: the OpenAI capabilities import it where
        # a request is made; pct's HTTP transport loads only for --http.
        "httpx",
        "rich",
        "pct_runtime.serve.mcp.http",
    ):
        assert not _loaded(names, package), package


def test_config_path_loads_neither_the_schema_nor_the_store(tmp_path: Path, agent: Path) -> None:
    names = _imported(["config", "path"], tmp_path, agent)
    assert "pct_runtime.cli_commands.config_cmd" in names
    for package in ("pct_runtime.config.schema", "pct_runtime.config.store", "sqlite3"):
        assert not _loaded(names, package), package
