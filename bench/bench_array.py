"""Job arrays on a local cluster: a 10,000-task array must cost next to nothing.

Run by hand (``make bench``); prints numbers with their ratio to the targets
and to real Slurm 22.05 measured on the same 2-core machine (MaxArraySize=10001).

1. ``sbatch --array=0-9999`` (held), through the real command, wall time;
2. ``squeue`` with such an array queued (compacted to one line), and ``squeue -r``
   (one line per task);
3. tasks run per second: a released array of short tasks, from release to the
   last task's end, on 2 nodes of 8 CPUs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from benchcluster import BIN, bench_cluster

REAL_SLURM = {"submit_ms": 10.0, "squeue_ms": 5.0, "squeue_r_ms": 120.0}
TARGETS = {"submit_ms": 1000.0, "squeue_ms": 500.0}


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, str]:
    """Run a command; its wall time in milliseconds and its output."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000, done.stdout


def bench_tasks(env: dict[str, str], work: str, count: int) -> float:
    """Array tasks started and finished per second (``true`` scripts)."""
    _, out = timed(
        [str(BIN / "sbatch"), "--parsable", f"--array=0-{count - 1}", "-H", "--wrap=true"],
        env,
        work,
    )
    array = out.strip()
    start = time.perf_counter()
    subprocess.run([str(BIN / "scontrol"), "release", array], env=env, check=True)
    while True:
        _, left = timed(
            [str(BIN / "squeue"), "-h", "-j", array, "-t", "PD,R,CG", "-o", "%i"], env, work
        )
        if not left.strip():
            return count / (time.perf_counter() - start)
        time.sleep(0.2)


def line(name: str, value: float, unit: str, key: str) -> str:
    """One result, lower is better, with its ratios."""
    real = REAL_SLURM[key]
    target = TARGETS.get(key)
    goal = f"target {target:g} ({'met' if value <= target else 'MISSED'}), " if target else ""
    return f"{name:<44} {value:9.1f} {unit:<3} {goal}{real / value:.2f}x real Slurm ({real:g})"


def main() -> int:
    """Run the benchmarks on a fresh local cluster."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000, help="tasks of the big array")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", type=int, default=200, help="tasks actually run")
    args = parser.parse_args()
    with bench_cluster() as bench:
        env, work = bench.env, bench.work
        sbatch = [str(BIN / "sbatch"), "-Q", f"--array=0-{args.size - 1}", "-H", "--wrap=true"]
        submit = [timed(sbatch, env, work)[0] for _ in range(args.rounds)]
        squeue = [timed([str(BIN / "squeue")], env, work)[0] for _ in range(args.rounds)]
        expanded = [timed([str(BIN / "squeue"), "-r"], env, work)[0] for _ in range(3)]
        subprocess.run([str(BIN / "scancel"), "--user", str(os.getuid())], env=env, check=True)
        rate = bench_tasks(env, work, args.run)
    size = f"{args.size:,}"
    print(f"minislurm on {os.cpu_count()} CPUs")
    print(
        line(
            f"sbatch --array of {size} tasks (median)", statistics.median(submit), "ms", "submit_ms"
        )
    )
    print(
        line(
            f"squeue, {args.rounds} such arrays queued (median)",
            statistics.median(squeue),
            "ms",
            "squeue_ms",
        )
    )
    print(
        line(
            f"squeue -r, {args.rounds * args.size:,} lines (median)",
            statistics.median(expanded),
            "ms",
            "squeue_r_ms",
        )
    )
    print(f"{f'array tasks run, {args.run} x true on 16 CPUs':<44} {rate:9.1f} /s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
