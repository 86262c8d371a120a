"""Notice changes to the config file on disk (watchfiles on its DIRECTORY).

A watch on the file itself dies after the first atomic replace (every save renames a temp
file over it), so the directory is watched and events are filtered to the file name. The
console only offers a reload: the spec's `/pct reload` semantics never reload by
themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import Change, awatch


def config_filter(config_path: Path) -> Callable[[Change, str], bool]:
    name = config_path.name

    def accept(change: Change, path: str) -> bool:
        return Path(path).name == name

    return accept


async def watch_config(
    config_path: Path,
    on_change: Callable[[], Awaitable[object]],
    *,
    stop: asyncio.Event | None = None,
    debounce_ms: int = 200,
) -> None:
    """Call `on_change()` after each batch of changes to `config_path` until `stop` is set.

    The directory is created if missing, so a first save by another process is seen too.
    """
    directory = config_path.parent
    directory.mkdir(parents=True, exist_ok=True)
    async for _changes in awatch(
        directory,
        watch_filter=config_filter(config_path),
        debounce=debounce_ms,
        step=50,
        stop_event=stop,
        recursive=False,
    ):
        await on_change()
