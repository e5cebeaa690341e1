"""Real PyTorch distributed training launched by srun and by torchrun, across two nodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TestCluster

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALLREDUCE = EXAMPLES / "ddp_allreduce.py"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def results(path: Path) -> list[dict[str, str]]:
    """The ``key=value`` lines the example prints, one dict per rank, by rank."""
    rows = [
        dict(word.split("=", 1) for word in line.split())
        for line in path.read_text().splitlines()
        if line.startswith("rank=")
    ]
    return sorted(rows, key=lambda r: int(r["rank"]))


def test_srun_launches_a_gloo_allreduce_over_two_nodes(cluster: TestCluster) -> None:
    # Half of each node (the script asks for both whole nodes): 8 ranks start sooner than 16.
    job_id = cluster.sbatch(
        "--ntasks-per-node=4",
        "--gres=gpu:4",
        "-o",
        "ddp-%j.out",
        str(EXAMPLES / "ddp_job.sh"),
        str(ALLREDUCE),
    )
    info = cluster.wait_state(job_id, timeout=240)
    out = cluster.workdir / f"ddp-{job_id}.out"
    assert info["JobState"] == "COMPLETED", out.read_text()
    ranks = results(out)
    assert [r["rank"] for r in ranks] == [str(i) for i in range(8)]
    assert all(r["world"] == "8" and r["sum"] == str(sum(range(8))) for r in ranks)
    assert [r["local_rank"] for r in ranks] == ["0", "1", "2", "3"] * 2
    assert "all-reduce over 8 ranks: 28.0 (expected 28.0)" in out.read_text().splitlines()
    assert [r["node"] for r in ranks] == ["n1"] * 4 + ["n2"] * 4
    for node in ("n1", "n2"):
        gpus = [r["cvd"] for r in ranks if r["node"] == node]
        assert len(set(gpus)) == 4 and all(g.isdigit() for g in gpus)


def test_torchrun_once_per_node_rendezvous_at_master_addr(cluster: TestCluster) -> None:
    # As in Slurm 22.05, the job's SLURM_NTASKS=8 would override a lone
    # --ntasks-per-node=1 (with a warning): one torchrun per node is -n $SLURM_NNODES.
    script = f"""#!/bin/bash
srun -n $SLURM_NNODES --ntasks-per-node=1 torchrun --nnodes=$SLURM_NNODES --nproc-per-node=4 \\
    --rdzv-id=$SLURM_JOB_ID --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT \\
    {ALLREDUCE}
"""
    job_id = cluster.sbatch(
        "-N2", "--ntasks-per-node=4", "--gres=gpu:4", "-o", "torchrun-%j.out", script=script
    )
    info = cluster.wait_state(job_id, timeout=240)
    out = cluster.workdir / f"torchrun-{job_id}.out"
    assert info["JobState"] == "COMPLETED", out.read_text()
    ranks = results(out)
    assert [r["rank"] for r in ranks] == [str(i) for i in range(8)]
    assert all(r["world"] == "8" and r["sum"] == "28" for r in ranks)
    assert sorted(r["node"] for r in ranks) == ["n1"] * 4 + ["n2"] * 4
