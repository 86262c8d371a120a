"""Image Generation executor: one `gpt-image-2` request, a validated PNG, one new file.

The endpoint is chosen only by the credential kind (fixed constants, never a configured
URL); redirects are not followed and nothing is retried or re-routed after dispatch.
The PNG is written with exclusive creation to
`<agent dir>/artifacts/pi-codex-toolkit/<uuid>.png`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.capabilities.openai.http import open_client, request_id
from pct_runtime.capabilities.openai.routes import (
    IMAGE_ENDPOINTS,
    ResolvedRoute,
    account_id_from_token,
    endpoint_host,
)
from pct_runtime.debug import DISABLED, DebugRecord, DebugSink

if TYPE_CHECKING:  # httpx (and the rich it loads) is imported where a request is made
    import httpx

IMAGE_MODEL = "gpt-image-2"
IMAGE_TIMEOUT_S = 300.0
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FEATURE = "image-generation"
QUALITIES = ("auto", "low", "medium", "high")

ERROR_CATEGORIES = (
    "aborted",
    "timeout",
    "network-error",
    "http-error",
    "invalid-json",
    "missing-image",
    "invalid-image",
    "missing-account-claim",
    "artifact-write-error",
)


class ImageGenerationError(Exception):
    """A failed generation; `str()` is the exact model-facing text.

    `unknown_result` is set once the request may have reached the service: the image may
    have been generated (and billed) even though no file was written.
    """

    def __init__(self, category: str, unknown_result: bool = False) -> None:
        note = " The hosted generation result may be unknown." if unknown_result else ""
        super().__init__(f"Image Generation failed: {category}.{note}")
        self.category = category
        self.unknown_result = unknown_result


@dataclass(frozen=True)
class GeneratedImage:
    path: Path
    data: bytes
    mime_type: str = "image/png"


def artifacts_dir(agent_dir: Path) -> Path:
    return agent_dir / "artifacts" / "pi-codex-toolkit"


def build_image_request(prompt: str, size: str | None, quality: str | None) -> dict[str, str]:
    return {
        "prompt": prompt,
        "model": IMAGE_MODEL,
        "background": "auto",
        "quality": quality or "auto",
        "size": size or "auto",
    }


def build_image_headers(route: ResolvedRoute, tool_call_id: str) -> dict[str, str]:
    """The full header set; no beta/feature headers are ever sent to the Images API."""
    headers = {
        "authorization": f"Bearer {route.token}",
        "accept": "application/json",
        "content-type": "application/json",
        "originator": "pi",
        "x-codex-image-turn-id": tool_call_id,
    }
    if route.credential_kind == "codex-oauth":
        account = account_id_from_token(route.token)
        if account is None:
            raise ImageGenerationError("missing-account-claim")
        headers["chatgpt-account-id"] = account
    return headers


def decode_png(value: object) -> bytes:
    if not isinstance(value, dict) or not isinstance(value.get("data"), list):
        raise ImageGenerationError("missing-image", True)
    first = value["data"][0] if value["data"] else None
    if not isinstance(first, dict) or not isinstance(first.get("b64_json"), str):
        raise ImageGenerationError("missing-image", True)
    encoded = first["b64_json"].strip()
    if not encoded:
        raise ImageGenerationError("missing-image", True)
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ImageGenerationError("invalid-image", True) from None
    if not data.startswith(PNG_SIGNATURE):
        raise ImageGenerationError("invalid-image", True)
    return data


def write_artifact(agent_dir: Path, data: bytes) -> Path:
    """Create `<uuid>.png` exclusively (never overwrite); remove a partial file on error."""
    directory = artifacts_dir(agent_dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{uuid.uuid4()}.png"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
    return path


async def generate_image(
    *,
    prompt: str,
    size: str | None,
    quality: str | None,
    tool_call_id: str,
    route: ResolvedRoute,
    agent_dir: Path,
    transport: httpx.AsyncBaseTransport | None = None,
    debug: DebugSink = DISABLED,
    timeout_s: float = IMAGE_TIMEOUT_S,
) -> GeneratedImage:
    """Generate one image. Raises `ImageGenerationError`; cancellation propagates."""
    import httpx

    endpoint = IMAGE_ENDPOINTS[route.credential_kind]
    started = time.monotonic()
    status: int | None = None
    req_id: str | None = None

    def emit(error_category: str | None = None) -> None:
        debug.emit(
            DebugRecord(
                feature=FEATURE,
                provider=route.provider,
                api=route.api,
                model=IMAGE_MODEL,
                endpoint_host=endpoint_host(endpoint),
                duration_ms=round((time.monotonic() - started) * 1000),
                status=status,
                request_id=req_id,
                error_category=error_category,
            )
        )

    try:
        headers = build_image_headers(route, tool_call_id)
    except ImageGenerationError as error:
        emit(error.category)
        raise
    body = json.dumps(build_image_request(prompt, size, quality)).encode()

    dispatched = False
    try:
        async with open_client(transport) as client, asyncio.timeout(timeout_s):
            request = client.build_request("POST", endpoint, content=body, headers=headers)
            dispatched = True
            response = await client.send(request)
            status = response.status_code
            req_id = request_id(response)
    except TimeoutError:
        emit("timeout")
        raise ImageGenerationError("timeout", True) from None
    except asyncio.CancelledError:
        emit("aborted")
        raise
    except httpx.ConnectError:
        # The connection was never established: nothing reached the service.
        emit("network-error")
        raise ImageGenerationError("network-error", False) from None
    except (httpx.HTTPError, OSError):
        emit("network-error")
        raise ImageGenerationError("network-error", dispatched) from None

    if not response.is_success:
        emit("http-error")
        raise ImageGenerationError("http-error", True)
    try:
        value = json.loads(response.content)
    except ValueError:
        emit("invalid-json")
        raise ImageGenerationError("invalid-json", True) from None
    try:
        data = decode_png(value)
    except ImageGenerationError as error:
        emit(error.category)
        raise
    try:
        path = await asyncio.to_thread(write_artifact, agent_dir, data)
    except OSError:
        emit("artifact-write-error")
        raise ImageGenerationError("artifact-write-error", True) from None
    emit()
    return GeneratedImage(path=path, data=data)
