"""What every subsection of pct's own section shares: its error type and how it is found.

Below `pct_section` and each subsection's own module (`commands`), so a subsection parser
can live in a module of its own and still be a row of `pct_section.SUBSECTIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pct_runtime.jsontypes import JSONMapping

#: The document's key of pct's own section.
PCT_SECTION = "pct"


class PctSettingError(ValueError):
    """A value of the `pct` section pct cannot use. `str()` is `<path> must <requirement>`;
    like the spec's details it never repeats the value (a config may hold pasted secrets)."""

    def __init__(self, path: str, requirement: str) -> None:
        super().__init__(f"{path} must {requirement}")
        self.path = path
        self.requirement = requirement


def subsection(raw: JSONMapping, key: str, error: type[PctSettingError]) -> JSONMapping | None:
    """`raw["pct"][key]` as a mapping; None when absent. Raises when a level is no object."""
    section = raw.get(PCT_SECTION)
    if section is None and PCT_SECTION not in raw:
        return None
    if not isinstance(section, Mapping):
        raise error(PCT_SECTION, "be an object")
    if key not in section:
        return None
    value = section[key]
    if not isinstance(value, Mapping):
        raise error(f"{PCT_SECTION}.{key}", "be an object")
    return value
