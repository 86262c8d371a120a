"""Every reason code of every capability, table-driven, in precedence order."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from decide_fixtures import CODEX, OPENAI, TEXT_ONLY, THIRD_PARTY, plan, registry, tools

from pct_runtime.decide.decisions import COMPUTER_USE_RUNTIME_REASONS
from pct_runtime.host.pi.model_registry import Model

UNOFFICIAL_CODEX = replace(CODEX, base_url="https://proxy.example/backend-api")
COMPLETIONS = replace(OPENAI, api="openai-completions")
SIDECAR = {"provider": "openai-codex", "model": "gpt-5.4", "thinkingLevel": "auto"}


def ws(backend: str, sidecar: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"webSearch": {"enabled": True, "backend": backend, "sidecarModel": sidecar}}


# (id, config, model, kind, credentials (codex, openai), effective, effective backend, reason)
WEB_SEARCH_CASES = [
    ("off", {}, CODEX, "embedded", ("oauth", "api_key"), "off", "off", ""),
    (
        "model-missing-first",
        ws("native"),
        None,
        "mcp",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "current-model-missing",
    ),
    (
        "model-missing-sidecar",
        ws("sidecar", SIDECAR),
        None,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "current-model-missing",
    ),
    (
        "native-mcp-no-hook",
        ws("native"),
        CODEX,
        "mcp",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "no-payload-hook",
    ),
    (
        "native-provider",
        ws("native"),
        THIRD_PARTY,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "unsupported-provider",
    ),
    (
        "native-api",
        ws("native"),
        COMPLETIONS,
        "embedded",
        (None, "api_key"),
        "unavailable",
        "unavailable",
        "unsupported-api",
    ),
    (
        "native-endpoint",
        ws("native"),
        UNOFFICIAL_CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "unofficial-endpoint",
    ),
    (
        "native-credential",
        ws("native"),
        CODEX,
        "embedded",
        ("api_key", None),
        "unavailable",
        "unavailable",
        "credential-mismatch",
    ),
    ("native-ok", ws("native"), CODEX, "embedded", ("oauth", None), "active", "native", ""),
    (
        "native-ok-api-key",
        ws("native"),
        OPENAI,
        "embedded",
        (None, "api_key"),
        "active",
        "native",
        "",
    ),
    (
        "sidecar-null",
        ws("sidecar"),
        CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "missing-sidecar-model",
    ),
    (
        "sidecar-unknown",
        ws("sidecar", {**SIDECAR, "model": "gpt-5.4-mini"}),
        CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "missing-sidecar-model",
    ),
    (
        "sidecar-credential",
        ws("sidecar", SIDECAR),
        CODEX,
        "embedded",
        ("api_key", None),
        "unavailable",
        "unavailable",
        "credential-mismatch",
    ),
    (
        "sidecar-effort",
        ws("sidecar", {**SIDECAR, "thinkingLevel": "max"}),
        CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "unsupported-sidecar-effort",
    ),
    (
        "sidecar-auth",
        ws("sidecar", {"provider": "openai", "model": "gpt-5.4"}),
        CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "missing-openai-auth",
    ),
    (
        "sidecar-ok",
        ws("sidecar", SIDECAR),
        THIRD_PARTY,
        "embedded",
        ("oauth", None),
        "active",
        "sidecar",
        "",
    ),
    (
        "auto-native",
        ws("auto", SIDECAR),
        CODEX,
        "embedded",
        ("oauth", None),
        "active",
        "native",
        "",
    ),
    (
        "auto-mcp-sidecar",
        ws("auto", SIDECAR),
        CODEX,
        "mcp",
        ("oauth", None),
        "active",
        "sidecar",
        "",
    ),
    (
        "auto-mcp-nothing",
        ws("auto"),
        CODEX,
        "mcp",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "missing-sidecar-model",
    ),
    (
        "auto-third-party-sidecar",
        ws("auto", SIDECAR),
        THIRD_PARTY,
        "embedded",
        ("oauth", None),
        "active",
        "sidecar",
        "",
    ),
    (
        "auto-sidecar-reason-wins",
        ws("auto", {**SIDECAR, "thinkingLevel": "max"}),
        THIRD_PARTY,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unavailable",
        "unsupported-sidecar-effort",
    ),
]


@pytest.mark.parametrize(
    ("cfg", "model", "kind", "creds", "effective", "backend", "reason"),
    [case[1:] for case in WEB_SEARCH_CASES],
    ids=[case[0] for case in WEB_SEARCH_CASES],
)
def test_web_search(
    cfg: dict[str, Any],
    model: Model | None,
    kind: Any,
    creds: tuple[str | None, str | None],
    effective: str,
    backend: str,
    reason: str,
) -> None:
    d = plan(cfg, model=model, kind=kind, reg=registry(*creds)).decisions["web_search"]
    assert (d.effective, d.effective_backend, d.reason) == (effective, backend, reason)
    assert d.requested_backend == (cfg.get("webSearch", {}).get("backend") or "auto")


def test_web_search_executor_labels() -> None:
    d = plan(ws("sidecar", {**SIDECAR, "thinkingLevel": "high"})).decisions["web_search"]
    assert (d.executor, d.executor_effort) == ("openai-codex/gpt-5.4", "high")
    d = plan(ws("sidecar")).decisions["web_search"]
    assert (d.executor, d.executor_effort) == ("—", "—")


def test_web_search_sidecar_name_conflict_and_search_path_warning() -> None:
    foreign = tools(foreign=["openai_web_search"])
    d = plan(ws("sidecar", SIDECAR), snapshot=foreign).decisions["web_search"]
    assert (d.effective, d.effective_backend, d.reason) == (
        "unavailable",
        "unavailable",
        "conflicting-tool-name",
    )
    # A native decision is not affected by the sidecar tool's owner.
    d = plan(ws("native"), snapshot=foreign).decisions["web_search"]
    assert (d.effective, d.effective_backend, d.reason) == ("active", "native", "")
    # A foreign `web_search` tool is a duplicate search path: warning, still active.
    dup = tools(extra_foreign=["web_search"])
    d = plan(ws("native"), snapshot=dup).decisions["web_search"]
    assert (d.effective, d.reason) == ("active", "conflicting-tool-name")
    # ...but an unavailable row keeps its own reason.
    d = plan(ws("native"), snapshot=dup, kind="mcp").decisions["web_search"]
    assert d.reason == "no-payload-hook"


REMOTE_CASES = [
    ("off", {}, CODEX, "embedded", ("oauth", None), "off", ""),
    (
        "model-missing-first",
        None,
        None,
        "mcp",
        ("oauth", None),
        "unavailable",
        "current-model-missing",
    ),
    ("mcp-no-hook", None, CODEX, "mcp", ("oauth", None), "unavailable", "no-payload-hook"),
    (
        "provider",
        None,
        THIRD_PARTY,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unsupported-provider",
    ),
    (
        "api",
        None,
        replace(CODEX, api="openai-responses"),
        "embedded",
        ("oauth", None),
        "unavailable",
        "unsupported-api",
    ),
    (
        "endpoint",
        None,
        UNOFFICIAL_CODEX,
        "embedded",
        ("oauth", None),
        "unavailable",
        "unofficial-endpoint",
    ),
    (
        "credential",
        None,
        CODEX,
        "embedded",
        ("api_key", None),
        "unavailable",
        "credential-mismatch",
    ),
    (
        "api-key-route",
        None,
        OPENAI,
        "embedded",
        (None, "api_key"),
        "unavailable",
        "unsupported-provider",
    ),
    ("ok", None, CODEX, "embedded", ("oauth", None), "active", ""),
]


@pytest.mark.parametrize(
    ("cfg", "model", "kind", "creds", "effective", "reason"),
    [case[1:] for case in REMOTE_CASES],
    ids=[case[0] for case in REMOTE_CASES],
)
def test_remote_compaction(
    cfg: dict[str, Any] | None,
    model: Model | None,
    kind: Any,
    creds: tuple[str | None, str | None],
    effective: str,
    reason: str,
) -> None:
    conf = cfg if cfg is not None else {"remoteCompaction": {"enabled": True}}
    d = plan(conf, model=model, kind=kind, reg=registry(*creds)).decisions["remote_compaction"]
    assert (d.effective, d.reason) == (effective, reason)


IMAGE_ON = {"imageGeneration": {"enabled": True}, "toolDiscovery": {"enabled": False}}
IMAGE_CASES = [
    ("off", {}, CODEX, ("oauth", "api_key"), "off", "—", ""),
    (
        "model-missing",
        IMAGE_ON,
        None,
        ("oauth", "api_key"),
        "unavailable",
        "—",
        "current-model-missing",
    ),
    ("no-auth", IMAGE_ON, THIRD_PARTY, (None, None), "unavailable", "—", "missing-openai-auth"),
    (
        "credential",
        IMAGE_ON,
        THIRD_PARTY,
        ("api_key", "oauth"),
        "unavailable",
        "—",
        "credential-mismatch",
    ),
    ("current-codex", IMAGE_ON, CODEX, ("oauth", "api_key"), "active", "codex-oauth", ""),
    ("current-openai", IMAGE_ON, OPENAI, ("oauth", "api_key"), "active", "api-key", ""),
    ("third-party-codex", IMAGE_ON, THIRD_PARTY, ("oauth", "api_key"), "active", "codex-oauth", ""),
    ("third-party-api-key", IMAGE_ON, THIRD_PARTY, (None, "api_key"), "active", "api-key", ""),
]


@pytest.mark.parametrize(
    ("cfg", "model", "creds", "effective", "backend", "reason"),
    [case[1:] for case in IMAGE_CASES],
    ids=[case[0] for case in IMAGE_CASES],
)
def test_image_generation(
    cfg: dict[str, Any],
    model: Model | None,
    creds: tuple[str | None, str | None],
    effective: str,
    backend: str,
    reason: str,
) -> None:
    d = plan(cfg, model=model, reg=registry(*creds)).decisions["image_generation"]
    assert (d.effective, d.backend, d.reason) == (effective, backend, reason)


def test_image_conflict_keeps_backend() -> None:
    d = plan(IMAGE_ON, snapshot=tools(foreign=["openai_generate_image"])).decisions[
        "image_generation"
    ]
    assert (d.effective, d.backend, d.reason) == (
        "unavailable",
        "codex-oauth",
        "conflicting-tool-name",
    )
    # A conflict never overrides a non-active decision's own reason.
    d = plan(IMAGE_ON, model=None, snapshot=tools(foreign=["openai_generate_image"])).decisions[
        "image_generation"
    ]
    assert d.reason == "current-model-missing"


CU_ON = {"computerUse": {"enabled": True}}
CU_CASES = [
    ("off", {}, "darwin", True, CODEX, None, "off", ""),
    (
        "platform-first",
        CU_ON,
        "linux",
        False,
        None,
        "missing-computer-use-helper",
        "unavailable",
        "unsupported-platform",
    ),
    ("ui", CU_ON, "darwin", False, None, None, "unavailable", "no-interactive-ui"),
    (
        "model",
        CU_ON,
        "darwin",
        True,
        None,
        "node-repl-unavailable",
        "unavailable",
        "current-model-missing",
    ),
    (
        "image-input",
        CU_ON,
        "darwin",
        True,
        TEXT_ONLY,
        "node-repl-unavailable",
        "unavailable",
        "model-has-no-image-input",
    ),
    *[
        (f"runtime-{r}", CU_ON, "darwin", True, CODEX, r, "unavailable", r)
        for r in COMPUTER_USE_RUNTIME_REASONS
    ],
    ("ok", CU_ON, "darwin", True, CODEX, None, "active", ""),
]


@pytest.mark.parametrize(
    ("cfg", "platform", "ui", "model", "runtime", "effective", "reason"),
    [case[1:] for case in CU_CASES],
    ids=[case[0] for case in CU_CASES],
)
def test_computer_use(
    cfg: dict[str, Any],
    platform: str,
    ui: bool,
    model: Model | None,
    runtime: str | None,
    effective: str,
    reason: str,
) -> None:
    conf = {**cfg, "toolDiscovery": {"enabled": False}}
    d = plan(conf, platform=platform, ui=ui, model=model, cu_reason=runtime).decisions[
        "computer_use"
    ]
    assert (d.effective, d.reason) == (effective, reason)
    assert d.transport == ("node-repl" if effective == "active" else "—")


def test_computer_use_any_member_conflict_disables_group() -> None:
    d = plan(CU_ON, snapshot=tools(foreign=["computer_use_scroll"])).decisions["computer_use"]
    assert (d.effective, d.transport, d.reason) == (
        "unavailable",
        "node-repl",
        "conflicting-tool-name",
    )


LEGACY_CASES = [
    # (id, capability, config, foreign, allow-filtered, shell available, effective, reason)
    ("patch-off", "apply_patch", {}, [], [], True, "off", ""),
    ("patch-on", "apply_patch", {"applyPatch": {"enabled": True}}, [], [], True, "active", ""),
    (
        "patch-foreign",
        "apply_patch",
        {"applyPatch": {"enabled": True}},
        ["apply_patch"],
        [],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "patch-absent",
        "apply_patch",
        {"applyPatch": {"enabled": True}},
        [],
        ["apply_patch"],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    ("shell-off", "shell_sessions", {}, ["exec_command"], [], False, "off", ""),
    (
        "shell-conflict-first",
        "shell_sessions",
        {"shellSessions": {"enabled": True}},
        ["write_stdin"],
        [],
        False,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "shell-absent",
        "shell_sessions",
        {"shellSessions": {"enabled": True}},
        [],
        ["exec_command"],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "shell-unavailable",
        "shell_sessions",
        {"shellSessions": {"enabled": True}},
        [],
        [],
        False,
        "unavailable",
        "shell-unavailable",
    ),
    (
        "shell-on",
        "shell_sessions",
        {"shellSessions": {"enabled": True}},
        [],
        [],
        True,
        "active",
        "",
    ),
    ("code-off", "code_mode", {}, ["exec"], [], True, "off", ""),
    (
        "code-foreign",
        "code_mode",
        {"codeMode": {"enabled": True}},
        ["wait"],
        [],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "code-absent",
        "code_mode",
        {"codeMode": {"enabled": True}},
        [],
        ["exec"],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    ("code-on", "code_mode", {"codeMode": {"enabled": True}}, [], [], True, "active", ""),
    ("discovery-off", "tool_discovery", {}, ["find_tools"], [], True, "off", ""),
    (
        "discovery-foreign",
        "tool_discovery",
        {"toolDiscovery": {"enabled": True}},
        ["find_tools"],
        [],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "discovery-absent",
        "tool_discovery",
        {"toolDiscovery": {"enabled": True}},
        [],
        ["find_tools"],
        True,
        "unavailable",
        "conflicting-tool-name",
    ),
    (
        "discovery-on",
        "tool_discovery",
        {"toolDiscovery": {"enabled": True}},
        [],
        [],
        True,
        "active",
        "",
    ),
]


@pytest.mark.parametrize(
    ("capability", "cfg", "foreign", "filtered", "shell", "effective", "reason"),
    [case[1:] for case in LEGACY_CASES],
    ids=[case[0] for case in LEGACY_CASES],
)
def test_legacy_switch_rows(
    capability: str,
    cfg: dict[str, Any],
    foreign: list[str],
    filtered: list[str],
    shell: bool,
    effective: str,
    reason: str,
) -> None:
    snap = tools(foreign=foreign)
    if filtered:
        allowed = [name for name in snap.names if name not in filtered]
        snap = tools(foreign=foreign, allow=allowed)
    d = plan(cfg, snapshot=snap, shell=shell).decisions[capability]
    assert (d.effective, d.reason) == (effective, reason)
