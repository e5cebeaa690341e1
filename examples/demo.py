"""``make demo``: start a local two-node GPU cluster and run the example jobs on it.

Uses only the real commands, as a user would: ``minislurm cluster up``,
``sbatch``, ``squeue``, ``scontrol``, ``sinfo``. The cluster stays up
afterwards; ``make demo-down`` (``minislurm cluster down``) stops it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
EXAMPLES = Path(__file__).resolve().parent


def sh(*argv: str, cwd: Path | None = None) -> str:
    """Run one of our commands, echo it and its output, and return the output."""
    print(f"$ {' '.join(argv)}", flush=True)
    proc = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=cwd, text=True, capture_output=True, check=False
    )
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"demo: `{' '.join(argv)}` failed with status {proc.returncode}")
    return proc.stdout


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


def main() -> int:
    """Run the demo."""
    home = Path(os.environ.get("MINISLURM_HOME", Path.home() / ".minislurm"))
    sh("minislurm", "cluster", "up", "--nodes", "2", "--gpus-per-node", "8")
    work = home / "demo"
    work.mkdir(parents=True, exist_ok=True)
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
    deadline = time.monotonic() + 120
    while any(
        s not in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT") for s in job_states(ids, work)
    ):
        if time.monotonic() > deadline:
            sys.exit("demo: jobs did not finish within two minutes")
        time.sleep(0.5)
    print("\nAll jobs ended:")
    sh("squeue", "-t", "all", "-o", "%.6i %.10j %.10T %.8M %.10N %r", cwd=work)
    print("\nTheir output (note the disjoint CUDA_VISIBLE_DEVICES):")
    for path in sorted(work.glob("*.out"), key=lambda p: p.stat().st_mtime)[-len(ids) :]:
        print(f"--- {path.name}")
        print(path.read_text(), end="")
    sh("scontrol", "show", "job", ids[-1], cwd=work)
    print(
        "\nThe cluster is still up: try sbatch/squeue/scontrol/sinfo yourself;"
        " `make demo-down` stops it."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
