"""Backfill on a live cluster: short jobs run in the gap before a waiting 2-node job.

A 2-node "training" job waits for a node held by a job with a 3-minute
limit; its planned start (``squeue --start``) is that job's limit end. A
stream of short jobs (1-minute limits) runs on the other node meanwhile,
and a long job that would hold it past the planned start does not start.
``bf_resolution=1`` makes the planned start exact to the second.

Imports the e2e conftest and the test helpers.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

SHORT_JOBS = 5


@pytest.fixture(scope="module")
def bf_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Two nodes of 8 CPUs, backfill to the second."""
    conf = "SchedulerParameters=bf_resolution=1,bf_interval=5\n"
    yield from run_cluster(tmp_path_factory.mktemp("backfill"), request, conf_lines=conf)


def epoch(text: str) -> float:
    """A Slurm timestamp (2026-11-30T10:20:00) as epoch seconds."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp()


def planned_start(cluster: TestCluster, job_id: int) -> str:
    """``squeue --start``'s START_TIME of a job ("" when it is not listed)."""
    result = cluster.run("squeue", "--start", "-h", "-j", str(job_id), "-o", "%S")
    assert result.rc == 0, result.err
    return result.out.strip()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_short_jobs_run_in_the_gap_and_the_training_job_is_not_delayed(
    bf_cluster: TestCluster,
) -> None:
    cluster = bf_cluster
    release = cluster.workdir / "release-blocker"
    blocker = cluster.sbatch(
        "-w", "n1", "--exclusive", "-t", "3",
        script=f"#!/bin/sh\nwhile [ ! -e {release} ]; do sleep 0.2; done\n",
    )  # fmt: skip
    started = epoch(cluster.wait_state(blocker, "RUNNING")["StartTime"])
    training = cluster.sbatch("-N", "2", "--exclusive", "-t", "10", script="#!/bin/sh\nsleep 30\n")
    shown = wait_until(lambda: planned_start(cluster, training), 10, "a planned start")
    expected = epoch(shown)
    # The blocker's limit end, rounded up to the second (StartTime shows whole seconds).
    assert started + 180 <= expected <= started + 181
    info = cluster.job(training)
    assert (info["JobState"], info["Reason"]) == ("PENDING", "Resources")
    assert info["StartTime"] == shown  # scontrol shows the planned start too

    # Too long for the gap: it would hold n2 past the training job's planned start.
    long_job = cluster.sbatch("-N", "1", "-t", "5", script="#!/bin/sh\ntrue\n")
    for _ in range(SHORT_JOBS):
        short = cluster.sbatch("-N", "1", "-t", "1", script="#!/bin/sh\nhostname\n")
        done = cluster.wait_state(short, "COMPLETED")
        assert done["NodeList"] == "n2"
        assert cluster.state(training) == "PENDING"
        assert planned_start(cluster, training) == shown  # never pushed back
        assert cluster.state(long_job) == "PENDING"

    Path(release).touch()
    info = cluster.wait_state(training, "RUNNING", timeout=30)
    assert epoch(info["StartTime"]) <= expected
    assert info["NodeList"] == "n[1-2]"
    assert cluster.state(long_job) == "PENDING"  # it waits for the training job
    assert cluster.run("scancel", str(training), str(long_job)).rc == 0
