"""squeue -s over 1,000 running steps, on a local two-node cluster.

Run by hand (``python bench/bench_squeue_steps.py``). An allocation gets
``--steps`` overlapping steps through the RPC srun makes (CreateStep): the
controller holds them RUNNING exactly as srun's, without a thousand task
processes on the machine. Then the real ``squeue -s`` (and ``scontrol show
step``) are timed end to end: start-up, the GetSteps call, decoding and
printing. Prints the median of ``--runs`` runs beside the target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from bench_srun import allocation
from benchcluster import BIN, bench_cluster

from minislurm.conffile import read_controller_address
from minislurm.security import auth
from minislurm.wire.ctlclient import ControllerClient

TARGET_MS = {"squeue": 200.0}
REAL_SLURM_MS = {"squeue": 6.0}  # /usr/bin/squeue -s over 3 steps on the reference cluster


def create_steps(conf: str, job_id: int, count: int) -> None:
    """``count`` steps of one task each in the allocation, sharing its CPUs (--overlap)."""
    host, port = read_controller_address(conf)
    with ControllerClient(host, port, timeout=30, signer=auth.signer_for(conf)) as ctl:
        for i in range(count):
            ctl.call(
                "CreateStep",
                spec={
                    "job_id": job_id,
                    "name": f"step{i}",
                    "argv": ["sleep", "600"],
                    "ntasks": 1,
                    "overlap": True,
                    "requester_uid": os.getuid(),
                    "srun_host": "bench",
                    "srun_pid": os.getpid(),
                },
            )


def timed(argv: list[str], env: dict[str, str], cwd: str, runs: int) -> tuple[list[float], str]:
    """Wall-clock milliseconds of each run (after one to warm up), and the output."""
    out = subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True, text=True).stdout
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return times, out


def report(name: str, times: list[float], key: str | None = None) -> None:
    """One line: median and spread, beside the target and real Slurm when there are."""
    median = statistics.median(times)
    line = f"{name:<46} median {median:6.1f} ms (min {min(times):.1f}, max {max(times):.1f})"
    if key:
        target, real = TARGET_MS[key], REAL_SLURM_MS[key]
        line += f"  target {target:g} ({'met' if median <= target else 'MISSED'})"
        line += f"  real Slurm, 3 steps: {real:g}"
    print(line)


def main() -> int:
    """Run the benchmark on a fresh local cluster."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with bench_cluster() as bench:
        env, work = bench.env, bench.work
        job_id = allocation(bench.cluster.conf_path, work)
        create_steps(bench.cluster.conf_path, job_id, args.steps)
        squeue, out = timed([str(BIN / "squeue"), "-s"], env, work, args.runs)
        listed = len(out.splitlines()) - 1
        assert listed == args.steps, f"squeue -s listed {listed} steps, not {args.steps}"
        one, _ = timed([str(BIN / "squeue"), "-s", f"{job_id}.7"], env, work, args.runs)
        show, _ = timed([str(BIN / "scontrol"), "show", "step"], env, work, args.runs)
    print(f"minislurm on {os.cpu_count()} CPUs, {args.steps} running steps, {args.runs} runs each")
    report(f"squeue -s ({listed} lines)", squeue, "squeue")
    report(f"squeue -s {job_id}.7 (one line)", one)
    report("scontrol show step (all)", show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
