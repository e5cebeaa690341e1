"""A primary and a backup slurmctld over one PostgreSQL database: the backup takes over.

Two controllers (``--controllers 2``: ctl1 on 127.0.0.1, ctl2 on 127.0.0.2,
one port), four nodes and the cluster's own PostgreSQL server. While eight
clients submit and change jobs, 50+ jobs run and srun steps stream their
output, the primary is SIGKILLed: the backup serves within SlurmctldTimeout
and a reload; every acknowledged submission, cancel, hold and update is
there; each job runs once and is recorded COMPLETED; the old primary,
restarted, stays a standby and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until
from takeover_load import (
    SPEC,
    kill,
    lease,
    removing_its_database,
    roles,
    survive_the_loss_of_the_primary,
)

from minislurm.local.cluster import LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def ha_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Four 16-CPU nodes, ctl1 and ctl2; commands keep trying for 30 s (MessageTimeout)."""
    request.getfixturevalue("pg_server")  # skips, saying why, where PostgreSQL is missing
    running = run_cluster(tmp_path, request, SPEC)
    yield from removing_its_database(LocalCluster(str(tmp_path)), running)


def test_controllers_answer_ping_and_status_with_their_roles(ha_cluster: TestCluster) -> None:
    cluster = ha_cluster
    ping = cluster.run("scontrol", "ping")
    assert (ping.out, ping.rc) == (
        "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is UP\n",
        0,
    )
    assert roles(cluster) == {"slurmctld-ctl1": "primary", "slurmctld-ctl2": "backup"}
    config = cluster.run("scontrol", "show", "config").out
    assert "SlurmctldHost[1]        = ctl2(127.0.0.2)" in config
    assert "SlurmctldTimeout        = 5 sec" in config


def test_the_backup_takes_over_from_a_killed_primary_and_loses_nothing(
    ha_cluster: TestCluster,
) -> None:
    cluster = ha_cluster
    done = survive_the_loss_of_the_primary(cluster, lambda daemon: kill(cluster, daemon))

    # The old primary, restarted, is a standby: it writes nothing, the role stays.
    held = lease(cluster)
    cluster.start()
    assert roles(cluster) == {done.old: "backup", done.new: "primary"}
    assert cluster.sbatch("--wrap=true") == done.last_job + 1
    assert lease(cluster) == held
    log = Path(cluster.local.path("log", f"{done.old}.log")).read_text()
    assert log.count("holds the controller's role") == 1  # before the kill, not since


def test_scontrol_takeover_moves_the_role_and_the_old_primary_stops(
    ha_cluster: TestCluster,
) -> None:
    cluster = ha_cluster
    job_id = cluster.sbatch("--wrap=sleep 3")
    cluster.wait_state(job_id, "RUNNING")
    result = cluster.run("scontrol", "takeover")
    assert (result.out, result.err, result.rc) == ("", "", 0)
    wait_until(lambda: cluster.local.pid("slurmctld-ctl1") is None, 20, "ctl1 to stop")
    assert roles(cluster) == {"slurmctld-ctl1": "", "slurmctld-ctl2": "primary"}
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    bad = cluster.run("scontrol", "takeover", "2")
    assert (bad.err, bad.rc) == ("takeover: invalid backup controller index (2)\n", 1)
