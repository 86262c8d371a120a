"""pct's stdio transport for MCP: bounded lines in, an answer for every request out.

The SDK's `stdio_server` buffers a line of any length, drops every line it cannot parse
without a word (the client then waits forever for that request), and its writer dies on a
string with a lone surrogate. This transport feeds the same SDK session, but:

- reads big chunks straight from the descriptor and splits lines itself; a line longer than
  `MAX_LINE_BYTES` closes the connection with the reason on stderr (`closed_reason`);
- answers a line the SDK cannot take: not JSON → -32700 (id null); JSON that is no valid
  message (nested too deep, a lone surrogate escape, a wrong field) → -32600 with the
  request's id when it can be read; a batch → -32600 for each request in it (MCP 2025-06-18
  removed batching; the SDK serves none);
- writes each response as one line, with lone surrogates as JSON escapes, so no result
  string can stop the writer.

Like the SDK, it moves fd 0 to /dev/null and fd 1 to stderr while serving, so a child's
stray output never reaches the wire, and restores them on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import stat
from collections.abc import AsyncIterator, Coroutine

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

_log = logging.getLogger(__name__)

# Longest line (one JSON-RPC message) read from stdin: 64 MiB. HTTP bodies stop at 4 MiB;
# stdio allows 16 times that for big patches (JSON escaping can double one), while a
# client that never sends a newline cannot make pct buffer without bound.
MAX_LINE_BYTES = 64 * 1024 * 1024
_READ_CHUNK = 256 * 1024
_DRAIN_SECONDS = 5.0
_BATCH = (
    "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); "
    "send each message as its own line."
)


class StdioTransport:
    """One MCP connection over a pair of descriptors (the process's stdin and stdout by
    default). `open()` yields the streams `Server.run` takes."""

    def __init__(
        self,
        stdin_fd: int | None = None,
        stdout_fd: int | None = None,
        *,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self._in_fd = stdin_fd
        self._out_fd = stdout_fd
        self._max_line = max_line
        self._write_lock = asyncio.Lock()
        self._nonblocking_in = False
        self._nonblocking_out = False
        self._out_gone = False
        self._pollable = True  # stdin can be waited on (not a regular file)
        #: Why pct closed the connection itself (a protocol violation), else None.
        self.closed_reason: str | None = None

    @contextlib.asynccontextmanager
    async def open(
        self,
    ) -> AsyncIterator[
        tuple[
            MemoryObjectReceiveStream[SessionMessage | Exception],
            MemoryObjectSendStream[SessionMessage],
        ]
    ]:
        restore: list[tuple[int, int]] = []
        in_fd, out_fd = self._in_fd, self._out_fd
        try:
            if in_fd is None:
                in_fd = _claim(0, os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), restore)
            if out_fd is None:
                out_fd = _claim(1, os.dup(2), restore)
            self._in_fd, self._out_fd = in_fd, out_fd
            in_blocking, was_blocking = os.get_blocking(in_fd), os.get_blocking(out_fd)
            self._nonblocking_in = _exclusive_stream(in_fd)
            self._nonblocking_out = _exclusive_stream(out_fd)
            if self._nonblocking_in:
                os.set_blocking(in_fd, False)
            if self._nonblocking_out:
                os.set_blocking(out_fd, False)
            try:
                read_send, read_recv = anyio.create_memory_object_stream[
                    SessionMessage | Exception
                ](0)
                write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
                reading, writing = anyio.CancelScope(), anyio.CancelScope()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_scoped, reading, self._read_loop(read_send))
                    tg.start_soon(_scoped, writing, self._write_loop(write_recv, read_send))
                    try:
                        yield read_recv, write_send
                    finally:
                        # Stop reading; answers already made still go out (as with the SDK),
                        # for a few seconds at most if the client stopped reading.
                        reading.cancel()
                        write_send.close()
                        writing.deadline = anyio.current_time() + _DRAIN_SECONDS
            finally:
                with contextlib.suppress(OSError):
                    if self._nonblocking_in:
                        os.set_blocking(in_fd, in_blocking)
                    if self._nonblocking_out:
                        os.set_blocking(out_fd, was_blocking)
        finally:
            for fd, private in reversed(restore):
                with contextlib.suppress(OSError):
                    os.dup2(private, fd)
                with contextlib.suppress(OSError):
                    os.close(private)

    # -- reading ----------------------------------------------------------------------------
    async def _read_loop(self, send: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        # Reads land in one reused buffer (a fresh 256 KiB object per read costs more than
        # the read); a line is copied out once, its pieces joined once.
        chunk = bytearray(_READ_CHUNK)
        view = memoryview(chunk)
        parts: list[bytes] = []  # the line read so far, when it spans reads
        held = 0
        limit = self._max_line
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with send:
                while True:
                    size = await self._read_into(view)
                    if not size:  # end of input: a last line without a newline still counts
                        if parts:
                            await self._line(b"".join(parts), send)
                        return
                    start = 0
                    end = chunk.find(b"\n", 0, size)
                    while end >= 0:
                        if held + end - start > limit:
                            self._overflow()
                            return
                        line = bytes(view[start:end])
                        if parts:
                            parts.append(line)
                            line = b"".join(parts)
                            parts.clear()
                            held = 0
                        await self._line(line, send)
                        start = end + 1
                        end = chunk.find(b"\n", start, size)
                    if start < size:
                        held += size - start
                        if held > limit:
                            self._overflow()
                            return
                        parts.append(bytes(view[start:size]))

    async def _read_into(self, view: memoryview) -> int:
        """Read what is there into `view`. A non-blocking stdin is read first and waited on
        only when empty (a big line then costs no wait per pipe-full); a blocking one is
        waited on first, so the read cannot block the loop."""
        fd = self._in_fd
        assert fd is not None
        if self._nonblocking_in:
            try:
                return os.readv(fd, [view])
            except BlockingIOError:
                pass
            except OSError as exc:
                return self._read_failed(exc)
        while True:
            if self._pollable:
                loop = asyncio.get_running_loop()
                ready: asyncio.Future[None] = loop.create_future()
                try:
                    loop.add_reader(fd, _set_done, ready)
                except OSError:  # a regular file or /dev/null: never waits, so read it directly
                    self._pollable = False
                else:
                    try:
                        await ready
                    finally:
                        loop.remove_reader(fd)
            try:
                return os.readv(fd, [view])
            except BlockingIOError:
                continue
            except OSError as exc:
                return self._read_failed(exc)

    def _read_failed(self, exc: OSError) -> int:
        _log.warning("reading stdin failed (%s); closing the MCP connection", exc)
        return 0

    def _overflow(self) -> None:
        self.closed_reason = (
            f"a stdin line reached {self._max_line:,} bytes without a newline; MCP over stdio "
            "sends one JSON-RPC message per line, so pct closed the connection. Send smaller "
            "requests."
        )
        _log.error("%s", self.closed_reason)

    async def _line(
        self, line: bytes, send: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        if not line.strip():
            return
        message: types.JSONRPCMessage | None
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError as exc:
            message = await self._reject(line, exc)
        if message is not None:
            await send.send(SessionMessage(message))

    async def _reject(self, line: bytes, error: ValidationError) -> types.JSONRPCMessage | None:
        """Answer a line the SDK cannot take; a message when it can after all (bytes that are
        not UTF-8 are read as U+FFFD, as the SDK does)."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            text = line.decode("utf-8", "replace")
            with contextlib.suppress(ValidationError):
                return types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        try:
            value = json.loads(text)
        except RecursionError:
            _log.warning("answered a stdin message nested too deeply to parse with -32600")
            await self._answer(_error(_top_level_id(text), types.INVALID_REQUEST, _DEEP))
            return None
        except ValueError as exc:
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            reason = (
                f"Parse error: the line is not JSON ({detail}); send one JSON-RPC message per line."
            )
            _log.warning("answered a stdin line that is not JSON with a parse error")
            await self._answer(_error(None, types.PARSE_ERROR, reason))
            return None
        if isinstance(value, list):
            await self._reject_batch(value)
            return None
        if not isinstance(value, dict):
            await self._answer(
                _error(
                    None,
                    types.INVALID_REQUEST,
                    "Invalid Request: a JSON-RPC message is a JSON object.",
                )
            )
            return None
        request_id = value.get("id")
        if "method" not in value and ("result" in value or "error" in value):
            _log.warning(
                "dropped a response from the client that is not valid JSON-RPC: %s", _first(error)
            )
            return None
        _log.warning("answered an invalid stdin message with -32600: %s", _first(error))
        reason = f"Invalid Request: {_why(error)}"
        await self._answer(
            _error(request_id if _is_id(request_id) else None, types.INVALID_REQUEST, reason)
        )
        return None

    async def _reject_batch(self, batch: list[object]) -> None:
        _log.warning("answered a JSON-RPC batch of %d message(s) with -32600", len(batch))
        if not batch:
            await self._answer(_error(None, types.INVALID_REQUEST, _BATCH))
            return
        answers: list[dict[str, object]] = []
        for item in batch:
            if not isinstance(item, dict):
                answers.append(_error(None, types.INVALID_REQUEST, _BATCH))
            elif "method" in item and _is_id(item.get("id")):
                answers.append(_error(item["id"], types.INVALID_REQUEST, _BATCH))
            # a notification or a response in a batch gets no answer (JSON-RPC 2.0)
        if answers:
            await self._answer(answers)

    async def _answer(self, payload: object) -> None:
        await self._write(_encode(json.dumps(payload, ensure_ascii=False, separators=(",", ":"))))

    # -- writing ----------------------------------------------------------------------------
    async def _write_loop(
        self,
        messages: MemoryObjectReceiveStream[SessionMessage],
        reader: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        async with messages:
            async for item in messages:
                data = _serialize(item.message)
                if data is not None:
                    await self._write(data)
                if self._out_gone:
                    reader.close()  # the client is gone: end the session as at end of input
                    return

    async def _write(self, data: bytes) -> None:
        fd = self._out_fd
        assert fd is not None
        async with self._write_lock:
            if self._out_gone:
                return
            try:
                if self._nonblocking_out:
                    await _write_nonblocking(fd, data)
                else:  # a terminal, a file, or a pipe shared with stderr: never block the loop
                    await asyncio.to_thread(_write_all, fd, data)
            except OSError as exc:
                _log.warning("writing stdout failed (%s); ending the MCP session", exc)
                self._out_gone = True


async def _scoped(scope: anyio.CancelScope, work: Coroutine[object, object, None]) -> None:
    with scope:
        await work


def _claim(fd: int, diversion: int, restore: list[tuple[int, int]]) -> int:
    """A private duplicate of `fd` (the wire) and `fd` itself pointed at `diversion`."""
    try:
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        restore.append((fd, private))
        os.dup2(diversion, fd)
    finally:
        os.close(diversion)
    return private


def _exclusive_stream(fd: int) -> bool:
    """A pipe or socket that is not also stderr: it may be switched to non-blocking writes
    (a terminal or a shared pipe would make stderr non-blocking too)."""
    try:
        st = os.fstat(fd)
        err = os.fstat(2)
    except OSError:
        return False
    if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
        return False
    return (st.st_dev, st.st_ino) != (err.st_dev, err.st_ino)


async def _write_nonblocking(fd: int, data: bytes) -> None:
    view = memoryview(data)
    loop = asyncio.get_running_loop()
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:
            pass
        ready: asyncio.Future[None] = loop.create_future()
        loop.add_writer(fd, _set_done, ready)
        try:
            await ready
        finally:
            loop.remove_writer(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _set_done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _encode(text: str) -> bytes:
    """One output line. A lone surrogate becomes its own `\\udXXX` escape, which is what it
    is inside a JSON string, instead of an encoding error."""
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _serialize(message: types.JSONRPCMessage) -> bytes | None:
    """The SDK message as one line; a response that cannot be encoded becomes an error
    response for its id, so the client is still answered."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except (ValueError, RecursionError):  # a lone surrogate, or nested too deep
        pass
    try:
        data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return _encode(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    except (ValueError, TypeError, RecursionError) as exc:
        request_id = getattr(message, "id", None)
        if (
            isinstance(message, types.JSONRPCNotification | types.JSONRPCRequest)
            or request_id is None
        ):
            _log.warning("dropped an outgoing MCP message that cannot be encoded: %s", exc)
            return None
        reason = f"pct could not encode its response ({type(exc).__name__}); the call may have run."
        return _encode(
            json.dumps(_error(request_id, types.INTERNAL_ERROR, reason), ensure_ascii=False)
        )


def _error(request_id: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


_DEEP = (
    "Invalid Request: the message is nested too deeply for pct's MCP parser (at most about 200 "
    "levels of arrays and objects); send flatter arguments."
)
_SURROGATE = (
    "Invalid Request: a string has a lone surrogate escape (\\ud800-\\udfff), which is not "
    "Unicode text; send the character itself or a valid surrogate pair."
)


def _first(error: ValidationError) -> str:
    errors = error.errors(include_url=False, include_input=False)
    return str(errors[0].get("msg", error)) if errors else str(error)


def _why(error: ValidationError) -> str:
    """The reason a client can act on, from the parser's first complaint."""
    first = _first(error)
    if "recursion limit" in first:
        return _DEEP.removeprefix("Invalid Request: ")
    if "surrogate" in first:
        return _SURROGATE.removeprefix("Invalid Request: ")
    return f"not a valid JSON-RPC 2.0 message ({first})."


_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'


def _top_level_id(text: str) -> object:
    """The `id` of a top-level object too deep for `json.loads`, or None: the first of the
    first few `"id":` keys that lies outside every string at nesting depth 1."""
    keys = re.finditer(r'"id"\s*:\s*(-?\d+|' + _STRING + ")", text)
    for _, found in zip(range(8), keys, strict=False):
        prefix = re.sub(_STRING, "", text[: found.start()])
        depth = prefix.count("{") + prefix.count("[") - prefix.count("}") - prefix.count("]")
        if depth == 1:
            with contextlib.suppress(ValueError):
                return json.loads(found.group(1))
    return None
