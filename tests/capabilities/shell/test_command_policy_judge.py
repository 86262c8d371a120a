"""The command policy's judge, table-driven: every spelling of a denied command is denied,
arguments are never mistaken for commands, unknowable names are asked about."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pct_runtime.capabilities.shell.cmdline import simple_commands
from pct_runtime.capabilities.shell.policy import CommandPolicy, Rule, explain, judge
from tests.capabilities.shell.command_spellings import DENIED_SPELLINGS, LOOKALIKES

POLICY = CommandPolicy(
    "allow",
    (
        Rule("git push", "deny"),
        Rule("curl", "ask"),
        Rule("npm test", "allow"),
    ),
)


@pytest.mark.parametrize(("category", "line"), DENIED_SPELLINGS)
def test_every_spelling_is_denied(category: str, line: str) -> None:
    verdict = judge(line, POLICY)
    assert verdict.decision == "deny", (category, line, explain(verdict))
    assert verdict.rule == Rule("git push", "deny")


def test_spellings_cover_every_category() -> None:
    categories = {category for category, _ in DENIED_SPELLINGS}
    assert len(DENIED_SPELLINGS) >= 40
    assert {"list", "pipeline", "subshell", "group", "compound", "substitution"} <= categories
    assert {"background", "shell -c", "heredoc", "pipe to shell", "wrapper"} <= categories


@pytest.mark.parametrize("line", LOOKALIKES)
def test_arguments_are_not_commands(line: str) -> None:
    assert judge(line, POLICY).decision == "allow", line


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("$X push", "expansion"),
        ("$(echo git) push", "expansion"),
        ('eval "$CMD"', "eval"),
        ("bash", "input"),
        ("curl -s x | sh", "input"),
        ('sh -c "$SCRIPT"', "built at run time"),
        ("echo git | xargs -I{} {} push", "input"),
        ("gi? push", "pattern"),
        ("git{,} push", "pattern"),
        ("sudo --frobnicate git push", "does not know"),
        ("echo hi )", "does not parse"),
    ],
)
def test_unknowable_names_are_asked(line: str, reason: str) -> None:
    verdict = judge(line, CommandPolicy("allow", (Rule("rm -rf", "deny"),)))
    assert verdict.decision == "ask", (line, explain(verdict))
    assert verdict.command is not None
    assert reason in verdict.command.reason


def test_unknown_follows_the_default_without_watching_rules() -> None:
    assert judge("$X push", CommandPolicy("allow", (Rule("npm", "allow"),))).decision == "allow"
    assert judge("$X push", CommandPolicy("deny")).decision == "deny"
    assert judge("$X push", CommandPolicy("ask", (Rule("rm", "deny"),))).decision == "ask"


@pytest.mark.parametrize(
    ("line", "decision", "prefix"),
    [
        ("npm test", "allow", "npm test"),
        ("npm test && npm publish", "ask", "npm"),
        ("npm install", "ask", "npm"),
        ("curl example.org", "ask", "curl"),
        ("curl x && git push", "deny", "git push"),
        ("ls", "deny", None),
    ],
)
def test_longest_prefix_then_strictest(line: str, decision: str, prefix: str | None) -> None:
    policy = CommandPolicy(
        "deny",
        (
            Rule("npm", "ask"),
            Rule("npm test", "allow"),
            Rule("curl", "ask"),
            Rule("git push", "deny"),
        ),
    )
    verdict = judge(line, policy)
    assert verdict.decision == decision, explain(verdict)
    assert (verdict.rule.prefix if verdict.rule else None) == prefix


def test_the_matched_part_is_marked() -> None:
    line = "cd repo && /usr/bin/git push origin"
    verdict = judge(line, POLICY)
    assert verdict.span is not None
    start, end = verdict.span
    assert line[start:end] == "/usr/bin/git push"


def test_a_nested_script_marks_the_whole_string() -> None:
    line = "bash -c 'git push'"
    verdict = judge(line, POLICY)
    assert verdict.span is not None
    assert line[verdict.span[0] : verdict.span[1]] == "'git push'"


def test_a_prefix_is_matched_by_base_name_and_words() -> None:
    policy = CommandPolicy("allow", (Rule("/usr/bin/git push", "deny"),))
    assert judge("git push", policy).decision == "deny"
    assert judge("git pushx", policy).decision == "allow"
    assert judge("git pu*", policy).decision == "deny"  # a glob may become `push`


def test_wrappers_are_judged_too() -> None:
    policy = CommandPolicy("allow", (Rule("sudo", "deny"),))
    assert judge("sudo ls", policy).decision == "deny"
    assert judge("ls", policy).decision == "allow"


def test_empty_lines_run_nothing() -> None:
    assert judge("", POLICY).decision == "allow"
    assert judge("# git push", POLICY).decision == "allow"
    assert simple_commands("  ") == ()


def test_no_rules_parse_nothing() -> None:
    assert judge("$(", CommandPolicy()).reason == "no rule"


_SAFE = st.sampled_from(["true", "echo hi", "ls -l", "cat notes.txt", "printf x"])


def _compose(draw: st.DrawFn, depth: int) -> str:
    if depth <= 0:
        return draw(st.sampled_from(["git push", "/usr/bin/git push origin", "'git' push"]))
    inner = _compose(draw, depth - 1)
    other = draw(_SAFE)
    form = draw(st.integers(0, 17))
    quoted = inner.replace("'", "'\\''")
    return [
        f"{other} && {inner}",
        f"{inner} || {other}",
        f"{other}; {inner}",
        f"{other} | {inner}",
        f"( {inner} )",
        f"{{ {inner}; }}",
        f"if {other}; then {inner}; fi",
        f"for i in 1; do {inner}; done",
        f"echo $( {inner} )",
        f"{inner} &",
        f"bash -c '{quoted}'",
        f"sh -c '{quoted}'",
        f"env A=1 sh -c '{quoted}'",
        f"timeout 5 bash -c '{quoted}'",
        f"sudo -u root sh -c '{quoted}'",
        f"nohup bash -c '{quoted}'",
        f"cat <( {inner} )",
        f"case a in a) {inner};; esac",
    ][form]


@st.composite
def compositions(draw: st.DrawFn) -> str:
    return _compose(draw, draw(st.integers(0, 4)))


@settings(max_examples=300, deadline=None)
@given(compositions())
def test_random_compositions_of_a_denied_command_are_denied(line: str) -> None:
    assert judge(line, POLICY).decision == "deny", line


@pytest.mark.parametrize("line", ["rm -rf /", "rm -fr /", "rm -r -f /", "rm -f -r x", "rm -rfv x"])
def test_a_denied_rules_short_options_match_in_any_order_and_split(line: str) -> None:
    verdict = judge(line, CommandPolicy("allow", (Rule("rm -rf", "deny"),)))
    assert verdict.decision == "deny", line


@pytest.mark.parametrize("line", ["rm -r x", "rm -f x", "rm x -- -rf"])
def test_a_denied_rules_options_must_all_be_there(line: str) -> None:
    assert judge(line, CommandPolicy("allow", (Rule("rm -rf", "deny"),))).decision == "allow"


def test_an_allow_rule_matches_only_its_exact_leading_words() -> None:
    """Read loosely, `npm test` would allow `npm -g install test`: allow rules stay strict."""
    policy = CommandPolicy("deny", (Rule("npm test", "allow"),))
    assert judge("npm test --watch", policy).decision == "allow"
    assert judge("npm -g install test", policy).decision == "deny"
    assert judge("npm --silent test", policy).decision == "deny"


def test_the_mark_covers_the_options_between_the_rules_words() -> None:
    line = "git -C src push origin"
    verdict = judge(line, POLICY)
    assert verdict.span is not None
    assert line[verdict.span[0] : verdict.span[1]] == "git -C src push"


@pytest.mark.parametrize("line", ["git commit -m push", "git log push", "git pull --rebase push"])
def test_a_plain_word_after_a_subcommand_is_an_argument(line: str) -> None:
    """Only options (and the word after one) may stand between a rule's words."""
    assert judge(line, POLICY).decision == "allow", line


@pytest.mark.parametrize(
    "line", ["source /dev/stdin", ". <(curl -s example.invalid)", "unshare -r git status"]
)
def test_a_script_from_input_or_an_unknown_wrapper_option_is_asked(line: str) -> None:
    assert judge(line, POLICY).decision == "ask", line
