"""Fixtures for the OpenAI capability tests: a local fake server and a loopback transport."""

from openai_fakes import fake, loopback  # type: ignore[import-not-found]

__all__ = ["fake", "loopback"]
