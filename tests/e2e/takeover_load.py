"""The load a takeover is tested under, and what must hold after it (the backup tests' part).

Eight clients submit jobs (50+ run), holds, cancels and updates are made,
two sruns stream their output and an ``sbatch --wait`` waits, while the
controller in control is lost (``lose``: killed, or cut off). Afterwards the
backup serves; every acknowledged submission, cancel, hold and update is
there; each job ran once and is COMPLETED; the sruns' output is whole.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from conftest import TestCluster, parse_oneliner
from helpers import wait_until
from sqlalchemy import create_engine, text

from minislurm.config import load_slurm_conf
from minislurm.local.cluster import ClusterSpec, LocalCluster

T = TypeVar("T")

UNAVAILABLE = "Unable to contact slurm controller"
CLIENTS = 8
JOBS_PER_CLIENT = 9
BEFORE_LOSS = 7  # of each client's jobs: 56 run when the primary is lost
JOB_SECONDS = 10
# Four 16-CPU nodes, ctl1 and ctl2; commands keep trying for 30 s (MessageTimeout).
SPEC = ClusterSpec(
    nodes=4,
    cpus_per_node=16,
    controllers=2,
    kill_wait=2,
    min_job_age=3600,
    conf_lines=("MessageTimeout=30",),
)


def removing_its_database(local: LocalCluster, running: Iterator[T]) -> Iterator[T]:
    """A cluster fixture's ``running``, then the cluster's own PostgreSQL files removed
    (under the system's temp directory when run as root, they outlive the test's)."""
    try:
        yield from running
    finally:
        database = local.own_database()
        if database is not None:
            shutil.rmtree(database.directory, ignore_errors=True)


@dataclass(frozen=True)
class Takeover:
    """What the loss of the primary came to."""

    old: str  # its daemon
    new: str  # the one in control after
    seconds: float  # from the loss to the first command answered
    longest: float  # the longest a command waited across it
    last_job: int  # the highest job id acknowledged


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


def survive_the_loss_of_the_primary(cluster: TestCluster, lose: Callable[[str], None]) -> Takeover:
    """Run the load, lose the primary (``lose(daemon)``) and check that nothing was lost.

    Returns:
        The takeover's figures.
    """
    work = cluster.workdir
    (work / "locks").mkdir()
    (work / "runs").touch()
    (work / "doubles").touch()
    script = work / "job.sh"
    script.write_text(job_script(work))
    old = primary(cluster)
    held = lease(cluster)

    # Jobs that wait (begin in an hour), for the holds, cancels and updates.
    waiting = [cluster.sbatch("--begin=now+1hour", "--wrap=true") for _ in range(9)]
    acked: list[int] = []
    failures: list[str] = []
    lock = threading.Lock()
    lose_now = threading.Event()

    def client(n: int) -> None:
        for i in range(JOBS_PER_CLIENT):
            if i == BEFORE_LOSS:
                lose_now.wait(60)  # the rest across the loss
            result = cluster.run("sbatch", "--parsable", "-J", f"c{n}-{i}", "-o", "/dev/null",
                                 str(script))  # fmt: skip
            with lock:
                if result.rc == 0:
                    acked.append(int(result.out))
                else:
                    failures.append(result.err)

    changes: dict[str, list[int]] = {"hold": [], "cancel": [], "update": []}

    def changer() -> None:
        lose_now.wait(60)
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

    lose(old)
    lost = time.monotonic()
    lose_now.set()
    longest = 0.0

    def served() -> bool:
        nonlocal longest
        began = time.monotonic()
        answered = cluster.run("squeue", "-h").rc == 0
        longest = max(longest, time.monotonic() - began)
        return answered

    wait_until(served, 60, "the backup to serve")
    takeover = time.monotonic() - lost
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
    # One command for every record: with the primary cut off, each command first gives
    # it a second to answer.
    listing = cluster.run("scontrol", "-o", "show", "job")
    assert listing.rc == 0, listing.err
    jobs = {int(job["JobId"]): job for job in map(parse_oneliner, listing.out.splitlines())}
    for job_id in acked:
        assert (jobs[job_id]["JobState"], jobs[job_id]["Restarts"]) == ("COMPLETED", "0")
    runs = (work / "runs").read_text().split()
    assert len(runs) == len(set(runs)), "a job ran twice"
    assert set(map(str, acked)) <= set(runs), "an acknowledged job never ran"
    assert len(set(runs) - set(map(str, acked))) <= len(failures)  # committed, reply lost
    assert (work / "doubles").read_text() == ""
    for job_id in changes["hold"]:
        assert jobs[job_id]["Reason"] == "JobHeldAdmin"  # root holds as admin
    for job_id in changes["cancel"]:
        assert jobs[job_id]["JobState"] == "CANCELLED"
    for job_id in changes["update"]:
        assert jobs[job_id]["Comment"].strip() == "changed"
    assert sum(map(len, changes.values())) + len(failures) >= len(waiting)
    print(f"takeover {takeover:.2f} s, longest command {longest:.2f} s; {running} running after")
    assert lease(cluster) != held
    return Takeover(old, new, takeover, longest, max([*acked, *waiting]))
