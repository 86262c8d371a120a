"""File images around a patch's commit: what each file was before, and what it became.

`PatchCapture` is what the patch executor calls through its `PatchWitness` seam, in the
patch's worker thread. At commit time it only takes a second name for each file — a hard
link to the inode the patch is about to replace or remove (before) or has just written
(after), made durable by one directory fsync before the first rename — so a 100,000-line
patch pays microseconds, not a copy. Hashing and naming the images by content happen
later, on the journal's writer thread (`files()`); an image whose file changed in between
(same inode, other size or mtime) is dropped and the patch is simply not undoable.
`pending_images()` (`pct apply-patch`, a process that exits at once) hashes nothing: each
image stays a `pending:` marker in its spooled row, named later by `Journal.resolve_pending`
(undo, diff, retention).
Where links are impossible (another file system) the image is copied and fsync'd instead.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Sequence

from pct_runtime.host.system.folders import (
    FolderError,
    Identity,
    open_folder,
    open_root,
    parts_inside,
)
from pct_runtime.journal.blobs import (
    OPEN_CLOEXEC,
    OPEN_NOFOLLOW,
    PENDING_PREFIX,
    BlobStore,
    sha256_hex,
)
from pct_runtime.tuples import NamedTuple

TYPE_CHECKING = False  # `typing` stays unloaded on `pct apply-patch` (see pct_runtime.tuples)
if TYPE_CHECKING:  # `pct apply-patch` builds no record: its spool takes plain markers
    from pct_runtime.journal.records import FileImage, PatchFile


class CaptureError(Exception):
    """A file's image could not be taken (not a regular file, unreadable)."""


def read_image(path: str, dir_fd: int | None = None) -> tuple[bytes, int] | None:
    """(bytes, permission bits) of the regular file at `path` (relative to `dir_fd` when
    given), None when absent.

    Never follows a symbolic link; raises `CaptureError` for anything but a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode):
                raise CaptureError(f"{path} is a symbolic link") from None
        raise CaptureError(f"{path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaptureError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


class _Taken(NamedTuple):
    """A file's second name at commit time, with the identity it had then."""

    pending: str
    mode: int
    identity: tuple[int, int, int, int]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _marked(taken: _Taken | None) -> tuple[str, int] | None:
    """`pending:<name>:<size>:<mtime_ns>` and the mode: an image named by its hash later."""
    if taken is None:
        return None
    _dev, _ino, size, mtime_ns = taken.identity
    name = os.path.basename(taken.pending)
    return f"{PENDING_PREFIX}{name}:{size}:{mtime_ns}", taken.mode


class PatchCapture:
    """Before/after images of the files one patch changes (`before_commit`, `after_commit`),
    resolved to content-addressed `PatchFile`s by `files()` (blocking: reads and hashes).

    Every image is taken through folders opened from the working directory without
    following links, and each file's folder identities are recorded (its `Anchor`): a
    folder that is a link, or another folder after the commit than before it, fails the
    capture (the patch is then not undoable)."""

    def __init__(self, blobs: BlobStore, report: Callable[[str], None] | None = None) -> None:
        self._blobs = blobs
        self._report = report
        self._root = ""
        self._paths: list[str] = []
        self._before: dict[str, _Taken | None] = {}
        self._after: dict[str, _Taken | None] = {}
        self._folders: dict[str, list[Identity]] = {}
        self._complete = False  # every post-image (and so every folder) taken
        self._resolved: tuple[PatchFile, ...] | None = None
        self.failed: str | None = None

    def _take(self, root_fd: int, path: str, *, after: bool) -> _Taken | None:
        """The file's image through its folders; records their identities (after the
        commit every folder exists; before it, those that exist must stay the same)."""
        parts = parts_inside(self._root, path)
        if parts is None:
            raise CaptureError(f"{path} is not inside the working directory {self._root}")
        folder, found = open_folder(root_fd, self._root, parts[:-1], missing_ok=not after)
        known = self._folders.get(path)
        if known is not None and found[: len(known)] != known:
            if folder is not None:
                os.close(folder)
            raise CaptureError(f"a folder of {path} was replaced during the patch")
        self._folders[path] = found
        if folder is None:
            return None
        try:
            try:
                st = os.lstat(parts[-1], dir_fd=folder)
            except FileNotFoundError:
                return None
            if not stat.S_ISREG(st.st_mode):
                raise CaptureError(f"{path} is not a regular file")
            pending, taken = self._blobs.link_pending(parts[-1], folder)
        finally:
            os.close(folder)
        return _Taken(pending, stat.S_IMODE(taken.st_mode), _identity(taken))

    def _take_all(self, images: dict[str, _Taken | None], *, after: bool) -> None:
        root_fd = open_root(self._root)
        try:
            for path in self._paths:
                images[path] = self._take(root_fd, path, after=after)
        finally:
            os.close(root_fd)

    def before_commit(self, paths: Sequence[str], root: str) -> None:
        """Take every pre-image durably; called after staging, before the first rename,
        with the working directory's real path `root` every path is under."""
        self._root = root
        self._paths = list(dict.fromkeys(paths))
        try:
            self._take_all(self._before, after=False)
            self._blobs.sync_pending()
        except (OSError, CaptureError, FolderError) as exc:
            self._fail(f"the pre-image could not be stored ({exc}); this patch is not undoable")

    def after_commit(self) -> None:
        """Take every post-image; called once the commit is over."""
        if self.failed is not None:
            return
        try:
            self._take_all(self._after, after=True)
            self._complete = True
        except (OSError, CaptureError, FolderError) as exc:
            self._fail(f"the post-image could not be stored ({exc}); this patch is not undoable")

    def anchor_of(self, path: str) -> list[object] | None:
        """`[root, [[st_dev, st_ino], …]]` of a path taken after the commit, for a spooled
        row (plain JSON values: `pct apply-patch` builds no record type)."""
        found = self._folders.get(path)
        if found is None or not self._complete:
            return None
        return [self._root, [list(item) for item in found]]

    def _fail(self, message: str) -> None:
        self.failed = message
        self.discard()
        if self._report is not None:
            self._report(message)

    @property
    def paths(self) -> tuple[str, ...]:
        """The files the patch named (before its commit: none)."""
        return tuple(self._paths)

    def discard(self) -> None:
        """Remove every pending name (a failed capture keeps nothing)."""
        for taken in (*self._before.values(), *self._after.values()):
            if taken is not None:
                with contextlib.suppress(OSError):
                    os.unlink(taken.pending)
        self._before.clear()
        self._after.clear()
        self._folders.clear()
        self._complete = False

    def _resolve(self, taken: _Taken | None) -> FileImage | None:
        if taken is None:
            return None
        fd = os.open(taken.pending, os.O_RDONLY | OPEN_NOFOLLOW | OPEN_CLOEXEC)
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
            if _identity(os.fstat(fd)) != taken.identity:
                raise CaptureError("the file changed right after the patch")
        finally:
            os.close(fd)
        digest = sha256_hex(data)
        self._blobs.adopt(taken.pending, digest, data)
        from pct_runtime.journal.records import FileImage

        return FileImage(digest, taken.mode)

    def pending_images(self) -> list[tuple[str, tuple[str, int] | None, tuple[str, int] | None]]:
        """(path, before, after) with each side a (`pending:` marker, mode) or None (absent),
        the pending names kept; empty when the capture is incomplete. No hashing, no record
        types: what `pct apply-patch` spools."""
        if self.failed is not None or not self._after:
            self.discard()
            return []
        out = [
            (path, _marked(self._before.get(path)), _marked(self._after.get(path)))
            for path in self._paths
        ]
        self._before.clear()
        self._after.clear()  # `anchor_of` still answers: the folders are kept
        return out

    def files(self) -> tuple[PatchFile, ...]:
        """The changed files, content-addressed (empty when the capture is incomplete or
        nothing committed). Blocking; runs once, on the writer thread."""
        if self._resolved is not None:
            return self._resolved
        if self.failed is not None or not self._after:
            self.discard()
            self._resolved = ()
            return ()
        from pct_runtime.journal.records import Anchor, PatchFile

        out: list[PatchFile] = []
        try:
            for path in self._paths:
                before = self._resolve(self._before.get(path))
                after = self._resolve(self._after.get(path))
                if before != after:
                    anchor = Anchor(self._root, tuple(self._folders[path]))
                    out.append(PatchFile(path, before, after, anchor))
        except (OSError, CaptureError) as exc:
            self._fail(f"the file images could not be stored ({exc}); this patch is not undoable")
            self._resolved = ()
            return ()
        self._before.clear()
        self._after.clear()
        self._resolved = tuple(out)
        return self._resolved
