"""--mem enforced (JobAcctGatherParams=OverMemoryKill): a job or step over its memory ends
OUT_OF_MEMORY, its neighbour runs on; without it, as Slurm's default, nothing is enforced."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from conftest import TestCluster, run_cluster

from minislurm.local.cluster import ClusterSpec

HOLD = sys.executable + " -c 'import time; x = b\"m\" * ({mib} << 20); time.sleep({seconds})'"


@pytest.fixture(scope="module")
def enforcing(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Two nodes that kill what holds more than its memory."""
    spec = ClusterSpec(
        kill_wait=2, min_job_age=600, conf_lines=("JobAcctGatherParams=OverMemoryKill",)
    )
    yield from run_cluster(tmp_path_factory.mktemp("enforcing"), request, spec)


def sacct(cluster: TestCluster, job: int) -> dict[str, tuple[str, str]]:
    """State and ExitCode of the job and each of its steps, by JobID."""
    result = cluster.run("sacct", "-j", str(job), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert result.rc == 0, result.err
    rows = [line.split("|") for line in result.out.splitlines() if line]
    return {row[0]: (row[1], row[2]) for row in rows}


@pytest.mark.timeout(90)
def test_a_job_over_its_memory_ends_out_of_memory_and_its_neighbour_runs_on(
    enforcing: TestCluster,
) -> None:
    cluster = enforcing
    neighbour = cluster.sbatch("-w", "n1", "--mem=64M", "--wrap", HOLD.format(mib=16, seconds=4))
    hog = cluster.sbatch(
        "-w", "n1", "--mem=64M", "-o", "hog-%j.out", "--wrap", HOLD.format(mib=192, seconds=60)
    )
    done = cluster.wait_state(hog, timeout=30)
    assert (done["JobState"], done["Reason"], done["ExitCode"]) == (
        "OUT_OF_MEMORY",
        "OutOfMemory",
        "0:125",
    )
    listed = cluster.run("squeue", "-t", "all", "-h", "-j", str(hog), "-o", "%T")
    assert listed.out.strip() == "OUT_OF_MEMORY"
    said = (cluster.workdir / f"hog-{hog}.out").read_text()
    assert f"slurmstepd-n1: error: Job {hog} exceeded memory limit (" in said
    assert "> 65536), being killed" in said
    rows = sacct(cluster, hog)
    assert rows[str(hog)] == ("OUT_OF_MEMORY", "0:125")
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
