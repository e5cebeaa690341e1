"""A host fails: its slurmd is killed and its cable unplugged; its batch job reruns on the other.

The job's supervisor on the failed host keeps running, unreachable, as on a
real machine cut off from the network; the controller only sees silence.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_until
from netns_harness import NetnsTestCluster, run_netns_cluster

from minislurm.local.cluster import ClusterSpec

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SLURMD_TIMEOUT = 4  # seconds of silence before a node is DOWN

JOB = """#!/bin/bash
echo "$(hostname) ${SLURM_RESTART_COUNT:-0}" >> runs-$SLURM_JOB_ID.txt
[ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] || sleep 600
"""


@pytest.fixture
def netns_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[NetnsTestCluster]:
    """Two namespace nodes that notice a silent peer within seconds."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, slurmd_timeout=SLURMD_TIMEOUT)
    yield from run_netns_cluster(tmp_path, request, spec)


def test_job_of_a_failed_host_is_requeued_onto_the_other(netns_cluster: NetnsTestCluster) -> None:
    job_id = netns_cluster.sbatch("-N1", "-o", "fail-%j.out", script=JOB)
    runs = netns_cluster.workdir / f"runs-{job_id}.txt"
    wait_until(runs.exists, 30, "the job to start")
    failed = netns_cluster.wait_state(job_id, "RUNNING")["NodeList"]
    survivor = "n2" if failed == "n1" else "n1"
    pid = netns_cluster.local.pid(f"slurmd-{failed}")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    netns_cluster.local.unplug(failed)

    info = netns_cluster.wait_state(job_id, timeout=60)
    assert info["JobState"] == "COMPLETED"
    assert info["NodeList"] == survivor
    assert info["Restarts"] == "1"
    assert runs.read_text().splitlines() == [f"{failed} 0", f"{survivor} 1"]
    state = netns_cluster.run("sinfo", "-h", "-n", failed, "-p", "gpu", "-o", "%T %E").out
    assert state.split(None, 1) == ["down*", "Not responding\n"]
