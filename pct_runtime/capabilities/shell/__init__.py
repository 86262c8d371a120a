"""Shell Sessions: `exec_command` / `write_stdin` over pipes, in process groups, run once.

Public API (used by the runtime, the MCP server and Code Mode's nested adapters):

- `ShellManager(output, resolve_shell=default_resolver, ...)` with `start(...)`, `write(...)`,
  `close()`, `has_session(id)`, `check_session(id)`;
- `create_shell_tools(manager, hooks, admission) -> [exec_command, write_stdin]`;
- pure `normalize_exec_command_args(args)`, `normalize_write_stdin_args(args)` and
  `format_shell_result(observation)`;
- `ShellConfig`, `default_resolver`, `find_user_shell`, `ShellUnavailableError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pct_runtime import lazy

if TYPE_CHECKING:
    from pct_runtime.capabilities.shell.dialect import (
        UNSUPPORTED_FIELDS,
        ExecCommandArgs,
        OutputLimits,
        WriteStdinArgs,
        normalize_exec_command_args,
        normalize_write_stdin_args,
        resolve_workdir,
    )
    from pct_runtime.capabilities.shell.format import (
        ShellObservation,
        StdinReport,
        format_shell_result,
    )
    from pct_runtime.capabilities.shell.manager import (
        ShellManager,
        stale_session_message,
    )
    from pct_runtime.capabilities.shell.resolve import (
        ShellConfig,
        ShellUnavailableError,
        default_resolver,
        find_user_shell,
    )
    from pct_runtime.capabilities.shell.tools import (
        EXEC_COMMAND_SPEC,
        WRITE_STDIN_SPEC,
        ExecCommandTool,
        WriteStdinTool,
        create_shell_tools,
    )

# Names load on first use: `pct status` imports this package for its declaration
# (`declaration.py`), which needs none of them.
_HOME: dict[str, str] = {
    "EXEC_COMMAND_SPEC": "pct_runtime.capabilities.shell.tools",
    "ExecCommandArgs": "pct_runtime.capabilities.shell.dialect",
    "ExecCommandTool": "pct_runtime.capabilities.shell.tools",
    "OutputLimits": "pct_runtime.capabilities.shell.dialect",
    "ShellConfig": "pct_runtime.capabilities.shell.resolve",
    "ShellManager": "pct_runtime.capabilities.shell.manager",
    "ShellObservation": "pct_runtime.capabilities.shell.format",
    "ShellUnavailableError": "pct_runtime.capabilities.shell.resolve",
    "StdinReport": "pct_runtime.capabilities.shell.format",
    "UNSUPPORTED_FIELDS": "pct_runtime.capabilities.shell.dialect",
    "WRITE_STDIN_SPEC": "pct_runtime.capabilities.shell.tools",
    "WriteStdinArgs": "pct_runtime.capabilities.shell.dialect",
    "WriteStdinTool": "pct_runtime.capabilities.shell.tools",
    "create_shell_tools": "pct_runtime.capabilities.shell.tools",
    "default_resolver": "pct_runtime.capabilities.shell.resolve",
    "find_user_shell": "pct_runtime.capabilities.shell.resolve",
    "format_shell_result": "pct_runtime.capabilities.shell.format",
    "normalize_exec_command_args": "pct_runtime.capabilities.shell.dialect",
    "normalize_write_stdin_args": "pct_runtime.capabilities.shell.dialect",
    "resolve_workdir": "pct_runtime.capabilities.shell.dialect",
    "stale_session_message": "pct_runtime.capabilities.shell.manager",
}

__all__ = [
    "EXEC_COMMAND_SPEC",
    "UNSUPPORTED_FIELDS",
    "WRITE_STDIN_SPEC",
    "ExecCommandArgs",
    "ExecCommandTool",
    "OutputLimits",
    "ShellConfig",
    "ShellManager",
    "ShellObservation",
    "ShellUnavailableError",
    "StdinReport",
    "WriteStdinArgs",
    "WriteStdinTool",
    "create_shell_tools",
    "default_resolver",
    "find_user_shell",
    "format_shell_result",
    "normalize_exec_command_args",
    "normalize_write_stdin_args",
    "resolve_workdir",
    "stale_session_message",
]


__getattr__ = lazy.exports(__name__, _HOME)
