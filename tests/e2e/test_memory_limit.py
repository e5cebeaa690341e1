"""--mem enforced (JobAcctGatherParams=OverMemoryKill): a job or step over its memory ends
OUT_OF_MEMORY, its neighbour runs on; without it, as Slurm's default, nothing is enforced."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import HOLD, TestCluster, run_cluster, wait_out_of_memory
from conftest import sacct_states as sacct

from minislurm.local.cluster import ClusterSpec


@pytest.fixture(scope="module")
def enforcing(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Two nodes that kill what holds more than its memory."""
    spec = ClusterSpec(
        kill_wait=2, min_job_age=600, conf_lines=("JobAcctGatherParams=OverMemoryKill",)
    )
    yield from run_cluster(tmp_path_factory.mktemp("enforcing"), request, spec)


@pytest.mark.timeout(90)
def test_a_job_over_its_memory_ends_out_of_memory_and_its_neighbour_runs_on(
    enforcing: TestCluster,
) -> None:
    cluster = enforcing
    neighbour = cluster.sbatch("-w", "n1", "--mem=64M", "--wrap", HOLD.format(mib=16, seconds=4))
    hog = cluster.sbatch(
        "-w", "n1", "--mem=64M", "-o", "hog-%j.out", "--wrap", HOLD.format(mib=192, seconds=60)
    )
    wait_out_of_memory(cluster, hog)
    said = (cluster.workdir / f"hog-{hog}.out").read_text()
    assert f"slurmstepd-n1: error: Job {hog} exceeded memory limit (" in said
    assert "> 65536), being killed" in said
    rows = sacct(cluster, hog)
    assert rows[f"{hog}.batch"][0] == "OUT_OF_MEMORY"
    # The job beside it on the same node, within its own memory, is untouched.
    assert cluster.wait_state(neighbour)["JobState"] == "COMPLETED"
    assert sacct(cluster, neighbour)[str(neighbour)] == ("COMPLETED", "0:0")


@pytest.mark.timeout(90)
def test_a_step_over_its_memory_ends_out_of_memory_and_the_script_goes_on(
    enforcing: TestCluster,
) -> None:
    cluster = enforcing
    script = f"srun {HOLD.format(mib=192, seconds=60)}\necho srun said $?\n"
    job = cluster.sbatch("--mem=64M", "-o", "step-%j.out", "--wrap", script)
    assert cluster.wait_state(job, timeout=30)["JobState"] == "COMPLETED"
    rows = sacct(cluster, job)
    assert rows[f"{job}.0"] == ("OUT_OF_MEMORY", "0:125")
    out = (cluster.workdir / f"step-{job}.out").read_text()
    assert f"error: Step {job}.0 exceeded memory limit (" in out
    assert "srun said 0" not in out


@pytest.mark.timeout(60)
def test_without_over_memory_kill_memory_is_not_enforced(cluster: TestCluster) -> None:
    job = cluster.sbatch("--mem=64M", "--wrap", HOLD.format(mib=192, seconds=2))
    assert cluster.wait_state(job)["JobState"] == "COMPLETED"
