"""The trace simulator: the controller's own scheduler, ``ctld.sched``, in virtual time.

An event loop (Slurm's ``backfill-test``, minus its ``dummy_functions.c``
stubs): jobs arrive at their submit times and end after their run time, or
are killed at their time limit (and a pass is run when a job's wait for
its ``--switches`` ends). The jobs, nodes, partitions and advance
reservations are held in a :class:`~ctld.state.ClusterState`, as the
controller holds them. After all the events of one instant (ends first), it
builds the snapshot with the controller's own
:func:`~ctld.sched.snapshot.build_snapshot` (free resources, priorities from
the weights, what blocks a job: its begin time, dependency, reservations,
association limits), calls the very same ``plan`` and applies its starts.
Scheduling on every submit and end event is what the controller does too
(its loop is kicked by each). A pass that cannot start anything is skipped
unless ``on_pass`` asks to see every pass: one where fewer nodes have a CPU
free, or fewer CPUs are free, than the least any pending job needs (its
starts would be none, and only starts are applied).

:func:`trace_setup` models an SWF trace: the machine's processors as nodes
of one CPU each, one partition, each job ``-N p -n p`` with its estimate as
time limit (in whole minutes, as Slurm keeps it). :func:`summarize` computes
the usual measures (utilization, waits, bounded slowdown with a 10 s
threshold).

Imports ctld.jobs, ctld.sched, ctld.state and minislurm.
"""

from __future__ import annotations

import heapq
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ctld import jobs as jobops
from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import (
    Associations,
    KeptEntries,
    build_snapshot,
    node_usable,
    switch_until,
)
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import (
    Allocation,
    Job,
    Node,
    Plan,
    ResourceRequest,
    Resv,
    Snapshot,
)
from minislurm.states import JobEvent, JobState, NodeState, kill_end
from minislurm.swf import read_swf, trace_jobs
from minislurm.units import INFINITE

BSLD_THRESHOLD = 10.0  # seconds: bounded slowdown counts shorter jobs as this long
PassHook = Callable[[Snapshot, Plan, float], None]
FCFS = PriorityWeights()  # every weight 0: Slurm's default, first come first served


@dataclass(frozen=True)
class SimJob:
    """A job to simulate: its record as submitted (PENDING), and how long it really runs."""

    job: Job
    run_time: float  # seconds; it is killed at its time limit if that comes first

    @property
    def limit(self) -> float:
        """How long it may run, in seconds; infinity when unlimited."""
        return math.inf if self.job.time_limit == INFINITE else self.job.time_limit * 60.0


@dataclass(frozen=True)
class JobRecord:
    """What happened to one job."""

    job_id: int
    submit: float
    start: float
    end: float
    cpus: int
    nodes: tuple[str, ...]

    @property
    def wait(self) -> float:
        """Seconds from submission to start."""
        return self.start - self.submit

    @property
    def run(self) -> float:
        """Seconds it ran."""
        return self.end - self.start


@dataclass(frozen=True)
class Sample:
    """The machine after one pass."""

    time: float
    queued: int
    busy_cpus: int


@dataclass(frozen=True)
class SimOutcome:
    """A finished simulation."""

    records: tuple[JobRecord, ...]  # by start time
    samples: tuple[Sample, ...]
    total_cpus: int
    passes: int
    sched_seconds: float  # wall time spent in plan()
    wall_seconds: float
    unfinished: int  # jobs that never started (they fit nowhere)


@dataclass
class _Running:
    job: SimJob
    start: float
    allocation: Allocation


class _Machine:
    """The nodes' free CPUs, changed by starts and ends: what tells when no job can start."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.cpus = {n.name: n.cpus for n in nodes}
        self.free = dict(self.cpus)
        self.usable = {n.name for n in nodes if node_usable(n.state, n.flags)}
        self.busy_cpus = 0
        self.free_cpus = sum(self.cpus[n] for n in self.usable)
        self.open_nodes = sum(1 for n in self.usable if self.cpus[n] > 0)

    def take(self, alloc: Allocation, sign: int) -> None:
        """Take (sign 1) or give back (sign -1) an allocation; raise on over-commit."""
        for part in alloc.nodes:
            before = self.free[part.node]
            after = self.free[part.node] = before - sign * part.cpus
            assert 0 <= after <= self.cpus[part.node], f"{part.node}: CPUs over-committed"
            if part.node in self.usable:
                self.open_nodes += (after > 0) - (before > 0)
                self.free_cpus -= sign * part.cpus
            self.busy_cpus += sign * part.cpus

    def may_start(self, needs: _Needs) -> bool:
        """Whether a pending job may fit: enough nodes with a CPU free, and enough CPUs."""
        least = needs.least()
        return least is not None and self.open_nodes >= least[0] and self.free_cpus >= least[1]


class _Needs:
    """The least nodes and CPUs a pending job needs, kept as jobs come and go."""

    def __init__(self) -> None:
        self.nodes: Counter[int] = Counter()
        self.cpus: Counter[int] = Counter()

    def change(self, req: ResourceRequest, sign: int) -> None:
        """Count a job's request in (sign 1) or out (sign -1)."""
        nodes, cpus = max(req.min_nodes, 1), req.ntasks * req.cpus_per_task
        self.nodes[nodes] += sign
        self.cpus[cpus] += sign
        if not self.nodes[nodes]:
            del self.nodes[nodes]
        if not self.cpus[cpus]:
            del self.cpus[cpus]

    def least(self) -> tuple[int, int] | None:
        """The least nodes and the least CPUs (of possibly different jobs); None: no job."""
        return (min(self.nodes), min(self.cpus)) if self.nodes else None


def simulate(
    jobs: Sequence[SimJob],
    nodes: Sequence[Node],
    partitions: Sequence[PartitionConfig],
    cfg: SchedConfig,
    on_pass: PassHook | None = None,
    *,
    weights: PriorityWeights = FCFS,
    reservations: Iterable[Resv] = (),
    accounting: Associations | None = None,
) -> SimOutcome:
    """Run the jobs through ``build_snapshot`` and ``plan`` in virtual time.

    Args:
        jobs: the workload: PENDING records of distinct ids, none an array.
        nodes: the machine, idle.
        partitions: its partitions.
        cfg: the scheduler's knobs.
        on_pass: called after each pass with its snapshot, plan and time (tests
            check it); with it, no pass is skipped.
        weights: the priority weights.
        reservations: advance reservations over the simulated time.
        accounting: associations (limits; fair share as it stands, as no usage is
            charged in virtual time), if any.

    Returns:
        What happened.
    """
    began = time.perf_counter()
    state = ClusterState(nodes, partitions)
    state.reservations.update((r.name, r) for r in reservations)
    kept = KeptEntries()
    machine = _Machine(nodes)
    events: list[tuple[float, int, int, SimJob]] = []
    for seq, job in enumerate(jobs):
        heapq.heappush(events, (job.job.submit_time, 1, seq, job))
        if job.job.request.switches and job.job.request.switch_wait:
            # A pass when its wait for switches ends: it may then start anywhere.
            heapq.heappush(events, (switch_until(job.job), 2, seq, job))
    pending: dict[int, SimJob] = {}
    needs = _Needs()
    running: dict[int, _Running] = {}
    records: list[JobRecord] = []
    samples: list[Sample] = []
    sched = 0.0
    passes = seq = 0
    held: dict[tuple[int, int], tuple[str, ...]] = {}  # the last pass's reserved nodes
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, _, job = heapq.heappop(events)
            if kind == 2:
                continue
            if kind == 1:
                pending[job.job.job_id] = job
                needs.change(job.job.request, 1)
                state.put_job(job.job)
                continue
            done = running.pop(job.job.job_id)
            machine.take(done.allocation, -1)
            records.append(_record(done, now))
            state.put_job(_ended(state.jobs[job.job.job_id], job.run_time >= job.limit, now))
        if on_pass is None and not machine.may_start(needs):
            samples.append(Sample(now, len(pending), machine.busy_cpus))
            continue
        # Without an age weight, a queued job's priority changes only with its record: take
        # the entries of unchanged jobs from the pass before, as the controller's event passes do.
        snapshot = build_snapshot(
            state, now, weights, accounting, kept, reuse=weights.age == 0, held=held
        )
        t0 = time.perf_counter()
        decided = plan(snapshot, now, cfg)
        sched += time.perf_counter() - t0
        held = decided.held(now)
        passes += 1
        if on_pass is not None:
            on_pass(snapshot, decided, now)
        for start in decided.starts:
            job = pending.pop(start.job_id)
            needs.change(job.job.request, -1)
            machine.take(start.allocation, 1)
            running[start.job_id] = _Running(job, now, start.allocation)
            started, _ = jobops.apply_event(
                state.jobs[start.job_id],
                JobEvent.START,
                "scheduled",
                start_time=now,
                allocation=start.allocation,
            )
            state.put_job(started)
            seq += 1
            heapq.heappush(events, (now + min(job.run_time, job.limit), 0, seq, job))
        samples.append(Sample(now, len(pending), machine.busy_cpus))
    records.sort(key=lambda r: (r.start, r.job_id))
    return SimOutcome(
        records=tuple(records),
        samples=tuple(samples),
        total_cpus=sum(machine.cpus[n] for n in machine.usable),
        passes=passes,
        sched_seconds=sched,
        wall_seconds=time.perf_counter() - began,
        unfinished=len(pending),
    )


def _ended(job: Job, timed_out: bool, now: float) -> Job:
    """A virtual job at its end: COMPLETED, or TIMEOUT through the kill its limit begins."""
    event = JobEvent.EXIT_OK
    if timed_out:
        job, _ = jobops.apply_event(job, JobEvent.TIME_LIMIT)  # no nodes to ask
        event = kill_end(JobEvent.TIME_LIMIT)
    done, _ = jobops.apply_event(job, event, end_time=now)
    return done


def _record(done: _Running, now: float) -> JobRecord:
    job = done.job.job
    return JobRecord(
        job_id=job.job_id,
        submit=job.submit_time,
        start=done.start,
        end=now,
        cpus=done.allocation.cpus,
        nodes=done.allocation.node_names,
    )


# ---------------------------------------------------------------- traces


@dataclass(frozen=True)
class TraceSetup:
    """A trace made ready to simulate."""

    jobs: tuple[SimJob, ...]
    nodes: tuple[Node, ...]
    partitions: tuple[PartitionConfig, ...]
    size: int  # processors (= nodes of one CPU)
    skipped: int  # records left out: no run time, no processors, or wider than the machine


def trace_setup(path: str, limit: int | None = None, size: int | None = None) -> TraceSetup:
    """Read an SWF trace and model it: one-CPU nodes, one partition, ``-N p -n p`` jobs.

    A job's time limit is its estimate rounded up to whole minutes, as Slurm keeps it.

    Args:
        path: the SWF file.
        limit: simulate the first this many records (None: all).
        size: processors of the machine (None: the trace's MaxProcs, else MaxNodes).

    Returns:
        The setup.

    Raises:
        OSError: the file cannot be read.
        ValueError: a malformed line, or no machine size in the trace nor given.
    """
    trace = read_swf(path, limit)
    size = size or trace.machine_size
    if size <= 0:
        raise ValueError(f"{path}: no MaxProcs or MaxNodes header; give the machine size")
    work, skipped = trace_jobs(trace.records, size)
    nodes, partition = trace_machine(size)
    jobs = tuple(
        SimJob(trace_job(j.job_id, j.submit_time, j.procs, j.limit), j.run_time) for j in work
    )
    return TraceSetup(jobs, nodes, (partition,), size, skipped)


def trace_machine(size: int) -> tuple[tuple[Node, ...], PartitionConfig]:
    """A machine of ``size`` one-CPU nodes (n1, n2, ...) in one partition, ``batch``.

    Args:
        size: processors.

    Returns:
        The nodes, idle, and the partition.
    """
    partition = PartitionConfig("batch", tuple(f"n{i}" for i in range(1, size + 1)))
    nodes = tuple(
        Node(name, 1, 1, (), (partition.name,), NodeState.IDLE) for name in partition.nodes
    )
    return nodes, partition


def trace_job(
    job_id: int, submit: float, procs: int, limit: float, request: ResourceRequest | None = None
) -> Job:
    """A trace's job as the controller records ``sbatch -p batch -N p -n p --time``, PENDING.

    It is root's, in the account root (a fresh accounting database's).

    Args:
        job_id: its id.
        submit: its submit time.
        procs: processors (nodes of one CPU).
        limit: its time limit in seconds, rounded up to whole minutes as Slurm keeps it.
        request: what it asks for, when not ``procs`` nodes of one CPU.

    Returns:
        The record.
    """
    if request is None:
        request = ResourceRequest(min_nodes=procs, max_nodes=procs, ntasks=procs, nodes_set=True)
    return Job(
        job_id=job_id,
        name=f"swf{job_id}",
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="batch",
        account="root",
        state=JobState.PENDING,
        request=request,
        submit_time=submit,
        time_limit=max(1, math.ceil(limit / 60)),
    )


# ---------------------------------------------------------------- measures


def summarize(outcome: SimOutcome) -> dict[str, float]:
    """The measures of a simulation.

    Args:
        outcome: what happened.

    Returns:
        ``utilization`` (busy processor-seconds over machine size times the
        makespan, first submit to last end), ``mean_wait``, ``median_wait``,
        ``max_wait``, ``mean_bsld`` (bounded slowdown, 10 s threshold),
        ``makespan``, ``jobs``, ``passes``, ``sched_ms_per_pass``,
        ``sched_ms_per_start``, ``jobs_per_second`` (of wall time), ``unfinished``.
    """
    records = outcome.records
    if not records:
        return {"jobs": 0, "unfinished": outcome.unfinished, "utilization": 0.0}
    waits = [r.wait for r in records]
    first = min(r.submit for r in records)
    makespan = max(r.end for r in records) - first
    busy = sum(r.run * r.cpus for r in records)
    bsld = [max(1.0, (r.wait + r.run) / max(r.run, BSLD_THRESHOLD)) for r in records]
    return {
        "utilization": busy / (outcome.total_cpus * makespan) if makespan > 0 else 0.0,
        "mean_wait": statistics.fmean(waits),
        "median_wait": statistics.median(waits),
        "max_wait": max(waits),
        "mean_bsld": statistics.fmean(bsld),
        "makespan": makespan,
        "jobs": len(records),
        "unfinished": outcome.unfinished,
        "passes": outcome.passes,
        "sched_ms_per_pass": 1000 * outcome.sched_seconds / max(outcome.passes, 1),
        "sched_ms_per_start": 1000 * outcome.sched_seconds / len(records),
        "jobs_per_second": len(records) / outcome.wall_seconds if outcome.wall_seconds else 0.0,
    }
