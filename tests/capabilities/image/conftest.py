"""Fixtures shared with the OpenAI plumbing tests: the local fake server and loopback
transport live in tests/capabilities/openai/openai_fakes.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "openai"))

from openai_fakes import fake, loopback  # type: ignore[import-not-found]

__all__ = ["fake", "loopback"]
