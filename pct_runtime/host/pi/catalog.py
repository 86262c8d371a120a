"""Pi's built-in `openai` and `openai-codex` model catalog, kept as data.

Pi regenerates its catalog every release; this is Pi 0.58.3's table (ids, reasoning,
input kinds, context). `models.json` can re-route,
override or extend any of it, which is how a user tracks a newer catalog.
"""

from __future__ import annotations

from pct_runtime.datarecord import datarecord


@datarecord
class CatalogEntry:
    id: str
    reasoning: bool
    image: bool
    context_window: int
    max_tokens: int


OPENAI_API = "openai-responses"
OPENAI_BASE_URL = "https://api.openai.com/v1"
CODEX_API = "openai-codex-responses"
CODEX_BASE_URL = "https://chatgpt.com/backend-api"

_R = True  # reasoning
_N = False  # not reasoning

OPENAI_MODELS: tuple[CatalogEntry, ...] = (
    CatalogEntry("gpt-5", _R, True, 400000, 128000),
    CatalogEntry("gpt-5-codex", _R, True, 400000, 128000),
    CatalogEntry("gpt-5-mini", _R, True, 400000, 128000),
    CatalogEntry("gpt-5-nano", _R, True, 400000, 128000),
    CatalogEntry("gpt-5-pro", _R, True, 400000, 272000),
    CatalogEntry("gpt-5.1", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.1-codex", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.1-codex-max", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.1-codex-mini", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.2", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.2-codex", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.2-pro", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.3-codex", _R, True, 400000, 128000),
    CatalogEntry("gpt-5.3-codex-spark", _R, False, 128000, 128000),
    CatalogEntry("gpt-5.4", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.4-pro", _R, True, 1050000, 128000),
    CatalogEntry("o1", _R, True, 200000, 100000),
    CatalogEntry("o3", _R, True, 200000, 100000),
    CatalogEntry("o3-pro", _R, True, 200000, 100000),
    CatalogEntry("o3-mini", _R, False, 200000, 100000),
    CatalogEntry("o3-deep-research", _R, True, 200000, 100000),
    CatalogEntry("o4-mini", _R, True, 200000, 100000),
    CatalogEntry("o4-mini-deep-research", _R, True, 200000, 100000),
    CatalogEntry("codex-mini-latest", _R, True, 200000, 100000),
    CatalogEntry("gpt-4", _N, False, 8192, 8192),
    CatalogEntry("gpt-4-turbo", _N, True, 128000, 4096),
    CatalogEntry("gpt-4o", _N, True, 128000, 16384),
    CatalogEntry("gpt-4o-mini", _N, True, 128000, 16384),
    CatalogEntry("gpt-4.1", _N, True, 1047576, 32768),
    CatalogEntry("gpt-4.1-mini", _N, True, 1047576, 32768),
    CatalogEntry("gpt-4.1-nano", _N, True, 1047576, 32768),
    CatalogEntry("gpt-5-chat-latest", _N, True, 128000, 16384),
)

CODEX_MODELS: tuple[CatalogEntry, ...] = (
    CatalogEntry("gpt-5.1", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.1-codex-max", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.1-codex-mini", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.2", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.2-codex", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.3-codex", _R, True, 272000, 128000),
    CatalogEntry("gpt-5.3-codex-spark", _R, False, 128000, 128000),
    CatalogEntry("gpt-5.4", _R, True, 272000, 128000),
)

#: provider -> (api, baseUrl, models)
BUILTIN_PROVIDERS: dict[str, tuple[str, str, tuple[CatalogEntry, ...]]] = {
    "openai": (OPENAI_API, OPENAI_BASE_URL, OPENAI_MODELS),
    "openai-codex": (CODEX_API, CODEX_BASE_URL, CODEX_MODELS),
}

#: Pi 0.58.3 `supportsXhigh`: ids containing one of these take `xhigh` by default.
XHIGH_ID_MARKERS: tuple[str, ...] = ("gpt-5.2", "gpt-5.3", "gpt-5.4")
