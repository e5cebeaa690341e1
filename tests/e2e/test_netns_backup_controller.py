"""The primary controller's host is cut off from the network: the backup takes over.

A namespace cluster (each controller and each slurmd a host of its own, on
a bridge where the cluster's PostgreSQL server listens): with jobs running
and an srun streaming, the primary's cable is taken down. The backup serves
once the primary's lease lapses; the jobs finish once and are recorded; the
primary, cut off, cannot renew its lease and stops by itself; plugged back
and started again it is a backup, and the lease does not move.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_until
from netns_harness import NetnsTestCluster, run_netns_cluster
from sqlalchemy import create_engine, text

from minislurm.config import load_slurm_conf
from minislurm.local.cluster import ClusterSpec
from minislurm.local.netns import NetnsCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

JOB_SECONDS = 12


@pytest.fixture
def netns_ha(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[NetnsTestCluster]:
    """Two nodes, ctl1 and ctl2, each on a host of its own; commands try for 30 s."""
    request.getfixturevalue("pg_server")  # skips, saying why, where PostgreSQL is missing
    spec = ClusterSpec(
        controllers=2, kill_wait=2, min_job_age=3600, conf_lines=("MessageTimeout=30",)
    )
    local = NetnsCluster(str(tmp_path))
    try:
        yield from run_netns_cluster(tmp_path, request, spec)
    finally:
        database = local.own_database()
        if database is not None:
            shutil.rmtree(database.directory, ignore_errors=True)


def role_of(cluster: NetnsTestCluster, name: str) -> str:
    """What controller ``name`` answers it is ("" when it does not)."""
    addr = dict(cluster.network.controller_addrs())[name]
    return cluster.local.controller_role(addr)


def lease(cluster: NetnsTestCluster) -> tuple[str, int]:
    """Who holds the controller's role, and its epoch, as the database says."""
    engine = create_engine(load_slurm_conf(cluster.local.conf_path).state_save_location)
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT holder, epoch FROM controller_lease")).one()
    finally:
        engine.dispose()
    return str(row[0]), int(row[1])


def test_a_primary_cut_off_is_replaced_and_stops_writing(netns_ha: NetnsTestCluster) -> None:
    cluster = netns_ha
    work = cluster.workdir
    (work / "locks").mkdir()
    (work / "runs").touch()
    (work / "doubles").touch()
    script = (
        "#!/bin/bash\n"
        f"echo $SLURM_JOB_ID >> {work}/runs\n"
        f"exec 9>{work}/locks/$SLURM_JOB_ID\n"
        f"flock -n 9 || echo $SLURM_JOB_ID >> {work}/doubles\n"
        f"sleep {JOB_SECONDS}\n"
    )
    assert (role_of(cluster, "ctl1"), role_of(cluster, "ctl2")) == ("primary", "backup")
    jobs = [cluster.sbatch("-o", "/dev/null", script=script) for _ in range(6)]
    for job_id in jobs:
        cluster.wait_state(job_id, "RUNNING")
    lines = "for i in $(seq 60); do echo line$i; sleep 0.25; done"
    srun = cluster.spawn("srun", "-n1", "bash", "-c", lines)

    cluster.local.unplug_controller("ctl1")
    cut = time.monotonic()
    longest = 0.0

    def served() -> bool:
        nonlocal longest
        began = time.monotonic()
        answered = cluster.run("squeue", "-h").rc == 0
        longest = max(longest, time.monotonic() - began)
        return answered

    wait_until(served, 90, "the backup to serve")
    takeover = time.monotonic() - cut
    assert role_of(cluster, "ctl2") == "primary"
    after = cluster.sbatch("-o", "/dev/null", script=script)

    out, err = srun.communicate(timeout=90)
    assert srun.returncode == 0, err
    assert out.split() == [f"line{i}" for i in range(1, 61)]
    for job_id in [*jobs, after]:
        info = cluster.wait_state(job_id, timeout=90)
        assert (info["JobState"], info["Restarts"]) == ("COMPLETED", "0"), info
    runs = (work / "runs").read_text().split()
    assert sorted(runs) == sorted(str(j) for j in [*jobs, after])  # each ran once
    assert (work / "doubles").read_text() == ""

    # Cut off, the old primary cannot renew its lease: it stops by itself.
    wait_until(lambda: cluster.local.pid("slurmctld-ctl1") is None, 60, "ctl1 to stop")
    held = lease(cluster)
    assert held[0] == "ctl2"
    cluster.local.unplug_controller("ctl1", plugged=True)
    cluster.start()
    assert (role_of(cluster, "ctl1"), role_of(cluster, "ctl2")) == ("backup", "primary")
    assert lease(cluster) == held
    log = Path(cluster.local.path("log", "slurmctld-ctl1.log")).read_text()
    assert "lost the controller's role" in log
    print(f"cut off: takeover {takeover:.2f} s, longest command {longest:.2f} s")
