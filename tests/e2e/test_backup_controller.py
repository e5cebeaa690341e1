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

import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TERMINAL, TestCluster, run_cluster
from helpers import wait_until
from sqlalchemy import create_engine, text

from minislurm.config import load_slurm_conf
from minislurm.local.cluster import ClusterSpec, LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

UNAVAILABLE = "Unable to contact slurm controller"
CLIENTS = 8
JOBS_PER_CLIENT = 9
BEFORE_KILL = 7  # of each client's jobs: 56 run when the primary is killed
JOB_SECONDS = 10


@pytest.fixture
def ha_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Four 16-CPU nodes, ctl1 and ctl2; commands keep trying for 30 s (MessageTimeout)."""
    request.getfixturevalue("pg_server")  # skips, saying why, where PostgreSQL is missing
    spec = ClusterSpec(
        nodes=4,
        cpus_per_node=16,
        controllers=2,
        kill_wait=2,
        min_job_age=3600,
        conf_lines=("MessageTimeout=30",),
    )
    local = LocalCluster(str(tmp_path))
    try:
        yield from run_cluster(tmp_path, request, spec)
    finally:
        database = local.own_database()
        if database is not None:
            shutil.rmtree(database.directory, ignore_errors=True)


def roles(cluster: TestCluster) -> dict[str, str]:
    """Each controller daemon's role, as it answers Ping ("" when it does not)."""
    return {
        daemon: cluster.local.controller_role(addr) if cluster.local.pid(daemon) else ""
        for daemon, _, addr in cluster.local.controllers()
    }


def primary(cluster: TestCluster) -> str:
    """The daemon in control."""
    found = [daemon for daemon, role in roles(cluster).items() if role == "primary"]
    assert len(found) == 1, roles(cluster)
    return found[0]


def kill(cluster: TestCluster, daemon: str) -> None:
    """SIGKILL one daemon and wait until it is gone."""
    pid = cluster.local.pid(daemon)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: cluster.local.pid(daemon) is None, 10, f"{daemon} to die")


def lease(cluster: TestCluster) -> tuple[str, int]:
    """Who holds the controller's role, and its epoch, as the database says."""
    url = load_slurm_conf(cluster.local.conf_path).state_save_location
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT holder, epoch FROM controller_lease")).one()
    finally:
        engine.dispose()
    return str(row[0]), int(row[1])


def job_script(work: Path) -> str:
    """A job that records each run, holds its job's lock while it runs, and sleeps."""
    return (
        "#!/bin/bash\n"
        f"echo $SLURM_JOB_ID >> {work}/runs\n"
        f"exec 9>{work}/locks/$SLURM_JOB_ID\n"
        f"flock -n 9 || echo $SLURM_JOB_ID >> {work}/doubles\n"
        f"sleep {JOB_SECONDS}\n"
    )


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
    work = cluster.workdir
    (work / "locks").mkdir()
    (work / "runs").touch()
    (work / "doubles").touch()
    script = work / "job.sh"
    script.write_text(job_script(work))
    old = primary(cluster)
    holder, epoch = lease(cluster)

    # Jobs that wait (begin in an hour), for the holds, cancels and updates.
    waiting = [cluster.sbatch("--begin=now+1hour", "--wrap=true") for _ in range(9)]
    acked: list[int] = []
    failures: list[str] = []
    lock = threading.Lock()
    kill_now = threading.Event()

    def client(n: int) -> None:
        for i in range(JOBS_PER_CLIENT):
            if i == BEFORE_KILL:
                kill_now.wait(60)  # the rest across the kill
            result = cluster.run("sbatch", "--parsable", "-J", f"c{n}-{i}", "-o", "/dev/null",
                                 str(script))  # fmt: skip
            with lock:
                if result.rc == 0:
                    acked.append(int(result.out))
                else:
                    failures.append(result.err)

    changes: dict[str, list[int]] = {"hold": [], "cancel": [], "update": []}

    def changer() -> None:
        kill_now.wait(60)
        for i, job_id in enumerate(waiting):
            kind = ("hold", "cancel", "update")[i % 3]
            argv = {
                "hold": ["scontrol", "hold", str(job_id)],
                "cancel": ["scancel", str(job_id)],
                "update": ["scontrol", "update", f"JobId={job_id}", "Comment=changed"],
            }[kind]
            result = cluster.run(*argv)
            with lock:
                if result.rc == 0:
                    changes[kind].append(job_id)
                else:
                    failures.append(f"{argv}: {result.err}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    threads.append(threading.Thread(target=changer))
    for thread in threads:
        thread.start()
    lines = "for i in $(seq 40); do echo line$i; sleep 0.25; done"
    sruns = [cluster.spawn("srun", "-n1", "bash", "-c", lines) for _ in range(2)]
    waiter = cluster.spawn("sbatch", "--wait", "-o", "/dev/null", "--wrap=sleep 6")
    wait_until(
        lambda: len(cluster.run("squeue", "-h", "-t", "R", "-o", "%i").out.split()) >= 50,
        60,
        "jobs to run",
    )

    kill(cluster, old)
    killed = time.monotonic()
    kill_now.set()
    wait_until(lambda: cluster.run("squeue", "-h").rc == 0, 60, "the backup to serve")
    takeover = time.monotonic() - killed
    running = len(cluster.run("squeue", "-h", "-t", "R", "-o", "%i").out.split())

    for thread in threads:
        thread.join(timeout=120)
    # A call on its way when the primary died may fail (as Slurm's do): it was not
    # acknowledged. Each client has one call at a time.
    assert len(failures) <= len(threads), failures
    assert all(UNAVAILABLE in failure for failure in failures), failures
    assert len(acked) + len(failures) >= CLIENTS * JOBS_PER_CLIENT
    for srun in sruns:
        out, err = srun.communicate(timeout=60)
        assert srun.returncode == 0, err
        assert out.split() == [f"line{i}" for i in range(1, 41)]
    assert waiter.wait(timeout=60) == 0
    new = primary(cluster)
    assert new != old
    assert takeover < 5 + 10, f"took {takeover:.1f} s"  # SlurmctldTimeout, and a reload

    def ended() -> bool:
        listed = cluster.run("squeue", "-h", "-o", "%i").out.split()
        return not set(map(str, acked)) & set(listed)

    wait_until(ended, 120, "every job to end")
    for job_id in acked:
        info = cluster.job(job_id)
        assert (info["JobState"], info["Restarts"]) == ("COMPLETED", "0"), info
    runs = (work / "runs").read_text().split()
    assert len(runs) == len(set(runs)), "a job ran twice"
    assert set(map(str, acked)) <= set(runs), "an acknowledged job never ran"
    assert len(set(runs) - set(map(str, acked))) <= len(failures)  # committed, reply lost
    assert (work / "doubles").read_text() == ""
    for job_id in changes["hold"]:
        assert cluster.job(job_id)["Reason"] == "JobHeldAdmin"  # root holds as admin
    for job_id in changes["cancel"]:
        assert cluster.job(job_id)["JobState"] == "CANCELLED"
    for job_id in changes["update"]:
        assert cluster.job(job_id)["Comment"].strip() == "changed"
    assert sum(map(len, changes.values())) + len(failures) >= len(waiting)
    assert set(cluster.job(j)["JobState"] for j in acked) <= TERMINAL
    print(f"takeover {takeover:.2f} s; {running} jobs running after it")

    # The old primary, restarted, is a standby: it writes nothing, the role stays.
    new_holder, new_epoch = lease(cluster)
    assert (new_holder, new_epoch) != (holder, epoch)
    cluster.start()
    assert roles(cluster) == {old: "backup", new: "primary"}
    next_id = cluster.sbatch("--wrap=true")
    assert next_id == max([*acked, *waiting]) + 1
    assert lease(cluster) == (new_holder, new_epoch)
    log = Path(cluster.local.path("log", f"{old}.log")).read_text()
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
