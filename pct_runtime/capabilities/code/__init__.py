"""Code Mode: `exec` / `wait` running short trusted Python cells in fresh worker processes.

Modules: `worker` (the zygote and the cell runner, stdlib only), `bridge` (host side of the
worker processes), `dialect` (arguments and the `# @exec:` pragma), `cell` (the cell
record, its reads and `CellView`), `dispatch` (nested calls: bridge bounds, admission,
slots and progress; the runtime's call pipeline runs each call), `manager` (`CodeManager`:
cell limits and lifecycle), `render` (result text) and `tools` (`create_code_tools`).
"""

from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.tools import create_code_tools
from pct_runtime.capabilities.code.worker import ALLOWED_MODULES

__all__ = [
    "ALLOWED_MODULES",
    "CodeManager",
    "create_code_tools",
]
