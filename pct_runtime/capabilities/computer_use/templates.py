"""Fixed JavaScript templates run in the injected `node_repl`, and conversion of its content.

Every call runs one predefined template; the model's arguments are validated first and then
embedded only as one JSON literal on the `const args = ...;` line (ASCII-only `json.dumps`, so
no quote, newline or U+2028 can leave the literal). Model text is never concatenated into code.
Screenshots come back as MCP image blocks and are accepted only as PNG or JPEG whose magic
bytes match the declared MIME type.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Literal

from pct_runtime.capabilities.base import ImagePart
from pct_runtime.jsontypes import JSONMapping

ComputerUseMethod = Literal[
    "list_apps", "get_app_state", "click", "type_text", "press_key", "scroll"
]

ACTION_METHODS: frozenset[str] = frozenset({"click", "type_text", "press_key", "scroll"})

_SKY = 'const sky = (globalThis.__pctComputerUseSky ??= (await import("@oai/sky")).sky);'

_SCREENSHOT = """\
  nodeRepl.write(String(state.text ?? ""));
  if (state.screenshot) {
    const fs = await import("node:fs/promises");
    const { fileURLToPath } = await import("node:url");
    const bytes = await fs.readFile(fileURLToPath(state.screenshot.url));
    const png = bytes.subarray(0, 8).toString("hex") === "89504e470d0a1a0a";
    const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
    if (!png && !jpeg) throw new Error("Unsupported Computer Use screenshot format.");
    await nodeRepl.emitImage({ bytes, mimeType: png ? "image/png" : "image/jpeg" });
  }"""

_BODIES: dict[str, str] = {
    "list_apps": "  nodeRepl.write(JSON.stringify(await sky.list_apps()));",
    "get_app_state": "  const state = await sky.get_app_state(args);\n" + _SCREENSHOT,
    "click": '  await sky.click(args);\n  nodeRepl.write("Click completed.");',
    "type_text": '  await sky.type_text(args);\n  nodeRepl.write("Text entry completed.");',
    "press_key": '  await sky.press_key(args);\n  nodeRepl.write("Key press completed.");',
    "scroll": '  await sky.scroll(args);\n  nodeRepl.write("Scroll completed.");',
}

TITLES: dict[str, str] = {
    "list_apps": "List desktop apps",
    "get_app_state": "Inspect desktop app",
    "click": "Click desktop app",
    "type_text": "Type in desktop app",
    "press_key": "Press key in desktop app",
    "scroll": "Scroll desktop app",
}

PROBE_TITLE = "Probe Computer Use runtime"
PROBE_JAVASCRIPT = (
    "await (async () => {\n  " + _SKY + "\n  nodeRepl.write(String(sky.target));\n})();"
)


def args_literal(args: JSONMapping) -> str:
    """One-line ASCII JSON: a valid JavaScript expression that cannot escape its line."""
    return json.dumps(dict(args), ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def build_javascript(method: ComputerUseMethod, args: JSONMapping) -> str:
    """The fixed template for `method`, with validated `args` as its only variable part.

    Each call is wrapped in an async function so repeated calls never redeclare a top-level
    binding in the long-lived REPL.
    """
    return (
        "await (async () => {\n  "
        + _SKY
        + "\n  const args = "
        + args_literal(args)
        + ";\n"
        + _BODIES[method]
        + "\n})();"
    )


class ContentError(ValueError):
    """The MCP content is not text/PNG/JPEG blocks as promised."""


_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"


def sniff_image(data: bytes) -> str | None:
    if data.startswith(_PNG):
        return "image/png"
    if data.startswith(_JPEG):
        return "image/jpeg"
    return None


def convert_content(blocks: object) -> tuple[list[str], list[ImagePart]]:
    """Split MCP content into texts and validated images; anything else is an error."""
    if not isinstance(blocks, list) or not blocks:
        raise ContentError("no content")
    texts: list[str] = []
    images: list[ImagePart] = []
    for block in blocks:
        if not isinstance(block, dict):
            raise ContentError("non-object block")
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
            continue
        if kind == "image":
            images.append(_decode_image(block))
            continue
        raise ContentError(f"unsupported block type {kind!r}")
    return texts, images


def _decode_image(block: JSONMapping) -> ImagePart:
    mime = block.get("mimeType")
    data = block.get("data")
    if mime not in ("image/png", "image/jpeg") or not isinstance(data, str) or not data:
        raise ContentError("unsupported image")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ContentError("image is not base64") from error
    if sniff_image(raw) != mime:
        raise ContentError("image bytes do not match their MIME type")
    return ImagePart(data=raw, mime_type=mime)


def first_text(blocks: object, limit: int = 500) -> str:
    """A bounded excerpt of the first text block (error details for the model)."""
    if isinstance(blocks, list):
        for block in blocks:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                text = " ".join(block["text"].split())
                return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""
