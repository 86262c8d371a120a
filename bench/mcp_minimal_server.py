"""The peer for `bench/mcp.py`: the smallest useful server written directly on the same SDK.

Two tools on a low-level `mcp.server.Server`: `echo`, and `run`, which spawns `sh -c CMD` with
pipes, reads its stdout to EOF (discarding all but the first 4 KiB) and returns the exit code,
the byte count and that head: the least a command tool can do. stdio by default, or
streamable HTTP on 127.0.0.1 with `--http PORT` (printing its URL on stderr, like
`pct serve --http`).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import NotificationOptions, Server
from mcp.server.context import ServerRequestContext

TOOL = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


RUN = types.Tool(
    name="run",
    description="Run a shell command; return its exit code and output size.",
    input_schema={"type": "object", "properties": {"cmd": {"type": "string"}}},
)


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL, RUN])


async def run(cmd: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        cmd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    head = b""
    total = 0
    while chunk := await proc.stdout.read(1 << 20):
        total += len(chunk)
        if len(head) < 4096:
            head += chunk[: 4096 - len(head)]
    await proc.wait()
    return f"exit_code: {proc.returncode}\nbytes: {total}\n{head.decode(errors='replace')}"


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    text = await run(str(args["cmd"])) if params.name == "run" else str(args.get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        sock = socket.socket()
        sock.bind(("127.0.0.1", int(sys.argv[2])))
        app = server.streamable_http_app(host="127.0.0.1")
        print(
            f"serving MCP at http://127.0.0.1:{sock.getsockname()[1]}/mcp",
            file=sys.stderr,
            flush=True,
        )
        config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve(sockets=[sock])
        return
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        opts = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read, write, opts)


if __name__ == "__main__":
    asyncio.run(main())
