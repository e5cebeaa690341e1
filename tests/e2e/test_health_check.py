"""HealthCheckProgram (the shipped example): a sick node drains itself and gets no work."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "healthcheck.sh"
INTERVAL = 2


@pytest.fixture
def checked(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes checked by examples/healthcheck.sh every INTERVAL seconds; n2 sick at once."""
    home = tmp_path / "cluster"
    (home / "gpu-faults").mkdir(parents=True)
    (home / "gpu-faults" / "n2").write_text("gpu 3 fell off the bus")
    spec = ClusterSpec(
        kill_wait=2,
        min_job_age=600,
        conf_lines=(
            f"HealthCheckProgram={EXAMPLE}",
            f"HealthCheckInterval={INTERVAL}",
            "HealthCheckNodeState=ANY",
        ),
    )
    yield from run_cluster(home, request, spec)


def reason(cluster: TestCluster, node: str) -> str:
    result = cluster.run("sinfo", "-h", "-n", node, "-o", "%E")
    assert result.rc == 0, result.err
    return result.out.strip()


@pytest.mark.timeout(120)
def test_a_failing_health_check_drains_its_node_and_no_job_starts_there(
    checked: TestCluster,
) -> None:
    # n2 was sick before it registered: it never was idle.
    assert reason(checked, "n2") == "gpu 3 fell off the bus"
    state = checked.run("sinfo", "-h", "-N", "-n", "n2", "-o", "%t")
    assert set(state.out.split()) == {"drain"}
    jobs = [checked.sbatch("-c", "8", "--wrap", "true") for _ in range(3)]
    for job in jobs:
        done = checked.wait_state(job)
        assert (done["JobState"], done["NodeList"]) == ("COMPLETED", "n1")

    # A fault that appears later is caught within one interval.
    (checked.home / "gpu-faults" / "n1").write_text("nvidia-smi failed")
    began = time.monotonic()
    wait_until(lambda: reason(checked, "n1") == "nvidia-smi failed", INTERVAL + 8, "n1 drained")
    assert time.monotonic() - began < INTERVAL + 8
    late = checked.sbatch("--wrap", "true")
    assert checked.job(late)["JobState"] == "PENDING"

    # Mended and resumed, the nodes pass their checks and run jobs again.
    for node in ("n1", "n2"):
        (checked.home / "gpu-faults" / node).unlink()
        result = checked.run("scontrol", "update", f"nodename={node}", "state=resume")
        assert result.rc == 0, result.err
    assert checked.wait_state(late)["JobState"] == "COMPLETED"
    wide = checked.sbatch("-N2", "--wrap", "true")
    assert checked.wait_state(wide)["JobState"] == "COMPLETED"
    assert reason(checked, "n1") == reason(checked, "n2") == "none"
