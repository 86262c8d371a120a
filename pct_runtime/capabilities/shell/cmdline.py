"""Every simple command a shell command line would run, read with tree-sitter-bash.

The command policy judges what a line starts, so this module answers one question without
running anything: which programs, with which leading words, does this line run? It walks
the whole syntax tree (lists, pipelines, subshells, groups, compound commands, function
bodies, command and process substitutions, background jobs), removes quotes, strips
assignments, unwraps wrappers (`env`, `sudo`, `timeout`, `xargs`, ...) and reads the scripts
handed to a shell (`bash -c STRING`, a here-document, a here-string or an `echo` piped into
`sh`) recursively. A command whose name cannot be known without running something comes
back as an unknown command with the reason, never as a guess.

Pure: no processes, no files, no environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_bash

from pct_runtime.capabilities.shell.wrappers import (
    SHELLS,
    Unwrapped,
    base_name,
    unwrap,
)

#: How deep scripts inside scripts are read (`bash -c "sh -c '...'"`); deeper is unknown.
MAX_DEPTH = 8

Span = tuple[int, int]


@dataclass(frozen=True)
class SimpleCommand:
    """One program a line would start.

    `words` is the command as it runs: the base name first, quotes removed, assignments and
    wrappers stripped; empty when the name cannot be known, and then `reason` says why.
    `spans` are the character ranges of each word in the judged line (a script read from a
    string or here-document marks the whole string); `globbed` holds the indexes of words
    the shell would expand (a glob or brace), which may become any word.
    """

    words: tuple[str, ...]
    spans: tuple[Span, ...]
    span: Span
    reason: str = ""
    globbed: frozenset[int] = frozenset()

    @property
    def unknown(self) -> bool:
        return not self.words


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def simple_commands(line: str) -> tuple[SimpleCommand, ...]:
    """Every simple command `line` would run, in the order they appear."""
    found: list[SimpleCommand] = []
    _script(line, None, 0, found)
    return tuple(found)


@dataclass(frozen=True)
class _Text:
    """A word after quote removal: its text, or None when an expansion makes it unknowable,
    and whether the shell would still glob or brace-expand it."""

    value: str | None
    globbed: bool = False


_ABSENT = _Text(None)
_EXPANDING = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
_GLOB_CHARS = frozenset("*?[{")


def _unescape_unquoted(raw: str) -> tuple[str, bool]:
    """Bash's quote removal for an unquoted word; True when an unescaped glob or brace
    character remains."""
    out: list[str] = []
    globbed = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if ch in _GLOB_CHARS:
            globbed = True
        out.append(ch)
        i += 1
    return "".join(out), globbed


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash escapes only `$`, backquote, `"`, `\\` and newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_C_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    """The value of `$'...'`: C escapes, hexadecimal, octal and `\\u` code points."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        kind = body[i + 1]
        if kind in _C_ESCAPES:
            out.append(_C_ESCAPES[kind])
            i += 2
        elif kind in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = ""
            j = i + 2
            while j < len(body) and len(digits) < width and body[j] in "0123456789abcdefABCDEF":
                digits += body[j]
                j += 1
            out.append(chr(int(digits, 16)) if digits else "\\" + kind)
            i = j
        elif kind in "01234567":
            digits = ""
            j = i + 1
            while j < len(body) and len(digits) < 3 and body[j] in "01234567":
                digits += body[j]
                j += 1
            out.append(chr(int(digits, 8) & 0xFF))
            i = j
        else:
            out.append("\\" + kind)
            i += 2
    return "".join(out)


def _text_of(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _word(node: tree_sitter.Node) -> _Text:
    """A word node after quote removal (None when it holds an expansion)."""
    kind = node.type
    if kind in _EXPANDING:
        return _ABSENT
    if kind in ("word", "number", "special_variable_name"):
        value, globbed = _unescape_unquoted(_text_of(node))
        return _Text(value, globbed)
    if kind == "raw_string":
        return _Text(_text_of(node)[1:-1])
    if kind == "ansi_c_string":
        return _Text(_ansi_c(_text_of(node)[2:-1]))
    if kind == "string":
        parts: list[str] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return _ABSENT
            parts.append(_unescape_double(_text_of(child)))
        return _Text("".join(parts))
    if kind in ("translated_string", "concatenation", "command_name"):
        joined: list[str] = []
        globbed = False
        for child in node.children:
            if kind == "translated_string" and child.type == "$":
                continue
            part = _word(child)
            if part.value is None:
                return _ABSENT
            joined.append(part.value)
            globbed = globbed or part.globbed
        return _Text("".join(joined), globbed)
    return _ABSENT


def _span(node: tree_sitter.Node, origin: Span | None, line: str) -> Span:
    if origin is not None:
        return origin
    return _char_span(line, node.start_byte, node.end_byte)


def _char_span(line: str, start: int, end: int) -> Span:
    """Byte offsets of the UTF-8 encoding as character offsets of `line`."""
    if line.isascii():
        return (start, end)
    raw = line.encode("utf-8")
    return (len(raw[:start].decode("utf-8", "replace")), len(raw[:end].decode("utf-8", "replace")))


def _script(text: str, origin: Span | None, depth: int, found: list[SimpleCommand]) -> None:
    """Parse `text` and add every simple command in it. `origin` is the span in the judged
    line a nested script stands for (None: `text` is the judged line itself)."""
    if depth > MAX_DEPTH:
        found.append(SimpleCommand((), (), origin or (0, len(text)), "scripts nest too deeply"))
        return
    tree = _parser().parse(text.encode("utf-8"))
    walker = _Walker(text, origin, depth, found)
    walker.visit(tree.root_node)
    if tree.root_node.has_error:
        found.append(
            SimpleCommand((), (), origin or (0, len(text)), "the command line does not parse")
        )


class _Walker:
    """One pass over a syntax tree, adding simple commands to `found`."""

    def __init__(self, text: str, origin: Span | None, depth: int, found: list[SimpleCommand]):
        self.text = text
        self.origin = origin
        self.depth = depth
        self.found = found

    def visit(self, node: tree_sitter.Node) -> None:
        if node.type == "command":
            self._command(node)
        for child in node.children:
            self.visit(child)

    def _unknown(self, node: tree_sitter.Node, reason: str) -> None:
        self.found.append(SimpleCommand((), (), _span(node, self.origin, self.text), reason))

    def _nested(self, script: str, node: tree_sitter.Node) -> None:
        _script(script, _span(node, self.origin, self.text), self.depth + 1, self.found)

    def _command(self, node: tree_sitter.Node) -> None:
        parts: list[tuple[_Text, tree_sitter.Node]] = []
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if field in ("name", "argument"):
                parts.append((_word(child), child))
        if not parts:
            return  # assignments or redirections only: nothing starts
        name = parts[0][0]
        if name.value is None:
            self._unknown(node, "the command name is an expansion")
            return
        if name.globbed:
            self._unknown(node, "the command name is a pattern")
            return
        words = [text for text, _ in parts]
        nodes = [child for _, child in parts]
        self._words(node, words, nodes)

    def _words(
        self, node: tree_sitter.Node, words: list[_Text], nodes: list[tree_sitter.Node]
    ) -> None:
        """Judge an unwrapped word list, reading any script it hands to a shell."""
        values = [w.value for w in words]
        outcome: Unwrapped = unwrap(values)
        for script, at in outcome.scripts:
            self._nested(script, nodes[at])
        if outcome.reason:
            self._unknown(node, outcome.reason)
            return
        for extra in outcome.commands:
            self._words(node, [words[i] for i in extra], [nodes[i] for i in extra])
        for layer in outcome.layers:
            self._add(words[layer:], nodes[layer:])
        start = outcome.start
        if start >= len(values):
            return
        if values[start] is None or words[start].globbed:
            self._unknown(node, "the command name is an expansion or a pattern")
            return
        first = base_name(values[start] or "")
        if first in SHELLS and outcome.reads_stdin:
            self._shell_stdin(node)
        if first == "eval":
            literal = values[start + 1 :]
            if all(v is not None for v in literal):
                self._nested(" ".join(v or "" for v in literal), node)
            self._unknown(node, "eval runs a string built at run time")
            return
        self._add(words[start:], nodes[start:])

    def _add(self, words: list[_Text], nodes: list[tree_sitter.Node]) -> None:
        shown = [w.value if w.value is not None else "" for w in words]
        spans = tuple(_span(n, self.origin, self.text) for n in nodes)
        globbed = frozenset(i for i, w in enumerate(words) if w.globbed or w.value is None)
        self.found.append(
            SimpleCommand(
                (base_name(shown[0]), *shown[1:]),
                spans,
                (spans[0][0], spans[-1][1]),
                globbed=globbed,
            )
        )

    def _shell_stdin(self, node: tree_sitter.Node) -> None:
        """A shell reading its script from stdin: read a here-document, a here-string or an
        `echo`/`printf`/`cat <<EOF` piped into it; anything else cannot be known."""
        script = _stdin_script(node)
        if script is None:
            self._unknown(node, "a shell reads its script from input")
            return
        self._nested(script, node)


def _stdin_script(node: tree_sitter.Node) -> str | None:
    own = _redirected_input(node)
    if own is not None:
        return own
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement":
        node, parent = parent, parent.parent
    if parent is None or parent.type != "pipeline":
        return None
    siblings = [c for c in parent.children if c.is_named]
    index = next((i for i, c in enumerate(siblings) if c.id == node.id), 0)
    if index == 0:
        # `cat <<EOF | sh`: the pipeline sits inside the here-document's redirect.
        holder = parent.parent
        if holder is not None and holder.type == "heredoc_redirect":
            statement = holder.parent
            if statement is not None:
                return _heredoc_text(holder)
        return None
    return _produced(siblings[index - 1])


def _redirected_input(node: tree_sitter.Node) -> str | None:
    """The text a command's own here-document or here-string feeds it, if any."""
    holders = [node]
    if node.parent is not None and node.parent.type == "redirected_statement":
        holders.append(node.parent)
    for holder in holders:
        for child in holder.children:
            if child.type == "heredoc_redirect":
                return _heredoc_text(child)
            if child.type == "herestring_redirect":
                words = [_word(c) for c in child.children if c.is_named]
                if words and words[0].value is not None:
                    return words[0].value
    return None


def _heredoc_text(redirect: tree_sitter.Node) -> str | None:
    for child in redirect.children:
        if child.type == "heredoc_body":
            return _text_of(child)
    return None


def _produced(node: tree_sitter.Node) -> str | None:
    """What `echo WORDS`, `printf TEXT` or `cat <<EOF` writes, when it is literal."""
    command = node
    if node.type == "redirected_statement":
        inner = node.child_by_field_name("body")
        if inner is None:
            return None
        command = inner
    if command.type != "command":
        return None
    words = [
        _word(c)
        for i, c in enumerate(command.children)
        if command.field_name_for_child(i) in ("name", "argument")
    ]
    values = [w.value for w in words]
    if not values or any(v is None for v in values):
        return None
    name = base_name(values[0] or "")
    rest = [v for v in values[1:] if v is not None]
    if name == "echo":
        return " ".join(w for w in rest if not w.startswith("-"))
    if name == "printf" and rest:
        return _ansi_c(rest[0])
    if name == "cat" and not rest:
        return _redirected_input(command)
    return None
