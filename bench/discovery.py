"""Benchmark: how much of `tools/list` Tool Discovery keeps out of the model's context
(not a test).

The serialized size of an MCP `tools/list` result (compact JSON, as it goes on the wire),
in bytes and in tokens estimated at 4 bytes per token, with every capability on:

  full surface      every Toolkit tool definition that the decision layer would expose —
                    Web Search (sidecar), Image Generation, Apply Patch, Computer Use
                    (macOS with a UI), Shell Sessions, Code Mode — planned by the real
                    `plan_projection` with every Toolkit name registered as our own;
  this runtime      what `pct serve` answers right now through the official MCP client
                    (in-process), i.e. only the capabilities this runtime wires in.

Rows per surface: discovery off; discovery on with the default deferred set (image +
the six Computer Use tools); discovery on with every deferrable name deferred; and the
default set after `find_tools` loaded Image Generation (the cost of one load). The saving
is against the discovery-off row; `find_tools` itself is counted wherever it is listed.

Run: python bench/discovery.py
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# `python bench/discovery.py` puts bench/ first on sys.path, where bench/mcp.py would
# shadow the MCP SDK package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import mcp_types as types  # noqa: E402

from pct_runtime.capabilities.discovery import toolkit_specs  # noqa: E402
from pct_runtime.capabilities.table import CAPABILITIES  # noqa: E402
from pct_runtime.config import parse_config  # noqa: E402
from pct_runtime.decide.projection import ProjectionInputs, plan_projection  # noqa: E402
from pct_runtime.host.pi.credentials import ApiKeyCredential, Credentials, OAuthCredential  # noqa: E402
from pct_runtime.host.pi.model_registry import Model, ModelRegistry  # noqa: E402
from pct_runtime.host.pi.names import (  # noqa: E402
    DEFAULT_DEFERRED_TOOLS,
    DEFERRABLE_TOOL_NAMES,
    OWNED_TOOL_NAMES,
)
from pct_runtime.host.pi.tool_registry import RUNTIME_OWNER, ToolRegistry  # noqa: E402
from pct_runtime.serve.mcp.server import tool_to_mcp  # noqa: E402

BYTES_PER_TOKEN = 4

CODEX = Model(
    "openai-codex",
    "gpt-5.4",
    "openai-codex-responses",
    "https://chatgpt.com/backend-api",
    reasoning=True,
    input=("text", "image"),
)

EVERYTHING_ON: dict[str, Any] = {
    "webSearch": {
        "enabled": True,
        "backend": "sidecar",
        "sidecarModel": {"provider": "openai-codex", "model": "gpt-5.4"},
    },
    "remoteCompaction": {"enabled": True},
    "imageGeneration": {"enabled": True},
    "applyPatch": {"enabled": True},
    "computerUse": {"enabled": True},
    "shellSessions": {"enabled": True},
    "codeMode": {"enabled": True},
}


def variants() -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """(label, config, names loaded this session)."""
    default = list(DEFAULT_DEFERRED_TOOLS)
    every = list(DEFERRABLE_TOOL_NAMES)
    return [
        ("discovery off", {**EVERYTHING_ON, "toolDiscovery": {"enabled": False}}, ()),
        (
            "on, default deferred set",
            {**EVERYTHING_ON, "toolDiscovery": {"enabled": True, "deferred": default}},
            (),
        ),
        (
            "on, every deferrable deferred",
            {**EVERYTHING_ON, "toolDiscovery": {"enabled": True, "deferred": every}},
            (),
        ),
        (
            "on, default set, image loaded",
            {**EVERYTHING_ON, "toolDiscovery": {"enabled": True, "deferred": default}},
            ("openai_generate_image",),
        ),
    ]


def wire_size(tools: Sequence[types.Tool]) -> int:
    """Bytes of the compact JSON `tools/list` result, as the server sends it."""
    result = types.ListToolsResult(tools=list(tools))
    payload = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())


def registry() -> ModelRegistry:
    stored: dict[str, ApiKeyCredential | OAuthCredential] = {
        "openai-codex": OAuthCredential("openai-codex", "token", "refresh", 0),
        "openai": ApiKeyCredential("openai", "key"),
    }
    return ModelRegistry(ModelRegistry.builtin().all(), Credentials(stored, env={}))


def full_surface(cfg: Mapping[str, Any], loaded: Iterable[str]) -> tuple[list[str], int]:
    """The visible Toolkit names the decision layer plans, and their `tools/list` size."""
    reg = ToolRegistry.with_natives()
    for name in OWNED_TOOL_NAMES:
        reg.register(name, RUNTIME_OWNER)
    snapshot = reg.snapshot()
    plan = plan_projection(
        ProjectionInputs(
            config=parse_config(dict(cfg)),
            model=CODEX,
            registry=registry(),
            tools=snapshot,
            active=tuple(snapshot.names),
            session_kind="mcp",
            ui_available=True,
            discovered=frozenset(loaded),
            platform="darwin",
        ),
        CAPABILITIES,
    )
    specs = toolkit_specs()
    names = [name for name in plan.active if name in specs]
    return names, wire_size([tool_to_mcp(specs[name]) for name in names])


async def runtime_surface(cfg: Mapping[str, Any], loaded: Sequence[str]) -> tuple[list[str], int]:
    """`tools/list` of a real runtime behind the MCP server, through the official client."""
    from mcp import Client

    from pct_runtime.runtime import Runtime
    from pct_runtime.serve.mcp.server import PctMCPServer

    with tempfile.TemporaryDirectory(prefix="pct-bench-discovery-") as tmp:
        root = Path(tmp)
        ext = root / "agent" / "extensions"
        ext.mkdir(parents=True)
        (ext / "pi-codex-toolkit.json").write_text(json.dumps(cfg), encoding="utf-8")
        runtime = Runtime(agent_dir=root / "agent", cwd=root, model=CODEX, platform="linux")
        await runtime.start()
        runtime.models = registry()
        server = PctMCPServer(runtime)
        try:
            async with Client(server.server, mode="legacy") as client:
                if loaded:
                    await client.call_tool("find_tools", {"load": list(loaded)})
                tools = (await client.list_tools()).tools
        finally:
            await server.aclose()
            await runtime.aclose()
    return [t.name for t in tools], wire_size(tools)


def tokens(size: int) -> int:
    return math.ceil(size / BYTES_PER_TOKEN)


def table(title: str, rows: list[tuple[str, list[str], int]]) -> None:
    base = rows[0][2]
    print(title)
    print(f"  {'variant':<32}{'tools':>6}{'bytes':>9}{'~tokens':>9}{'saving':>16}")
    for label, names, size in rows:
        saved = base - size
        share = f"{saved:>6} ({saved / base:>5.1%})" if base else "—"
        print(f"  {label:<32}{len(names):>6}{size:>9}{tokens(size):>9}{share:>16}")
    for label, names, _ in rows:
        print(f"    {label}: {', '.join(names) or '—'}")
    print()


async def main() -> None:
    full = [(label, *full_surface(cfg, loaded)) for label, cfg, loaded in variants()]
    table("Full Toolkit surface (every capability on; decision layer + Toolkit definitions)", full)
    served = [(label, *await runtime_surface(cfg, loaded)) for label, cfg, loaded in variants()]
    table("This runtime's `pct serve` (official MCP client, in-process)", served)
    print(f"Tokens are estimated at {BYTES_PER_TOKEN} bytes per token (ceil).")


if __name__ == "__main__":
    asyncio.run(main())
