"""A spooled row is honoured only with its authenticator: a job that can write the agent dir
must never get `pct undo` to delete or rewrite a file, and every failing row is quarantined
and said once."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from pct_runtime.journal import Journal, JournalQuery, spool
from tests.journal.helpers import PATCH, run_pct, sign_row


def _forged_add(victim: Path, call_id: str = "c-00000000aa") -> dict[str, object]:
    """A row saying a patch added `victim` with exactly its current bytes: the old spool
    inserted it, and `pct undo` then deleted the file."""
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()
    mode = victim.stat().st_mode & 0o7777
    return {
        "v": 1,
        "call_id": call_id,
        "time": 4_000_000_000.0,  # the newest row
        "tool": "apply_patch",
        "transport": "cli",
        "summary": "add victim",
        "outcome": "ok",
        "error_code": None,
        "duration_ms": 1.0,
        "result_text": "Success.",
        "patch_files": [[str(victim), None, [digest, mode]]],
    }


@pytest.fixture
def patched(tmp_path: Path) -> tuple[Path, Path]:
    """An agent dir with one real `pct apply-patch` row (so the key exists), and its work dir."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0, done.stderr
    assert run_pct(agent, "log").returncode == 0  # inserted: the spool is empty again
    return agent, work


def _spool(agent: Path) -> Path:
    return agent / "pct" / "journal-spool"


def _write(agent: Path, name: str, data: bytes) -> None:
    _spool(agent).mkdir(exist_ok=True)
    (_spool(agent) / name).write_bytes(data)


@pytest.mark.parametrize("mac", ["none", "wrong-key", "edited"])
def test_pct_undo_never_honours_a_forged_row(
    patched: tuple[Path, Path], tmp_path: Path, mac: str
) -> None:
    agent, _work = patched
    victim = tmp_path / "users-file.txt"
    victim.write_text("precious\n")
    row = _forged_add(victim)
    if mac == "wrong-key":
        row["mac"] = spool.mac_of(os.urandom(32), row)
    elif mac == "edited":  # signed by pct, then its path changed
        row = {**sign_row(agent, {**row, "patch_files": []}), "patch_files": row["patch_files"]}
    _write(agent, "c-00000000aa.json", json.dumps(row).encode())
    undo = run_pct(agent, "undo")
    problem = "no authenticator" if mac == "none" else "bad authenticator"
    assert victim.read_text() == "precious\n"
    assert undo.stderr.startswith(
        "pct: 1 spooled journal row failed its check and was quarantined: "
        f"c-00000000aa.json ({problem})\n"
    ), undo.stderr
    assert undo.returncode == 0  # it undid the real patch, the only one the journal has
    assert (patched[1] / "a.txt").read_text() == "one\n"
    assert not (_spool(agent) / "c-00000000aa.json").exists()
    (bad,) = (_spool(agent) / "quarantine").iterdir()
    assert bad.name.startswith("c-00000000aa.json.")
    assert bad.name.endswith(".bad")
    again = run_pct(agent, "log")
    assert "quarantined" not in again.stderr  # said once
    assert "journal-check" in again.stdout
    assert "spool-quarantined" in again.stdout
    assert run_pct(agent, "undo", "c-00000000aa").returncode == 1
    assert victim.read_text() == "precious\n"


def test_a_signed_row_is_ingested_and_a_forged_one_beside_it_is_not(
    patched: tuple[Path, Path], tmp_path: Path
) -> None:
    agent, _work = patched
    victim = tmp_path / "v.txt"
    victim.write_text("v\n")
    good = sign_row(agent, {**_forged_add(victim, "c-00000000bb"), "patch_files": []})
    _write(agent, "c-00000000bb.json", json.dumps(good).encode())
    _write(agent, "c-00000000cc.json", json.dumps(_forged_add(victim, "c-00000000cc")).encode())
    with Journal.open(agent) as journal:
        ids = {r.call_id for r in journal.query(JournalQuery())}
        (notice,) = journal.take_notices()
    assert "c-00000000bb" in ids
    assert "c-00000000cc" not in ids
    assert "c-00000000cc.json (no authenticator)" in notice


@pytest.mark.parametrize(
    ("name", "make", "problem"),
    [
        ("c-0000000001.json", lambda a, r: b"{not json", "unparsable"),
        ("c-0000000002.json", lambda a, r: b"[1, 2]", "not a row"),
        ("c-0000000003.json", lambda a, r: b" " * (spool.MAX_SPOOL_BYTES + 1), "oversize"),
        # Signed, but a field of the wrong type: never inserted as it is.
        (
            "c-0000000004.json",
            lambda a, r: json.dumps(sign_row(a, {**r, "call_id": "c-0000000004", "tool": 7})),
            "wrong type",
        ),
        (
            "c-0000000006.json",
            lambda a, r: json.dumps({**r, "mac": "\u00e9" * 64}),
            "bad authenticator",
        ),
        # A valid row copied under another call's name.
        ("c-0000000005.json", lambda a, r: json.dumps(sign_row(a, r)), "not a row of this pct"),
        ("notes.json", lambda a, r: b"{}", "not a name pct writes"),
    ],
)
def test_every_failing_row_is_quarantined_with_its_reason(
    patched: tuple[Path, Path], tmp_path: Path, name: str, make: object, problem: str
) -> None:
    agent, _work = patched
    victim = tmp_path / "v.txt"
    victim.write_text("v\n")
    assert callable(make)
    data = make(agent, _forged_add(victim, "c-0000000099"))
    _write(agent, name, data if isinstance(data, bytes) else data.encode())
    with Journal.open(agent) as journal:
        (notice,) = journal.take_notices()
        tools = [r.tool for r in journal.query(JournalQuery())]
    assert notice.endswith(f"{name} ({problem})")
    assert tools == ["journal-check", "apply_patch"]
    assert [p.name for p in _spool(agent).iterdir()] == ["quarantine"]


def test_a_link_in_the_spool_is_quarantined_never_followed(
    patched: tuple[Path, Path], tmp_path: Path
) -> None:
    agent, _work = patched
    target = tmp_path / "elsewhere.json"
    victim = tmp_path / "v.txt"
    victim.write_text("v\n")
    target.write_text(json.dumps(sign_row(agent, _forged_add(victim, "c-00000000dd"))))
    _spool(agent).mkdir(exist_ok=True)
    (_spool(agent) / "c-00000000dd.json").symlink_to(target)
    with Journal.open(agent) as journal:
        (notice,) = journal.take_notices()
        assert journal.get("c-00000000dd") is None
    assert "c-00000000dd.json (not a regular file)" in notice
    assert target.exists()  # the link moved, never what it points to
    assert victim.read_text() == "v\n"


def test_the_key_is_private_made_once_and_never_read_through_a_link(tmp_path: Path) -> None:
    state = tmp_path / "pct"
    state.mkdir(mode=0o700)
    fd = spool.open_dir(state)
    try:
        keys: list[bytes | None] = []
        threads = [
            threading.Thread(target=lambda: keys.append(spool.load_key(fd, create=True)))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(set(keys)) == 1
        assert len(keys[0] or b"") == 32
        key_file = state / spool.KEY_NAME
        assert oct(key_file.stat().st_mode & 0o777) == "0o600"
        assert sorted(p.name for p in state.iterdir()) == [spool.KEY_NAME]  # no temp left
        key_file.chmod(0o644)
        with pytest.raises(spool.SpoolError, match="readable by others"):
            spool.load_key(fd, create=True)
        key_file.unlink()
        planted = tmp_path / "planted-key"
        planted.write_bytes(b"k" * 32)
        planted.chmod(0o600)
        key_file.symlink_to(planted)
        with pytest.raises(OSError, match="symbolic links"):  # ELOOP: O_NOFOLLOW
            spool.load_key(fd, create=True)
        assert planted.read_bytes() == b"k" * 32
    finally:
        os.close(fd)


def test_a_planted_key_link_stops_the_spool_and_the_patch_still_applies(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    (agent / "pct").mkdir(parents=True, mode=0o700)
    planted = tmp_path / "attacker-key"
    planted.write_bytes(b"k" * 32)
    (agent / "pct" / spool.KEY_NAME).symlink_to(planted)
    done = run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH)
    assert done.returncode == 0
    assert (work / "a.txt").read_text() == "two\n"
    assert "the call was not recorded" in done.stderr
    assert not _spool(agent).exists() or not list(_spool(agent).glob("*.json"))


def test_a_runtime_writer_reports_a_quarantined_row_once(
    patched: tuple[Path, Path], tmp_path: Path
) -> None:
    from pct_runtime.journal import JournalWriter
    from tests.journal.helpers import make_record

    agent, _work = patched
    victim = tmp_path / "v.txt"
    victim.write_text("v\n")
    reports: list[str] = []
    writer = JournalWriter(agent, report=reports.append)
    try:
        for n in range(2):
            forged = _forged_add(victim, f"c-00000000e{n}")
            _write(agent, f"c-00000000e{n}.json", json.dumps(forged).encode())
            writer.submit(make_record())
            assert writer.flush()
    finally:
        writer.close()
    assert reports == [
        "1 spooled journal row failed its check and was quarantined: "
        "c-00000000e0.json (no authenticator)",
        "1 spooled journal row failed its check and was quarantined: "
        "c-00000000e1.json (no authenticator)",
    ]
    assert victim.read_text() == "v\n"


@pytest.mark.parametrize("size", [0, 1, 32, 64, 65, 200])
def test_the_built_in_hmac_is_hmac_sha256(size: int) -> None:
    import hmac

    key, message = os.urandom(size), os.urandom(size * 3 + 5)
    assert spool.hmac_sha256(key, message) == hmac.new(key, message, "sha256").hexdigest()


def test_a_widened_key_leaves_the_rows_waiting_and_says_what_to_do(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    assert run_pct(agent, "apply-patch", "--cwd", str(work), stdin=PATCH).returncode == 0
    key = agent / "pct" / spool.KEY_NAME
    key.chmod(0o644)
    log = run_pct(agent, "log")
    assert log.returncode == 0
    assert log.stdout == ""
    assert log.stderr.startswith(
        f"pct: the journal's spool key cannot be used ({spool.KEY_NAME} is readable by others "
        f"(mode 644)); rows `pct apply-patch` spooled wait; remove {key} and pct makes a new "
        "one (rows signed with the old key are then quarantined)\n"
    )
    assert len(list(_spool(agent).glob("c-*.json"))) == 1  # waiting, not lost
    key.chmod(0o600)
    log = run_pct(agent, "log")
    assert "apply_patch" in log.stdout
    assert log.stderr == ""
