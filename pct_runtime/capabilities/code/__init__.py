"""Code Mode: `exec` / `wait` running short trusted Python cells in fresh worker processes.

Modules: `worker` (the zygote and the cell runner, stdlib only), `bridge` (host side of the
worker processes), `dialect` (arguments and the `# @exec:` pragma), `adapters` (nested
`tools.<name>` → Shell / Apply Patch executors), `cell` (the cell record, its reads and
`CellView`), `dispatch` (nested calls: admission, slots, hooks, approval, bridge bounds,
progress), `manager` (`CodeManager`: cell limits and lifecycle), `render` (result text) and
`tools` (`create_code_tools`).
"""

from pct_runtime.capabilities.code.adapters import (
    ApplyPatchAdapter,
    CodeAdapter,
    ExecCommandAdapter,
    PreparedCall,
    WriteStdinAdapter,
    create_adapters,
)
from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.tools import create_code_tools
from pct_runtime.capabilities.code.worker import ALLOWED_MODULES

__all__ = [
    "ALLOWED_MODULES",
    "ApplyPatchAdapter",
    "CodeAdapter",
    "CodeManager",
    "ExecCommandAdapter",
    "PreparedCall",
    "WriteStdinAdapter",
    "create_adapters",
    "create_code_tools",
]
