"""The one `before_provider_request` transform for embedders: replay, then native search.

Both steps return the payload unchanged when they do not apply, keep unknown fields and
are idempotent, so the order is fixed only to make replay see the agent's own input.
"""

from __future__ import annotations

from pct_runtime.capabilities.compaction.hook import RemoteCompaction
from pct_runtime.capabilities.openai.routes import ResolvedRoute
from pct_runtime.capabilities.web_search.native import SearchSettings, inject_native_search


def transform_provider_request(
    payload: object,
    *,
    compaction: RemoteCompaction | None,
    newest_compaction_details: object,
    route: ResolvedRoute | None,
    native_search: SearchSettings | None,
) -> object:
    """`native_search` is the web-search config when the decision is native, else None."""
    if compaction is not None:
        payload = compaction.before_provider_request(
            payload, newest_details=newest_compaction_details, route=route
        )
    return inject_native_search(payload, native_search)
