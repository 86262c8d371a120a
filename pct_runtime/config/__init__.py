"""The configuration layer: schema and validation, the file store, execution rules.

The bottom of the import graph: it imports nothing else from pct_runtime. Names load on
first use (PEP 562), so `config.pct_section` (pct's own section) can be read by
`pct apply-patch` without loading the schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
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

_WHERE = {
    "ConfigReadError": "errors",
    "ConfigSaveError": "errors",
    "reload_message": "errors",
    "agent_dir": "paths",
    "config_path": "paths",
    "reload_file": "reload",
    "reload_store": "reload",
    "COMPUTER_USE_TOOL_NAMES": "schema",
    "DEFAULT_DEFERRED_TOOLS": "schema",
    "DEFERRABLE_TOOL_NAMES": "schema",
    "ApplyPatchConfig": "schema",
    "CodeModeConfig": "schema",
    "ComputerUseConfig": "schema",
    "ConfigValidationError": "schema",
    "ExecutionConfig": "schema",
    "ExecutionRule": "schema",
    "ImageGenerationConfig": "schema",
    "RemoteCompactionConfig": "schema",
    "ShellSessionsConfig": "schema",
    "SidecarModel": "schema",
    "ToolDiscoveryConfig": "schema",
    "ToolkitConfig": "schema",
    "WebSearchConfig": "schema",
    "default_config": "schema",
    "parse_config": "schema",
    "to_json_obj": "schema",
    "MISSING_REVISION": "store",
    "ConfigRead": "store",
    "ConfigStore": "store",
}

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


__getattr__ = lazy.exports(
    __name__, {name: f"{__name__}.{module}" for name, module in _WHERE.items()}
)
