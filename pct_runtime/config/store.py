"""The config file store: read with last-known-good, save under the lock with revisions.

A revision is the SHA-256 (hex) of the file's bytes, or `missing` when there is no file.
A save names the revision its draft was based on; the store re-reads the file under the
lock and refuses with `stale-revision` when it changed, so cooperating writers never lose
each other's changes. The file is replaced by rename from a temp file in the same
directory, so a reader sees the old or the new document and never half of one.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import json
import os
import stat
from pathlib import Path
from typing import NoReturn

from pct_runtime.config.errors import (
    ConfigReadError,
    ConfigSaveError,
    stale_revision_error,
    unreadable_error,
    write_failed_error,
)
from pct_runtime.config.schema import (
    ConfigValidationError,
    ToolkitConfig,
    default_config,
    parse_config,
    to_json_obj,
)
from pct_runtime.config.validation import copy_json
from pct_runtime.datarecord import datarecord, field
from pct_runtime.jsontypes import JSONObject

MISSING_REVISION = "missing"


def revision_of(data: bytes) -> str:
    import hashlib  # deferred (OpenSSL's load): a missing file has no revision to hash

    return hashlib.sha256(data).hexdigest()


def serialize(document: JSONObject) -> bytes:
    """Two-space indented JSON with a final newline (the format Pi's Toolkit writes)."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"not JSON: {name}")  # NaN/Infinity are not JSON


def decode_document(data: bytes) -> object:
    """Decode file bytes as strict JSON (raises ValueError; the message is never shown)."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError as exc:
        raise ValueError("too deeply nested") from exc


def json_position(exc: ValueError) -> str | None:
    """`line L column C` of a JSON syntax error: where to look, without quoting the file."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    return None


@datarecord
class ConfigRead:
    """One read: the effective config (last known good after a failure), the file revision,
    and the failure if any. `raw` is the stored document the config came from (unknown
    fields included); `has_last_known_good` tells whether `config` came from a valid read
    or save of this store rather than the all-off defaults."""

    config: ToolkitConfig
    revision: str
    error: ConfigReadError | None
    raw: JSONObject = field(default_factory=dict)
    has_last_known_good: bool = False


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular_detail(mode: int) -> str | None:
    """The `config-read-failed` detail for a path that is not a regular file, else None.

    A directory keeps `EISDIR`, the error code reading it gives (the spec's detail for a
    system error); the other kinds have no such code, so the detail names the kind.
    """
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "EISDIR"
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file: {kind}"


class NotRegularFileError(OSError):
    """The config path is a FIFO, directory, device or socket; `detail` says which."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file; anything else raises `NotRegularFileError` at once.

    Reading a FIFO would block until a writer appears (a hung `pct reload`, a server stuck
    in `open()` that no signal reaches), and a device may never end. So: refuse by `stat`
    before opening, open non-blocking (a FIFO swapped in after the check cannot block the
    open) and check the opened file again with `fstat`.
    """
    detail = not_regular_detail(os.stat(path).st_mode)
    if detail is not None:
        raise NotRegularFileError(detail)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        detail = not_regular_detail(os.fstat(fd).st_mode)
        if detail is not None:
            raise NotRegularFileError(detail)
        return handle.read()


def read_document(path: str | os.PathLike[str]) -> JSONObject | None:
    """The file's JSON object as it is now, valid or not; None when it is missing,
    unreadable, not JSON or not an object (the store's read says which).

    For pct's own section: a store read that failed keeps its last known good document,
    but `pct serve` must see the file's `pct.sandbox` to refuse a bad one."""
    try:
        document = decode_document(read_regular_file(Path(path)))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _errno_name(exc: OSError) -> str | None:
    if exc.errno is None:
        return None
    return errno.errorcode.get(exc.errno)


class ConfigStore:
    """The one global config file. Synchronous: from async code, call it in a thread.

    A store instance remembers the last valid configuration it read or saved (the
    last-known-good used after a failed read) and the document it came from (whose unknown
    fields a save keeps).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_path = Path(os.path.abspath(f"{os.fspath(self.path)}.lock"))
        # What `threading.Lock()` returns, without importing threading (~1 ms of `pct status`).
        self._state = _thread.allocate_lock()
        self._config = default_config()
        self._raw: JSONObject = {}
        self._revision = MISSING_REVISION
        self._error: ConfigReadError | None = None
        self._has_last_known_good = False

    # -- state ---------------------------------------------------------------------------

    @property
    def revision(self) -> str:
        return self._revision

    @property
    def has_last_known_good(self) -> bool:
        return self._has_last_known_good

    def current(self) -> ConfigRead:
        """The state after the last read or save, without touching the disk."""
        with self._state:
            return ConfigRead(
                config=self._config,
                revision=self._revision,
                error=self._error,
                raw=copy_json(self._raw),
                has_last_known_good=self._has_last_known_good,
            )

    def _use_valid(self, config: ToolkitConfig, raw: JSONObject, revision: str) -> None:
        with self._state:
            self._config = config
            self._raw = raw
            self._revision = revision
            self._error = None
            self._has_last_known_good = True

    def _record_error(self, error: ConfigReadError, revision: str | None) -> None:
        with self._state:
            self._error = error
            if revision is not None:
                self._revision = revision

    # -- read ----------------------------------------------------------------------------

    def read(self) -> ConfigRead:
        """Read and validate the file. Never raises for file problems: a missing file is
        the all-off defaults; a bad one is reported in `.error` and the last known good
        configuration (or the defaults) stays in effect."""
        try:
            data = read_regular_file(self.path)
        except FileNotFoundError:
            self._use_valid(default_config(), {}, MISSING_REVISION)
            return self.current()
        except NotRegularFileError as exc:
            self._record_error(ConfigReadError("config-read-failed", exc.detail), None)
            return self.current()
        except OSError as exc:
            self._record_error(ConfigReadError("config-read-failed", _errno_name(exc)), None)
            return self.current()
        revision = revision_of(data)
        try:
            document = decode_document(data)
        except ValueError as exc:
            self._record_error(ConfigReadError("invalid-json", json_position(exc)), revision)
            return self.current()
        try:
            config = parse_config(document)
        except ConfigValidationError as exc:
            self._record_error(ConfigReadError("invalid-config", str(exc)), revision)
            return self.current()
        assert isinstance(document, dict)  # parse_config accepts only an object
        self._use_valid(config, document, revision)
        return self.current()

    # -- save ----------------------------------------------------------------------------

    def save(
        self,
        config: ToolkitConfig,
        expected_revision: str | None = None,
        *,
        raw: JSONObject | None = None,
    ) -> str:
        """Write `config` and return the new revision.

        `expected_revision` is the revision the draft was based on (`None` skips the check).
        Unknown fields come from `raw` if given, else from the last document this store read
        or saved, else (a store that never read) from the file as it is under the lock. A
        file that is not a valid configuration is never overwritten.

        Raises `ConfigValidationError` for an invalid draft (nothing written) and
        `ConfigSaveError` (`stale-revision`, `lock-held`, `unreadable`, `write-failed`) when
        the file was left untouched.
        """
        with self._state:
            if self._error is not None:
                raise unreadable_error()
            if raw is not None:
                base: JSONObject | None = copy_json(raw)
            elif self._has_last_known_good:
                base = copy_json(self._raw)
            else:
                base = None  # never read: keep what is on disk (taken under the lock)
        normalized = parse_config(to_json_obj(config))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_failed_error() from exc
        # deferred: the lock's uuid (with `platform`) and shutil are a save's, never a read's
        import pct_runtime.config.lock as lock

        with lock.process_lock(str(self.lock_path)):
            try:
                token = lock.acquire(self.lock_path)
            except OSError as exc:  # e.g. the directory is not writable
                raise write_failed_error() from exc
            try:
                on_disk = self._check_disk(expected_revision)
                document = to_json_obj(normalized, on_disk if base is None else base)
                payload = serialize(document)
                self._sweep_stale_temps()
                lock.sweep_dead_staging(self.lock_path)
                try:
                    self._replace(payload)
                except OSError as exc:
                    raise write_failed_error() from exc
            finally:
                lock.release(self.lock_path, token)
        revision = revision_of(payload)
        self._use_valid(normalized, document, revision)
        return revision

    def _check_disk(self, expected_revision: str | None) -> JSONObject:
        """Under the lock: the file is still what the draft was based on, and is a valid
        configuration. Returns the stored document (`{}` when there is no file)."""
        try:
            disk: bytes | None = read_regular_file(self.path)
        except FileNotFoundError:
            disk = None
        except OSError as exc:
            raise unreadable_error() from exc
        disk_revision = MISSING_REVISION if disk is None else revision_of(disk)
        if expected_revision is not None and expected_revision != disk_revision:
            raise stale_revision_error()
        if disk is None:
            return {}
        # Never replace a file that is not a valid configuration (someone's hand edit).
        try:
            document = decode_document(disk)
            parse_config(document)
        except (ValueError, ConfigValidationError) as exc:
            raise unreadable_error() from exc
        if not isinstance(document, dict):  # unreachable: parse_config accepted it
            raise unreadable_error()
        return document

    def _temp_prefix(self) -> str:
        return f".{self.path.name}."

    def _replace(self, payload: bytes) -> None:
        directory = self.path.parent
        import uuid  # deferred: it loads `platform`; only a save writes a temp file

        temp = directory / f"{self._temp_prefix()}{os.getpid()}.{uuid.uuid4()}.tmp"
        try:
            old_mode: int | None = stat.S_IMODE(os.stat(self.path).st_mode)
        except OSError:
            old_mode = None
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            try:
                view = memoryview(payload)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                if old_mode is not None:
                    os.fchmod(fd, old_mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        _fsync_directory(directory)

    def _sweep_stale_temps(self) -> None:
        """Remove temp files of writers that died between write and rename (SIGKILL, power
        loss). Under the lock, so no cooperating writer is mid-write; our own pid's saves are
        serialized, so an own-pid temp is stale too."""
        prefix = self._temp_prefix()
        try:
            names = os.listdir(self.path.parent)
        except OSError:
            return
        for name in names:
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid_text, _, rest = name[len(prefix) : -len(".tmp")].partition(".")
            if not pid_text.isdigit() or not rest:
                continue
            pid = int(pid_text)
            import pct_runtime.config.lock as lock  # loaded by `save` already

            if pid == os.getpid() or not lock.pid_running(pid):
                with contextlib.suppress(OSError):
                    os.unlink(self.path.parent / name)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = [
    "MISSING_REVISION",
    "ConfigRead",
    "ConfigReadError",
    "ConfigSaveError",
    "ConfigStore",
    "decode_document",
    "revision_of",
    "serialize",
]
