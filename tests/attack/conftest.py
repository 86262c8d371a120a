"""Attack tests reuse the console's fixtures (a temporary agent dir, a clean environment)."""

from tests.tui.conftest import _console_env, agent_dir

__all__ = ["_console_env", "agent_dir"]
