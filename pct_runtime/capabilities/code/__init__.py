"""Code Mode: `exec` / `wait` running short trusted Python cells in fresh worker processes.

Modules: `worker` (the zygote and the cell runner, stdlib only), `bridge` (host side of the
worker processes), `dialect` (arguments and the `# @exec:` pragma), `cell` (the cell
record, its reads and `CellView`), `dispatch` (nested calls: bridge bounds, admission,
slots and progress; the runtime's call pipeline runs each call), `manager` (`CodeManager`:
cell limits and lifecycle), `render` (result text) and `tools` (`create_code_tools`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.code.manager import (
        CodeManager,
    )
    from pct_runtime.capabilities.code.tools import (
        create_code_tools,
    )
    from pct_runtime.capabilities.code.worker import (
        ALLOWED_MODULES,
    )

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "ALLOWED_MODULES": "pct_runtime.capabilities.code.worker",
    "CodeManager": "pct_runtime.capabilities.code.manager",
    "create_code_tools": "pct_runtime.capabilities.code.tools",
}

__all__ = [
    "ALLOWED_MODULES",
    "CodeManager",
    "create_code_tools",
]


__getattr__ = lazy.exports(__name__, _HOME)
