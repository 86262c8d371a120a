"""Image Generation: the `openai_generate_image` tool and its executor."""

from pct_runtime.capabilities.image.generate import (
    IMAGE_MODEL,
    IMAGE_TIMEOUT_S,
    GeneratedImage,
    ImageGenerationError,
    artifacts_dir,
    build_image_request,
    generate_image,
)
from pct_runtime.capabilities.image.tool import IMAGE_TOOL_NAME, OpenAIImageTool, image_spec

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
