"""Shell Sessions: `exec_command` / `write_stdin` over pipes, in process groups, run once.

Public API (used by the runtime, the MCP server and Code Mode's nested adapters):

- `ShellManager(output, resolve_shell=default_resolver, ...)` with `start(...)`, `write(...)`,
  `close()`, `has_session(id)`, `check_session(id)`;
- `create_shell_tools(manager, hooks, admission) -> [exec_command, write_stdin]`;
- pure `normalize_exec_command_args(args)`, `normalize_write_stdin_args(args)` and
  `format_shell_result(observation)`;
- `ShellConfig`, `default_resolver`, `find_user_shell`, `ShellUnavailableError`.
"""

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
from pct_runtime.capabilities.shell.manager import ShellManager, stale_session_message
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
