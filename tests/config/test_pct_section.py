"""pct's own section: one validator, the spec's message form, and no pydantic on its path."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pct_runtime.config import ConfigValidationError, parse_config
from pct_runtime.config.pct_section import (
    SUBSECTIONS,
    PctSettingError,
    check_pct_section,
    effective_section,
    pct_section_error,
)


@pytest.mark.parametrize(
    ("document", "detail"),
    [
        ({"pct": 3}, "pct must be an object"),
        ({"pct": {"sandbox": []}}, "pct.sandbox must be an object"),
        ({"pct": {"sandbox": {"network": "yes"}}}, "pct.sandbox.network must be true or false"),
        ({"pct": {"journal": {"enabled": 1}}}, "pct.journal.enabled must be true or false"),
        (
            {"pct": {"journal": {"maxAgeDays": True}}},
            "pct.journal.maxAgeDays must be a number greater than 0",
        ),
    ],
)
def test_each_invalid_field_is_named_with_its_rule(
    document: dict[str, object], detail: str
) -> None:
    with pytest.raises(PctSettingError) as caught:
        check_pct_section(document)
    assert str(caught.value) == detail
    with pytest.raises(ConfigValidationError) as parsed:
        parse_config(document)
    assert str(parsed.value) == detail


def test_a_valid_section_parses_and_unknown_keys_stay() -> None:
    document = {"pct": {"sandbox": {"mode": "read-only"}, "later": {"x": 1}}}
    assert pct_section_error(document) is None
    parse_config(document)
    shown = effective_section(document)
    assert shown["later"] == {"x": 1}
    assert shown["sandbox"] == {"mode": "read-only", "network": False}
    assert [row.key for row in SUBSECTIONS] == ["sandbox", "journal", "commands"]


def test_the_pct_section_loads_without_pydantic() -> None:
    probe = (
        "import sys, pct_runtime.config.pct_section as p; "
        "p.check_pct_section({'pct': {'journal': {}}}); print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
