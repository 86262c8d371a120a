"""File images around a change: what each file was before (stored durably first) and after.

`PatchCapture` is what apply_patch's executor calls through its `PatchWitness` seam: the
pre-images are written and fsync'd before the first rename, the post-images hashed (and
kept, for the diff) after the last one. A file that cannot be read makes the capture
incomplete — the patch still goes on, it is just not undoable.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence

from pct_runtime.journal.blobs import BlobStore
from pct_runtime.journal.records import FileImage, PatchFile

_OPEN_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class CaptureError(Exception):
    """A file's image could not be taken (not a regular file, unreadable)."""


def read_image(path: str) -> tuple[bytes, int] | None:
    """(bytes, permission bits) of the regular file at `path`, None when absent.

    Never follows a symbolic link; raises `CaptureError` for anything but a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_NOFOLLOW | _OPEN_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
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


class PatchCapture:
    """Before/after images of the files one patch changes (`before_commit`, `after_commit`)."""

    def __init__(self, blobs: BlobStore, report: Callable[[str], None] | None = None) -> None:
        self._blobs = blobs
        self._report = report
        self._paths: list[str] = []
        self._before: dict[str, FileImage | None] = {}
        self._after: dict[str, FileImage | None] = {}
        self.failed: str | None = None

    def before_commit(self, paths: Sequence[str]) -> None:
        """Store every pre-image durably; called after staging, before the first rename."""
        self._paths = list(dict.fromkeys(paths))
        try:
            for path in self._paths:
                image = read_image(path)
                if image is None:
                    self._before[path] = None
                else:
                    data, mode = image
                    self._before[path] = FileImage(self._blobs.put(data), mode)
        except (OSError, CaptureError) as exc:
            self._fail(f"the pre-image could not be stored ({exc}); this patch is not undoable")

    def after_commit(self) -> None:
        """Hash (and keep) every post-image; called once the commit is over."""
        if self.failed is not None:
            return
        try:
            for path in self._paths:
                image = read_image(path)
                if image is None:
                    self._after[path] = None
                else:
                    data, mode = image
                    self._after[path] = FileImage(self._blobs.put(data, durable=False), mode)
        except (OSError, CaptureError) as exc:
            self._fail(f"the post-image could not be stored ({exc}); this patch is not undoable")

    def _fail(self, message: str) -> None:
        self.failed = message
        if self._report is not None:
            self._report(message)

    def files(self) -> tuple[PatchFile, ...]:
        """The changed files (empty when the capture is incomplete or nothing committed)."""
        if self.failed is not None or not self._after:
            return ()
        out = []
        for path in self._paths:
            before, after = self._before.get(path), self._after.get(path)
            if before != after:
                out.append(PatchFile(path, before, after))
        return tuple(out)
