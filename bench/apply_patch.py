"""Benchmark: apply_patch on a large file, side by side with the Codex binary (not a test).

Cases: a 100,000-line file with 400 one-line replacements, each with 3 lines of context on
both sides; the same at 10x (1,000,000 lines, 4,000 replacements); and, because Codex only
takes the patch as one argv argument (Linux caps one argument at 128 KiB, which the 10x patch
exceeds), a 1,000,000-line file with the 1x patch so Codex has a 10x-file row too.

Columns (median of repeated runs, file restored between runs, untimed):
  in-process   `apply_patch_text(patch, cwd)`: parse + preflight + match + stage + commit
  pct process  `pct apply-patch --cwd DIR FILE` as a whole process
  codex        `codex --codex-run-as-apply-patch PATCH` as a whole process: the native binary
               npm's `@openai/codex-linux-x64` vendors (the Node launcher adds ~90 ms a user
               of the binary never pays); pct and codex runs alternate, so load hits both

Goals: in-process faster than Codex at 100k; the 10x case costs at most 11x the 1x case
(in-process, on a busy machine: the cost must be linear with margin; measured separately,
1x and 10x runs interleaved, as wall and CPU time); the whole `pct apply-patch` process
within 1.5x of the native Codex binary at 100k. A start-up table follows: `pct status` and
`pct log` within 150 ms, beside `python -c pass` (the interpreter's own floor).

Run: python bench/apply_patch.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pct_runtime.capabilities.apply_patch.executor import apply_patch_text

ARG_LIMIT = 128 * 1024
# Children may write bytecode: an installed pct has its .pyc files, and an editable checkout
# run with PYTHONDONTWRITEBYTECODE=1 would compile every module on every start (~35 ms).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def make_case(lines: int, replacements: int) -> tuple[bytes, str]:
    source = [f"line {i:07d}: value = {(i * 7919) % 100003}" for i in range(lines)]
    step = lines // replacements
    patch = ["*** Begin Patch", "*** Update File: big.txt"]
    for k in range(replacements):
        at = k * step + step // 2
        patch.append("@@")
        patch += [" " + source[j] for j in range(at - 3, at)]
        patch += ["-" + source[at], f"+line {at:07d}: value = replaced {k}"]
        patch += [" " + source[j] for j in range(at + 1, at + 4)]
    patch.append("*** End Patch")
    return ("\n".join(source) + "\n").encode(), "\n".join(patch) + "\n"


def find_codex() -> str | None:
    """The native Codex binary when npm vendored it, else the launcher on PATH."""
    repo = Path(__file__).resolve().parents[1]
    vendored = sorted(repo.glob("node_modules/@openai/codex-linux-*/vendor/*/bin/codex"))
    for candidate in [*vendored, repo / "node_modules/.bin/codex"]:
        if candidate.is_file():
            return str(candidate)
    return shutil.which("codex")


def find_pct() -> list[str]:
    script = Path(sys.executable).with_name("pct")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pct_runtime.cli"]


def median_time(runs: int, reset: Callable[[], None], run: Callable[[], None]) -> float:
    samples = []
    for _ in range(runs):
        reset()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def median_times_alternating(
    runs: int, reset: Callable[[], None], first: Callable[[], None], second: Callable[[], None]
) -> tuple[float, float]:
    """Medians of two runners, alternated run by run so a burst of load hits both alike."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for index, run in enumerate((first, second)):
            reset()
            start = time.perf_counter()
            run()
            samples[index].append(time.perf_counter() - start)
    return statistics.median(samples[0]), statistics.median(samples[1])


def bench_case(
    name: str, lines: int, replacements: int, runs: int, codex: str | None
) -> dict[str, float | None]:
    source, patch = make_case(lines, replacements)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        target = work / "big.txt"
        patch_file = Path(tmp) / "patch.txt"
        patch_file.write_text(patch)

        def reset() -> None:
            target.write_bytes(source)

        def in_process() -> None:
            apply_patch_text(patch, work)

        pct = find_pct()

        def pct_process() -> None:
            done = subprocess.run(
                [*pct, "apply-patch", "--cwd", str(work), str(patch_file)],
                capture_output=True,
                env=CHILD_ENV,
            )
            if done.returncode != 0:
                raise SystemExit(f"pct apply-patch failed: {done.stderr.decode()}")

        def codex_process() -> None:
            assert codex is not None
            done = subprocess.run(
                [codex, "--codex-run-as-apply-patch", patch], cwd=work, capture_output=True
            )
            if done.returncode != 0:
                raise SystemExit(f"codex failed: {done.stderr.decode()}")

        # Check the result once (and warm caches) before timing.
        reset()
        in_process()
        expected = target.read_bytes()
        result: dict[str, float | None] = {"in_process": median_time(runs, reset, in_process)}
        codex_usable = codex is not None and len(patch.encode()) < ARG_LIMIT
        if codex_usable:
            reset()
            codex_process()
            assert target.read_bytes() == expected, "Codex produced a different file"
            ours, theirs = median_times_alternating(runs, reset, pct_process, codex_process)
            result["pct_process"], result["codex_process"] = ours, theirs
        else:
            result["pct_process"] = median_time(runs, reset, pct_process)
            result["codex_process"] = None
        reset()
        pct_process()
        assert target.read_bytes() == expected
        result["patch_kib"] = len(patch.encode()) / 1024
    print(f"  measured {name}", file=sys.stderr)
    return result


def scaling(runs: int) -> tuple[float, float]:
    """(wall, CPU) median ratio of the 10x to the 1x in-process cost, runs interleaved.

    On a shared machine a burst of other work during the 10x runs alone would skew a ratio of
    two separately measured medians: alternating the cases exposes both to the same load,
    and CPU time leaves out the time other processes held the CPU.
    """
    sizes = [(100_000, 400), (1_000_000, 4_000)]
    with tempfile.TemporaryDirectory() as tmp:
        setups = []
        for index, (lines, replacements) in enumerate(sizes):
            source, patch = make_case(lines, replacements)
            work = Path(tmp) / str(index)
            work.mkdir()
            setups.append((work, source, patch))
        walls: list[list[float]] = [[], []]
        cpus: list[list[float]] = [[], []]
        for _ in range(runs):
            for index, (work, source, patch) in enumerate(setups):
                (work / "big.txt").write_bytes(source)
                wall, cpu = time.perf_counter(), time.process_time()
                apply_patch_text(patch, work)
                walls[index].append(time.perf_counter() - wall)
                cpus[index].append(time.process_time() - cpu)
    med = statistics.median
    return med(walls[1]) / med(walls[0]), med(cpus[1]) / med(cpus[0])


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:9.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (median)")
    args = parser.parse_args()
    codex = find_codex()
    cases = [
        ("100k lines, 400 hunks", 100_000, 400),
        ("1M lines, 4000 hunks (10x)", 1_000_000, 4_000),
        ("1M lines, 400 hunks", 1_000_000, 400),
    ]
    results = {name: bench_case(name, n, r, args.runs, codex) for name, n, r in cases}
    print(f"apply_patch benchmark, median of {args.runs} runs; codex: {codex or 'not found'}")
    print(f"{'case':30} {'patch':>9} {'in-process':>12} {'pct process':>12} {'codex':>12}")
    for name, res in results.items():
        print(
            f"{name:30} {res['patch_kib'] or 0:6.0f} KiB {fmt(res['in_process']):>12} "
            f"{fmt(res['pct_process']):>12} {fmt(res['codex_process']):>12}"
        )
    one = results[cases[0][0]]
    ten = results[cases[1][0]]
    assert one["in_process"] is not None
    assert ten["in_process"] is not None
    assert one["pct_process"] is not None
    wall_scale, cpu_scale = scaling(2 * args.runs + 1)
    sequential = ten["in_process"] / one["in_process"]
    print(
        f"\n10x / 1x in-process cost from the table (cases run one after the other): "
        f"{sequential:.2f}x"
    )
    print(
        f"10x / 1x in-process cost, {2 * args.runs + 1} interleaved runs: wall "
        f"{wall_scale:.2f}x, CPU {cpu_scale:.2f}x (goal <= 11x): "
        f"{'met' if max(wall_scale, cpu_scale) <= 11 else 'NOT met'}"
    )
    if ten["codex_process"] is None:
        print("codex at 10x: n/a (patch exceeds the 128 KiB single-argument limit)")
    codex_1x = one["codex_process"]
    if codex_1x is None:
        print("codex not found: Codex comparisons skipped")
        return 0
    ratio_in = one["in_process"] / codex_1x
    ratio_proc = one["pct_process"] / codex_1x
    print(
        f"in-process / codex at 100k: {ratio_in:.2f}x (goal < 1x, faster): "
        f"{'met' if ratio_in < 1 else 'NOT met'}"
    )
    print(
        f"pct process / codex at 100k: {ratio_proc:.2f}x (goal <= 1.5x): "
        f"{'met' if ratio_proc <= 1.5 else 'NOT met'}"
    )
    startup(args.runs)
    print(f"load avg {os.getloadavg()[0]:.2f}")
    return 0


def startup(runs: int) -> None:
    """Whole-process time of short commands, alternated with the bare interpreter's."""
    pct = find_pct()
    rows = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "pct apply-patch --help": [*pct, "apply-patch", "--help"],
        "pct status": [*pct, "status"],
        "pct log": [*pct, "log"],
    }
    samples: dict[str, list[float]] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in CHILD_ENV.items() if not k.startswith("PCT_")}
        env["PI_CODING_AGENT_DIR"] = tmp
        for _ in range(2 * runs + 1):
            for name, argv in rows.items():
                start = time.perf_counter()
                subprocess.run(argv, capture_output=True, env=env, cwd=tmp, check=True)
                samples[name].append(time.perf_counter() - start)
    print(f"\nstart-up, median of {2 * runs + 1} alternated runs (goal: status, log <= 150 ms)")
    for name, values in samples.items():
        print(f"{name:30} {fmt(statistics.median(values)):>12}")


if __name__ == "__main__":
    sys.exit(main())
