"""pct's stdio transport in-process, over pipes: line splitting, its bounds, and writing
responses that the SDK's own writer could not encode."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from pct_runtime.serve.mcp.stdio import StdioTransport

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


class Pipes:
    """The client's ends: `send` writes to the transport's stdin, `lines` reads its stdout."""

    def __init__(self) -> None:
        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self._pending = b""

    def send(self, data: bytes) -> None:
        os.write(self.in_w, data)

    def close_input(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.in_w)

    async def line(self) -> Any:
        with anyio.fail_after(10):
            while b"\n" not in self._pending:
                chunk = await asyncio.to_thread(os.read, self.out_r, 1 << 20)
                assert chunk, "stdout closed"
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        for fd in (self.in_r, self.in_w, self.out_r, self.out_w):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    p = Pipes()
    yield p
    p.close()


@contextlib.asynccontextmanager
async def serving(pipes: Pipes, **kwargs: Any) -> AsyncIterator[tuple[StdioTransport, Streams]]:
    transport = StdioTransport(pipes.in_r, pipes.out_w, **kwargs)
    async with transport.open() as streams:
        yield transport, streams


async def receive(streams: Streams) -> types.JSONRPCMessage:
    with anyio.fail_after(10):
        item = await streams[0].receive()
    assert isinstance(item, SessionMessage)
    return item.message


def ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


async def test_lines_split_across_reads_and_packed_in_one(pipes: Pipes) -> None:
    async with serving(pipes) as (_, streams):
        first = ping(1)
        pipes.send(first[:7])
        await asyncio.sleep(0.05)
        pipes.send(first[7:] + b"\n\n  \r\n" + ping(2) + b"\r\n" + ping(3) + b"\n" + ping(4))
        ids = [getattr(await receive(streams), "id", None) for _ in range(3)]
        assert ids == [1, 2, 3]
        pipes.close_input()  # the last line has no newline: it still counts at end of input
        assert getattr(await receive(streams), "id", None) == 4
        with anyio.fail_after(10), pytest.raises(anyio.EndOfStream):
            await streams[0].receive()


async def test_a_line_past_the_bound_closes_the_connection(pipes: Pipes) -> None:
    async with serving(pipes, max_line=1000) as (transport, streams):
        pipes.send(ping(1) + b"\n" + b"x" * 600)
        assert getattr(await receive(streams), "id", None) == 1
        pipes.send(b"y" * 600)  # 1,200 bytes and still no newline
        with anyio.fail_after(10), pytest.raises(anyio.EndOfStream):
            await streams[0].receive()
        assert transport.closed_reason is not None
        assert transport.closed_reason.startswith(
            "a stdin line reached 1,000 bytes without a newline"
        )


async def test_a_response_with_lone_surrogates_is_written_as_escapes(pipes: Pipes) -> None:
    async with serving(pipes) as (_, streams):
        result = {"text": "name-\udcff.txt"}
        await streams[1].send(
            SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=9, result=result))
        )
        line = await pipes.line()
        assert line == {"jsonrpc": "2.0", "id": 9, "result": {"text": "name-\udcff.txt"}}


async def test_a_response_that_cannot_be_encoded_becomes_an_error_for_its_id(
    pipes: Pipes,
) -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    async with serving(pipes) as (_, streams):
        message = types.JSONRPCResponse(jsonrpc="2.0", id=5, result={"deep": deep})
        await streams[1].send(SessionMessage(message))
        line = await pipes.line()
        assert line["id"] == 5
        assert line["error"]["code"] == types.INTERNAL_ERROR
        assert line["error"]["message"].startswith("pct could not encode its response")
        await streams[1].send(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=6, result={})))
        assert await pipes.line() == {"jsonrpc": "2.0", "id": 6, "result": {}}


async def test_a_closed_stdout_ends_the_session(pipes: Pipes) -> None:
    async with serving(pipes) as (_, streams):
        os.close(pipes.out_r)  # the client went away
        await streams[1].send(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
        with anyio.fail_after(10), pytest.raises(anyio.EndOfStream):
            await streams[0].receive()


async def test_invalid_utf8_is_read_as_replacement_characters(pipes: Pipes) -> None:
    async with serving(pipes) as (_, streams):
        pipes.send(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a\xffb"}}\n')
        message = await receive(streams)
        assert isinstance(message, types.JSONRPCRequest)
        assert message.params == {"s": "a\ufffdb"}
