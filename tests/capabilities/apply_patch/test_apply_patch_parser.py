"""Parser: every grammar rule, every parse-time rejection text, agreement with the grammar."""

from __future__ import annotations

import pytest
from apply_patch_helpers import envelope
from hypothesis import given, settings
from hypothesis import strategies as st

from pct_runtime.capabilities.apply_patch.errors import PatchSyntaxError, PathConflictError
from pct_runtime.capabilities.apply_patch.grammar import grammar_text, lark_accepts, lark_parser
from pct_runtime.capabilities.apply_patch.parser import (
    AddFile,
    DeleteFile,
    UpdateFile,
    parse_patch,
)

HEADER_HELP = (
    "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
    "'*** Update File: {path}'"
)
#: Codex's own first sentences (kept byte for byte; pct appends a hint and the outcome).
FIRST_LINE = "Invalid patch: The first line of the patch must be '*** Begin Patch'"
LAST_LINE = "Invalid patch: The last line of the patch must be '*** End Patch'"
FENCE_HINT = (
    ". Remove the Markdown code fence lines (```): send only the patch, from "
    "'*** Begin Patch' to '*** End Patch'. Nothing was changed."
)
CONTEXT_ONLY = (
    "The hunk for '{}' has only context lines (' ') and no '+' or '-' line, so it would "
    "change nothing. Add the '-' lines to remove and the '+' lines to add, or drop the hunk."
)
UNANCHORED = (
    "The hunk for '{}' only adds lines ('+') and nothing says where they go. Anchor it: put "
    "' ' context lines (the file's lines just before and after the new ones) around the '+' "
    "lines, or start the hunk with '@@ <exact text of the line to insert after>', or end the "
    "update with '*** End of File' to append at the end of the file."
)
UNEXPECTED_HELP = (
    "Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
)


def test_grammar_is_lalr_and_shipped_with_the_package() -> None:
    text = grammar_text()
    assert text.startswith("// pct apply_patch grammar")
    assert lark_parser().options.parser == "lalr"


def test_add_delete_update_move_multiple_files_and_hunks() -> None:
    patch = parse_patch(
        envelope(
            "*** Add File: new/a.txt",
            "+one",
            "+",
            "*** Delete File: old.txt",
            "*** Update File: src/app.py",
            "*** Move to: src/main.py",
            "@@ def greet():",
            " keep",
            "-print('Hi')",
            "+print('Hello')",
            "@@",
            "",
            "-x",
            "+y",
            "*** End of File",
        )
    )
    add, delete, update = patch.operations
    assert isinstance(add, AddFile)
    assert add.lines == ("one", "")
    assert add.path.display == "new/a.txt"
    assert add.line == 2
    assert isinstance(delete, DeleteFile)
    assert delete.path.display == "old.txt"
    assert isinstance(update, UpdateFile)
    assert update.move_to is not None
    assert update.move_to.display == "src/main.py"
    first, second = update.chunks
    assert [loc.text for loc in first.locators] == ["def greet():"]
    assert first.lines == ((" ", "keep"), ("-", "print('Hi')"), ("+", "print('Hello')"))
    assert not first.end_of_file
    assert second.locators == ()
    assert second.end_of_file
    assert second.lines == ((" ", ""), ("-", "x"), ("+", "y"))
    assert second.line == 12


def test_first_hunk_may_omit_the_at_at_line_and_locators_may_stack() -> None:
    patch = parse_patch(
        envelope("*** Update File: f", "-a", "+b", "@@ class B", "@@   def m", "-x")
    )
    (update,) = patch.operations
    assert isinstance(update, UpdateFile)
    assert [c.old_lines for c in update.chunks] == [["a"], ["x"]]
    assert [loc.text for loc in update.chunks[1].locators] == ["class B", "  def m"]


def test_paths_drop_dot_and_empty_segments_and_accept_backslashes() -> None:
    patch = parse_patch(envelope("*** Delete File: ./a//b\\c/./d.txt"))
    assert patch.operations[0].path.display == "a/b/c/d.txt"


def test_final_newline_after_end_patch_is_optional() -> None:
    text = envelope("*** Delete File: a", final_newline=False)
    assert parse_patch(text).operations[0].path.display == "a"
    assert lark_accepts(text)


REJECTIONS: list[tuple[str, str]] = [
    (
        "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n",
        "Invalid patch: The patch contains a carriage return (CR) character on line 1. Send "
        "every patch line ending with LF only; CRLF files are still matched and keep their CRLF "
        "line endings. Nothing was changed.",
    ),
    ("", FIRST_LINE + ". Nothing was changed."),
    (
        "*** Begin Patch ***\n*** Delete File: a\n*** End Patch\n",
        FIRST_LINE + ". Write that line exactly as '*** Begin Patch', with nothing before or "
        "after it. Nothing was changed.",
    ),
    (
        " *** Begin Patch\n*** Delete File: a\n*** End Patch\n",
        FIRST_LINE + ". Write that line exactly as '*** Begin Patch', with nothing before or "
        "after it. Nothing was changed.",
    ),
    # The two commonest model mistakes get a specific fix after Codex's own sentence.
    (
        "```\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n```\n",
        FIRST_LINE + FENCE_HINT,
    ),
    (
        "```diff\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n```",
        FIRST_LINE + FENCE_HINT,
    ),
    (
        "*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch",
        FIRST_LINE + ". The patch arrived with literal \\n escapes (a backslash followed by n) "
        "instead of line breaks: separate the patch lines with real newline characters, not "
        "backslash-n. Nothing was changed.",
    ),
    (
        "*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch\n",
        FIRST_LINE + ". The patch arrived with literal \\n escapes (a backslash followed by n) "
        "instead of line breaks: separate the patch lines with real newline characters, not "
        "backslash-n. Nothing was changed.",
    ),
    (
        "Here is the patch:\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n",
        FIRST_LINE + ". Line 2 is '*** Begin Patch': remove every line before it. "
        "Nothing was changed.",
    ),
    (
        "*** Begin Patch\n",
        LAST_LINE + ". If the patch was cut off, send it again in full, ending with "
        "'*** End Patch'. Nothing was changed.",
    ),
    (
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n```\n",
        LAST_LINE + FENCE_HINT,
    ),
    (
        "*** Begin Patch\n*** Delete File: a\n*** End Patch \n",
        LAST_LINE + ". Write that line exactly as '*** End Patch', with nothing before or after "
        "it. Nothing was changed.",
    ),
    (
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n\n",
        LAST_LINE + ". Line 3 is '*** End Patch': remove every line after it. Nothing was changed.",
    ),
    (
        envelope(),
        "Invalid patch: The patch contains no file operations. Put at least one "
        "'*** Add File: ', '*** Delete File: ' or '*** Update File: ' section between "
        "'*** Begin Patch' and '*** End Patch'. Nothing was changed.",
    ),
    (
        envelope("*** Frobnicate File: foo"),
        "Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header. "
        + HEADER_HELP
        + ". Nothing was changed.",
    ),
    (
        envelope("  *** Update File: foo.txt", "@@", "-a"),
        "Invalid patch hunk on line 2: '  *** Update File: foo.txt' is not a valid hunk "
        "header. " + HEADER_HELP + ". Nothing was changed.",
    ),
    (
        envelope("*** Delete File: a", "", "*** Delete File: b"),
        "Invalid patch hunk on line 3: '' is not a valid hunk header. "
        + HEADER_HELP
        + ". Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt"),
        "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty. Add a hunk "
        "('@@', then '-'/'+' lines), or follow the header with '*** Move to: <new path>' to only "
        "rename the file. Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "*** Move to: bar.txt", "*** End of File"),
        "Invalid patch hunk on line 4: Update hunk does not contain any lines. Nothing was "
        "changed.",
    ),
    # A hunk that would change nothing (Codex applies it as a no-op).
    (
        envelope("*** Update File: foo.txt", "@@ def f():", " a", "", " b"),
        "Invalid patch hunk on line 3: " + CONTEXT_ONLY.format("foo.txt") + " Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "-a", "+b", "@@", " c", "*** End of File"),
        "Invalid patch hunk on line 5: " + CONTEXT_ONLY.format("foo.txt") + " Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "*** Move to: bar.txt", ""),
        "Invalid patch hunk on line 4: " + CONTEXT_ONLY.format("foo.txt") + " Nothing was changed.",
    ),
    # A pure addition with nothing saying where (Codex appends it at the end of the file).
    (
        envelope("*** Update File: foo.txt", "+a"),
        "Invalid patch hunk on line 3: " + UNANCHORED.format("foo.txt") + " Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@", "+a", "+b"),
        "Invalid patch hunk on line 3: " + UNANCHORED.format("foo.txt") + " Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@ x", "+a", "@@", "+b", "@@ y", "+c"),
        "Invalid patch hunk on line 5: " + UNANCHORED.format("foo.txt") + " Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@"),
        "Invalid patch hunk on line 3: Update hunk does not contain any lines. Nothing was "
        "changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@ x", "*** Delete File: b"),
        "Invalid patch hunk on line 3: Update hunk does not contain any lines. Nothing was "
        "changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "*** End of File"),
        "Invalid patch hunk on line 3: Update hunk does not contain any lines. Nothing was "
        "changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@", "x"),
        "Invalid patch hunk on line 4: Unexpected line found in update hunk: 'x'. "
        + UNEXPECTED_HELP
        + ". Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@x", " a"),
        "Invalid patch hunk on line 3: Unexpected line found in update hunk: '@@x'. "
        + UNEXPECTED_HELP
        + ". Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "@@ ", " a"),
        "Invalid patch hunk on line 3: '@@ ' has an empty locator. Write '@@' alone, or '@@ ' "
        "followed by the text of a line in the file (such as a function or class header). Nothing "
        "was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", " a", "*** End of File", " b"),
        "Invalid patch hunk on line 5: '*** End of File' must be the last line of the update of "
        "'foo.txt'. Move the hunk that touches the end of the file last, or drop the marker. "
        "Nothing was changed.",
    ),
    (
        envelope("*** Update File: foo.txt", "-a", "*** Move to: b"),
        "Invalid patch hunk on line 4: '*** Move to: b' is not a valid hunk header. "
        + HEADER_HELP
        + ". Nothing was changed.",
    ),
    (
        envelope("*** Add File: a.txt", "hello"),
        "Invalid patch hunk on line 3: Unexpected line found in add file hunk for path "
        "'a.txt': 'hello'. Every line of an added file must start with '+' (write '+' alone "
        "for an empty line). Nothing was changed.",
    ),
    (
        envelope("*** Add File: a.txt"),
        "Invalid patch hunk on line 2: Add file hunk for path 'a.txt' is empty. Give the new "
        "file's contents as one or more '+' lines. Nothing was changed.",
    ),
    (
        envelope("*** Add File: /etc/passwd", "+x"),
        "Invalid patch hunk on line 2: The path '/etc/passwd' is absolute. Use a path relative "
        "to the working directory. Nothing was changed.",
    ),
    (
        envelope("*** Delete File: \\\\server\\share"),
        "Invalid patch hunk on line 2: The path '\\\\server\\share' is absolute. Use a path "
        "relative to the working directory. Nothing was changed.",
    ),
    (
        envelope("*** Delete File: C:\\x.txt"),
        "Invalid patch hunk on line 2: The path 'C:\\x.txt' contains a drive-letter segment "
        "(like 'C:'). Use a path relative to the working directory. Nothing was changed.",
    ),
    (
        envelope("*** Delete File: a/../../x"),
        "Invalid patch hunk on line 2: The path 'a/../../x' contains '..'. Paths must stay "
        "inside the working directory; write the path relative to it without '..'. Nothing was "
        "changed.",
    ),
    (
        envelope("*** Update File: a", "*** Move to: ..\\x", "-a"),
        "Invalid patch hunk on line 3: The path '..\\x' contains '..'. Paths must stay inside "
        "the working directory; write the path relative to it without '..'. Nothing was changed.",
    ),
    (
        envelope("*** Delete File: a\x00b"),
        "Invalid patch hunk on line 2: The path 'a\\x00b' contains a NUL character. Use a "
        "plain relative path. Nothing was changed.",
    ),
    (
        envelope("*** Delete File:  "),
        "Invalid patch hunk on line 2: The path is empty. Write a relative path after the header. "
        "Nothing was changed.",
    ),
    (
        envelope("*** Delete File: a.txt "),
        "Invalid patch hunk on line 2: The path 'a.txt ' has leading or trailing whitespace. "
        "Write the path right after the header's single space, with nothing after it. Nothing was "
        "changed.",
    ),
    (
        envelope("*** Delete File: ./."),
        "Invalid patch hunk on line 2: The path './.' names no file. Write a relative file path. "
        "Nothing was changed.",
    ),
]

CONFLICTS: list[tuple[str, str]] = [
    (
        envelope("*** Delete File: A.txt", "*** Add File: a.TXT", "+x"),
        "Invalid patch: 'A.txt' (line 2) and 'a.TXT' (line 3) name the same file (paths are "
        "compared ignoring case and Unicode normalization). Change each file in one section "
        "only. Nothing was changed.",
    ),
    (
        envelope("*** Delete File: caf\u00e9", "*** Add File: cafe\u0301", "+x"),
        "Invalid patch: 'caf\u00e9' (line 2) and 'cafe\u0301' (line 3) name the same file "
        "(paths are compared ignoring case and Unicode normalization). Change each file in one "
        "section only. Nothing was changed.",
    ),
    (
        envelope("*** Update File: a", "*** Move to: ./a", "-x"),
        "Invalid patch: 'a' (line 2) and 'a' (line 3) name the same file (paths are compared "
        "ignoring case and Unicode normalization). Change each file in one section only. Nothing "
        "was changed.",
    ),
    (
        envelope("*** Delete File: dir", "*** Add File: dir/x", "+x"),
        "Invalid patch: 'dir/x' (line 3) is inside 'dir' (line 2), which the patch also treats "
        "as a file. A path cannot be both a file and a directory; split this into two patches. "
        "Nothing was changed.",
    ),
]


@pytest.mark.parametrize(("patch", "message"), REJECTIONS)
def test_rejections_have_exact_texts_and_the_grammar_agrees(patch: str, message: str) -> None:
    with pytest.raises(PatchSyntaxError) as info:
        parse_patch(patch)
    assert str(info.value) == message
    assert info.value.code == "invalid-patch"
    assert not lark_accepts(patch)


@pytest.mark.parametrize(("patch", "message"), CONFLICTS)
def test_path_conflicts_are_rejected_by_the_parser_only(patch: str, message: str) -> None:
    with pytest.raises(PathConflictError) as info:
        parse_patch(patch)
    assert str(info.value) == message
    # Cross-section conflicts are outside a context-free grammar: the grammar accepts these.
    assert lark_accepts(patch)


ACCEPTED = [
    envelope("*** Add File: notes/todo.md", "+first line"),
    envelope("*** Add File: a", "+"),
    envelope("*** Delete File: a b/c d.txt"),
    envelope("*** Update File: a", "@@", " x", "", "-y", "+z"),
    envelope("*** Update File: a", "-y", "@@ q", "+z", "*** End of File"),
    envelope("*** Update File: a", "@@ q", "@@ r", " x", "+y", "*** Add File: b", "+1"),
    envelope("*** Update File: a", "*** Move to: b/c", "@@ q", "+z"),
    envelope("*** Update File: a", "*** Move to: b/c"),
    envelope("*** Update File: a", "*** Move to: b", "*** Update File: c", "*** Move to: d"),
    envelope("*** Update File: a", "@@", "@@ q", "@@", "+z", "@@", "-x"),
    envelope("*** Update File: a", "+z", " x"),
    envelope("*** Update File: a", "+z", "*** End of File"),
    envelope("*** Update File: a", "-x", "@@", "+z", "*** End of File"),
    envelope("*** Update File: a", " x", "", "+z", " y"),
    envelope("*** Add File: a/..b", "+x", "*** Add File: x...", "+y"),
    envelope("*** Add File: \u00fcnicode/\u6587\u4ef6.txt", "+\u2603"),
]


@pytest.mark.parametrize("patch", ACCEPTED)
def test_accepted_patches_parse_with_lark_too(patch: str) -> None:
    parse_patch(patch)
    assert lark_accepts(patch)


LINE_POOL = [
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: a",
    "*** Add File: b/c.txt",
    "*** Add File: ../x",
    "*** Add File: /abs",
    "*** Add File: C:x",
    "*** Add File: ",
    "*** Add File: . ",
    "*** Delete File: d",
    "*** Delete File: e\\f",
    "*** Update File: g",
    "*** Update File: h",
    "*** Move to: i",
    "*** Move to: j/k",
    "*** End of File",
    "*** Frobnicate File: z",
    " *** Begin Patch",
    "@@",
    "@@ ",
    "@@ def f():",
    "@@x",
    "+",
    "+added",
    "-",
    "-removed",
    " ",
    " context",
    "",
    "plain",
    "*",
    "***",
]


@settings(max_examples=600, deadline=None)
@given(
    body=st.lists(st.sampled_from(LINE_POOL), max_size=10),
    wrap=st.booleans(),
    final_newline=st.booleans(),
)
def test_parser_and_grammar_accept_the_same_language(
    body: list[str], wrap: bool, final_newline: bool
) -> None:
    lines = ["*** Begin Patch", *body, "*** End Patch"] if wrap else body
    patch = "\n".join(lines) + ("\n" if final_newline else "")
    try:
        parse_patch(patch)
        parsed = True
    except PathConflictError:
        return  # semantic (cross-section) rule, deliberately outside the grammar
    except PatchSyntaxError:
        parsed = False
    assert lark_accepts(patch) == parsed, patch


PATH_CHARS = st.sampled_from([*list("ab./\\: C\t\xa0\x00.-_"), "..", "c:", "Z:"])


@settings(max_examples=600, deadline=None)
@given(path=st.lists(PATH_CHARS, min_size=0, max_size=8).map("".join))
def test_path_rules_in_parser_and_grammar_agree(path: str) -> None:
    patch = envelope(f"*** Delete File: {path}")
    try:
        parse_patch(patch)
        parsed = True
    except PatchSyntaxError:
        parsed = False
    assert lark_accepts(patch) == parsed, repr(path)
