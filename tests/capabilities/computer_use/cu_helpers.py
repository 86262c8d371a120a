"""Shared helpers for the Computer Use tests (a uniquely named module, not a conftest)."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pct_runtime.capabilities.computer_use.eligibility import ComputerUseRuntime, runtime_paths
from pct_runtime.host.ui import Question

FAKE_SERVER = Path(__file__).with_name("fake_cu_app_server.py")


@dataclass
class CuTree:
    """Paths of one temp install: resources (ChatGPT.app/Contents/Resources) and CODEX_HOME."""

    root: Path
    resources: Path
    codex_home: Path
    scenario_path: Path
    log_path: Path

    @property
    def runtime(self) -> ComputerUseRuntime:
        return runtime_paths(self.resources, self.codex_home)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PCT_FAKE_CU_SCENARIO"] = str(self.scenario_path)
        env["PCT_FAKE_CU_LOG"] = str(self.log_path)
        return env

    def scenario(self, **values: Any) -> None:
        self.scenario_path.write_text(json.dumps(values), encoding="utf-8")

    def records(self, key: str) -> list[Any]:
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line)[key] for line in lines if key in json.loads(line)]

    def received(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.records("received") if m.get("method") == method]


def build_tree(root: Path, *, helper: bool = True, skip: Sequence[str] = ()) -> CuTree:
    resources = root / "ChatGPT.app" / "Contents" / "Resources"
    codex_home = root / "codex-home"
    (resources / "cua_node" / "bin").mkdir(parents=True)
    codex_home.mkdir()
    parts = {
        "codex": resources / "codex",
        "node_repl": resources / "cua_node" / "bin" / "node_repl",
        "node": resources / "cua_node" / "bin" / "node",
    }
    for name, path in parts.items():
        if name in skip:
            continue
        if name == "codex":
            path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SERVER}" "$@"\n')
        else:
            path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    if "node_modules" not in skip:
        (resources / "cua_node" / "lib" / "node_modules" / "@oai" / "sky").mkdir(parents=True)
    if helper:
        (codex_home / "computer-use" / "Codex Computer Use.app").mkdir(parents=True)
    tree = CuTree(root, resources, codex_home, root / "scenario.json", root / "fake.log")
    tree.scenario()
    return tree


FAST = {
    "tool_timeout": 5.0,
    "request_timeout": 10.0,
    "startup_timeout": 10.0,
    "poll_interval": 0.02,
    "status_probe_timeout": 5.0,
    "exit_grace": 2.0,
}


def alive(pid: int) -> bool:
    """True if `pid` is still running after a short grace (signal delivery is asynchronous)."""
    deadline = time.monotonic() + 3.0
    while running(pid):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.02)
    return False


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); treat an unreaped child of ours as gone only if reaped.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@dataclass
class FakeUI:
    """A scripted UI port: answers confirm from a queue and records every question."""

    answers: list[bool] = field(default_factory=list)
    asked: list[tuple[str, str]] = field(default_factory=list)
    available_flag: bool = True
    block: Any = None  # an asyncio.Event to wait on before answering

    @property
    def available(self) -> bool:
        return self.available_flag

    async def confirm(self, question: Question) -> bool:
        self.asked.append((question.title, question.message))
        if self.block is not None:
            await self.block.wait()
        return self.answers.pop(0) if self.answers else False

    async def select(self, question: Question) -> str | None:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        return None
