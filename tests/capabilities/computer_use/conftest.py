"""Fixtures for Computer Use: a temp ChatGPT.app tree whose `codex` is the fake app-server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from cu_helpers import FAST, CuTree, alive, build_tree

from pct_runtime.capabilities.computer_use.client import ComputerUseClient


@pytest.fixture
def cu_tree(tmp_path: Path) -> CuTree:
    return build_tree(tmp_path)


@pytest.fixture
async def make_client(cu_tree: CuTree) -> AsyncIterator[Callable[..., ComputerUseClient]]:
    clients: list[ComputerUseClient] = []

    def factory(**overrides: Any) -> ComputerUseClient:
        options: dict[str, Any] = {**FAST, "env": cu_tree.env(), "temp_root": cu_tree.root}
        options.update(overrides)
        client = ComputerUseClient(cu_tree.runtime, **options)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        await client.close()
    for spawn in cu_tree.records("spawn"):
        for pid in (spawn["pid"], spawn["child"]):
            if pid is not None:
                assert not alive(pid), f"process {pid} was left behind"
    leftovers = [p for p in cu_tree.root.iterdir() if p.name.startswith("pct-computer-use-")]
    assert leftovers == [], "temp CODEX_HOME left behind"
