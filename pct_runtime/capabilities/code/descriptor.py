"""Code Mode's descriptor: `exec` / `wait` and their session binding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pct_runtime.capabilities.base import Tool, ToolSpec
from pct_runtime.capabilities.code.manager import CodeManager
from pct_runtime.capabilities.code.tools import create_code_tools
from pct_runtime.capabilities.descriptor import Descriptor
from pct_runtime.host.sandbox import Sandbox


class CodeServices(Protocol):
    """What the Code Mode binding asks of its session."""

    def code_manager(self) -> CodeManager:
        """The session's current manager (a fresh one after a disable cleanup)."""
        ...

    def sandbox(self) -> Sandbox | None: ...


def _no_manager() -> CodeManager:
    raise RuntimeError("tool definitions only: no Code Mode manager is built")


def _specs() -> Sequence[ToolSpec]:
    # The definitions do not depend on the manager; none is built or touched.
    return [tool.spec for tool in create_code_tools(_no_manager)]


def _bind(services: CodeServices) -> Sequence[Tool]:
    services.code_manager()  # built with the session, as before: output, shell, code
    return create_code_tools(services.code_manager, services.sandbox())


DESCRIPTORS: tuple[Descriptor[CodeServices], ...] = (Descriptor("code_mode", _specs, _bind),)
