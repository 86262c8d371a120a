"""Command policy benchmark (not a test): what judging a command line adds to exec_command.

    python bench/command_policy.py [--runs 400]

(a) The judge alone (`CommandGate.check`, which `exec_command`'s `prepare` calls; allow
    path) on 200-character command lines of several shapes (a pipeline with substitutions,
    `bash -c` with a nested script, wrappers, a here-document) against a 20-rule policy:
    p50 / p95 per line.
(b) `exec_command` of a 200-character line that runs to completion, in process, with the
    20-rule policy vs without a gate, calls alternating. Goal: the policy adds ≤ 1 ms (p50).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

# `python bench/command_policy.py` puts bench/ first on sys.path, where bench/mcp.py would
# shadow the MCP client package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pct_runtime.capabilities.base import CallContext  # noqa: E402
from pct_runtime.capabilities.shell import ShellConfig, ShellManager, create_shell_tools  # noqa: E402
from pct_runtime.capabilities.shell.gate import CommandGate  # noqa: E402
from pct_runtime.capabilities.shell.policy import CommandPolicy, Rule  # noqa: E402
from pct_runtime.output import OutputOwner  # noqa: E402

POLICY = CommandPolicy(
    "allow",
    tuple(
        Rule(prefix, decision)  # type: ignore[arg-type]
        for prefix, decision in [
            ("git push", "deny"),
            ("git reset --hard", "deny"),
            ("rm -rf", "deny"),
            ("curl", "ask"),
            ("wget", "ask"),
            ("npm publish", "deny"),
            ("npm test", "allow"),
            ("docker", "ask"),
            ("kubectl", "ask"),
            ("ssh", "ask"),
            ("scp", "ask"),
            ("sudo", "ask"),
            ("shutdown", "deny"),
            ("reboot", "deny"),
            ("dd", "ask"),
            ("mkfs", "deny"),
            ("terraform apply", "ask"),
            ("pip install", "ask"),
            ("cargo publish", "deny"),
            ("gh release", "ask"),
        ]
    ),
)


def _pad(line: str) -> str:
    """`line` grown to 200 characters with a harmless trailing `echo`."""
    filler = " ; echo " + "x" * 200
    return (line + filler)[:200]


LINES = {
    "pipeline + $()": _pad(
        'cd src && grep -rn "TODO" --include=*.py . | sort | uniq -c | head -n 20 && '
        'echo "done at $(date +%H:%M:%S)" && ls -la $(git rev-parse --show-toplevel)'
    ),
    "bash -c nested": _pad(
        "bash -c 'set -e; for f in *.txt; do wc -l \"$f\"; done; echo ok' && "
        'sh -c "git status --short | head -5"'
    ),
    "wrappers": _pad(
        "timeout 30 nice -n 5 env LC_ALL=C FOO=1 python3 -m pytest -q tests/unit -x "
        "--maxfail=1 && nohup stdbuf -oL make -j2 all"
    ),
    "here-document": _pad(
        "cat <<'EOF' > notes.txt\nline one\nline two\nEOF\nsh <<EOF\necho hi\nEOF"
    ),
}
RUN_LINE = _pad("true && echo \"$(printf '%s' abc)\" | tr a-z A-Z | cat > /dev/null && : ok")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_judge(runs: int) -> None:
    gate = CommandGate(lambda: POLICY)
    ctx = CallContext(cwd=Path.cwd())
    print(f"(a) the judge alone, {len(POLICY.rules)} rules, {runs} runs per line")
    print(f"    {'line':<18} {'chars':>5} {'p50 µs':>8} {'p95 µs':>8}")
    for name, line in LINES.items():
        for _ in range(20):
            gate.check(line, ctx)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            gate.check(line, ctx)
            times.append(time.perf_counter() - t)
        p50, p95 = statistics.median(times) * 1e6, _percentile(times, 0.95) * 1e6
        print(f"    {name:<18} {len(line):>5} {p50:>8.0f} {p95:>8.0f}")


def _shell() -> ShellConfig:
    return ShellConfig("/bin/sh")


async def bench_exec(runs: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        owner = OutputOwner(root=temp)
        manager = ShellManager(owner, _shell)
        plain, _ = create_shell_tools(manager)
        judged, _ = create_shell_tools(manager, gate=CommandGate(lambda: POLICY))
        ctx = CallContext(cwd=Path.cwd())
        args = {"cmd": RUN_LINE}
        for _ in range(10):
            await plain(args, ctx)
            await judged(args, ctx)
        with_policy: list[float] = []
        without: list[float] = []

        async def run(tool: object, into: list[float]) -> None:
            t = time.perf_counter()
            result = await tool(args, ctx)  # type: ignore[operator]
            into.append(time.perf_counter() - t)
            assert result.details["status"] == "completed", result.text

        for i in range(runs):  # alternate which goes first, so load drifts hit both alike
            if i % 2 == 0:
                await run(judged, with_policy)
                await run(plain, without)
            else:
                await run(plain, without)
                await run(judged, with_policy)
        await manager.close()
        await owner.close()
    ours, peer = statistics.median(with_policy), statistics.median(without)
    added = (ours - peer) * 1e3
    print(f"(b) exec_command of a {len(RUN_LINE)}-character line to completion, {runs} runs")
    print(f"    with the policy {ours * 1e3:.2f} ms, without {peer * 1e3:.2f} ms (p50)")
    print(f"    the policy adds {added:+.2f} ms (goal ≤ 1 ms): {'ok' if added <= 1 else 'MISSED'}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    bench_judge(args.runs)
    await bench_exec(max(50, args.runs // 2))


if __name__ == "__main__":
    asyncio.run(main())
