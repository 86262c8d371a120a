"""Builders that wire the OpenAI capabilities into a session, and their descriptors.

This seam assembles Web Search, Image Generation and Remote Compaction, so it exports
their descriptors (`DESCRIPTORS`, read by `capabilities/table.py`) and the embedded
session's payload hooks (`OpenAIPayload`, on the Web Search descriptor). The builders take
live getters (config, registry, agent dir, the decided model) so a reload or a model
switch is seen on the next call, and they never decide whether a tool is active:
the runtime registers the tool only when the decision layer says so, and for Image
Generation passes the model the decision layer picked (`inspect_image_executor`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.compaction.hook import RemoteCompaction

# Re-exported: the embedder's typed `before_compact` (`RuntimeSession`) names these types
# through this seam, whose payload hook builds them.
from pct_runtime.capabilities.compaction.remote import (
    CompactionPreparation as CompactionPreparation,
)
from pct_runtime.capabilities.compaction.remote import CompactionResult as CompactionResult
from pct_runtime.capabilities.context import CapabilityContext, Key
from pct_runtime.capabilities.descriptor import ActiveDecisions, Descriptor
from pct_runtime.capabilities.image.tool import OpenAIImageTool, image_spec
from pct_runtime.capabilities.openai.pipeline import transform_provider_request
from pct_runtime.capabilities.openai.resolve import resolve_model_route
from pct_runtime.capabilities.openai.routes import ResolvedRoute, RouteUnavailable
from pct_runtime.capabilities.web_search.native import SearchSettings
from pct_runtime.capabilities.web_search.tool import (
    OpenAIWebSearchTool,
    RouteResolver,
    web_search_spec,
)
from pct_runtime.config.schema import ToolkitConfig
from pct_runtime.debug import DISABLED, DebugSink
from pct_runtime.host.pi.model_registry import Model, ModelRegistry

if TYPE_CHECKING:  # annotations only: httpx (and the rich it loads) is imported on first use
    import httpx

#: Returns the model to use, or a status reason code when there is none.
ModelPicker = Callable[[], Model | str]


def route_resolver(
    pick: ModelPicker,
    registry: Callable[[], ModelRegistry],
    agent_dir: Callable[[], Path],
    *,
    oauth_transport: httpx.AsyncBaseTransport | None = None,
) -> RouteResolver:
    """A per-call resolver: pick the model, then resolve (and refresh) its credential."""

    async def resolve() -> ResolvedRoute:
        picked = pick()
        if isinstance(picked, str):
            raise RouteUnavailable(picked)
        return await resolve_model_route(
            picked, registry().credentials, agent_dir(), oauth_transport=oauth_transport
        )

    return resolve


def sidecar_model_picker(
    config: Callable[[], ToolkitConfig], registry: Callable[[], ModelRegistry]
) -> ModelPicker:
    """`webSearch.sidecarModel` looked up in the registry (never the main model)."""

    def pick() -> Model | str:
        ref = config().web_search.sidecar_model
        if ref is None:
            return "missing-sidecar-model"
        model = registry().find(ref.provider, ref.model)
        return model if model is not None else "missing-sidecar-model"

    return pick


def current_model_picker(current: Callable[[], Model | None]) -> ModelPicker:
    def pick() -> Model | str:
        model = current()
        return model if model is not None else "current-model-missing"

    return pick


def build_web_search_tool(
    *,
    config: Callable[[], ToolkitConfig],
    registry: Callable[[], ModelRegistry],
    agent_dir: Callable[[], Path],
    debug: DebugSink = DISABLED,
    transport: httpx.AsyncBaseTransport | None = None,
) -> OpenAIWebSearchTool:
    def settings() -> SearchSettings:
        web_search: SearchSettings = config().web_search
        return web_search

    def thinking_level() -> str:
        ref = config().web_search.sidecar_model
        return "auto" if ref is None else str(ref.thinking_level)

    return OpenAIWebSearchTool(
        resolve_route=route_resolver(
            sidecar_model_picker(config, registry), registry, agent_dir, oauth_transport=transport
        ),
        settings=settings,
        thinking_level=thinking_level,
        debug=debug,
        transport=transport,
    )


def build_image_tool(
    *,
    pick_model: ModelPicker,
    registry: Callable[[], ModelRegistry],
    agent_dir: Callable[[], Path],
    model_has_vision: Callable[[], bool | None] = lambda: None,
    debug: DebugSink = DISABLED,
    transport: httpx.AsyncBaseTransport | None = None,
) -> OpenAIImageTool:
    """`pick_model` returns the image route's model chosen by the decision layer."""
    return OpenAIImageTool(
        resolve_route=route_resolver(pick_model, registry, agent_dir, oauth_transport=transport),
        agent_dir=agent_dir,
        model_has_vision=model_has_vision,
        debug=debug,
        transport=transport,
    )


def build_remote_compaction(
    *,
    config: Callable[[], ToolkitConfig],
    current_model: Callable[[], Model | None],
    registry: Callable[[], ModelRegistry],
    agent_dir: Callable[[], Path],
    debug: DebugSink = DISABLED,
    transport: httpx.AsyncBaseTransport | None = None,
) -> RemoteCompaction:
    """The embedder hook object, bound to the session's current model."""
    return RemoteCompaction(
        enabled=lambda: bool(config().remote_compaction.enabled),
        resolve_route=route_resolver(
            current_model_picker(current_model), registry, agent_dir, oauth_transport=transport
        ),
        debug=debug,
        transport=transport,
    )


# -- Descriptors ---------------------------------------------------------------------------


# -- Payload hooks of an embedded session ------------------------------------------------
# Remote Compaction's replay and native Web Search, acting on the session's committed
# decisions handed in as plain facts: native search only while Web Search is active with
# the native backend; checkpoints only while Remote Compaction is active.

#: The session's slot of its `RemoteCompaction`.
COMPACTION: Key[RemoteCompaction] = Key("remote_compaction")
#: Decision keys (the declarations' row keys) the hooks act on.
_SEARCH = "web_search"
_COMPACTION = "remote_compaction"


def session_compaction(services: CapabilityContext) -> RemoteCompaction:
    """The session's one `RemoteCompaction`, bound to its current model (built on use)."""

    def make() -> RemoteCompaction:
        return build_remote_compaction(
            config=services.config,
            current_model=services.model,
            registry=services.models,
            agent_dir=lambda: services.agent_dir,
            debug=services.debug,
        )

    return services.slots.get(COMPACTION, make)


async def _current_route(services: CapabilityContext) -> ResolvedRoute | None:
    model = services.model()
    if model is None:
        return None
    try:
        return await resolve_model_route(model, services.models().credentials, services.agent_dir)
    except RouteUnavailable:
        return None


class OpenAIPayload:
    """The embedded session's payload hooks (the Web Search descriptor carries them):
    checkpoint replay (Remote Compaction), then native search; never mutates `payload`."""

    async def before_provider_request(
        self,
        services: CapabilityContext,
        payload: object,
        active: ActiveDecisions,
        newest_details: object,
    ) -> object:
        native = (
            services.config().web_search
            if _SEARCH in active and active[_SEARCH] == "native"
            else None
        )
        compaction = None
        route = None
        if _COMPACTION in active and newest_details:
            compaction = session_compaction(services)
            route = await _current_route(services)
        return transform_provider_request(
            payload,
            compaction=compaction,
            newest_compaction_details=newest_details,
            route=route,
            native_search=native,
        )

    async def before_compact(
        self, services: CapabilityContext, preparation: object
    ) -> CompactionResult | None:
        """A result that replaces the agent's own summary, or None (compact natively)."""
        prepared = cast(CompactionPreparation, preparation)  # the embedder's own object
        return await session_compaction(services).before_compact(prepared)


def _web_search_specs() -> Sequence[ToolSpec]:
    return [web_search_spec()]


def _bind_web_search(services: CapabilityContext) -> Sequence[Tool]:
    return [
        build_web_search_tool(
            config=services.config,
            registry=services.models,
            agent_dir=lambda: services.agent_dir,
            debug=services.debug,
        )
    ]


def _image_specs() -> Sequence[ToolSpec]:
    return [image_spec()]


def _bind_image(services: CapabilityContext) -> Sequence[Tool]:
    def has_vision() -> bool | None:
        model = services.model()
        return None if model is None else model.has_image_input

    return [
        build_image_tool(
            pick_model=services.image_executor,
            registry=services.models,
            agent_dir=lambda: services.agent_dir,
            model_has_vision=has_vision,
            debug=services.debug,
        )
    ]


DESCRIPTORS: tuple[Descriptor, ...] = (
    # The payload hooks ride on Web Search's record: Remote Compaction has no tools, so
    # no descriptor of its own (the registry's rows with tools are the descriptors).
    Descriptor("web_search", _web_search_specs, _bind_web_search, payload=OpenAIPayload()),
    Descriptor("image_generation", _image_specs, _bind_image),
)
