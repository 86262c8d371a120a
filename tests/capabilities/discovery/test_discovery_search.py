"""`find_tools` query ranking and one-line summaries (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pct_runtime.capabilities.discovery import (
    MAX_MATCHES,
    SUMMARY_LIMIT,
    CatalogEntry,
    search,
    summarize,
    toolkit_specs,
)
from pct_runtime.capabilities.discovery.search import (
    TIER_DESCRIPTION,
    TIER_EXACT_NAME,
    TIER_NAME_PREFIX,
    TIER_NAME_SUBSTRING,
    TIER_NAME_WORD,
    query_terms,
    rank,
)
from pct_runtime.host.pi.names import DEFERRABLE_TOOL_NAMES


def catalog() -> list[CatalogEntry]:
    """The real Toolkit definitions of every deferrable name, all `eligible`."""
    specs = toolkit_specs()
    return [
        CatalogEntry(name, specs[name].description, "eligible") for name in DEFERRABLE_TOOL_NAMES
    ]


def names(query: str, entries: list[CatalogEntry] | None = None) -> list[str]:
    return [m.name for m in search(query, entries if entries is not None else catalog())]


def test_every_deferrable_name_has_a_real_description() -> None:
    specs = toolkit_specs()
    for name in (*DEFERRABLE_TOOL_NAMES, "find_tools"):
        assert specs[name].description.strip(), name


def test_exact_name_ranks_first() -> None:
    assert names("exec")[0] == "exec"  # not exec_command, which starts with it
    assert names("wait")[0] == "wait"
    assert names("apply_patch")[0] == "apply_patch"
    assert names("APPLY PATCH")[0] == "apply_patch"  # spaces read as `_`, case ignored
    assert names("computer-use-click")[0] == "computer_use_click"


def test_prefix_then_substring_then_word_then_description() -> None:
    entries = [
        CatalogEntry("zeta_render", "Draws nothing of note.", "eligible"),
        CatalogEntry("alpha_render_beta", "Unrelated text.", "eligible"),
        CatalogEntry("render_alpha", "Unrelated text.", "eligible"),
        CatalogEntry("other", "Can render a render target.", "eligible"),
        CatalogEntry("render", "Exact.", "eligible"),
    ]
    ranked = search("render", entries)
    assert [m.name for m in ranked] == [
        "render",
        "render_alpha",
        "zeta_render",
        "alpha_render_beta",
        "other",
    ]
    assert [m.tier for m in ranked] == [
        TIER_EXACT_NAME,
        TIER_NAME_PREFIX,
        TIER_NAME_SUBSTRING,
        TIER_NAME_SUBSTRING,
        TIER_DESCRIPTION,
    ]


def test_name_word_beats_description_and_more_terms_win() -> None:
    entries = [
        CatalogEntry("one", "screen capture of an app window", "eligible"),
        CatalogEntry("two", "screen only", "eligible"),
        CatalogEntry("app_state", "nothing", "eligible"),
    ]
    ranked = search("app screen capture", entries)
    assert [m.name for m in ranked] == ["app_state", "one", "two"]
    assert ranked[0].tier == TIER_NAME_WORD
    assert ranked[1].terms == 3
    assert ranked[2].terms == 1


def test_ties_break_on_catalog_order_deterministically() -> None:
    entries = [CatalogEntry(f"tool_{i}", "shared words here", "eligible") for i in range(5)]
    first = [m.name for m in search("shared", entries)]
    assert first == [f"tool_{i}" for i in range(5)]
    assert [m.name for m in search("shared", list(reversed(entries)))] == list(reversed(first))


def test_description_words_find_the_right_tools() -> None:
    assert names("generate an image")[0] == "openai_generate_image"
    assert "openai_web_search" in names("search the web")[:2]
    assert set(names("computer use")) >= {
        "computer_use_list_apps",
        "computer_use_click",
        "computer_use_scroll",
    }
    assert names("scroll")[0] == "computer_use_scroll"
    assert "exec_command" in names("run a shell command")[:3]


def test_at_most_eight_matches() -> None:
    assert len(search("computer click scroll image patch shell code", catalog())) == MAX_MATCHES
    entries = [CatalogEntry(f"t{i}", "common", "eligible") for i in range(20)]
    assert len(search("common", entries)) == MAX_MATCHES


def test_no_match_and_stop_words() -> None:
    assert search("xylophone", catalog()) == []
    assert query_terms("use the tool to click") == ("click",)
    assert query_terms("the a") == ("the", "a")  # nothing meaningful left: keep them
    assert rank("the", CatalogEntry("x", "nothing", "eligible")) is None


def test_prefix_matching_needs_four_letters() -> None:
    entry = CatalogEntry("x", "Takes screenshots of apps.", "eligible")
    assert rank("screenshot", entry) == (TIER_DESCRIPTION, 1)
    assert rank("ap", CatalogEntry("y", "apps", "eligible")) is None


def test_summary_is_the_first_sentence_on_one_line() -> None:
    assert summarize("Edit files with a patch.\nMore detail here.") == "Edit files with a patch."
    assert summarize("Runs  a\n command\tonce") == "Runs a command once"
    assert summarize("v1.2 is fine. Next.") == "v1.2 is fine."
    assert summarize("") == ""
    # a heading line without a full stop ends at the list or paragraph that follows it
    # (the exec description: "Run Python code …\n- Evaluates …")
    assert summarize("Run Python code to compose calls\n- Evaluates it. Then.") == (
        "Run Python code to compose calls"
    )
    assert summarize("Waits on a cell\n\nMore text. Here.") == "Waits on a cell"


def test_long_summary_is_cut_with_an_ellipsis() -> None:
    text = "word " * 80
    cut = summarize(text)
    assert len(cut) <= SUMMARY_LIMIT
    assert cut.endswith("…")
    assert "\n" not in cut
    assert not cut[:-1].endswith(" ")


def test_real_summaries_fit() -> None:
    for entry in catalog():
        summary = summarize(entry.description)
        assert 0 < len(summary) <= SUMMARY_LIMIT, entry.name
        assert "\n" not in summary


@given(st.text(max_size=600))
def test_any_summary_is_one_bounded_line(text: str) -> None:
    summary = summarize(text)
    assert len(summary) <= SUMMARY_LIMIT
    assert "\n" not in summary
    assert "\r" not in summary


@given(st.text(max_size=40))
def test_search_never_exceeds_the_limit_and_is_stable(query: str) -> None:
    entries = catalog()
    first = search(query, entries)
    assert len(first) <= MAX_MATCHES
    assert first == search(query, entries)
