"""The configuration layer: schema and validation, the file store, execution rules.

The bottom of the import graph: it imports nothing else from pct_runtime.
"""

from __future__ import annotations

from pct_runtime.config.schema import (
    COMPUTER_USE_TOOL_NAMES,
    DEFAULT_DEFERRED_TOOLS,
    DEFERRABLE_TOOL_NAMES,
    ApplyPatchConfig,
    CodeModeConfig,
    ComputerUseConfig,
    ConfigValidationError,
    ExecutionConfig,
    ExecutionRule,
    ImageGenerationConfig,
    RemoteCompactionConfig,
    ShellSessionsConfig,
    SidecarModel,
    ToolDiscoveryConfig,
    ToolkitConfig,
    WebSearchConfig,
    default_config,
    parse_config,
    to_json_obj,
)

__all__ = [
    "COMPUTER_USE_TOOL_NAMES",
    "DEFAULT_DEFERRED_TOOLS",
    "DEFERRABLE_TOOL_NAMES",
    "ApplyPatchConfig",
    "CodeModeConfig",
    "ComputerUseConfig",
    "ConfigValidationError",
    "ExecutionConfig",
    "ExecutionRule",
    "ImageGenerationConfig",
    "RemoteCompactionConfig",
    "ShellSessionsConfig",
    "SidecarModel",
    "ToolDiscoveryConfig",
    "ToolkitConfig",
    "WebSearchConfig",
    "default_config",
    "parse_config",
    "to_json_obj",
]
