"""The configuration layer: schema and validation, the file store, execution rules.

The bottom of the import graph: it imports nothing else from pct_runtime.
"""

from __future__ import annotations

from pct_runtime.config.errors import ConfigReadError, ConfigSaveError, reload_message
from pct_runtime.config.paths import agent_dir, config_path
from pct_runtime.config.reload import reload_file, reload_store
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
from pct_runtime.config.store import MISSING_REVISION, ConfigRead, ConfigStore

__all__ = [
    "COMPUTER_USE_TOOL_NAMES",
    "DEFAULT_DEFERRED_TOOLS",
    "DEFERRABLE_TOOL_NAMES",
    "MISSING_REVISION",
    "ApplyPatchConfig",
    "CodeModeConfig",
    "ComputerUseConfig",
    "ConfigRead",
    "ConfigReadError",
    "ConfigSaveError",
    "ConfigStore",
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
    "agent_dir",
    "config_path",
    "default_config",
    "parse_config",
    "reload_file",
    "reload_message",
    "reload_store",
    "to_json_obj",
]
