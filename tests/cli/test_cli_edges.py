"""The CLI's rough edges, through the real `pct` and `pct-tui` processes: `--version`,
usage on a bad flag, the unknown `--model` hint and `pct models`, `pct undo`'s next older
patch and unknown `--session`, `pct serve` on a terminal, and `pct attach`'s inputs."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pct_runtime import __version__
from tests.cli.pct_proc import run_pct

PATCH = "*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n"


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return tmp_path / "agent"


def test_pct_and_pct_tui_answer_version(agent: Path) -> None:
    done = run_pct(agent, "--version")
    assert (done.returncode, done.stdout) == (0, f"pct {__version__}\n")
    tui = subprocess.run(
        [sys.executable, "-m", "pct_tui", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
        timeout=60,
    )
    assert (tui.returncode, tui.stdout) == (0, f"pct-tui {__version__}\n")


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["status", "--bogus"], "usage: pct status "),
        (["config", "show", "-x"], "usage: pct config show"),
    ],
)
def test_a_bad_flag_prints_that_subcommands_usage(agent: Path, argv: list[str], usage: str) -> None:
    done = run_pct(agent, *argv)
    assert done.returncode == 2
    assert done.stderr.startswith(usage)
    assert "unrecognized arguments" in done.stderr


def test_an_unknown_model_says_how_to_list_the_valid_ids(agent: Path) -> None:
    done = run_pct(agent, "status", "--model", "openai/gpt-5.x")
    assert done.returncode == 2
    assert "Run `pct models` to list the valid PROVIDER/ID values." in done.stderr
    assert "did you mean openai/" in done.stderr
    listed = run_pct(agent, "models", "openai/")
    assert listed.returncode == 0
    ids = [line.split()[0] for line in listed.stdout.splitlines()]
    assert ids
    assert all("openai/" in ref for ref in ids)
    assert ids == sorted(ids)
    none = run_pct(agent, "models", "no-such-model-anywhere")
    assert (none.returncode, none.stdout) == (1, "")


def test_undo_names_the_next_older_patch_when_the_newest_changed(
    agent: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("old.txt", "new.txt"):
        done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH.format(name=name))
        assert done.returncode == 0, done.stderr
    (work / "new.txt").write_text("edited by hand\n")
    log = run_pct(agent, "log", "--json")
    older_id = log.stdout.splitlines()[1].split('"call_id":"')[1].split('"')[0]
    refused = run_pct(agent, "undo")
    assert refused.returncode == 1
    assert f"The next older patch is {older_id}: run `pct undo {older_id}` to undo it." in (
        refused.stderr
    )
    assert run_pct(agent, "undo", older_id).returncode == 0
    assert not (work / "old.txt").exists()


def test_undo_says_when_a_session_does_not_exist(agent: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    assert (
        run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH.format(name="a")).returncode
        == 0
    )
    done = run_pct(agent, "undo", "--session", "pct-session-nope")
    assert done.returncode == 1
    assert done.stderr == (
        "pct: no session pct-session-nope in the journal; `pct log` shows the session ids.\n"
    )
    assert (work / "a").exists()


def test_serve_on_a_terminal_says_what_it_is_for(agent: Path) -> None:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pct_runtime.cli", "serve"],
        stdin=secondary,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
    )
    os.close(secondary)
    try:
        assert proc.stderr is not None
        seen = b""
        deadline = time.monotonic() + 60
        while b"Ctrl-C quits." not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
        assert b"pct: serving MCP over stdio: this waits for an MCP client" in seen
        assert seen.count(b"serving MCP over stdio") == 1
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(primary)


def test_serve_from_a_client_pipe_says_nothing(agent: Path) -> None:
    done = run_pct(agent, "serve", stdin="")  # stdin closed at once: the server exits
    assert "serving MCP over stdio" not in done.stderr


def test_attach_http_completes_or_refuses_the_url(agent: Path) -> None:
    done = run_pct(agent, "attach", "claude", "--http", "127.0.0.1:8765")
    assert done.returncode == 0
    assert "pct http://127.0.0.1:8765/mcp --header" in done.stdout
    assert "pct: --http: using http://127.0.0.1:8765/mcp" in done.stderr
    refused = run_pct(agent, "attach", "codex", "--http", "ftp://host/mcp")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "is not an http(s) URL" in refused.stderr


def test_attach_pi_below_the_supported_range_warns(agent: Path) -> None:
    done = run_pct(agent, "attach", "pi", "--pi-version", "0.40")
    assert done.returncode == 0
    assert "pct: warning: Pi 0.40.0 is older than 0.58" in done.stderr
    fine = run_pct(agent, "attach", "pi", "--pi-version", "0.60")
    assert "warning" not in fine.stderr


def test_attach_codex_prints_two_separate_alternatives(agent: Path) -> None:
    done = run_pct(agent, "attach", "codex")
    command, table = done.stdout.split("\n\n")
    assert command.startswith("# Two alternatives that do the same thing: use ONE of them")
    assert "# Alternative 1 - run this command once" in command
    assert "\ncodex mcp add pct --env PI_CODING_AGENT_DIR=" in command
    assert "serve --sandbox workspace-write" in command
    assert table.startswith("# Alternative 2 - or put this table in ~/.codex/config.toml")
    assert "\n[mcp_servers.pct]\n" in table
    assert "codex mcp add" not in table


PLAIN = [
    [],
    ["p.txt"],
    ["-"],
    ["--cwd", "work"],
    ["--cwd", "work", "p.txt"],
    ["p.txt", "--cwd", "work"],
    ["--cwd=work", "-"],
    ["--cwd", "dir with spaces", "a file.txt"],
]
# Not the plain form: argparse's to parse (or to refuse), so its messages stay its own.
OTHER = [
    ["--help"],
    ["-h"],
    ["--cw", "work"],
    ["--cwd"],
    ["--cwd="],
    ["--cwd", "-x"],
    ["--cwd=-x"],
    ["--cwd", "a", "--cwd", "b"],
    ["a", "b"],
    ["--", "p.txt"],
    ["-p.txt"],
    [""],
    ["--bogus"],
]


@pytest.mark.parametrize("words", PLAIN + OTHER)
def test_apply_patch_reads_plain_arguments_as_argparse_would(words: list[str]) -> None:
    """`pct apply-patch` skips argparse for plain `--cwd DIR` and FILE: the same values as
    its parser; anything else is left to that parser (None)."""
    from pct_runtime import cli
    from pct_runtime.cli_commands.apply_patch_cmd import quick_args

    quick = quick_args(words)
    if words in OTHER:
        assert quick is None
        return
    assert quick is not None
    parsed = cli.parse(cli.build_parser("apply-patch"), ["apply-patch", *words])
    assert (quick.command, quick.cwd, quick.file) == (parsed.command, parsed.cwd, parsed.file)
    assert quick.quick_exit is parsed.quick_exit is True


def test_a_quick_command_restores_the_collector_for_an_in_process_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pct apply-patch` pauses the cyclic collector from its first import; `main` called in
    a process that goes on (a test, an embedder) gets it back on."""
    import gc

    from pct_runtime import cli

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "f.txt").write_text("a\n")
    (tmp_path / "p").write_text("*** Begin Patch\n*** Add File: g.txt\n+x\n*** End Patch\n")
    assert gc.isenabled()
    assert cli.main(["apply-patch", "--cwd", str(tmp_path), str(tmp_path / "p")]) == 0
    assert gc.isenabled()
    assert (tmp_path / "g.txt").read_text() == "x\n"
    capsys.readouterr()
