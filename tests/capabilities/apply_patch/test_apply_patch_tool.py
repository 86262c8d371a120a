"""The `apply_patch` tool (spec, results, errors, approval hook, cancellation) and the CLI."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from apply_patch_helpers import envelope, snapshot

from pct_runtime.capabilities.apply_patch import executor, tool
from pct_runtime.capabilities.apply_patch.executor import PreparedPatch
from pct_runtime.capabilities.apply_patch.grammar import grammar_text
from pct_runtime.capabilities.apply_patch.tool import (
    MINIMAL_ENVELOPE,
    PatchApprovalRequest,
    create_apply_patch_tool,
)
from pct_runtime.capabilities.base import CallContext, ToolError


def test_spec() -> None:
    spec = create_apply_patch_tool().spec
    assert spec.name == "apply_patch"
    assert spec.label == "Apply Patch"
    assert spec.sequential is True
    assert spec.input_schema == {
        "type": "object",
        "properties": {
            "patch": {"type": "string", "description": tool.PATCH_PARAMETER_DESCRIPTION}
        },
        "required": ["patch"],
        "additionalProperties": False,
    }
    assert spec.meta == {"pct/grammar": {"syntax": "lark", "definition": grammar_text()}}
    assert MINIMAL_ENVELOPE == (
        "*** Begin Patch\n*** Add File: notes/todo.md\n+first line\n*** End Patch"
    )
    description = spec.description
    assert MINIMAL_ENVELOPE in description
    for rule in (
        "real newlines",
        "no Markdown fences or quotes",
        "'*** Begin Patch ***'",
        "carriage return (CR)",
        "UTF-8 text with one line-ending style",
        "deleting binary files is not supported",
        "A rejected patch changes nothing",
        "no absolute paths, no '..'",
    ):
        assert rule in description


async def test_call_applies_and_returns_text_and_details(tmp_path: Path) -> None:
    apply = create_apply_patch_tool()
    result = await apply({"patch": envelope("*** Add File: a.txt", "+hi")}, CallContext(tmp_path))
    assert result.text == "Applied patch:\n- add a.txt"
    assert result.details == {"operations": [{"operation": "add", "path": "a.txt"}]}
    assert (tmp_path / "a.txt").read_text() == "hi\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {},
            "apply_patch requires 'patch' to be a string holding the whole patch envelope, "
            "from '*** Begin Patch' to '*** End Patch'. Nothing was changed.",
        ),
        (
            {"patch": 3},
            "apply_patch requires 'patch' to be a string holding the whole patch "
            "envelope, from '*** Begin Patch' to '*** End Patch'. Nothing was changed.",
        ),
        (
            {"patch": "x", "input": "y"},
            "apply_patch accepts only the 'patch' argument; remove: input. Nothing was changed.",
        ),
    ],
)
async def test_invalid_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as info:
        await create_apply_patch_tool()(args, CallContext(tmp_path))
    assert info.value.code == "invalid-arguments"
    assert info.value.message == message


async def test_rejection_maps_to_tool_error_with_line(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        await create_apply_patch_tool()({"patch": "*** Begin Patch ***\n"}, CallContext(tmp_path))
    assert info.value.code == "invalid-patch"
    assert info.value.message == (
        "Invalid patch: The first line of the patch must be '*** Begin Patch'. Write that line "
        "exactly as '*** Begin Patch', with nothing before or after it. Nothing was changed."
    )
    assert info.value.details == {"line": 1}


async def test_nested_prepare_validates_and_says_what_to_approve(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\n")
    patch = envelope("*** Update File: f", "*** Move to: g", "-a", "+b")
    before = snapshot(tmp_path)
    prepared = await create_apply_patch_tool().prepare(
        {"patch": patch}, CallContext(tmp_path, path="nested")
    )
    assert snapshot(tmp_path) == before  # prepare changes nothing
    approval = prepared.approval
    assert approval is not None
    assert approval.title == "Code Mode: apply patch?"
    assert approval.preview.startswith("- move f -> g\n\n*** Begin Patch")
    assert approval.diffs is not None
    assert [d.operation for d in approval.diffs()] == ["move"]


async def test_a_direct_call_has_nothing_to_approve_and_applies(tmp_path: Path) -> None:
    tool = create_apply_patch_tool()
    ctx = CallContext(tmp_path)
    prepared = await tool.prepare({"patch": envelope("*** Add File: a", "+x")}, ctx)
    assert prepared.approval is None
    result = await tool.execute(prepared, ctx)
    assert result.text == "Applied patch:\n- add a"


async def test_an_invalid_nested_patch_fails_at_prepare(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        await create_apply_patch_tool().prepare(
            {"patch": envelope("*** Update File: missing", "-a")},
            CallContext(tmp_path, path="nested"),
        )
    assert info.value.code != "approval-denied"


def test_preview_is_bounded_in_utf8_bytes() -> None:
    request = PatchApprovalRequest((), "\u00e9" * 1000, "/", CallContext(Path("/")))
    text = request.preview()
    assert len(text.encode()) <= 800
    assert text.endswith("…")


async def test_cancellation_sets_abort_and_waits_for_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    release = threading.Event()
    observed: list[bool] = []

    def slow_commit(
        prepared: PreparedPatch, should_abort: Any = None, witness: Any = None, locks: Any = None
    ) -> Any:
        started.set()
        release.wait(5)
        observed.append(should_abort())
        return executor.commit_prepared(prepared, should_abort, witness, locks)

    monkeypatch.setattr(tool, "commit_prepared", slow_commit)
    task = asyncio.create_task(
        create_apply_patch_tool()(
            {"patch": envelope("*** Add File: a", "+x")}, CallContext(tmp_path)
        )
    )
    await asyncio.to_thread(started.wait, 5)
    task.cancel()
    await asyncio.sleep(0.01)
    assert not task.done()  # still waiting for the worker to settle
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert observed == [True]
    assert os.listdir(tmp_path) == []  # the abort check stopped it before any change


def run_cli(*args: str, stdin: str = "", cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_cli_from_stdin_and_file_with_cwd(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli(stdin=envelope("*** Add File: a.txt", "+hi"), cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (0, "Applied patch:\n- add a.txt\n", "")
    patch_file = tmp_path / "p.patch"
    patch_file.write_text(envelope("*** Delete File: a.txt"))
    done = run_cli("--cwd", str(work), str(patch_file), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "Applied patch:\n- delete a.txt\n")
    assert os.listdir(work) == []


def test_cli_rejection_prints_the_exact_text_on_stderr(tmp_path: Path) -> None:
    done = run_cli(stdin=envelope("*** Delete File: nope"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "Cannot delete 'nope' (patch line 2): the file does not exist. Nothing was changed.\n"
    )


def test_cli_missing_patch_file(tmp_path: Path) -> None:
    done = run_cli(str(tmp_path / "missing.patch"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("pct: cannot read patch file")


REJECTED_CALLS: list[Any] = [
    {"patch": "```\n*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n```"},
    {"patch": "*** Begin Patch\\n*** Add File: new.txt\\n+x\\n*** End Patch"},
    {"patch": "*** Begin Patch\n*** Add File: new.txt\n+x\n"},
    {"patch": envelope("*** Frobnicate File: a.txt")},
    {"patch": envelope("*** Delete File: ../a.txt")},
    {"patch": envelope("*** Delete File: a.txt", "*** Add File: A.TXT", "+x")},
    {"patch": envelope("*** Update File: a.txt", "@@", "-nothing like this", "+y")},
    {"patch": envelope("*** Update File: a.txt", "@@ def nowhere():", " one")},
    {"patch": envelope("*** Add File: a.txt", "+x")},
    {"patch": envelope("*** Delete File: missing.txt")},
    {"patch": 3},
    {"patch": "x", "input": "y"},
]


@pytest.mark.parametrize("args", REJECTED_CALLS)
async def test_every_rejection_says_nothing_was_changed(tmp_path: Path, args: Any) -> None:
    """Parse, path, match, preflight and argument rejections all end the same way, so the
    model can rely on it (a mismatch says it just before the quoted expected lines)."""
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        await create_apply_patch_tool()(args, CallContext(tmp_path))
    message = info.value.message
    assert message.endswith(" Nothing was changed.") or (
        " Nothing was changed. Expected lines:\n" in message
    ), message
    assert message.count("Nothing was changed.") == 1
    assert snapshot(tmp_path) == before


async def test_fenced_and_escaped_patches_are_told_the_fix(tmp_path: Path) -> None:
    """The two commonest envelope mistakes keep Codex's first sentence, then say the fix."""
    codex = "Invalid patch: The first line of the patch must be '*** Begin Patch'"
    apply = create_apply_patch_tool()
    with pytest.raises(ToolError) as fenced:
        await apply({"patch": REJECTED_CALLS[0]["patch"]}, CallContext(tmp_path))
    assert fenced.value.message.startswith(codex + ". ")
    assert "Markdown code fence" in fenced.value.message
    with pytest.raises(ToolError) as escaped:
        await apply({"patch": REJECTED_CALLS[1]["patch"]}, CallContext(tmp_path))
    assert escaped.value.message.startswith(codex + ". ")
    assert "real newline characters, not backslash-n" in escaped.value.message
    assert os.listdir(tmp_path) == []
