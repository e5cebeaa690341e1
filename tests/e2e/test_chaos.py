"""Chaos: 200+ jobs run while slurmctld, slurmd and whole nodes are killed at random.

Seeded and bounded: the same seed gives the same workload and the same
sequence of kills. At the end every acknowledged job is in a terminal state
that its history explains, no job ran twice at once (each run holds an
flock on its job's lock file), no process of any job is left, and the
database holds every job (and passes SQLite's integrity check). It runs
on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import STATE_DBS, TERMINAL, TestCluster, parse_oneliner, run_cluster, state_db
from helpers import pid_alive, wait_until
from sqlalchemy import create_engine, text

from minislurm import procs
from minislurm.local.cluster import ClusterSpec

SEED = 20261130
BATCH_JOBS = 185
SRUN_JOBS = 30
CHAOS_EVENTS = 7
RUNS_PER_EVENT = 20
SLURMD_TIMEOUT = 5

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@dataclass
class Submitted:
    """One acknowledged job and what it was meant to do."""

    job_id: int
    kind: str  # batch, srun
    fate: str  # complete, cancel, timeout
    requeue: bool = True
    submitted: float = field(default_factory=time.monotonic)
    rc: int | None = None  # srun's exit status


@dataclass
class Event:
    """One kill the test made."""

    what: str  # ctld, agent, node
    node: str
    start: float
    end: float = 0.0


@pytest.fixture
def chaos_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes; a silent node is DOWN after a few seconds."""
    spec = ClusterSpec(
        kill_wait=1, min_job_age=3600, slurmd_timeout=SLURMD_TIMEOUT, state_db=state_db(request)
    )
    yield from run_cluster(tmp_path, request, spec)


def stored_states(cluster: TestCluster) -> dict[int, str]:
    """Each job's state as the controller's database holds it."""
    url = cluster.spec.state_db or f"sqlite:///{cluster.local.path('state', 'minislurm.db')}"
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {row[0]: row[1] for row in conn.execute(text("SELECT job_id, state FROM jobs"))}
    finally:
        engine.dispose()


def job_script(work: Path, seconds: float) -> str:
    """A run that records its pid, holds its job's lock, and sleeps."""
    return (
        "#!/bin/bash\n"
        f"echo $$ > {work}/pids/$SLURM_JOB_ID.${{SLURM_RESTART_COUNT:-0}}.$SLURM_PROCID\n"
        f"exec 9>{work}/locks/$SLURM_JOB_ID.$SLURM_PROCID\n"
        f"flock -n 9 || echo $SLURM_JOB_ID >> {work}/doubles\n"
        f"sleep {seconds}\n"
    )


def kill_node(cluster: TestCluster, node: str) -> None:
    """SIGKILL a node's agent and every process of its jobs."""
    pid = cluster.local.pid(f"slurmd-{node}")
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: cluster.local.pid(f"slurmd-{node}") is None, 10, "slurmd gone")
    for jobdir in Path(cluster.local.path("spool", node)).glob("job*"):
        for name in ("task.pid", "stepd.pid"):
            found = procs.live_pid(str(jobdir / name))
            text = (jobdir / name).read_text().split() if (jobdir / name).exists() else []
            pid = found or (int(text[0]) if text and text[0].isdigit() else None)
            if pid is None:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def submit(cluster: TestCluster, args: list[str]) -> int | None:
    """sbatch; None when the controller was down (not acknowledged: nothing to check)."""
    result = cluster.run("sbatch", "--parsable", *args)
    return int(result.out.strip()) if result.rc == 0 else None


def run_srun(cluster: TestCluster, work: Path, rng: random.Random, index: int) -> Submitted | None:
    """srun outside an allocation; its job id comes back through a file its task writes."""
    ntasks = rng.choice([1, 1, 2])
    marker = work / "srun" / str(index)
    body = f"echo $SLURM_JOB_ID > {marker}.$SLURM_PROCID; " + job_script(
        work, rng.uniform(0.2, 1.0)
    ).split("\n", 1)[1].replace("\n", "; ")
    argv = ["srun", "-n", str(ntasks), "-t", "2", "-J", f"chaos-srun-{index}", "bash", "-c", body]
    start = time.monotonic()
    try:
        done = subprocess.run(
            argv, env=cluster.env, cwd=cluster.workdir, capture_output=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"srun {index} hung")
    rc = done.returncode
    ids = {p.read_text().strip() for p in (work / "srun").glob(f"{index}.*")}
    if not ids:  # never allocated: not acknowledged
        (work / "srun-failed").mkdir(exist_ok=True)
        (work / "srun-failed" / str(index)).write_bytes(b"rc=%d\n" % rc + done.stderr)
        return None
    (job_id,) = ids
    return Submitted(int(job_id), "srun", "complete", submitted=start, rc=rc)


def node_state(cluster: TestCluster, node: str) -> str:
    """The node's state, "" while the controller does not answer."""
    result = cluster.run("scontrol", "-o", "show", "node", node)
    return parse_oneliner(result.out.strip()).get("State", "") if result.rc == 0 else ""


def chaos(cluster: TestCluster, rng: random.Random, events: list[Event], runs: Path) -> None:
    """Kill something each time the work has advanced a little, and bring it back.

    Event k comes once k * RUNS_PER_EVENT runs have started (counted by
    their pid files), so the kills land among running jobs whatever the
    machine's speed.
    """
    for k in range(1, CHAOS_EVENTS + 1):
        wait_until(lambda k=k: len(os.listdir(runs)) >= k * RUNS_PER_EVENT, 120, "progress")
        what = rng.choice(["ctld", "ctld", "agent", "agent", "node"])
        node = rng.choice(["n1", "n2"])
        event = Event(what, node, time.monotonic())
        events.append(event)
        if what == "ctld":
            cluster.kill_controller()
        elif what == "agent":
            cluster.kill_agent(node)
        else:
            kill_node(cluster, node)
            # The node stays dead until the controller has declared it DOWN.
            wait_until(lambda n=node: node_state(cluster, n).startswith("DOWN"), 60, "DOWN")
        cluster.start()
        event.end = time.monotonic()


def all_jobs(cluster: TestCluster) -> dict[int, dict[str, str]]:
    """Every job the controller holds, by id."""
    result = cluster.run("scontrol", "-o", "show", "job")
    assert result.rc == 0, result.err
    jobs = [parse_oneliner(line) for line in result.out.splitlines() if line.strip()]
    return {int(j["JobId"]): j for j in jobs}


def cluster_report(cluster: TestCluster) -> str:
    """What the nodes' states were at the end, and which daemons were alive."""
    nodes = cluster.run("scontrol", "-o", "show", "node")
    alive = {d: cluster.local.pid(d) for d in ("slurmctld", "slurmd-n1", "slurmd-n2")}
    return f"nodes (rc={nodes.rc}):\n{nodes.out}{nodes.err}daemon pids: {alive}"


def explained(job: Submitted, info: dict[str, str], events: list[Event], end: float) -> bool:
    """Whether the job's end is what it was asked to do, or what a kill caused."""
    state, restarts = info["JobState"], int(info["Restarts"])
    hit = [e for e in events if e.start < end and (e.end or end) > job.submitted]
    node_failures = [e for e in hit if e.what == "node"]
    if restarts and not node_failures:
        return False
    if state == "NODE_FAIL":
        return bool(node_failures) and (not job.requeue or job.kind == "srun")
    if job.fate == "cancel":
        return state == "CANCELLED"
    if job.fate == "timeout":
        return state == "TIMEOUT"
    if state == "COMPLETED":
        return job.kind == "batch" or job.rc == 0 or bool(hit)
    # srun's job ends FAILED or CANCELLED when a kill cut its step or its srun off.
    return job.kind == "srun" and state in ("FAILED", "CANCELLED") and bool(hit)


@pytest.mark.parametrize("chaos_cluster", STATE_DBS, indirect=True)
def test_every_job_survives_chaos(chaos_cluster: TestCluster) -> None:
    cluster = chaos_cluster
    rng = random.Random(SEED)
    work = cluster.workdir
    for sub in ("pids", "locks", "srun"):
        (work / sub).mkdir()
    (work / "doubles").touch()
    jobs: list[Submitted] = []
    events: list[Event] = []
    chaos_rng = random.Random(SEED + 2)
    chaos_thread = threading.Thread(
        target=chaos, args=(cluster, chaos_rng, events, work / "pids"), daemon=True
    )
    srun_rng = random.Random(SEED + 1)
    started = time.monotonic()
    chaos_thread.start()
    with ThreadPoolExecutor(max_workers=3) as pool:
        sruns = [pool.submit(run_srun, cluster, work, srun_rng, i) for i in range(SRUN_JOBS)]
        for i in range(BATCH_JOBS):
            fate = "cancel" if i % 12 == 5 else "timeout" if i % 60 == 7 else "complete"
            seconds = 600 if fate != "complete" else round(rng.uniform(0.2, 1.5), 2)
            path = work / f"batch-{i}.sh"
            path.write_text(job_script(work, seconds))
            args = ["-o", "/dev/null", "-n", str(rng.choice([1, 1, 2, 4]))]
            if i % 15 == 3:
                args += ["-N", "2", "-n", "2"]
            requeue = i % 10 != 9
            args += ["--time=1"] if fate == "timeout" else ["--time=5"]
            args += [] if requeue else ["--no-requeue"]
            # While the controller is down sbatch fails: submit again until acknowledged.
            job_id = wait_until(lambda a=[*args, str(path)]: submit(cluster, a), 60, "sbatch")
            jobs.append(Submitted(job_id, "batch", fate, requeue))
        for job in jobs:
            if job.fate == "cancel":
                wait_until(
                    lambda j=job: cluster.run("scancel", str(j.job_id)).rc == 0, 60, "scancel"
                )
        jobs += [s for f in sruns if (s := f.result()) is not None]
    unallocated = {p.name: p.read_text() for p in work.glob("srun-failed/*")}
    assert len(jobs) >= 200, f"{len(jobs)} acknowledged; sruns never allocated: {unallocated}"
    chaos_thread.join(timeout=180)
    assert not chaos_thread.is_alive()
    assert len(events) == CHAOS_EVENTS

    ids = {j.job_id for j in jobs}
    seen: dict[int, dict[str, str]] = {}

    def ended() -> bool:
        seen.clear()
        seen.update(all_jobs(cluster))
        return all(seen.get(i, {}).get("JobState") in TERMINAL for i in ids)

    try:
        wait_until(ended, 150, "every job to end")
    except AssertionError:
        stuck = {i: seen.get(i, {}).get("JobState") for i in ids}
        stuck = {i: s for i, s in stuck.items() if s not in TERMINAL}
        raise AssertionError(
            f"jobs not ended: {stuck}; events: {events}\n{cluster_report(cluster)}"
        ) from None
    final = seen
    end = time.monotonic()
    wrong = [
        (j.job_id, j.kind, j.fate, final[j.job_id]["JobState"], final[j.job_id]["Restarts"])
        for j in jobs
        if not explained(j, final[j.job_id], events, end)
    ]
    assert not wrong, f"unexplained ends: {wrong}; events: {events}"
    assert (work / "doubles").read_text() == "", "a job ran twice at once"

    wait_until(lambda: not cluster.local.stepd_pids(), 30, "every supervisor gone")
    pids = [int(p.read_text()) for p in (work / "pids").iterdir()]
    wait_until(lambda: not [p for p in pids if pid_alive(p)], 30, "every job process gone")

    if not cluster.spec.state_db:
        db = next(Path(cluster.local.path("state")).glob("*.db"))
        with contextlib.closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = stored_states(cluster)
    assert ids <= set(rows), f"acknowledged jobs missing from the database: {ids - set(rows)}"
    assert {rows[i] for i in ids} <= TERMINAL

    states = Counter(final[i]["JobState"] for i in ids)
    requeued = Counter(final[i]["JobState"] for i in ids if final[i]["Restarts"] != "0")
    print(
        f"\nchaos seed={SEED}: {len(jobs)} jobs ({sum(j.kind == 'srun' for j in jobs)} srun) "
        f"in {end - started:.0f} s; events {Counter(e.what for e in events)}; "
        f"final states {dict(states)}; requeued then {dict(requeued)}"
    )
