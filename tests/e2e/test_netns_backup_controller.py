"""The primary controller's host is cut off from the network: the backup takes over.

A namespace cluster (each controller and each slurmd a host of its own, on
a bridge where the cluster's PostgreSQL server listens), under the load of
tests/e2e/takeover_load.py: the primary's cable is taken down. The backup
serves once the primary's lease lapses, and nothing acknowledged is lost;
the primary, cut off, cannot renew its lease and stops by itself; plugged
back and started again it is a backup, and the lease does not move.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_until
from netns_harness import NetnsTestCluster, run_netns_cluster
from takeover_load import SPEC, lease, removing_its_database, roles, survive_the_loss_of_the_primary

from minislurm.local.netns import NetnsCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def netns_ha(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[NetnsTestCluster]:
    """Four 16-CPU nodes, ctl1 and ctl2, each on a host of its own; commands try for 30 s."""
    request.getfixturevalue("pg_server")  # skips, saying why, where PostgreSQL is missing
    running = run_netns_cluster(tmp_path, request, SPEC)
    yield from removing_its_database(NetnsCluster(str(tmp_path)), running)


def test_a_primary_cut_off_is_replaced_and_stops_writing(netns_ha: NetnsTestCluster) -> None:
    cluster = netns_ha
    cut: list[str] = []

    def unplug(daemon: str) -> None:
        name = daemon.removeprefix("slurmctld-")
        cluster.local.unplug_controller(name)
        cut.append(name)

    done = survive_the_loss_of_the_primary(cluster, unplug)

    # Cut off, the old primary cannot renew its lease: it stops by itself.
    wait_until(lambda: cluster.local.pid(done.old) is None, 60, f"{done.old} to stop")
    held = lease(cluster)
    cluster.local.unplug_controller(cut[0], plugged=True)
    cluster.start()
    assert roles(cluster) == {done.old: "backup", done.new: "primary"}
    assert lease(cluster) == held
    log = Path(cluster.local.path("log", f"{done.old}.log")).read_text()
    assert "lost the controller's role" in log
    assert cluster.sbatch("--wrap=true") == done.last_job + 1
