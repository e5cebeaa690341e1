"""sdiag against a live controller: job counts, scheduling cycles, RPCs, and -r."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    yield from run_cluster(
        tmp_path_factory.mktemp("sdiag"),
        request,
        ClusterSpec(nodes=2, kill_wait=2, min_job_age=600),
    )


def figures(cluster: TestCluster) -> dict[str, int]:
    """sdiag's ``Name: number`` lines (section-qualified where Slurm repeats a name)."""
    result = cluster.run("sdiag")
    assert result.rc == 0, result.err
    section, found = "", {}
    for line in result.out.splitlines():
        if not line.startswith("\t"):
            section = "bf " if line.startswith("Backfilling") else section
        match = re.fullmatch(r"\t?([A-Za-z ]+):\s+(\d+)", line)
        if match:
            found[section + match.group(1)] = int(match.group(2))
    return found


def test_counts_grow_with_jobs_and_passes_and_start_again_on_reset(cluster: TestCluster) -> None:
    before = figures(cluster)
    done = cluster.sbatch("--wrap", "true")
    failed = cluster.sbatch("--wrap", "false")
    held = cluster.sbatch("-H", "--wrap", "true")
    for job, state in ((done, "COMPLETED"), (failed, "FAILED")):
        cluster.wait_state(job, state)
    assert cluster.run("scancel", str(held)).rc == 0
    cluster.wait_state(held, "CANCELLED")
    after = figures(cluster)
    grown = {k: after[k] - before[k] for k in ("Jobs submitted", "Jobs started", "Jobs completed")}
    assert grown == {"Jobs submitted": 3, "Jobs started": 2, "Jobs completed": 1}
    assert after["Jobs failed"] - before["Jobs failed"] == 1
    assert after["Jobs canceled"] - before["Jobs canceled"] == 1
    cycles = after["Total cycles"] + after["bf Total cycles"]
    assert cycles > before["Total cycles"] + before["bf Total cycles"]
    rpcs = cluster.run("sdiag", "-t").out
    assert re.search(r"\tSubmitJob +count:[1-9]", rpcs), rpcs
    assert re.search(r"\troot +\( +0\) count:[1-9]", rpcs), rpcs

    reset = cluster.run("sdiag", "-r")
    assert (reset.rc, reset.out) == (0, "Reset scheduling statistics\n")
    zero = figures(cluster)
    assert zero["Jobs submitted"] == zero["Jobs completed"] == 0
    job = cluster.sbatch("--wrap", "true")
    cluster.wait_state(job, "COMPLETED")
    wait_until(lambda: figures(cluster)["Jobs completed"] == 1, 10, "the count after a reset")
