"""The command policy's judge: what a command line gets (`allow`, `ask`, `deny`) and why.

A line is judged by every simple command it would run (`cmdline.simple_commands`). For one
simple command the rule with the longest matching prefix decides, else the default; the
strictest decision over the whole line wins (deny > ask > allow). A command whose name
cannot be known is asked about whenever the policy has any ask or deny rule: the operator
who wrote one wants to hear about what pct cannot read.

Pure: the same line and policy always give the same verdict.
"""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from pct_runtime.capabilities.shell.cmdline import SimpleCommand, Span, simple_commands
from pct_runtime.capabilities.shell.wrappers import base_name

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


@lru_cache(maxsize=4096)
def prefix_words(prefix: str) -> tuple[str, ...]:
    """A rule's prefix as words: split like a shell would, the command by its base name."""
    try:
        words = shlex.split(prefix)
    except ValueError:
        words = prefix.split()
    if not words:
        return ()
    return (base_name(words[0]), *words[1:])


@dataclass(frozen=True)
class Rule:
    """One rule: a command's leading words and what a command starting with them gets."""

    prefix: str
    decision: Decision

    @property
    def words(self) -> tuple[str, ...]:
        return prefix_words(self.prefix)


@dataclass(frozen=True)
class CommandPolicy:
    """`pct.commands`: the default decision and the rules, in the operator's order."""

    default: Decision = "allow"
    rules: tuple[Rule, ...] = ()

    @cached_property
    def watches_unknown(self) -> bool:
        """True when the policy has an ask or deny rule (unknown commands are then asked)."""
        return any(rule.decision != "allow" for rule in self.rules)

    @cached_property
    def by_name(self) -> dict[str, tuple[tuple[tuple[str, ...], Rule], ...]]:
        """The rules by their command name, each with its words (judging looks up one name)."""
        table: dict[str, list[tuple[tuple[str, ...], Rule]]] = {}
        for rule in self.rules:
            words = rule.words
            if words:
                table.setdefault(words[0], []).append((words, rule))
        return {name: tuple(rules) for name, rules in table.items()}

    @property
    def allows_everything(self) -> bool:
        """No rule and an `allow` default: nothing needs to be parsed."""
        return self.default == "allow" and not self.watches_unknown


@dataclass(frozen=True)
class Verdict:
    """What a command line gets: the decision, the rule that decided it (None: the default
    or an unknown command), the simple command it was about, the span of the matched part
    in the line (the modal marks it) and a short reason."""

    decision: Decision
    rule: Rule | None = None
    command: SimpleCommand | None = None
    span: Span | None = None
    reason: str = ""


def _word_is(expected: str, command: SimpleCommand, index: int) -> bool:
    """One command word against a rule word; a glob or an expansion may become the word."""
    word = command.words[index]
    if index in command.globbed and index > 0:
        return not word or any(fnmatch.fnmatchcase(expected, w) for w in _braces(word))
    return word == expected


def _braces(word: str) -> tuple[str, ...]:
    """The words a brace expansion makes (`pus{h,}`: `push`, `pus`); the word itself when
    it has none. Any of them may become the rule's word."""
    start = word.find("{")
    if start < 0:
        return (word,)
    depth, parts, last = 0, [], start + 1
    for at in range(start, len(word)):
        char = word[at]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                parts.append(word[last:at])
                head, tail = word[:start], word[at + 1 :]
                if len(parts) < 2:
                    return (word,)  # `{x}` is no expansion
                return tuple(w for part in parts for w in _braces(head + part + tail))
        elif char == "," and depth == 1:
            parts.append(word[last:at])
            last = at + 1
    return (word,)


def _strict(rule: tuple[str, ...], command: SimpleCommand) -> int | None:
    """The command starts with exactly the rule's words: the last word's index, else None."""
    if not rule or len(command.words) < len(rule):
        return None
    if all(_word_is(expected, command, i) for i, expected in enumerate(rule)):
        return len(rule) - 1
    return None


def _options(command: SimpleCommand) -> tuple[set[str], set[str]]:
    """The command's short option letters (`-rf`, `-r -f`) and long options (`--force`,
    `--git-dir=x` as `--git-dir`), up to a `--`."""
    letters: set[str] = set()
    longs: set[str] = set()
    for word in command.words[1:]:
        if word == "--":
            break
        if word.startswith("--"):
            longs.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            letters.update(word[1:])
    return letters, longs


def _loose(rule: tuple[str, ...], command: SimpleCommand) -> int | None:
    """A deny or ask rule also matches the spellings that put options between its words
    (`git -C dir push`, `git --no-pager push` for `git push`) or reorder and split its
    short options (`rm -r -f`, `rm -fr` for `rm -rf`): one more spelling must never make a
    denied command run. Its plain words still come in order, with only options (and the
    word after an option, which may be its value) between them. The last matched word's
    index, else None."""
    if not rule or not command.words or not _word_is(rule[0], command, 0):
        return None
    letters, longs = _options(command)
    last, at, after_option = 0, 1, False
    for expected in rule[1:]:
        if expected.startswith("--"):
            if expected.split("=", 1)[0] not in longs:
                return None
            continue
        if expected.startswith("-") and len(expected) > 1:
            if not set(expected[1:]) <= letters:
                return None
            continue
        while True:
            if at >= len(command.words):
                return None
            word = command.words[at]
            if _word_is(expected, command, at):
                last, at, after_option = at, at + 1, False
                break
            if word.startswith("-") and word != "--":
                after_option = "=" not in word
            elif after_option:
                after_option = False  # the option's value
            else:
                return None
            at += 1
    if last == 0 and len(rule) > 1:
        # Only options after the name: mark through the command's last option.
        words = command.words
        end = words.index("--") if "--" in words else len(words)
        last = max(i for i in range(end) if words[i].startswith("-"))
    return last


def _matches(words: tuple[str, ...], rule: Rule, command: SimpleCommand) -> int | None:
    """Allow rules match strictly (a looser match would allow more than the operator wrote);
    ask and deny rules match every spelling `_loose` reads."""
    if rule.decision == "allow":
        return _strict(words, command)
    return _loose(words, command)


def judge_command(command: SimpleCommand, policy: CommandPolicy) -> Verdict:
    """The verdict for one simple command."""
    if command.unknown:
        decision: Decision = policy.default
        if policy.watches_unknown and _RANK[decision] < _RANK["ask"]:
            decision = "ask"
        return Verdict(decision, None, command, command.span, command.reason)
    best: Rule | None = None
    best_len, best_last = 0, 0
    for words, rule in policy.by_name.get(command.words[0], ()):
        if len(words) < best_len:
            continue
        last = _matches(words, rule, command)
        if last is None:
            continue
        # Longest prefix decides; between equally long ones, the stricter.
        if len(words) > best_len or best is None or _RANK[rule.decision] > _RANK[best.decision]:
            best, best_len, best_last = rule, len(words), last
    if best is None:
        return Verdict(policy.default, None, command, command.span, "no rule matches")
    end = command.spans[min(best_last, len(command.spans) - 1)][1]
    span = (command.spans[0][0], end)
    return Verdict(best.decision, best, command, span, f"rule {best.prefix!r}")


def judge(line: str, policy: CommandPolicy) -> Verdict:
    """The verdict for a whole command line: the strictest of its simple commands."""
    if policy.allows_everything:
        return Verdict("allow", reason="no rule")
    verdict = Verdict("allow", reason="runs no command")
    for command in simple_commands(line):
        current = judge_command(command, policy)
        if _RANK[current.decision] > _RANK[verdict.decision] or verdict.command is None:
            verdict = current
        if verdict.decision == "deny":
            break
    return verdict


def explain(verdict: Verdict) -> str:
    """One line for people (the console's preview, `pct status`): the decision and why."""
    if verdict.command is None:
        return f"{verdict.decision}: {verdict.reason}"
    if verdict.command.unknown:
        return f"{verdict.decision}: pct cannot tell what runs ({verdict.reason})"
    shown = " ".join(verdict.command.words)
    if verdict.rule is None:
        return f"{verdict.decision}: `{shown}` matches no rule (the default)"
    return f"{verdict.decision}: `{shown}` matches rule {verdict.rule.prefix!r}"
