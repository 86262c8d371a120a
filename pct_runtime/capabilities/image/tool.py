"""The `openai_generate_image` tool: `{prompt, size?, quality?}` → one saved PNG.

Built only when Image Generation is active; the route (and its credential) is resolved
afresh on every call by the caller-supplied resolver, re-checked here, and never
switched after dispatch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pct_runtime.capabilities.base import (
    CallContext,
    ImagePart,
    SimpleTool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.capabilities.image.generate import (
    QUALITIES,
    ImageGenerationError,
    generate_image,
)
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable, route_problem
from pct_runtime.debug import DISABLED, DebugSink
from pct_runtime.jsontypes import JSONMapping

if TYPE_CHECKING:  # annotations only: httpx (and the rich it loads) is imported on first use
    import httpx

IMAGE_TOOL_NAME = "openai_generate_image"
IMAGE_DESCRIPTION = (
    "Generate one PNG image with OpenAI gpt-image-2 from a text prompt. The image is saved "
    "to a new file whose absolute path is returned with the image. Optional: size (for "
    "example 1024x1024, or auto) and quality (auto, low, medium or high)."
)
_FIELDS = ("prompt", "size", "quality")

RouteResolver = Callable[[], Awaitable[ResolvedRoute]]


def image_spec() -> ToolSpec:
    return ToolSpec(
        name=IMAGE_TOOL_NAME,
        label="OpenAI Image Generation",
        description=IMAGE_DESCRIPTION,
        input_schema={
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "minLength": 1, "description": "What to draw."},
                "size": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Image size such as 1024x1024; omitted means auto.",
                },
                "quality": {
                    "type": "string",
                    "enum": list(QUALITIES),
                    "description": "Rendering quality; omitted means auto.",
                },
            },
            "required": ["prompt"],
            "additionalProperties": False,
        },
    )


def _validated(args: JSONMapping) -> tuple[str, str | None, str | None]:
    unknown = sorted(k for k in args if k not in _FIELDS)
    if unknown:
        raise ToolError(
            "invalid-arguments",
            "openai_generate_image accepts only prompt, size and quality; "
            f"remove: {', '.join(unknown)}.",
        )
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ToolError(
            "invalid-arguments", "openai_generate_image requires a non-empty `prompt` string."
        )
    size = args.get("size")
    if size is not None and (not isinstance(size, str) or not size.strip()):
        raise ToolError(
            "invalid-arguments",
            "openai_generate_image `size` must be a non-empty string such as 1024x1024 or "
            "auto; omit it for auto.",
        )
    quality = args.get("quality")
    if quality is not None and quality not in QUALITIES:
        raise ToolError(
            "invalid-arguments",
            "openai_generate_image `quality` must be one of auto, low, medium, high; "
            "omit it for auto.",
        )
    return prompt, size, quality


class OpenAIImageTool(SimpleTool):
    """`resolve_route` returns the selected image route with a fresh credential or raises
    `RouteUnavailable`; `model_has_vision` says whether the calling model can see images
    (None = unknown, e.g. over MCP)."""

    def __init__(
        self,
        *,
        resolve_route: RouteResolver,
        agent_dir: Callable[[], Path],
        model_has_vision: Callable[[], bool | None] = lambda: None,
        debug: DebugSink = DISABLED,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._resolve_route = resolve_route
        self._agent_dir = agent_dir
        self._model_has_vision = model_has_vision
        self._debug = debug
        self._transport = transport
        self._spec = image_spec()

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        prompt, size, quality = _validated(args)
        try:
            route = await self._resolve_route()
        except RouteUnavailable as exc:
            raise ToolError(
                "unavailable", f"OpenAI Image Generation is unavailable: {exc.reason}."
            ) from None
        problem = route_problem(route)
        if problem is not None:
            raise ToolError("unavailable", f"OpenAI Image Generation is unavailable: {problem}.")
        try:
            image = await generate_image(
                prompt=prompt,
                size=size,
                quality=quality,
                tool_call_id=ctx.tool_call_id,
                route=route,
                agent_dir=self._agent_dir(),
                transport=self._transport,
                debug=self._debug,
            )
        except ImageGenerationError as error:
            raise ToolError(
                error.category, str(error), {"unknown_result": error.unknown_result}
            ) from None
        text = f"Generated image saved to {image.path}."
        if self._model_has_vision() is False:
            text += " The current model cannot visually inspect this image."
        return ToolResult(
            text=text,
            details={"path": str(image.path), "mime_type": image.mime_type},
            images=[ImagePart(data=image.data, mime_type=image.mime_type)],
        )
