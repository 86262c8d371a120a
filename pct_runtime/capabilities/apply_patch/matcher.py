"""Where each hunk of an Update applies, and the file's new lines.

Tiers, in order: exact, trailing whitespace ignored, surrounding whitespace ignored, and
surrounding whitespace ignored with typographic punctuation folded to ASCII. The first tier
that finds a candidate decides; two or more candidates there is an `ambiguous context`
error (Codex silently takes the first; we refuse to guess). Context lines keep the file's
text, so a fuzzy match never rewrites the lines it only used as an anchor.

Cost is linear in file size plus patch size: each tier builds, at most once per file and only
when first needed, an index from line key to positions restricted to keys the patch uses;
a hunk then only visits positions at or after the cursor of its rarest line. A position is
the byte offset where a line starts in the source buffer (`source.Source`): lines only exist
as short-lived slices, so nothing grows with the file but the buffer itself.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, compress, tee

from pct_runtime.capabilities.apply_patch.errors import EXPECTED_LINES, MatchError
from pct_runtime.capabilities.apply_patch.source import Source

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch`
if TYPE_CHECKING:
    from pct_runtime.capabilities.apply_patch.parser import Chunk, LineKind

# Rust's `char::is_whitespace` (Unicode White_Space); Python's default strip() also removes
# U+001C..U+001F, which Codex keeps, so the set is spelled out.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\xa0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _exact(line: str) -> str:
    return line


def _rstrip(line: str) -> str:
    return line.rstrip(_WHITE_SPACE)


def _strip(line: str) -> str:
    return line.strip(_WHITE_SPACE)


def _normalise(line: str) -> str:
    return line.strip(_WHITE_SPACE).translate(_PUNCTUATION)


TIERS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("exact", _exact),
    ("ignoring trailing whitespace", _rstrip),
    ("ignoring surrounding whitespace", _strip),
    ("ignoring whitespace and typographic punctuation", _normalise),
)


Key = str | bytes
#: (start, end, new lines): the lines in the byte range [start, end) become `new lines`.
Edit = tuple[int, int, list[str]]


class _Tier:
    """One tier's key function and its line index, built on first use."""

    __slots__ = ("index", "key")

    def __init__(self, key: Callable[[str], str]) -> None:
        self.key = key
        self.index: dict[Key, int | list[int]] | None = None


def _decoded(line: bytes) -> str:
    return line.decode("utf-8")


class LineMatcher:
    """Finds unique windows of pattern lines in a source, searching forward from a cursor.

    Tier 0 compares raw bytes (the pattern line encoded, plus the file's line ending). The
    fuzzy tiers compare `key(text)`; every fuzzy key strips trailing whitespace, so the text
    they are given may keep its line ending.
    """

    def __init__(self, source: Source, wanted: Sequence[str]):
        self.source = source
        self._wanted = wanted
        self._tiers = [_Tier(key) for _, key in TIERS]

    def keys(self, tier: int, pattern: Sequence[str]) -> list[Key]:
        if tier == 0:
            eol = self.source.eol
            return [line.encode("utf-8") + eol for line in pattern]
        key = self._tiers[tier].key
        return [key(line) for line in pattern]

    def _line_key(self, tier: int, raw: bytes) -> Key:
        return raw if tier == 0 else self._tiers[tier].key(raw.decode("utf-8"))

    def _index(self, tier: int) -> dict[Key, int | list[int]]:
        state = self._tiers[tier]
        if state.index is None:
            # A set, not a dict: a miss (most lines) then costs one probe of its table.
            wanted = frozenset(self.keys(tier, self._wanted))
            index: dict[Key, int | list[int]] = {}
            for position, k in self._hits(tier, wanted):
                # A key seen once maps to its position (an int: no container for the GC to
                # track); only repeated keys get a list.
                bucket = index.get(k)
                if bucket is None:
                    index[k] = position
                elif isinstance(bucket, int):
                    index[k] = [bucket, position]
                else:
                    bucket.append(position)
            state.index = index
        return state.index

    def _hits(self, tier: int, wanted: frozenset[Key]) -> Iterable[tuple[int, Key]]:
        """(start offset, key) of every line whose key the patch uses, in file order."""
        source = self.source
        if tier != 0:
            # One pass at C speed over short-lived line slices: their start offsets, and
            # the keys of the lines that hit.
            key = self._tiers[tier].key
            for_starts, for_keys = tee(source.lines())
            starts = accumulate(map(len, for_starts), initial=source.start)
            hits = compress(starts, map(wanted.__contains__, map(key, map(_decoded, for_keys))))
            return [(at, key(source.raw(at)[0].decode("utf-8"))) for at in hits]
        # Exact: only the lines that hit are kept, in file order; the others are only
        # hashed and dropped, with no per-line offset arithmetic. Each hit's offset is then
        # the first line start at or after the previous hit's end holding exactly its bytes:
        # a line between the two with those bytes would have hit too.
        lines = list(filter(wanted.__contains__, source.lines()))
        data = source.data
        found: list[tuple[int, Key]] = []
        at = source.start
        for line in lines:
            if not data.startswith(line, at):
                # `at` - 1 is the line feed ending the previous line (or a BOM byte); at 0
                # the line is not there, so the search may start at 0 itself.
                at = data.find(b"\n" + line, max(at - 1, 0)) + 1
            found.append((at, line))
            at += len(line)
        last = source.last_line()
        if last is not None and not source.final_newline:
            # The unterminated last line was read without its line ending: look again.
            line = source.raw(last)[0]
            if line in wanted:
                found.append((last, line))
        return found

    def find(self, pattern: Sequence[str], cursor: int, at_end: bool) -> tuple[int, list[int]]:
        """Return (tier, up to two start offsets) for the first tier with any candidate.

        `at_end` restricts the search to the single window ending at the last line.
        Returns (-1, []) when no tier matches.
        """
        if not pattern:
            return -1, []
        for tier in range(len(TIERS)):
            keys = self.keys(tier, pattern)
            if at_end:
                last = self.source.last_line()
                start = None if last is None else self._back(last, len(pattern) - 1)
                if (
                    start is not None
                    and start >= cursor
                    and self._window_matches(tier, keys, start)
                ):
                    return tier, [start]
                continue
            index = self._index(tier)
            # Anchor on the pattern line with the fewest occurrences at or after the cursor.
            # One is as few as a match allows: stop looking there (a line with none would
            # only make that single window fail its check).
            best: tuple[int, int, int] | None = None
            for j, k in enumerate(keys):
                bucket = _positions(index, k)
                first = bisect_left(bucket, cursor)
                remaining = len(bucket) - first
                if best is None or remaining < best[0]:
                    best = (remaining, j, first)
                    if remaining <= 1:
                        break
            assert best is not None
            remaining, anchor, at = best
            if remaining == 0:
                continue
            positions = _positions(index, keys[anchor])
            found: list[int] = []
            while at < len(positions):
                start = self._back(positions[at], anchor)
                if (
                    start is not None
                    and start >= cursor
                    and self._window_matches(tier, keys, start)
                ):
                    found.append(start)
                    if len(found) == 2:
                        break
                at += 1
            if found:
                return tier, found
        return -1, []

    def _back(self, pos: int, lines: int) -> int | None:
        """Where the line `lines` lines before the one at `pos` starts (None: before line 1)."""
        source = self.source
        for _ in range(lines):
            if pos <= source.start:
                return None
            pos = source.previous(pos)
        return pos

    def _window_matches(self, tier: int, keys: Sequence[Key], start: int) -> bool:
        source = self.source
        end = source.end
        if tier == 0:
            # Exact: the window's lines, endings included, are the keys end to end; each key
            # holds one line feed, at its end, so one comparison of bytes checks them all.
            block = b"".join(keys)  # type: ignore[arg-type]
            if source.data.startswith(block, start):
                return block.count(b"\n") == len(keys)
            if source.final_newline:
                return False
            # An unterminated last line is compared as if it had the file's line ending.
            block = block[: -len(source.eol)]
            return (
                start + len(block) == end
                and source.data.startswith(block, start)
                and block.count(b"\n") == len(keys) - 1
            )
        pos = start
        for k in keys:
            if pos >= end:
                return False
            raw, pos = source.raw(pos)
            if self._line_key(tier, raw) != k:
                return False
        return True


def _positions(index: dict[Key, int | list[int]], key: Key) -> Sequence[int]:
    bucket = index.get(key)
    if bucket is None:
        return ()
    return (bucket,) if isinstance(bucket, int) else bucket


def _quote_lines(lines: Sequence[str]) -> str:
    return "\n".join(lines)


def apply_chunks(source: Source, chunks: Sequence[Chunk], display: str) -> list[Edit]:
    """Return the edits of every chunk, sorted by position, or raise `MatchError`.

    A pure addition (only '+' lines; the parser made sure it has an anchor) goes right after
    its last locator's line, or at the end of the file when it ends with `*** End of File`
    (Codex appends every pure addition at the end, even after a locator).
    """
    wanted: list[str] = []
    for chunk in chunks:
        wanted.extend(loc.text for loc in chunk.locators)
        wanted.extend(chunk.old_lines)
    matcher = LineMatcher(source, wanted)
    edits: list[Edit] = []
    cursor = source.start
    for chunk in chunks:
        for loc in chunk.locators:
            tier, found = matcher.find([loc.text], cursor, at_end=False)
            if not found:
                raise MatchError(
                    f"Cannot update '{display}': the locator '@@ {loc.text}' on patch line "
                    f"{loc.line} was not found in the file{_after(source, cursor)}. After '@@ ' "
                    "write the exact text of one line of the file (such as the enclosing "
                    "function or class header), or use a bare '@@'."
                )
            if len(found) > 1:
                raise MatchError(
                    f"Cannot update '{display}': ambiguous context: the locator '@@ {loc.text}' "
                    f"on patch line {loc.line} matches more than one line (file lines "
                    f"{source.line_number(found[0])} and {source.line_number(found[1])}, "
                    f"{TIERS[tier][0]}). Use a more specific locator, or add a second '@@' "
                    "line to narrow it down."
                )
            cursor = source.raw(found[0])[1]
        kinds: list[LineKind] = list(chunk.kinds)  # type: ignore[arg-type]
        texts = list(chunk.texts)
        old = chunk.old_lines
        if not old:
            at = source.end if chunk.end_of_file or not chunk.locators else cursor
            edits.append((at, at, chunk.new_lines))
            continue
        tier, found = matcher.find(old, cursor, chunk.end_of_file)
        if not found and len(old) > 1 and old[-1] == "":
            # A trailing bare empty line is often a separator the model added, not a blank
            # line of the file: retry once without it (and without a trailing empty new line).
            old = old[:-1]
            tier, found = matcher.find(old, cursor, chunk.end_of_file)
            if found:
                kinds, texts = _drop_trailing_empty(kinds, texts)
        if not found:
            where = " at the end of the file" if chunk.end_of_file else _after(source, cursor)
            raise MatchError(
                f"Cannot update '{display}': the hunk at patch line {chunk.line} does not match "
                f"the file{where}. Re-read the file and make the context (' ') and removed "
                f"('-') lines match it exactly. {EXPECTED_LINES}{_quote_lines(chunk.old_lines)}"
            )
        if len(found) > 1:
            raise MatchError(
                f"Cannot update '{display}': ambiguous context: the hunk at patch line "
                f"{chunk.line} matches more than one place (file lines "
                f"{source.line_number(found[0])} and {source.line_number(found[1])}, "
                f"{TIERS[tier][0]}). Add context lines, or an '@@' locator naming the "
                "enclosing function or class, so it matches exactly one place."
            )
        start = pos = found[0]
        new: list[str] = []
        cut = -len(source.eol)
        for kind, text in zip(kinds, texts, strict=True):
            if kind == " ":
                line, pos = source.raw(pos)
                new.append(line[:cut].decode("utf-8"))  # context keeps the file's text
            elif kind == "-":
                pos = source.raw(pos)[1]
            else:
                new.append(text)
        edits.append((start, pos, new))
        cursor = pos
    edits.sort(key=lambda edit: edit[0])
    return edits


def _drop_trailing_empty(
    kinds: list[LineKind], texts: list[str]
) -> tuple[list[LineKind], list[str]]:
    """Mirror Codex's retry: the old lines lose their final (empty) line, and the new lines
    lose their final line when it is empty."""
    kinds, texts = list(kinds), list(texts)
    last_old = max(i for i, k in enumerate(kinds) if k != "+")
    if kinds[last_old] == " ":
        kinds[last_old] = "+"  # still written, no longer matched
    else:
        del kinds[last_old], texts[last_old]
    new_positions = [i for i, k in enumerate(kinds) if k != "-"]
    if new_positions and texts[new_positions[-1]] == "":
        del kinds[new_positions[-1]], texts[new_positions[-1]]
    return kinds, texts


def _after(source: Source, cursor: int) -> str:
    if cursor <= source.start:
        return ""
    return f" at or after line {source.line_number(cursor)} (after the previous hunk)"
