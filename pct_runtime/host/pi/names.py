"""Tool names the runtime owns, and Pi's native names it may hide.

Decisions, status and every capability read these lists; the deferrable set itself is
owned by the config layer (it validates `toolDiscovery.deferred`) and re-exported here.
"""

from __future__ import annotations

from pct_runtime.config.schema import COMPUTER_USE_TOOL_NAMES as COMPUTER_USE_TOOL_NAMES
from pct_runtime.config.schema import DEFAULT_DEFERRED_TOOLS as DEFAULT_DEFERRED_TOOLS
from pct_runtime.config.schema import DEFERRABLE_TOOL_NAMES as DEFERRABLE_TOOL_NAMES

WEB_SEARCH_TOOL = "openai_web_search"
IMAGE_GENERATION_TOOL = "openai_generate_image"
APPLY_PATCH_TOOL = "apply_patch"
SHELL_TOOLS: tuple[str, ...] = ("exec_command", "write_stdin")
CODE_MODE_TOOLS: tuple[str, ...] = ("exec", "wait")
COMPUTER_USE_TOOLS: tuple[str, ...] = COMPUTER_USE_TOOL_NAMES
FIND_TOOLS_TOOL = "find_tools"

#: Every name the runtime registers, in registration order.
OWNED_TOOL_NAMES: tuple[str, ...] = (*DEFERRABLE_TOOL_NAMES, FIND_TOOLS_TOOL)

#: Owned execution names in the order diagnostics report them.
EXECUTION_TOOL_NAMES: tuple[str, ...] = (APPLY_PATCH_TOOL, *SHELL_TOOLS, *CODE_MODE_TOOLS)

NATIVE_READ = "read"
NATIVE_BASH = "bash"
NATIVE_EDIT = "edit"
NATIVE_WRITE = "write"
#: Pi's native tools, registered as built-ins.
NATIVE_TOOLS: tuple[str, ...] = (NATIVE_READ, NATIVE_BASH, NATIVE_EDIT, NATIVE_WRITE)
#: Natives a replacement route may hide. Never `read`.
REPLACEABLE_NATIVES: tuple[str, ...] = (NATIVE_BASH, NATIVE_EDIT, NATIVE_WRITE)
