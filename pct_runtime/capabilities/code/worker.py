"""Code Mode worker processes: a zygote that forks one fresh process per cell, and the cell runner.

This file is executed as a script (`python -I -S worker.py zygote <fd> <memory>`) and imports
only the standard library, so a worker never loads the runtime. The zygote imports the
allowed modules once and then only forks: it never runs a program, so every forked cell
starts from the same clean state and no variable, import or function crosses cells. A cell
process runs exactly one program and exits.

Why a zygote: forking a warm, idle Python process costs about a millisecond, while spawning
a new interpreter costs tens of milliseconds; a per-cell fork keeps "fresh process per exec"
without paying interpreter start-up on every call.

The cell API is a supported-API boundary, not a sandbox: `tools`, `print`, `text`,
`ToolError`, restricted builtins and a guarded importer. Trusted code can still reach the
host through the allowed modules' internals.

Wire format (both directions): 4-byte big-endian length + compact UTF-8 JSON object.
Host → cell: `{"t":"run","code":...}` then replies `{"t":"r","i":id,"ok":true,"v":value}` or
`{"t":"r","i":id,"ok":false,"code":...,"m":message,"d":details}`.
Cell → host: `{"t":"o","s":text}` (emitted text, ≤ 8,192 characters per chunk),
`{"t":"c","i":id,"n":name,"a":args}` (nested call; `"big":bytes` instead of `a` when the
serialized arguments exceed the payload bound), `{"t":"rs","s":...}` / `{"t":"es","s":...}`
(result / error text chunks), then `{"t":"d","ok":bool,"has_result":bool}`.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
import types

# Pure standard-library modules a cell may import. Kept in sync with README and the
# `exec` description (the host imports this tuple from here).
ALLOWED_MODULES = (
    "base64",
    "bisect",
    "cmath",
    "collections",
    "collections.abc",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "textwrap",
    "typing",
    "unicodedata",
)

CHUNK_CHARS = 8192
PAYLOAD_LIMIT = 256 * 1024
FLUSH_INTERVAL = 0.02
_HEADER = struct.Struct("!I")
_REMOVED_BUILTINS = (
    "open",
    "input",
    "exit",
    "quit",
    "breakpoint",
    "help",
    "copyright",
    "credits",
    "license",
)


def _send(sock: socket.socket, obj: object) -> None:
    import json

    data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
    sock.sendall(_HEADER.pack(len(data)) + data)


class _Reader:
    """Blocking frame reader over the cell socket (used after `select` says readable)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def feed(self) -> list[dict[str, object]]:
        import json

        chunk = self.sock.recv(1 << 18)
        if not chunk:
            raise EOFError
        self.buf += chunk
        out: list[dict[str, object]] = []
        while len(self.buf) >= 4:
            (size,) = _HEADER.unpack_from(self.buf)
            if len(self.buf) < 4 + size:
                break
            out.append(json.loads(bytes(self.buf[4 : 4 + size])))
            del self.buf[: 4 + size]
        return out

    def next_blocking(self) -> dict[str, object]:
        while True:
            msgs = self.feed()
            if msgs:
                if len(msgs) > 1:  # only the first frame (`run`) is read this way
                    raise RuntimeError("unexpected frames before run")
                return msgs[0]


class ToolError(Exception):
    """A failed nested call: `.code` is machine-readable, `.message` the tool's exact text."""

    def __init__(self, code: str, message: str, details: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details if isinstance(details, dict) else {}

    def __str__(self) -> str:
        return self.message


def _json_default(value: object) -> object:
    if isinstance(value, (set, frozenset)):
        return list(value)
    return repr(value)


def _to_text(value: object) -> str:
    if isinstance(value, str):
        return value
    import json

    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default)
    except (TypeError, ValueError):
        return str(value)


class _CellRuntime:
    """The host bridge inside one cell process."""

    def __init__(self, sock: socket.socket, reader: _Reader) -> None:
        import asyncio

        self.sock = sock
        self.reader = reader
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda _loop, _ctx: None)
        self.pending: list[str] = []
        self.pending_len = 0
        self.calls: dict[int, asyncio.Future[object]] = {}
        self.next_id = 0
        import threading

        # Every frame is sent under this lock: the flusher thread and the program share it.
        self.lock = threading.RLock()
        self.running = True

    def start_flusher(self) -> None:
        """Flush buffered output every 20 ms from a thread, so text printed before a long
        CPU-bound stretch still reaches the host (the event loop is not running then)."""
        import threading
        import time

        def loop() -> None:
            while self.running:
                time.sleep(FLUSH_INTERVAL)
                try:
                    self.flush()
                except OSError:
                    return

        threading.Thread(target=loop, name="pct-cell-flush", daemon=True).start()

    # -- output ---------------------------------------------------------------------------
    def emit(self, text: str) -> None:
        if not text:
            return
        with self.lock:
            self.pending.append(text)
            self.pending_len += len(text)
            if self.pending_len >= CHUNK_CHARS:
                self.flush()

    def flush(self) -> None:
        with self.lock:
            if not self.pending:
                return
            text = "".join(self.pending)
            self.pending.clear()
            self.pending_len = 0
            self._send_chunks("o", text)

    def _send_chunks(self, kind: str, text: str) -> None:
        with self.lock:
            for start in range(0, len(text), CHUNK_CHARS):
                _send(self.sock, {"t": kind, "s": text[start : start + CHUNK_CHARS]})

    # -- nested calls ---------------------------------------------------------------------
    def call(self, name: str, args: object) -> object:
        import json

        self.flush()
        self.next_id += 1
        call_id = self.next_id
        fut = self.loop.create_future()
        self.calls[call_id] = fut
        try:
            encoded = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            del self.calls[call_id]
            raise TypeError(f"tools.{name} arguments must be JSON-serializable: {exc}") from None
        size = len(encoded.encode("utf-8", "replace"))
        with self.lock:
            if size > PAYLOAD_LIMIT:
                _send(self.sock, {"t": "c", "i": call_id, "n": name, "big": size})
            else:
                data = b'{"t":"c","i":%d,"n":%s,"a":%s}' % (
                    call_id,
                    json.dumps(name).encode(),
                    encoded.encode("utf-8", "replace"),
                )
                self.sock.sendall(_HEADER.pack(len(data)) + data)
        return fut

    def on_readable(self) -> None:
        try:
            msgs = self.reader.feed()
        except EOFError:
            os._exit(3)  # the host went away: nothing to report to
        for msg in msgs:
            if msg.get("t") != "r":
                continue
            fut = self.calls.pop(int(msg["i"]), None)  # type: ignore[call-overload]
            if fut is None or fut.done():
                continue
            if msg.get("ok"):
                fut.set_result(msg.get("v"))
            else:
                fut.set_exception(ToolError(str(msg.get("code")), str(msg.get("m")), msg.get("d")))

    async def settle_calls(self) -> None:
        """Completion waits for every tracked nested call, awaited or not."""
        import asyncio

        while self.calls:
            await asyncio.wait(list(self.calls.values()))


class _Tool:
    __slots__ = ("_name", "_rt")

    def __init__(self, rt: _CellRuntime, name: str) -> None:
        self._rt = rt
        self._name = name

    def __call__(self, *args: object, **kwargs: object) -> object:
        name = self._name
        if args and kwargs:
            raise TypeError(f"tools.{name} takes keyword arguments or one dict, not both")
        if len(args) > 1:
            raise TypeError(f"tools.{name} takes keyword arguments or one dict")
        if args:
            payload = args[0]
            if isinstance(payload, str):
                if name != "apply_patch":
                    raise TypeError(
                        f"tools.{name} expects keyword arguments or a dict; only "
                        "tools.apply_patch accepts a patch string"
                    )
                payload = {"patch": payload}
            elif not isinstance(payload, dict):
                raise TypeError(f"tools.{name} expects keyword arguments or a dict")
        else:
            payload = dict(kwargs)
        return self._rt.call(name, payload)

    def __repr__(self) -> str:
        return f"<tool {self._name}>"


class _Tools:
    """`tools.<name>(...)` and `tools[name](...)`; the host decides what is declared."""

    __slots__ = ("_declared", "_rt")
    _rt: _CellRuntime
    _declared: tuple[str, ...]

    def __init__(self, rt: _CellRuntime, declared: list[str]) -> None:
        object.__setattr__(self, "_rt", rt)
        object.__setattr__(self, "_declared", tuple(declared))

    def __getattr__(self, name: str) -> _Tool:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Tool(self._rt, name)

    def __getitem__(self, name: object) -> _Tool:
        if not isinstance(name, str):
            raise TypeError("tools[...] expects a tool name string")
        return _Tool(self._rt, name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("tools is read-only")

    def __dir__(self) -> list[str]:
        return list(self._declared)

    def __repr__(self) -> str:
        return f"<tools: {', '.join(self._declared) or 'none declared'}>"


def _make_builtins(rt: _CellRuntime) -> dict[str, object]:
    import builtins

    real_import = builtins.__import__
    allowed = frozenset(ALLOWED_MODULES)
    listing = ", ".join(ALLOWED_MODULES)

    def guarded_import(
        name: str,
        globals: object = None,
        locals: object = None,
        fromlist: object = (),
        level: int = 0,
    ) -> object:
        if level == 0 and name in allowed:
            return real_import(name, globals, locals, fromlist, level)  # type: ignore[arg-type]
        if level == 0 and name == "asyncio":
            return _asyncio_facade()
        raise ImportError(
            f"import of {name!r} is not available in Code Mode cells; allowed modules: "
            f"{listing} (and `asyncio` for gather only)"
        )

    table = dict(vars(builtins))
    for key in _REMOVED_BUILTINS:
        table.pop(key, None)
    table["__import__"] = guarded_import

    def cell_print(
        *args: object, sep: object = " ", end: object = "\n", **_ignored: object
    ) -> None:
        sep_s = " " if sep is None else str(sep)
        end_s = "\n" if end is None else str(end)
        rt.emit(sep_s.join(str(a) for a in args) + end_s)

    def text(value: object) -> None:
        rt.emit(_to_text(value))

    table["print"] = cell_print
    table["text"] = text
    return table


def _asyncio_facade() -> object:
    import asyncio
    import types

    mod = types.ModuleType("asyncio", "Code Mode facade: only gather() is available.")
    mod.gather = asyncio.gather  # type: ignore[attr-defined]
    return mod


def _format_error(exc: BaseException, source: str) -> str:
    import linecache
    import traceback

    linecache.cache["<cell>"] = (len(source), None, source.splitlines(True), "<cell>")

    def prune(te: traceback.TracebackException) -> None:
        te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename == "<cell>"])
        if te.__cause__ is not None:
            prune(te.__cause__)
        if te.__context__ is not None:
            prune(te.__context__)

    te = traceback.TracebackException.from_exception(exc)
    prune(te)
    text = "".join(te.format())
    if isinstance(exc, ToolError):
        text = text.rstrip("\n") + f"\n(ToolError code: {exc.code})\n"
    return text


def _compile(source: str) -> types.CodeType:
    import ast

    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(source, "<cell>", "exec", flags, dont_inherit=True)
    assert isinstance(tree, ast.Module)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(
            targets=[ast.Name(id="__pct_result__", ctx=ast.Store())], value=last.value
        )
        tree.body[-1] = ast.copy_location(assign, last)
        ast.fix_missing_locations(tree)
    code: types.CodeType = compile(
        tree, "<cell>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    return code


def run_cell(sock: socket.socket, memory_limit: int) -> int:
    """Run one program in this (freshly forked) process; returns the exit status."""
    import inspect
    import json

    if memory_limit > 0:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        except (ImportError, ValueError, OSError):
            pass
    # Everything that does not depend on the program is set up before it arrives, so a
    # pre-forked spare only has to compile and run.
    reader = _Reader(sock)
    rt = _CellRuntime(sock, reader)
    table = _make_builtins(rt)
    msg = reader.next_blocking()
    source = str(msg.get("code", ""))
    declared = [str(n) for n in msg.get("uses", [])]  # type: ignore[attr-defined]
    namespace: dict[str, object] = {
        "__builtins__": table,
        "__name__": "__cell__",
        "tools": _Tools(rt, declared),
        "print": table["print"],
        "text": table["text"],
        "ToolError": ToolError,
    }

    async def main() -> None:
        code = _compile(source)
        rt.loop.add_reader(sock.fileno(), rt.on_readable)
        rt.start_flusher()
        if code.co_flags & inspect.CO_COROUTINE:
            await eval(code, namespace)  # the cell program is trusted input
        else:
            exec(code, namespace)
        await rt.settle_calls()

    ok = True
    error_text = ""
    try:
        rt.loop.run_until_complete(main())
    except BaseException as exc:  # the program's own failure, reported as the cell error
        ok = False
        try:
            error_text = _format_error(exc, source)
        except BaseException:
            error_text = f"{type(exc).__name__}: {exc}\n"
    has_result = False
    rt.running = False
    try:
        rt.flush()
        if ok and namespace.get("__pct_result__") is not None:
            value = namespace["__pct_result__"]
            try:
                encoded = json.dumps(
                    value, ensure_ascii=False, separators=(",", ":"), default=_json_default
                )
            except (TypeError, ValueError) as exc:
                encoded = json.dumps(f"<unserializable result: {exc}>")
            has_result = True
            rt._send_chunks("rs", encoded)
        if not ok:
            rt._send_chunks("es", error_text)
        with rt.lock:
            _send(sock, {"t": "d", "ok": ok, "has_result": has_result})
    except (OSError, MemoryError):
        return 4
    return 0


def _set_parent_death_signal() -> None:
    """Linux: die with the parent, so a crashed host never leaves workers behind."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError, ImportError):
        pass


def _own_group(pid: int = 0) -> None:
    """Make a cell the leader of its own process group, so a stop kills what it started."""
    import contextlib

    with contextlib.suppress(OSError):  # the cell already exited
        os.setpgid(pid, pid)


def zygote_main(ctrl_fd: int, memory_limit: int) -> None:
    """Preload the allowed modules, then fork one cell per `F` byte from the host."""
    import ast  # noqa: F401  - preloaded for the cells
    import asyncio  # noqa: F401
    import importlib
    import inspect  # noqa: F401
    import json  # noqa: F401
    import linecache  # noqa: F401
    import traceback  # noqa: F401
    import types  # noqa: F401

    for name in ALLOWED_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    import gc

    gc.collect()
    gc.freeze()  # forked cells never walk (and so never copy) the preloaded objects
    ctrl = socket.socket(fileno=ctrl_fd)
    _set_parent_death_signal()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # cells are reaped automatically
    ctrl.sendall(b"R")
    while True:
        try:
            data = ctrl.recv(64)
        except InterruptedError:
            continue
        if not data:
            break
        for _ in range(data.count(b"F")):
            parent_end, child_end = socket.socketpair()
            try:
                pid = os.fork()
            except OSError:
                parent_end.close()
                child_end.close()
                socket.send_fds(ctrl, [_HEADER.pack(0)], [])
                continue
            if pid == 0:
                status = 1
                try:
                    _own_group()
                    ctrl.close()
                    parent_end.close()
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    _set_parent_death_signal()
                    status = run_cell(child_end, memory_limit)
                finally:
                    os._exit(status)
            child_end.close()
            _own_group(pid)  # also here: the host may signal the group as soon as it has the pid
            passed = [parent_end.fileno()]
            try:
                pidfd = os.pidfd_open(pid)  # the host's own number for the cell comes from it
            except OSError:
                pidfd = -1
            if pidfd >= 0:
                passed.append(pidfd)
            socket.send_fds(ctrl, [_HEADER.pack(pid)], passed)
            parent_end.close()
            if pidfd >= 0:
                os.close(pidfd)
    # The host closed the control channel: take every cell of this group down with us.
    try:
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(0)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "zygote":
        zygote_main(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.stderr.write("usage: worker.py zygote <control-fd> <memory-limit-bytes>\n")
        sys.exit(2)
