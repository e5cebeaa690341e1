"""``make demo``: start a local two-node GPU cluster and run the example jobs on it.

``make demo-ddp`` (``--ddp``) runs the data-parallel example instead: 16 ranks
of torch.distributed, one per GPU of both nodes, all-reducing their ranks.
Uses only the real commands, as a user would: ``minislurm cluster up``,
``sbatch``, ``squeue``, ``scontrol``, ``sinfo``; the jobs find ``srun`` and
``python`` in this virtualenv, as after ``. .venv/bin/activate``. The cluster
stays up afterwards; ``make demo-down`` (``minislurm cluster down``) stops it.

Imports only the standard library.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NoReturn

BIN = Path(sys.executable).parent
EXAMPLES = Path(__file__).resolve().parent
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")
HOW_TO_STOP = "`make demo-down` stops the cluster"


def sh(*argv: str, cwd: Path | None = None) -> str:
    """Run one of our commands, echo it and its output, and return the output."""
    print(f"$ {' '.join(argv)}", flush=True)
    proc = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=cwd, text=True, capture_output=True, check=False
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        fail(f"`{' '.join(argv)}` failed with status {proc.returncode}")
    return proc.stdout


def fail(why: str) -> NoReturn:
    """Stop the demo, saying why and how to stop the cluster it left up."""
    sys.exit(f"demo: {why}; {HOW_TO_STOP}")


def job_states(ids: list[str], cwd: Path) -> list[str]:
    """Current states of the given jobs."""
    out = subprocess.run(
        [str(BIN / "squeue"), "-h", "-t", "all", "-j", ",".join(ids), "-o", "%T"],
        cwd=cwd,
        text=True,
        capture_output=True,
        check=True,
    )
    return out.stdout.split()


def wait_ended(ids: list[str], cwd: Path, timeout: float) -> list[str]:
    """Wait until every given job has ended, and return their states."""
    deadline = time.monotonic() + timeout
    while True:
        states = job_states(ids, cwd)
        if all(s in ENDED for s in states):
            return states
        if time.monotonic() > deadline:
            fail(f"jobs did not finish within {timeout:.0f} seconds")
        time.sleep(0.5)


def start_cluster() -> Path:
    """Start the local two-node, 8-GPU-per-node cluster (or find it running).

    Returns:
        The directory to submit jobs from.
    """
    home = Path(os.environ.get("MINISLURM_HOME", Path.home() / ".minislurm"))
    sh("minislurm", "cluster", "up", "--nodes", "2", "--gpus-per-node", "8")
    work = home / "demo"
    work.mkdir(parents=True, exist_ok=True)
    return work


def run_examples(work: Path) -> None:
    """Fill both nodes with GPU jobs, queue a two-node job behind them, show it all."""
    print(f"\nSubmitting the examples from {work}:")
    ids = [
        sh("sbatch", "--parsable", str(EXAMPLES / "gpu_job.sh"), "4", cwd=work).strip()
        for _ in range(4)
    ]
    ids.append(sh("sbatch", "--parsable", str(EXAMPLES / "multinode_job.sh"), cwd=work).strip())
    ids.append(sh("sbatch", "--parsable", str(EXAMPLES / "fail_job.sh"), cwd=work).strip())
    print("\nFour 4-GPU jobs fill both 8-GPU nodes; the two-node job waits for them:")
    sh("squeue", cwd=work)
    sh("sinfo", cwd=work)
    sh("scontrol", "show", "job", ids[0], cwd=work)
    wait_ended(ids, work, timeout=120)
    print("\nAll jobs ended:")
    sh("squeue", "-t", "all", "-o", "%.6i %.10j %.10T %.8M %.10N %r", cwd=work)
    print("\nTheir output (note the disjoint CUDA_VISIBLE_DEVICES):")
    for path in sorted(work.glob("*.out"), key=lambda p: p.stat().st_mtime)[-len(ids) :]:
        print(f"--- {path.name}")
        print(path.read_text(), end="")
    sh("scontrol", "show", "job", ids[-1], cwd=work)


def run_ddp(work: Path) -> None:
    """Run examples/ddp_job.sh on both whole nodes and show its ranks and their all-reduce."""
    print(f"\nSubmitting the data-parallel example from {work}:")
    job = sh(
        "sbatch",
        "--parsable",
        str(EXAMPLES / "ddp_job.sh"),
        str(EXAMPLES / "ddp_allreduce.py"),
        cwd=work,
    ).strip()
    sh("squeue", cwd=work)
    # Sixteen interpreters import torch at once: minutes on a small machine.
    (state,) = wait_ended([job], work, timeout=600)
    out = work / f"ddp-{job}.out"
    lines = out.read_text().splitlines()
    print(f"\nOne rank per GPU (--- {out.name}):")
    ranks = sorted((line for line in lines if line.startswith("rank=")), key=rank_of)
    print("\n".join([*ranks, *(line for line in lines if line not in ranks)]))
    sh("sacct", "-j", job, "-o", "JobID,JobName,NodeList,NTasks,State,ExitCode", cwd=work)
    if state != "COMPLETED":
        fail(f"job {job} ended {state}")


def rank_of(line: str) -> int:
    """The rank of one of ddp_allreduce.py's ``rank=N ...`` lines."""
    return int(line.split()[0].removeprefix("rank="))


def main() -> int:
    """Run the demo."""
    parser = argparse.ArgumentParser(description="Run minislurm's examples on a local cluster.")
    parser.add_argument("--ddp", action="store_true", help="run the data-parallel example")
    args = parser.parse_args()
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    work = start_cluster()
    if args.ddp:
        run_ddp(work)
    else:
        run_examples(work)
    print(f"\nThe cluster is still up: try sbatch/squeue/scontrol/sinfo yourself; {HOW_TO_STOP}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
