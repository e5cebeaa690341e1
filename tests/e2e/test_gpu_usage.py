"""GPU utilisation and memory of a step's GPUs in sstat and sacct, as Slurm 23.02 shows them."""

from __future__ import annotations

import pytest
from conftest import TestCluster
from helpers import wait_until

SCRIPT = """#!/bin/sh
for gpu in $(echo "$CUDA_VISIBLE_DEVICES" | tr , ' '); do
    echo "7$gpu 204$gpu" > "$FAKE_GPUS/$gpu"
done
srun -n2 --gpus-per-task=1 sh -c 'touch "$GATE.$SLURM_PROCID"
    while [ ! -e "$GATE.stop" ]; do sleep 0.1; done'
"""


@pytest.mark.timeout(90)
def test_sstat_and_sacct_show_the_gpus_utilisation_and_memory(cluster: TestCluster) -> None:
    fake = cluster.home / "spool" / "n1" / "fake-gpus"
    gate = cluster.workdir / "gpu-gate"
    path = cluster.workdir / "gpus.sh"
    path.write_text(SCRIPT)
    result = cluster.run(
        "sbatch", "--parsable", "-w", "n1", "-n2", "--gpus=2",
        f"--export=ALL,FAKE_GPUS={fake},GATE={gate}", str(path),
    )  # fmt: skip
    assert result.rc == 0, result.err
    job = int(result.out)
    try:
        wait_until(lambda: all((gate.parent / f"gpu-gate.{r}").exists() for r in (0, 1)), 30)
        gpus = sorted(int(f.name) for f in fake.iterdir())
        assert len(gpus) == 2

        def stat(field: str) -> str:
            out = cluster.run("sstat", "-j", f"{job}.0", "-n", "-P", "-o", field)
            assert out.rc == 0, out.err
            return out.out.strip()

        top = wait_until(lambda: "gres/gpuutil=7" in (s := stat("TRESUsageInMax")) and s, 30)
        util = {70 + g for g in gpus}
        mem = {2040 + g for g in gpus}
        assert f"gres/gpumem={max(mem)}M,gres/gpuutil={max(util)}," in top
        tot = stat("TRESUsageInTot")
        assert f"gres/gpumem={sum(mem)}M,gres/gpuutil={sum(util)}," in tot
        low = stat("TRESUsageInMin")
        assert f"gres/gpumem={min(mem)}M,gres/gpuutil={min(util)}," in low
        (gate.parent / "gpu-gate.stop").touch()
        assert cluster.wait_state(job)["JobState"] == "COMPLETED"
    finally:
        cluster.run("scancel", str(job))
    # What the step's nodes last sampled stays in the accounting.
    fields = "JobID,TRESUsageInMax,TRESUsageInTot,MaxRSS,AveRSS"
    rows = cluster.run("sacct", "-j", str(job), "-n", "-P", "-o", fields).out.splitlines()
    by_id = {row.split("|")[0]: row.split("|") for row in rows}
    step = by_id[f"{job}.0"]
    assert f"gres/gpumem={max(mem)}M,gres/gpuutil={max(util)}," in step[1]
    assert f"gres/gpumem={sum(mem)}M,gres/gpuutil={sum(util)}," in step[2]
    assert step[3] != "0" and step[4] != ""  # the tasks' memory too
    assert "gres/gpumem=" in by_id[f"{job}.batch"][1]  # the script has the job's GPUs
    assert by_id[str(job)][1] == ""  # as Slurm's: usage is the steps'
    cpu_only = cluster.sbatch("--wrap", "srun sleep 30")
    try:
        plain = wait_until(
            lambda: (s := cluster.run("sstat", "-j", f"{cpu_only}.0", "-n", "-P", "-o",
                                      "TRESUsageInMax")).rc == 0 and s.out.strip(),
            30,
        )  # fmt: skip
        assert "gres/" not in plain
    finally:
        cluster.run("scancel", str(cpu_only))
