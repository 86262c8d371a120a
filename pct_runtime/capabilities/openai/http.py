"""The one way our OpenAI executors open an HTTP client.

Redirects are never followed and nothing is retried. `transport` is the explicit test
seam: production passes None (real network to the fixed official endpoints); tests pass a
transport that carries the same requests to a local fake server on 127.0.0.1.
"""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # httpx (and the rich it loads) is imported where a request is made
    import httpx


USER_AGENT = f"pi ({platform.system().lower()} {platform.release()}; {platform.machine()})"


def open_client(transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
    import httpx

    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        timeout=httpx.Timeout(None),
        trust_env=False,
    )


def request_id(response: httpx.Response) -> str | None:
    value: str | None = response.headers.get("x-request-id")
    return value
