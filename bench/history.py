"""History screen benchmark (not a test): prints a table with ratios against a peer.

    python bench/history.py [--calls 50000] [--runs 5]

A journal of `--calls` calls (filled through `Journal.record`) in a temporary agent dir; the
console runs headless (Pilot, 120×40).

(a) First visit, each run in a fresh console: key `6` → History's first page (200 rows) in
    its table (composing the screen, opening the journal, the query). Peer: key `5` → the
    Events screen, first visit. Goal: ≤ 300 ms.
(b) Next visit: key `6` → History current again (its reload follows in the background).
    Peer: key `4` → Sessions, first visit. Goal: ≤ 100 ms.
(c) A text filter matching 1 call in 1,000 over the whole journal: Enter → the matching
    rows in the table. Peer: (a). Goal: ≤ 300 ms.
(d) One poll (the newest row id, asked once a second while History is shown) through the
    console's journal thread. Peer: the same query on the calling thread. Goal: ≤ 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pct_runtime.journal import CallRecord, Journal, JournalQuery, new_call_id


def fill(agent_dir: Path, calls: int) -> float:
    started = time.perf_counter()
    now = time.time() - calls
    with Journal.open(agent_dir) as journal:
        for n in range(calls):
            journal.record(
                CallRecord(
                    call_id=new_call_id(),
                    seq=0,
                    time=now + n,
                    session_id=f"pct-session-{n % 7:012x}",
                    client_name="codex",
                    client_version="0.63.0",
                    model="openai/gpt-5.1-codex",
                    tool=("exec_command", "write_stdin", "exec", "apply_patch")[n % 4],
                    transport="http",
                    path="direct",
                    parent_call_id=None,
                    summary=f"{'needle ' if n % 1000 == 0 else ''}echo call {n} && ls -la src",
                    outcome="ok" if n % 13 else "error",
                    error_code=None if n % 13 else "exit-1",
                    duration_ms=float(n % 5000),
                    result_text=f"Process exited with code 0\ncall {n}\n" * 3,
                )
            )
    return time.perf_counter() - started


async def bench(agent_dir: Path, runs: int) -> dict[str, list[float]]:
    """Each run in a fresh console, so "first visit" includes opening the journal."""
    out: dict[str, list[float]] = {
        k: [] for k in ("history", "events", "again", "sessions", "filter", "poll", "direct")
    }
    for _ in range(runs):
        await one_run(agent_dir, out)
    return out


async def one_run(agent_dir: Path, out: dict[str, list[float]]) -> None:
    from textual.pilot import Pilot
    from textual.widgets import DataTable

    from pct_tui.app import PctApp
    from pct_tui.screens.history.screen import PAGE, HistoryScreen

    app = PctApp(agent_dir=agent_dir, serve=False, watch=False, cwd=agent_dir.parent)

    async def timed(pilot: Pilot[None], key: str, done: Callable[[], bool]) -> float:
        """Key sent → `done()` holds: the rows are in the table (its frame follows at the
        next refresh). The key is not awaited: Pilot's own waiting would be timed too."""
        started = time.perf_counter()
        press = asyncio.ensure_future(pilot.press(key))
        while not done():  # noqa: ASYNC110 (a widget's state, no event to wait on)
            await asyncio.sleep(0.001)
        elapsed = (time.perf_counter() - started) * 1000
        await press
        return elapsed

    def history_rows(n: int, fresh: bool = False) -> Callable[[], bool]:
        before = app.screen

        def done() -> bool:
            screen = app.screen
            if not isinstance(screen, HistoryScreen) or (fresh and screen is before):
                return False
            table = screen.query_one("#history-table", DataTable)
            return len(screen.records) == n and table.row_count == n

        return done

    async with app.run_test(size=(120, 40)) as pilot:
        while not app.console_state.ready:
            await pilot.pause(0.01)
        await pilot.pause(0.2)
        out["history"].append(await timed(pilot, "6", history_rows(PAGE, fresh=True)))
        await pilot.press("1")
        await pilot.pause(0.2)
        out["events"].append(await timed(pilot, "5", lambda: app.current_mode == "events"))
        await pilot.press("1")
        await pilot.pause(0.2)
        out["again"].append(await timed(pilot, "6", lambda: app.current_mode == "history"))
        await pilot.press("1")
        await pilot.pause(0.2)
        out["sessions"].append(await timed(pilot, "4", lambda: app.current_mode == "sessions"))
        await pilot.press("6")
        await pilot.pause(0.2)
        await pilot.press("slash", *"needle")
        want = min(PAGE, len(range(0, CALLS, 1000)))
        out["filter"].append(await timed(pilot, "enter", history_rows(want)))
        journal = app.facade.journal
        with Journal.open(agent_dir) as direct:
            for _ in range(20):
                started = time.perf_counter()
                await journal.newest_seq()
                out["poll"].append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                direct.query(JournalQuery(limit=1))
                out["direct"].append((time.perf_counter() - started) * 1000)
        await app.shutdown()


CALLS = 50_000


def main() -> int:
    global CALLS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    CALLS = args.calls
    root = Path(tempfile.mkdtemp(prefix="pct-bench-history-"))
    try:
        agent = root / "agent"
        (agent / "extensions").mkdir(parents=True)
        filled = fill(agent, args.calls)
        result = asyncio.run(bench(agent, args.runs))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in result.items()}
    print(f"journal of {args.calls} calls filled in {filled:.1f} s; medians of {args.runs} runs")
    print(f"{'measure':<56} {'History':>9} {'peer':>9} {'ratio':>7} {'goal':>9}")
    print("-" * 94)
    rows = (
        ("first visit: key 6 → 200 rows drawn / key 5 → Events", "history", "events", "≤ 300 ms"),
        ("next visit: key 6 → redrawn / key 4 → Sessions", "again", "sessions", "≤ 100 ms"),
        ("text filter: Enter → matches drawn / first visit", "filter", "history", "≤ 300 ms"),
        ("one poll via the journal thread / on the calling thread", "poll", "direct", "≤ 5 ms"),
    )
    for label, ours, peer, goal in rows:
        o, p = med[ours], med[peer]
        print(f"{label:<56} {o:>9.1f} {p:>9.1f} {o / p:>7.2f} {goal:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
