"""Pending reasons beyond the jobs a pass tests: kept as they were, as Slurm keeps them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def shallow_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose passes test only the first job of the queue."""
    conf = "SchedulerParameters=bf_max_job_test=1,default_queue_depth=1\n"
    yield from run_cluster(tmp_path, request, conf_lines=conf)


def test_a_block_that_ends_clears_the_reason_of_an_untested_job(
    shallow_cluster: TestCluster,
) -> None:
    cluster = shallow_cluster
    gate = cluster.workdir / "gate"
    hold = f"#!/bin/sh\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"
    running = cluster.sbatch("-N2", "--exclusive", script=hold)
    cluster.wait_state(running, "RUNNING")
    first = cluster.sbatch("-N2", "--exclusive", "--wrap=true")
    later = cluster.sbatch("--begin=now+3", "--wrap=true")
    wait_until(lambda: cluster.job(first)["Reason"] == "Resources", 20, "first to wait")
    assert cluster.job(later)["Reason"] == "BeginTime"
    # Past its begin time the job is blocked no more, but the pass tests only `first`.
    wait_until(lambda: cluster.job(later)["Reason"] == "None", 30, "BeginTime to clear")
    gate.touch()
    for job_id in (running, first, later):
        assert cluster.wait_state(job_id, timeout=60)["JobState"] == "COMPLETED"
