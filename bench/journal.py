"""Journal benchmark (not a test): the journal's added cost, on vs off, in one run.

    python bench/journal.py [--runs 41] [--patch-runs 11]

Two runtimes in one process, each with its own agent dir: one with the journal on (the
default), one with `{"pct": {"journal": {"enabled": false}}}`. Runs alternate between them
so both see the same machine load; each row is the median.

(a) a trivial `exec_command` (`true`) through `RuntimeSession.call` to its completed result;
(b) the 100,000-line `apply_patch` case of bench/apply_patch.py (400 one-line hunks) through
    `RuntimeSession.call`, the file restored between runs (untimed):
    - "same content": the file is restored to the same bytes, so its pre-image blob is
      already stored (the usual case: a patch's pre-image is the previous patch's
      post-image, which the journal kept);
    - "new content": one line differs every run, so each run stores a new 2.8 MB pre-image
      (a hard link made durable before the commit) and a new post-image;
    "idle" rows let the writer thread finish the previous row first (untimed: calls of an
    agent are seconds apart), "back to back"/"b2b" rows do not;
(c) `pct apply-patch` as a whole process on the same case (it journals as transport "cli"),
    wall time and the child's CPU time (user + system; steadier when the machine is shared).
Goal: journal on ≤ 1.05x journal off.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from apply_patch import make_case

from pct_runtime.journal import Journal, JournalQuery
from pct_runtime.runtime import Runtime, RuntimeSession

CONFIG = {"applyPatch": {"enabled": True}, "shellSessions": {"enabled": True}}


async def open_runtime(root: Path, journal: bool, work: Path) -> tuple[Runtime, RuntimeSession]:
    agent = root / ("on" if journal else "off")
    (agent / "extensions").mkdir(parents=True)
    config = dict(CONFIG, pct={"journal": {"enabled": journal}})
    (agent / "extensions" / "pi-codex-toolkit.json").write_text(json.dumps(config))
    runtime = Runtime(agent_dir=agent, cwd=work, debug_stream=None)
    await runtime.start()
    return runtime, await runtime.open_session("mcp")


async def alternate(
    runs: int,
    sessions: dict[str, RuntimeSession],
    reset: Callable[[int], None],
    call: Callable[[RuntimeSession], Awaitable[object]],
    settle: Callable[[], Awaitable[object]] | None = None,
) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in sessions}
    for index in range(runs):
        order = list(sessions.items())
        if index % 2:
            order.reverse()  # neither side always runs first
        for name, session in order:
            reset(index)
            if settle is not None:
                await settle()
            start = time.perf_counter()
            await call(session)
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def cli_patch(
    session: RuntimeSession, patch: str, work: Path, root: Path, cpu: dict[str, list[float]]
) -> None:
    """`pct apply-patch` as a whole process, against the agent dir of `session`'s side; its
    CPU time (user + system) goes to `cpu[side]` (steadier than wall time under load)."""
    side = "on" if session.runtime.journal.writer is not None else "off"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PI_CODING_AGENT_DIR"] = str(root / side)
    # From cached bytecode, as an installed pct runs (kept in the temp dir, not the tree):
    # without it every run compiles each module it imports, and the journal's side more.
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pct_runtime.cli", "apply-patch", "--cwd", str(work)],
        input=patch.encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pct apply-patch failed: {done.stderr.decode()}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu.setdefault(side, []).append(used)


def row(label: str, result: dict[str, float]) -> str:
    on, off = result["on"], result["off"]
    ratio = on / off
    verdict = "met" if ratio <= 1.05 else "NOT met"
    return f"{label:38} {off * 1000:10.2f} ms {on * 1000:10.2f} ms {ratio:8.3f}x  {verdict}"


async def main_async(runs: int, patch_runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        opened = {
            "on": await open_runtime(root, True, work),
            "off": await open_runtime(root, False, work),
        }
        sessions = {name: pair[1] for name, pair in opened.items()}
        try:

            async def trivial(session: RuntimeSession) -> object:
                return await session.call("exec_command", {"cmd": "true"})

            journal = opened["on"][0].journal

            async def settle() -> None:
                # Untimed: the writer thread has finished the previous call's row.
                await asyncio.to_thread(journal.flush, 30)

            rows: list[tuple[str, dict[str, float]]] = []
            await alternate(5, sessions, lambda _: None, trivial)  # warm up
            rows.append(
                (
                    "exec_command `true`, writer idle",
                    await alternate(runs, sessions, lambda _: None, trivial, settle),
                )
            )
            rows.append(
                (
                    "exec_command `true`, back to back",
                    await alternate(runs, sessions, lambda _: None, trivial),
                )
            )

            source, patch = make_case(100_000, 400)
            target = work / "big.txt"
            staged = work / "big.txt.reset"

            async def patch_call(session: RuntimeSession) -> object:
                return await session.call("apply_patch", {"patch": patch})

            def restore(data: bytes) -> None:
                # A new inode, as an editor's save: the journal's image of the old one stays.
                staged.write_bytes(data)
                os.replace(staged, target)

            def same(_: int) -> None:
                restore(source)

            counter = [0]

            def new(_: int) -> None:
                counter[0] += 1
                # The last line is outside every hunk: a new pre-image, the same patch.
                restore(source + f"tail {counter[0]} {time.time_ns()}\n".encode())

            await alternate(2, sessions, same, patch_call, settle)  # warm up, first blob
            rows.append(
                (
                    "apply_patch 100k, same content, idle",
                    await alternate(patch_runs, sessions, same, patch_call, settle),
                )
            )
            rows.append(
                (
                    "apply_patch 100k, new content, idle",
                    await alternate(patch_runs, sessions, new, patch_call, settle),
                )
            )
            rows.append(
                (
                    "apply_patch 100k, new content, b2b",
                    await alternate(patch_runs, sessions, new, patch_call),
                )
            )

            cpu: dict[str, list[float]] = {}

            def cli_call(session: RuntimeSession) -> Awaitable[None]:
                # One at a time: RUSAGE_CHILDREN counts every child that ended meanwhile.
                return asyncio.to_thread(cli_patch, session, patch, work, root, cpu)

            await alternate(1, sessions, new, cli_call)  # warm up: bytecode cached
            cpu.clear()
            rows.append(
                (
                    "pct apply-patch process, 100k, new",
                    await alternate(patch_runs, sessions, new, cli_call),
                )
            )
            rows.append(
                (
                    "  same, CPU time (user + system)",
                    {name: statistics.median(values) for name, values in cpu.items()},
                )
            )
            assert await asyncio.to_thread(journal.flush, 30)
            with Journal.open(root / "on") as stored:
                undoable = sum(r.undoable for r in stored.query(JournalQuery(tool="apply_patch")))
        finally:
            for runtime, _session in opened.values():
                await runtime.aclose()
    print(f"journal benchmark, medians ({runs} shell runs, {patch_runs} patch runs, alternating)")
    print(f"{'case':38} {'journal off':>13} {'journal on':>13} {'on/off':>9}  goal <= 1.05x")
    for label, result in rows:
        print(row(label, result))
    print(f"apply_patch calls journaled as undoable: {undoable}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41, help="exec_command runs per side")
    parser.add_argument("--patch-runs", type=int, default=11, help="apply_patch runs per side")
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.patch_runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
