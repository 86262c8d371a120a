"""Computer Use's host probe: the verdict `pct status` and a session start join a plan with.

Its own module, named by the row's `probe` (`declaration.py`), so that a status reads it
without the descriptor: that one loads the six tools, the tool contract and the UI port,
none of which a probe needs. On Linux or headless it imports nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pct_runtime.capabilities.descriptor import HostProbe
    from pct_runtime.config.schema import ToolkitConfig
    from pct_runtime.host.pi.model_registry import Model


def probe(
    config: ToolkitConfig, platform: str, ui_available: bool, model: Model | None, full: bool
) -> str | None:
    """A session start runs only the file checks (components, helper) and starts nothing.

    An explicit `pct status` (`full`) runs the whole probe (components, helper, a
    dedicated `node_repl` client asking `@oai/sky` for its target, then closed) — but only
    when every cheaper check before it in the chain passes, so Linux and headless runs
    start nothing."""
    if platform != "darwin":
        return None
    from pct_runtime.capabilities.computer_use import eligibility

    if not full:
        return eligibility.inspect_runtime().reason
    if not (config.computer_use.enabled and ui_available):
        return None
    if model is None or not model.has_image_input:
        return None
    import asyncio  # only here: a status on Linux or without the app never starts a loop

    return asyncio.run(eligibility.ComputerUseProbe().probe())


PROBE: HostProbe = probe
