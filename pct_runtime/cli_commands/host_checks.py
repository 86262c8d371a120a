"""What `pct status` and `pct serve` both check before they start: Pi's files and `--tools`.

A broken `models.json`, `auth.json` or `settings.json` changes what a session gets (custom
providers vanish, no current model) without failing anything, so both commands say so on
stderr — before the unknown-model error, since a broken models.json is often why a custom
`--model` is unknown. A `--tools` name matching no tool silently removes a tool; both warn.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pct_runtime.cli_commands.errors import CliError
from pct_runtime.datarecord import datarecord
from pct_runtime.host.pi.model_registry import Model, ModelRegistry, load_settings
from pct_runtime.host.pi.names import NATIVE_TOOLS, OWNED_TOOL_NAMES


@datarecord
class HostModel:
    """Pi's model registry and the session model a fresh session gets (None: no model)."""

    registry: ModelRegistry
    model: Model | None


def parse_model_arg(value: str) -> tuple[str, str]:
    """`PROVIDER/ID` split at the first `/` (model ids may contain `/`)."""

    provider, sep, model_id = value.partition("/")
    if not sep or not provider or not model_id:
        raise CliError(f"--model must be PROVIDER/ID, got {value!r}")
    return provider, model_id


def unknown_model_message(registry: ModelRegistry, model_arg: str) -> str:
    """The unknown `--model` error: the nearest known ids, and how to list them all."""
    import difflib  # noqa: PLC0415 - start-up: only an unknown --model is matched

    refs = [f"{m.provider}/{m.id}" for m in registry.all()]
    near = difflib.get_close_matches(model_arg, refs, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return (
        f"unknown model {model_arg!r}: not in Pi's model registry "
        f"(models.json or the built-in catalog){hint} "
        "Run `pct models` to list the valid PROVIDER/ID values."
    )


def _warn(text: str, stream: TextIO | None) -> None:
    print(f"pct: warning: {text}", file=stream if stream is not None else sys.stderr)


def load_host_model(
    agent: Path, model_arg: str | None, cwd: Path, *, stream: TextIO | None = None
) -> HostModel:
    """Load Pi's registry and pick the model: `--model` (must be known, else `CliError`
    exit 2), or Pi's settings default (`<agent dir>/settings.json` with
    `<cwd>/.pi/settings.json` merged over it). Every file problem is a warning first."""
    ref = parse_model_arg(model_arg) if model_arg is not None else None
    registry = ModelRegistry.load(agent)
    problems = [registry.error, registry.credentials.error]
    settings = load_settings(agent, cwd) if ref is None else None
    if settings is not None:
        problems.append(settings.error)
    for problem in problems:
        if problem:
            _warn(problem, stream)
    if ref is not None:
        model = registry.find(*ref)
        if model is None:
            raise CliError(unknown_model_message(registry, model_arg or ""))
        return HostModel(registry, model)
    assert settings is not None
    model = registry.default_model(settings)
    if model is None and settings.default_provider and settings.default_model:
        # Without this, `Current model: —` would not say why the default was dropped.
        _warn(
            f"settings.json default model {settings.default_provider}/"
            f"{settings.default_model} is not in Pi's model registry; no current model",
            stream,
        )
    return HostModel(registry, model)


def warn_unknown_tools(allowlist: Sequence[str] | None, *, stream: TextIO | None = None) -> None:
    """Warn about `--tools` names that match no pct or Pi native tool (a typo drops a tool)."""
    if allowlist is None:
        return
    known = (*NATIVE_TOOLS, *OWNED_TOOL_NAMES)
    unknown = [name for name in allowlist if name not in known]
    if unknown:
        _warn(
            f"--tools names no pct or Pi native tool: {', '.join(unknown)} "
            f"(known: {', '.join(known)})",
            stream,
        )
