"""srun latency on a local two-node cluster, against real Slurm on the same machine.

Run by hand (``make bench``). Prints the median of N runs of:

1. ``srun -N2 -n8 true`` outside any allocation (it allocates, runs, releases);
2. ``srun -n1 true`` inside an allocation (a step of an existing job).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from benchcluster import BIN, bench_cluster

from minislurm.conffile import read_controller_address
from minislurm.security import auth
from minislurm.wire.ctlclient import ControllerClient

REAL_SLURM_MS = {"outside": 159.0, "inside": 34.0}
TARGET_MS = {"outside": 150.0, "inside": 80.0}


def timed(argv: list[str], env: dict[str, str], cwd: str, runs: int) -> list[float]:
    """Wall-clock milliseconds of each run of a command."""
    subprocess.run(argv, env=env, cwd=cwd, check=True)  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, stdin=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return times


def allocation(conf: str, work: str) -> int:
    """A running allocation (a job without a batch script) to start steps in."""
    host, port = read_controller_address(conf)
    with ControllerClient(host, port, timeout=30, signer=auth.signer_for(conf)) as ctl:
        job_id = int(
            ctl.call(
                "SubmitJob",
                spec={
                    "name": "bench",
                    "work_dir": work,
                    "submit_dir": work,
                    "batch": False,
                    "uid": os.getuid(),
                    "gid": os.getgid(),
                    "user": str(os.getuid()),
                },
            ).job_id
        )
        ctl.call("WaitJob", job_id=job_id, timeout=30.0)
    return job_id


def report(name: str, key: str, times: list[float]) -> None:
    """One line: median and spread, target and real Slurm."""
    median = statistics.median(times)
    target, real = TARGET_MS[key], REAL_SLURM_MS[key]
    print(
        f"{name:<40} median {median:6.1f} ms (min {min(times):.1f}, max {max(times):.1f})"
        f"  target {target:g} ({'met' if median <= target else 'MISSED'})"
        f"  real Slurm {real:g} ({median / real:.2f}x)"
    )


def main() -> int:
    """Run the benchmark on a fresh local cluster."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with bench_cluster() as bench:
        env, work = bench.env, bench.work
        outside = timed([str(BIN / "srun"), "-N2", "-n8", "true"], env, work, args.runs)
        job_id = allocation(bench.cluster.conf_path, work)
        inside_env = {**env, "SLURM_JOB_ID": str(job_id)}
        inside = timed([str(BIN / "srun"), "-n1", "true"], inside_env, work, args.runs)
    print(f"minislurm on {os.cpu_count()} CPUs, {args.runs} runs each")
    report("srun -N2 -n8 true (outside an allocation)", "outside", outside)
    report("srun -n1 true (inside an allocation)", "inside", inside)
    return 0


if __name__ == "__main__":
    sys.exit(main())
