"""No absolute machine path in the repository: it must work from any clone on any machine.

Tests use `tmp_path`; shared data is found through `../shared` next to the repository. The
scan covers every text file (code, tests, docs, scripts, CI, snapshots) outside ignored
build and tool directories.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP_DIRS = {
    ".git",
    "node_modules",
    ".npm-pi",
    ".ci-venv",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "build",
    "dist",
}
# An absolute path into a home, a user dir, a machine's work tree or the temp dir.
PATTERN = re.compile(r"(?<![\w.~$/-])/(?:work|root|home|Users|tmp)(?:/|\b)")

TMP = "/" + "tmp"
#: Fixed paths kept on purpose, each with its reason. The console snapshots print the agent
#: dir, so it must be the same string on every machine (not a per-run `tmp_path`); the temp
#: root exists on every POSIX system and a file lock makes concurrent runs take turns.
#: The rendered SVGs wrap long paths, so there any `pct-` name under the temp root is allowed,
#: and the temp root alone where a row is cut right after it (`…/</text>`) or where a path
#: is shortened in the middle at or just after it (the temp root, then `…` or `/pc…`).
ALLOWED: dict[str, tuple[str, ...]] = {
    "tests/tui/test_tui_snapshots.py": (f"{TMP}/pct-tui-snapshots/",),
    "tests/tui/__snapshots__/": (
        f"{TMP}/pct-",
        f"{TMP}/<",
        *(f"{TMP}{cut}…" for cut in ("", "/", "/p", "/pc", "/pct")),
    ),
    "tests/tui/history/__snapshots__/": (f"{TMP}/pct-", f"{TMP}/<"),
    "scripts/screenshots.py": (f"{TMP}/pct-screenshots/",),
    # The live-client double's recovery paths: printed in the remote snapshots, never written.
    "tests/tui/remote/live_double.py": (f"{TMP}/pct-output-double/",),
    "screenshots/": (f"{TMP}/pct-", f"{TMP}/<"),
}


def _files() -> list[Path]:
    """The repository's files: git's view (tracked plus new, not ignored) in a checkout,
    else a walk that skips tool and build directories."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return _walk()
    paths = (REPO / name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name)
    return [path for path in paths if path.is_file() and not path.is_symlink()]


def _walk() -> list[Path]:
    out: list[Path] = []
    stack = [REPO]
    while stack:
        directory = stack.pop()
        for entry in directory.iterdir():
            if entry.is_symlink() or entry.name == ".git":  # a worktree's .git is a file
                continue
            if entry.is_dir():
                if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                    stack.append(entry)
            elif entry.is_file():
                out.append(entry)
    return out


def _allowed(rel: str, line: str, start: int) -> bool:
    for prefix, fixed in ALLOWED.items():
        in_scope = rel == prefix or (prefix.endswith("/") and rel.startswith(prefix))
        if in_scope and any(line.startswith(path, start) for path in fixed):
            return True
    return False


def machine_paths(root_files: list[Path]) -> list[str]:
    found: list[str] = []
    for path in root_files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        rel = path.relative_to(REPO).as_posix()
        for number, line in enumerate(text.splitlines(), 1):
            for match in PATTERN.finditer(line):
                if not _allowed(rel, line, match.start()):
                    found.append(f"{rel}:{number}: {line.strip()[:120]}")
    return found


def test_no_absolute_machine_path_in_the_repository() -> None:
    files = _files()
    assert any(f.name == "pyproject.toml" for f in files)  # the scan saw the repository
    found = machine_paths(files)
    assert not found, "absolute machine paths (use tmp_path or ../shared):\n" + "\n".join(found)


def test_the_scan_catches_each_kind() -> None:
    caught = [
        'Path("/' + 'work/shared/data")',
        "Run: /" + "root/.venv/bin/python x",
        "Config: /" + "home/u/.pi/agent",
        'x = "/' + 'tmp/abs"',
        "written to /" + "tmp",
        "/" + "Users/me/x",
    ]
    for line in caught:
        assert PATTERN.search(line), line
    for line in ("~/.pi/agent", "https://example.com/home/x", "../shared", "a/tmp/b", "$TMPDIR"):
        assert not PATTERN.search(line), line
    # The allowance is exact: only the fixed snapshot root, only in its files.
    assert _allowed("tests/tui/__snapshots__/x/y.svg", f"{TMP}/pct-tui-snapshots/agent", 0)
    assert not _allowed("tests/tui/__snapshots__/x/y.svg", f"{TMP}/other", 0)
    assert not _allowed("tests/tui/test_tui_snapshots.py", f"{TMP}/pct-other/x", 0)
    assert not _allowed("tests/test_status.py", f"{TMP}/pct-tui-snapshots/agent", 0)
