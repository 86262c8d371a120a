"""JSON shapes, named once: the payloads, details, records and documents pct reads and writes.

Values inside a JSON document are whatever the peer sent; code that reads one narrows
each field where it uses it (the config schema, the tool argument dialects).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

#: A decoded JSON object, or one being built for encoding (details, records, payloads).
JSONObject: TypeAlias = dict[str, Any]
#: A JSON object read without changing it (tool arguments, config documents).
JSONMapping: TypeAlias = Mapping[str, Any]
