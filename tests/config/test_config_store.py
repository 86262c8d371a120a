"""ConfigStore: reads, last-known-good, revisions, atomic save, the lock directory protocol."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pct_runtime.config import (
    ConfigSaveError,
    ConfigStore,
    ExecutionConfig,
    ExecutionRule,
    default_config,
    reload_file,
    reload_message,
    reload_store,
    to_json_obj,
)
from pct_runtime.config import lock as config_lock
from pct_runtime.config.errors import ConfigReadError

STALE = "Could not save: the configuration file changed; reload and review the draft."
ADVICE = "If no other Pi process with this Toolkit is saving, remove that directory and retry."
INVALID_APPLY_PATCH = '{"webSearch":{"enabled":true},"applyPatch":{"enabled":"yes"}}\n'


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "pi-codex-toolkit.json"


def store_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    assert not config_lock.pid_running(child.pid)
    return child.pid


def write_owner(config: Path, pid: int, token: str | None = None) -> Path:
    lock_path = Path(f"{config}.lock")
    lock_path.mkdir()
    record: dict[str, object] = {"pid": pid}
    if token is not None:
        record["token"] = token
    (lock_path / "owner").write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return lock_path


def debug_on() -> object:
    return default_config().model_copy(update={"debug": True})


def temps(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


# -- reads ---------------------------------------------------------------------------------


def test_missing_file_is_defaults_and_counts_as_valid(path: Path) -> None:
    store = ConfigStore(path)
    assert store.has_last_known_good is False
    result = store.read()
    assert result.config == default_config()
    assert result.revision == "missing"
    assert result.error is None
    assert result.raw == {}
    assert result.has_last_known_good is True


def test_invalid_config_detail_and_file_untouched(path: Path) -> None:
    store_file(path, INVALID_APPLY_PATCH)
    store = ConfigStore(path)
    result = store.read()
    assert result.error == ConfigReadError(
        "invalid-config", "applyPatch.enabled must be true or false"
    )
    assert result.config == default_config()
    assert result.has_last_known_good is False
    assert result.revision == hashlib.sha256(INVALID_APPLY_PATCH.encode()).hexdigest()
    assert path.read_text() == INVALID_APPLY_PATCH


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"debug": secret-value', "line 1 column 11"),
        ("{\n  invalid", "line 2 column 3"),
        ("", "line 1 column 1"),
        ("NaN", None),
        ('{"debug": Infinity}', None),
    ],
)
def test_invalid_json_says_where_but_never_quotes_the_file(
    path: Path, text: str, detail: str | None
) -> None:
    store_file(path, text)
    result = ConfigStore(path).read()
    assert result.error == ConfigReadError("invalid-json", detail)
    assert "secret" not in str(result.error)


def test_invalid_utf8_is_invalid_json(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"debug": "\xff"}')
    assert ConfigStore(path).read().error == ConfigReadError("invalid-json", "not UTF-8 at byte 11")


def test_read_failure_reports_errno_name(path: Path) -> None:
    path.mkdir(parents=True)
    result = ConfigStore(path).read()
    assert result.error == ConfigReadError("config-read-failed", "EISDIR")
    assert str(result.error) == "config-read-failed (EISDIR)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_read_failure_eacces(path: Path) -> None:
    store_file(path, "{}")
    path.chmod(0)
    try:
        assert ConfigStore(path).read().error == ConfigReadError("config-read-failed", "EACCES")
    finally:
        path.chmod(0o644)


def test_last_known_good_survives_failed_reads_and_errors_do_not_linger(path: Path) -> None:
    store = ConfigStore(path)
    store.save(debug_on())
    path.write_text("{invalid secret-value")
    result = store.read()
    assert result.config.debug is True
    assert result.error == ConfigReadError("invalid-json", "line 1 column 2")
    assert result.has_last_known_good is True
    # A save after a failed read is refused and the file stays as the user left it.
    with pytest.raises(ConfigSaveError) as info:
        store.save(default_config())
    assert info.value.code == "unreadable"
    assert str(info.value) == "Refusing to overwrite an unreadable configuration file."
    assert path.read_text() == "{invalid secret-value"
    # A later invalid-config read replaces the error; a valid one clears it.
    path.write_text(INVALID_APPLY_PATCH)
    assert store.read().error == ConfigReadError(
        "invalid-config", "applyPatch.enabled must be true or false"
    )
    path.write_text('{"debug":false,"future":1}\n')
    result = store.read()
    assert result.error is None
    assert result.config == default_config()
    assert result.raw == {"debug": False, "future": 1}


def test_cold_invalid_read_uses_defaults(path: Path) -> None:
    store_file(path, "not-json")
    result = ConfigStore(path).read()
    assert result.config == default_config()
    assert result.has_last_known_good is False


def test_refuses_to_save_over_a_rejected_section(path: Path) -> None:
    stored = '{"webSearch":"x","futureRoot":"keep"}\n'
    store_file(path, stored)
    store = ConfigStore(path)
    assert store.read().error == ConfigReadError("invalid-config", "webSearch must be an object")
    with pytest.raises(ConfigSaveError, match="Refusing"):
        store.save(default_config())
    assert path.read_text() == stored


# -- messages ------------------------------------------------------------------------------


def test_reload_messages() -> None:
    assert reload_message(None, False) == "Pi Codex Toolkit configuration reloaded."
    error = ConfigReadError("invalid-config", "applyPatch.enabled must be true or false")
    assert reload_message(error, False) == (
        "Pi Codex Toolkit config error: invalid-config (applyPatch.enabled must be true or false); "
        "using all-off defaults."
    )
    assert reload_message(ConfigReadError("invalid-json"), True) == (
        "Pi Codex Toolkit config error: invalid-json; using last known good settings."
    )


def test_reload_store_uses_last_known_good_wording(path: Path) -> None:
    store = ConfigStore(path)
    assert reload_store(store) == ("Pi Codex Toolkit configuration reloaded.", True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[]")
    assert reload_store(store) == (
        "Pi Codex Toolkit config error: invalid-config (configuration must be a JSON object); "
        "using last known good settings.",
        False,
    )
    assert reload_file(path) == (
        "Pi Codex Toolkit config error: invalid-config (configuration must be a JSON object); "
        "using all-off defaults.",
        False,
    )


# -- saves ---------------------------------------------------------------------------------


def test_save_writes_golden_default_and_returns_revision(path: Path) -> None:
    # test_config_schema pins this text byte for byte against the spec's golden document.
    golden = json.dumps(to_json_obj(default_config()), indent=2) + "\n"
    store = ConfigStore(path)
    revision = store.save(default_config(), store.read().revision)
    assert path.read_text() == golden
    assert revision == hashlib.sha256(golden.encode()).hexdigest()
    assert store.revision == revision
    assert store.read().revision == revision
    assert os.listdir(path.parent) == ["pi-codex-toolkit.json"]


def test_save_fills_absent_sections_and_keeps_unknown_root_keys(path: Path) -> None:
    store_file(path, '{"futureRoot":"keep","debug":true}\n')
    store = ConfigStore(path)
    store.read()
    store.save(default_config())
    saved = json.loads(path.read_text())
    assert list(saved)[:2] == ["futureRoot", "debug"]
    assert saved["futureRoot"] == "keep"
    assert saved["debug"] is False
    assert store.current().raw == saved


def test_a_store_that_never_read_keeps_the_unknown_fields_on_disk(path: Path) -> None:
    store_file(path, '{"futureRoot":"keep","applyPatch":{"enabled":true,"futureNested":1}}\n')
    store = ConfigStore(path)
    store.save(debug_on())
    saved = json.loads(path.read_text())
    assert saved["futureRoot"] == "keep"
    assert saved["applyPatch"] == {"enabled": False, "futureNested": 1}
    assert saved["debug"] is True


def test_unknown_fields_round_trip_through_the_store(path: Path) -> None:
    store = ConfigStore(path)
    store.save(default_config())
    raw = json.loads(path.read_text())
    raw["futureRoot"] = "keep"
    raw["webSearch"]["futureNested"] = {"keep": True}
    raw["webSearch"]["sidecarModel"] = {
        "provider": "openai",
        "model": "gpt-5",
        "futureModelKey": "k",
    }
    for key in [
        "remoteCompaction",
        "imageGeneration",
        "applyPatch",
        "computerUse",
        "shellSessions",
        "codeMode",
        "toolDiscovery",
    ]:
        raw[key]["futureNested"] = "keep"
    path.write_text(json.dumps(raw) + "\n")
    read = store.read()
    draft = read.config.model_copy(
        update={
            "web_search": read.config.web_search.model_copy(
                update={"enabled": True, "context_size": "high"}
            ),
            "tool_discovery": read.config.tool_discovery.model_copy(
                update={"enabled": True, "deferred": ("exec_command", "wait")}
            ),
        }
    )
    store.save(draft, read.revision)
    saved = json.loads(path.read_text())
    assert saved["futureRoot"] == "keep"
    assert saved["webSearch"]["futureNested"] == {"keep": True}
    assert saved["webSearch"]["sidecarModel"]["futureModelKey"] == "k"
    assert saved["webSearch"]["contextSize"] == "high"
    assert saved["toolDiscovery"] == {
        "enabled": True,
        "deferred": ["exec_command", "wait"],
        "futureNested": "keep",
    }
    for key in [
        "remoteCompaction",
        "imageGeneration",
        "applyPatch",
        "computerUse",
        "shellSessions",
        "codeMode",
    ]:
        assert saved[key]["futureNested"] == "keep"
    assert temps(path.parent) == []


def test_execution_save_rule_through_the_store(path: Path) -> None:
    store = ConfigStore(path)
    store.save(
        default_config().model_copy(
            update={
                "apply_patch": default_config().apply_patch.model_copy(update={"enabled": True})
            }
        )
    )
    config = store.read().config.model_copy(
        update={
            "code_mode": default_config().code_mode.model_copy(update={"approval_mode": "always"}),
            "execution": ExecutionConfig(
                rules=[ExecutionRule(id="grok", match="grok*", patch=True, shell=True, code=False)]
            ),
        }
    )
    store.save(config, store.revision)
    saved = json.loads(path.read_text())
    assert saved["applyPatch"] == {}
    assert saved["shellSessions"] == {}
    assert saved["codeMode"] == {"approvalMode": "always"}
    assert saved["execution"]["rules"] == [
        {"id": "grok", "match": "grok*", "patch": True, "shell": True, "code": False}
    ]
    assert store.read().config.apply_patch.enabled is False


def test_invalid_draft_is_rejected_before_writing(path: Path) -> None:
    from pct_runtime.config import ConfigValidationError

    store = ConfigStore(path)
    rules = [ExecutionRule(id="a", match="*", patch=True, shell=False, code=False)] * 2
    with pytest.raises(ConfigValidationError, match=r"^execution\.rules\[1\]\.id must be unique$"):
        store.save(default_config().model_copy(update={"execution": ExecutionConfig(rules=rules)}))
    assert not path.exists()


def test_stale_revision_leaves_the_file_unchanged(path: Path) -> None:
    store = ConfigStore(path)
    revision = store.save(debug_on())
    path.write_text(json.dumps({"debug": False}, indent=2) + "\n")
    with pytest.raises(ConfigSaveError) as info:
        store.save(debug_on(), revision)
    assert info.value.code == "stale-revision"
    assert str(info.value) == STALE
    assert json.loads(path.read_text()) == {"debug": False}
    # `missing` is a revision too: a file that appeared since is a change.
    other = ConfigStore(path.with_name("other.json"))
    other.read()
    path.with_name("other.json").write_text("{}")
    with pytest.raises(ConfigSaveError, match="changed"):
        other.save(debug_on(), "missing")


def test_two_stores_in_one_process_serialize(path: Path) -> None:
    import threading

    store_file(path, "{}\n")
    a, b = ConfigStore(path), ConfigStore(path)
    ra, rb = a.read().revision, b.read().revision
    outcomes: list[str] = []

    def save(store: ConfigStore, revision: str, debug: bool) -> None:
        try:
            store.save(default_config().model_copy(update={"debug": debug}), revision)
            outcomes.append("ok")
        except ConfigSaveError as exc:
            outcomes.append(exc.code)

    threads = [
        threading.Thread(target=save, args=(a, ra, True)),
        threading.Thread(target=save, args=(b, rb, False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ok", "stale-revision"]


def test_save_keeps_the_file_mode(path: Path) -> None:
    store_file(path, "{}\n")
    path.chmod(0o600)
    store = ConfigStore(path)
    store.save(debug_on(), store.read().revision)
    assert path.stat().st_mode & 0o777 == 0o600


def test_failed_rename_removes_the_temp_and_keeps_the_target(path: Path) -> None:
    store = ConfigStore(path)  # never read: the target is a directory
    path.mkdir(parents=True)
    (path / "occupant.txt").write_text("occupied")
    with pytest.raises(ConfigSaveError) as info:
        store.save(default_config())
    assert info.value.code == "unreadable"
    assert temps(path.parent) == []
    assert os.listdir(path) == ["occupant.txt"]


def test_write_failure_is_write_failed_and_cleans_up(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ConfigStore(path)
    store.save(default_config())
    before = path.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ConfigSaveError) as info:
        store.save(debug_on(), store.revision)
    assert info.value.code == "write-failed"
    assert str(info.value) == (
        "Could not save Pi Codex Toolkit configuration; the existing file was left untouched."
    )
    assert path.read_bytes() == before
    assert temps(path.parent) == []
    assert not Path(f"{path}.lock").exists()


def test_lock_directory_that_cannot_be_created_is_write_failed(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ConfigStore(path)
    store.save(default_config())
    real_mkdir = os.mkdir

    def refusing_mkdir(target: object, *args: object, **kwargs: object) -> None:
        if ".lock" in str(target):
            raise PermissionError(13, "Permission denied")
        real_mkdir(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", refusing_mkdir)
    with pytest.raises(ConfigSaveError) as info:
        store.save(debug_on(), store.revision)
    assert info.value.code == "write-failed"
    assert json.loads(path.read_text())["debug"] is False


def test_refuses_to_overwrite_a_file_that_became_invalid(path: Path) -> None:
    store = ConfigStore(path)
    store.save(default_config())
    path.write_text("{broken")
    with pytest.raises(ConfigSaveError) as info:
        store.save(debug_on())  # no expected revision: still never over invalid JSON
    assert info.value.code == "unreadable"
    assert path.read_text() == "{broken"


def test_stale_temps_of_dead_writers_are_swept(path: Path) -> None:
    store = ConfigStore(path)
    store.save(default_config())
    pid = dead_pid()
    leftover = path.parent / f".{path.name}.{pid}.0b1c2d3e-aaaa-bbbb-cccc-000000000000.tmp"
    leftover.write_text("{half")
    live = path.parent / f".{path.name}.1.0b1c2d3e-aaaa-bbbb-cccc-000000000000.tmp"
    live.write_text("{someone else")
    staging = path.parent / f"{path.name}.lock.{pid}.0b1c2d3e-aaaa-bbbb-cccc-000000000000"
    staging.mkdir()
    (staging / "owner").write_text("{}")
    store.save(debug_on(), store.revision)
    assert not leftover.exists()
    assert not staging.exists()
    assert live.exists()  # pid 1 is running: not ours to remove


# -- the lock protocol ---------------------------------------------------------------------


def test_lock_held_by_a_live_foreign_owner(path: Path) -> None:
    store_file(path, "{}\n")
    lock_path = write_owner(path, 1, "foreign-token")
    store = ConfigStore(path)
    store.read()
    with pytest.raises(ConfigSaveError) as info:
        store.save(default_config())
    assert info.value.code == "lock-held"
    assert str(info.value) == (
        f"Could not save: the configuration lock {lock_path} is held by pid 1 (running). {ADVICE}"
    )
    assert '"token":"foreign-token"' in (lock_path / "owner").read_text()
    assert path.read_text() == "{}\n"


def test_lock_held_by_a_live_owner_process(path: Path) -> None:
    store_file(path, "{}\n")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock_path = write_owner(path, sleeper.pid, "sleeper")
        store = ConfigStore(path)
        store.read()
        with pytest.raises(ConfigSaveError, match=rf"held by pid {sleeper.pid} \(running\)"):
            store.save(default_config())
        assert (lock_path / "owner").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_same_process_live_token_fails_closed(path: Path) -> None:
    store_file(path, "{}\n")
    lock_path = write_owner(path, os.getpid(), "live-owner-token")
    config_lock.register_live_token("live-owner-token")
    try:
        store = ConfigStore(path)
        store.read()
        with pytest.raises(ConfigSaveError) as info:
            store.save(default_config())
        assert str(info.value) == (
            f"Could not save: the configuration lock {lock_path} is held by pid {os.getpid()} "
            f"(running). {ADVICE}"
        )
        assert "live-owner-token" in (lock_path / "owner").read_text()
    finally:
        config_lock.forget_token("live-owner-token")


def test_leftover_lock_of_this_process_is_cleared(path: Path) -> None:
    store_file(path, "{}\n")
    write_owner(path, os.getpid())
    store = ConfigStore(path)
    store.save(debug_on())
    assert json.loads(path.read_text())["debug"] is True
    assert not Path(f"{path}.lock").exists()


def test_dead_owner_is_reclaimed(path: Path) -> None:
    store_file(path, "{}\n")
    write_owner(path, dead_pid(), "dead-owner")
    store = ConfigStore(path)
    store.read()
    store.save(debug_on(), store.revision)
    assert json.loads(path.read_text())["debug"] is True
    assert os.listdir(path.parent) == ["pi-codex-toolkit.json"]


def test_dead_legacy_file_lock_is_converted(path: Path) -> None:
    store_file(path, "{}\n")
    Path(f"{path}.lock").write_text(json.dumps({"pid": dead_pid(), "token": "dead-file"}) + "\n")
    store = ConfigStore(path)
    store.save(debug_on())
    assert json.loads(path.read_text())["debug"] is True
    assert not Path(f"{path}.lock").exists()


def test_empty_leftover_reclaim_is_recovered(path: Path) -> None:
    store_file(path, "{}\n")
    lock_path = write_owner(path, dead_pid(), "dead-owner")
    (lock_path / "reclaim").mkdir()
    store = ConfigStore(path)
    store.read()
    store.save(debug_on(), store.revision)
    assert json.loads(path.read_text())["debug"] is True
    assert not lock_path.exists()


def test_reclaim_with_an_owner_is_refused(path: Path) -> None:
    store_file(path, "{}\n")
    pid = dead_pid()
    lock_path = write_owner(path, pid, "dead-owner")
    (lock_path / "reclaim").mkdir()
    record = json.dumps({"pid": pid, "token": "dead-reclaim"}, separators=(",", ":")) + "\n"
    (lock_path / "reclaim" / "owner").write_text(record)
    store = ConfigStore(path)
    store.read()
    with pytest.raises(ConfigSaveError) as info:
        store.save(default_config())
    assert info.value.code == "lock-held"
    assert str(info.value) == (
        f"Could not save: the configuration lock {lock_path} is held by pid {pid} (not running). "
        f"{ADVICE}"
    )
    assert path.read_text() == "{}\n"
    assert (lock_path / "reclaim" / "owner").read_text() == record


def test_unreadable_owner_record_is_refused(path: Path) -> None:
    store_file(path, "{}\n")
    lock_path = Path(f"{path}.lock")
    lock_path.mkdir()
    (lock_path / "owner").write_text("not-json\n")
    store = ConfigStore(path)
    store.read()
    with pytest.raises(ConfigSaveError) as info:
        store.save(default_config())
    assert str(info.value) == (
        f"Could not save: the configuration lock {lock_path} exists but has no readable owner "
        f"record. {ADVICE}"
    )
    assert (lock_path / "owner").read_text() == "not-json\n"


def test_release_leaves_a_lock_whose_token_changed(path: Path) -> None:
    lock_path = Path(f"{path}.lock")
    path.parent.mkdir(parents=True)
    with config_lock.process_lock(str(lock_path)):
        token = config_lock.acquire(lock_path)
        owner = json.loads((lock_path / "owner").read_text())
        assert owner == {"pid": os.getpid(), "token": token}
        (lock_path / "owner").write_text(json.dumps({"pid": os.getpid(), "token": "stolen"}) + "\n")
        config_lock.release(lock_path, token)
    assert "stolen" in (lock_path / "owner").read_text()
