"""GPU utilisation and memory of a step's GPUs in sstat, as Slurm 23.02 shows them."""

from __future__ import annotations

import pytest
from conftest import TestCluster
from helpers import wait_until

SCRIPT = """#!/bin/sh
for gpu in $(echo "$CUDA_VISIBLE_DEVICES" | tr , ' '); do
    echo "7$gpu 204$gpu" > "$FAKE_GPUS/$gpu"
done
srun -n2 --gpus-per-task=1 sh -c 'touch "$GATE.$SLURM_PROCID"; sleep 60'
"""


@pytest.mark.timeout(90)
def test_sstat_shows_the_gpus_utilisation_and_memory(cluster: TestCluster) -> None:
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
    finally:
        cluster.run("scancel", str(job))
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
