"""A registry entry whose pid now belongs to another process is never contacted.

`pct status --live`, `pct reload` and the console send the control token to every
registered runtime whose pid is alive. After a runtime died without cleanup (SIGKILL, a
reboot) its pid can be reused; only the start-up sweep used to notice, so until another
runtime started the token went to whatever now listens on the dead runtime's port.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from pct_runtime.serve.client.running import _ask_all
from pct_runtime.serve.live.control import list_runtimes


async def test_a_reused_pid_gets_no_token(tmp_path: Path) -> None:
    received: list[bytes] = []

    async def listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(4096))
        writer.close()

    server = await asyncio.start_server(listener, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        directory = tmp_path / "pct" / "runtimes"
        directory.mkdir(parents=True)
        entry = {
            "pid": os.getpid(),  # alive, but started long after this entry was written
            "kind": "pct serve",
            "control": f"127.0.0.1:{port}",
            "mcp": "stdio",
            "started": time.time() - 30 * 86400,
            "live": 1,
        }
        path = directory / f"{os.getpid()}-stale.json"
        path.write_text(json.dumps(entry))
        assert await _ask_all(tmp_path, "status") == []
        await asyncio.sleep(0.1)
        assert received == []
        assert not path.exists()
        assert list_runtimes(tmp_path) == []
    finally:
        server.close()
        await server.wait_closed()
