"""Image Generation: the `openai_generate_image` tool and its executor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.image.generate import (
        IMAGE_MODEL,
        IMAGE_TIMEOUT_S,
        GeneratedImage,
        ImageGenerationError,
        artifacts_dir,
        build_image_request,
        generate_image,
    )
    from pct_runtime.capabilities.image.tool import (
        IMAGE_TOOL_NAME,
        OpenAIImageTool,
        image_spec,
    )

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "GeneratedImage": "pct_runtime.capabilities.image.generate",
    "IMAGE_MODEL": "pct_runtime.capabilities.image.generate",
    "IMAGE_TIMEOUT_S": "pct_runtime.capabilities.image.generate",
    "IMAGE_TOOL_NAME": "pct_runtime.capabilities.image.tool",
    "ImageGenerationError": "pct_runtime.capabilities.image.generate",
    "OpenAIImageTool": "pct_runtime.capabilities.image.tool",
    "artifacts_dir": "pct_runtime.capabilities.image.generate",
    "build_image_request": "pct_runtime.capabilities.image.generate",
    "generate_image": "pct_runtime.capabilities.image.generate",
    "image_spec": "pct_runtime.capabilities.image.tool",
}

__all__ = [
    "IMAGE_MODEL",
    "IMAGE_TIMEOUT_S",
    "IMAGE_TOOL_NAME",
    "GeneratedImage",
    "ImageGenerationError",
    "OpenAIImageTool",
    "artifacts_dir",
    "build_image_request",
    "generate_image",
    "image_spec",
]


__getattr__ = lazy.exports(__name__, _HOME)
