"""`scripts/arch_metrics.py` loaded as a module, once, for the tests that pin its figures."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


@cache
def metrics() -> ModuleType:
    spec = importlib.util.spec_from_file_location("arch_metrics", ROOT / "scripts/arch_metrics.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
