"""Image Generation's declaration: its row of the capability list (`capabilities/table.py`).

Cheap to import (`pct status` reads it): the decision layer's primitives and the tool's
name, never the tool. Its config section is `config/sections.py`'s
`ImageGenerationConfig`; its binding is the OpenAI factory's descriptor.
"""

from __future__ import annotations

from pct_runtime.decide.context import PlanContext
from pct_runtime.decide.decisions import DASH, Decision, decide_image_generation
from pct_runtime.decide.rows import CapabilityRow, Gated, MenuEntry
from pct_runtime.host.pi import names


def _image(ctx: PlanContext) -> Decision:
    return decide_image_generation(
        ctx.config.image_generation.enabled, ctx.model, ctx.inputs.registry
    )


def _status_lines(d: Decision, no_model: bool) -> list[str]:
    """The lines of its `pct status` block after `configured`/`effective`."""
    return [f"  backend: {d.backend or DASH}", f"  reason: {d.reason}"]


ROW = CapabilityRow(
    "image_generation",
    "Image Generation",
    _status_lines,
    (names.IMAGE_GENERATION_TOOL,),
    "OpenAI Image Generation is not active for the current model.",
    "OpenAI Image Generation is unavailable: ",
    planner=Gated((names.IMAGE_GENERATION_TOOL,), _image),
    menu=(MenuEntry("image_generation", "Image Generation", "Image Generation on/off."),),
    binding="pct_runtime.capabilities.openai.factory",
)
