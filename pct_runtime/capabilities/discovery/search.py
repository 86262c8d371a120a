"""`find_tools` query search over the managed set: ranking and one-line summaries.

Pure functions over plain data. The ranking favours what a model types when it already
half-knows a tool (`apply_patch`, `computer_use`, `exec`) and falls back to words from
the descriptions (`screenshot`, `image`, `terminal`). Ties always break on the catalog
order, so the same query over the same catalog gives the same answer every time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pct_runtime.datarecord import datarecord

#: At most this many matches per query: a short list the model can read in one turn.
MAX_MATCHES = 8
#: A match's summary is one line of at most this many characters.
SUMMARY_LIMIT = 140

# Patterns, not compiled ones: `re` compiles each on first use (and caches it), so `pct
# status`, which imports this module for its package's declaration, compiles none.
_WORD = r"[a-z0-9]+"
_SEPARATORS = r"[\s\-./]+"
#: Words that match almost every description and say nothing about which tool is meant.
_STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "any",
        "for",
        "from",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "the",
        "that",
        "this",
        "to",
        "tool",
        "tools",
        "use",
        "with",
    }
)
#: A query word of at least this length also matches longer words it begins
#: (`screenshot` → `screenshots`, `patch` → `patches`).
_PREFIX_MIN = 4

#: Rank tiers, best first.
TIER_EXACT_NAME = 0
TIER_NAME_PREFIX = 1
TIER_NAME_SUBSTRING = 2
TIER_NAME_WORD = 3
TIER_DESCRIPTION = 4


@datarecord
class CatalogEntry:
    """One managed name as a query sees it: its description and its state right now
    (`active`, `eligible` or `unavailable: <reason>`)."""

    name: str
    description: str
    state: str


@datarecord
class Match:
    name: str
    state: str
    summary: str
    tier: int
    terms: int


def summarize(description: str, limit: int = SUMMARY_LIMIT) -> str:
    """The description's first sentence (or heading line) on one line, cut to `limit`
    characters with `…`.

    Whitespace runs (newlines included) collapse to one space, so a summary never
    breaks the `- <name> [<state>] <summary>` line format.
    """
    # A heading without a full stop ends where a list item or a new paragraph begins.
    first_block = re.split(r"\n[ \t]*(?:\n|[-*\u2022] )", description.strip(), maxsplit=1)[0]
    text = " ".join(first_block.split())
    if not text:
        return ""
    end = re.search(r"(?<=[.!?])\s", text)
    if end is not None:
        text = text[: end.start()]
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def query_terms(query: str) -> tuple[str, ...]:
    """Lowercase words of the query, stop words dropped unless nothing else is left."""
    words = list(dict.fromkeys(re.findall(_WORD, query.lower())))
    meaningful = [w for w in words if w not in _STOP_WORDS]
    return tuple(meaningful or words)


def _word_hit(term: str, words: Iterable[str]) -> bool:
    prefix = len(term) >= _PREFIX_MIN
    return any(word == term or (prefix and word.startswith(term)) for word in words)


def rank(query: str, entry: CatalogEntry) -> tuple[int, int] | None:
    """`(tier, matched terms)` of one entry for the query, or None when it does not match.

    Tiers: exact name, name prefix, name substring (spaces and dashes in the query read as
    `_`), a query word among the name's words, a query word in the description only.
    `matched terms` counts distinct query words found in the name or description.
    """
    name = entry.name.lower()
    phrase = re.sub(_SEPARATORS, "_", query.strip().lower()).strip("_")
    terms = query_terms(query)
    name_words = re.findall(_WORD, name)
    description_words = re.findall(_WORD, entry.description.lower())
    in_name = [t for t in terms if _word_hit(t, name_words)]
    in_description = [t for t in terms if t not in in_name and _word_hit(t, description_words)]
    matched = len(in_name) + len(in_description)
    if phrase and name == phrase:
        return TIER_EXACT_NAME, matched
    if phrase and name.startswith(phrase):
        return TIER_NAME_PREFIX, matched
    if phrase and phrase in name:
        return TIER_NAME_SUBSTRING, matched
    if in_name:
        return TIER_NAME_WORD, matched
    if in_description:
        return TIER_DESCRIPTION, matched
    return None


def search(query: str, entries: Sequence[CatalogEntry], limit: int = MAX_MATCHES) -> list[Match]:
    """The best `limit` entries for `query`: by tier, then more matched words, then
    catalog order (deterministic)."""
    scored: list[tuple[int, int, int, CatalogEntry]] = []
    for index, entry in enumerate(entries):
        ranked = rank(query, entry)
        if ranked is not None:
            tier, terms = ranked
            scored.append((tier, -terms, index, entry))
    scored.sort(key=lambda item: item[:3])
    return [
        Match(entry.name, entry.state, summarize(entry.description), tier, -neg_terms)
        for tier, neg_terms, _, entry in scored[:limit]
    ]
