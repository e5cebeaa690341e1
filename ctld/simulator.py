"""The trace simulator: the controller's own scheduler, ``ctld.sched.plan``, in virtual time.

An event loop (Slurm's ``backfill-test``, minus its ``dummy_functions.c``
stubs): jobs arrive at their submit times and end after their run time, or
are killed at their time limit. After all the events of one instant (ends
first), it builds a :class:`~minislurm.model.Snapshot` exactly as the
controller would (nodes with their free resources, partitions, pending and
running jobs with their expected ends), calls the very same ``plan`` and
applies its starts. Scheduling on every submit and end event is what the
controller does too (its loop is kicked by each). A pass that cannot start
anything is skipped unless ``on_pass`` asks to see every pass: one where
fewer nodes have a CPU free, or fewer CPUs are free, than the least any
pending job needs (its starts would be none, and only starts are applied).

:func:`trace_setup` models an SWF trace: the machine's processors as nodes
of one CPU each, one partition, each job ``-N p -n p`` with its estimate as
time limit (to the second). :func:`summarize` computes the usual measures
(utilization, waits, bounded slowdown with a 10 s threshold).

Imports ctld.sched and minislurm.
"""

from __future__ import annotations

import heapq
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter

from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from minislurm.model import (
    Allocation,
    NodeAlloc,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    ResourceRequest,
    RunningJob,
    Snapshot,
)
from minislurm.swf import read_swf, trace_jobs

BSLD_THRESHOLD = 10.0  # seconds: bounded slowdown counts shorter jobs as this long
PassHook = Callable[[Snapshot, Plan, float], None]


@dataclass(frozen=True)
class SimJob:
    """A job to simulate: what the scheduler sees, and how long it really runs."""

    pending: PendingJob
    run_time: float  # seconds; it is killed at its time limit if that comes first


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
    running: RunningJob


class _Machine:
    """The nodes' free resources, changed by starts and ends."""

    def __init__(self, nodes: Sequence[NodeView]) -> None:
        self.views = {n.name: n for n in nodes}
        self.busy_cpus = 0
        self.free_cpus = sum(n.free_cpus for n in nodes if n.usable)
        self.open_nodes = sum(1 for n in nodes if n.usable and n.free_cpus > 0)
        self._moves: dict[tuple[int, int, int], tuple[NodeView, NodeAlloc, NodeView]] = {}
        self._states = {n: n for n in nodes}

    def take(self, alloc: Allocation, sign: int) -> None:
        """Take (sign 1) or give back (sign -1) an allocation; raise on over-commit."""
        views, moves = self.views, self._moves
        if len(moves) >= 1 << 16:
            moves.clear()
            self._states.clear()
        for part in alloc.nodes:
            node = views[part.node]
            # Nodes go back and forth between a few states: each move is worked out once.
            key = (id(node), id(part), sign)
            kept = moves.get(key)
            if kept is None or kept[0] is not node or kept[1] is not part:
                moved = _moved(node, part, sign)
                moved = self._states.setdefault(moved, moved)  # one object per state
                kept = moves[key] = (node, part, moved)
            moved = kept[2]
            if node.usable:
                self.open_nodes += (moved.free_cpus > 0) - (node.free_cpus > 0)
                self.free_cpus -= sign * part.cpus
            views[part.node] = moved
            self.busy_cpus += sign * part.cpus

    def may_start(self, needs: _Needs) -> bool:
        """Whether a pending job may fit: enough nodes with a CPU free, and enough CPUs."""
        least = needs.least()
        return least is not None and self.open_nodes >= least[0] and self.free_cpus >= least[1]


def _moved(node: NodeView, part: NodeAlloc, sign: int) -> NodeView:
    """The node with a part taken (sign 1) or given back (sign -1); raise on over-commit."""
    gpus = set(node.free_gpus)
    if sign > 0:
        assert gpus.issuperset(part.gpus), f"{part.node}: GPUs {part.gpus} not free"
        gpus.difference_update(part.gpus)
    else:
        gpus.update(part.gpus)
    moved = replace(
        node,
        free_cpus=node.free_cpus - sign * part.cpus,
        free_mem=node.free_mem - sign * part.mem,
        free_gpus=tuple(sorted(gpus)),
    )
    assert 0 <= moved.free_cpus <= moved.cpus, f"{part.node}: CPUs over-committed"
    assert 0 <= moved.free_mem <= moved.mem, f"{part.node}: memory over-committed"
    return moved


class _Needs:
    """The least nodes and CPUs a pending job needs, kept as jobs come and go."""

    def __init__(self) -> None:
        self.nodes: Counter[int] = Counter()
        self.cpus: Counter[int] = Counter()

    def change(self, job: PendingJob, sign: int) -> None:
        """Count a job in (sign 1) or out (sign -1)."""
        req = job.request
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


_PENDING = attrgetter("pending")
_RUNNING = attrgetter("running")


def simulate(
    jobs: Sequence[SimJob],
    nodes: Sequence[NodeView],
    partitions: Sequence[PartitionView],
    cfg: SchedConfig,
    on_pass: PassHook | None = None,
) -> SimOutcome:
    """Run the jobs through ``plan`` in virtual time.

    Args:
        jobs: the workload (distinct keys).
        nodes: the machine, idle.
        partitions: its partitions.
        cfg: the scheduler's knobs.
        on_pass: called after each pass with its snapshot, plan and time (tests
            check it); with it, no pass is skipped.

    Returns:
        What happened.
    """
    began = time.perf_counter()
    machine = _Machine(nodes)
    events: list[tuple[float, int, int, SimJob]] = []
    for seq, job in enumerate(jobs):
        heapq.heappush(events, (job.pending.submit_time, 1, seq, job))
    pending: dict[tuple[int, int], SimJob] = {}
    needs = _Needs()
    running: dict[tuple[int, int], _Running] = {}
    records: list[JobRecord] = []
    samples: list[Sample] = []
    parts = tuple(partitions)
    sched = 0.0
    passes = seq = 0
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, _, job = heapq.heappop(events)
            if kind == 1:
                pending[job.pending.key] = job
                needs.change(job.pending, 1)
                continue
            done = running.pop(job.pending.key)
            machine.take(done.running.allocation, -1)
            records.append(_record(done, now))
        if on_pass is None and not machine.may_start(needs):
            samples.append(Sample(now, len(pending), machine.busy_cpus))
            continue
        snapshot = Snapshot(
            tuple(machine.views.values()),
            parts,
            tuple(map(_PENDING, pending.values())),
            tuple(map(_RUNNING, running.values())),
        )
        t0 = time.perf_counter()
        decided = plan(snapshot, now, cfg)
        sched += time.perf_counter() - t0
        passes += 1
        if on_pass is not None:
            on_pass(snapshot, decided, now)
        for start in decided.starts:
            job = pending.pop(start.key)
            needs.change(job.pending, -1)
            machine.take(start.allocation, 1)
            end = now + job.pending.duration
            running[start.key] = _Running(job, now, RunningJob(start.job_id, start.allocation, end))
            seq += 1
            heapq.heappush(events, (now + min(job.run_time, job.pending.duration), 0, seq, job))
        samples.append(Sample(now, len(pending), machine.busy_cpus))
    records.sort(key=lambda r: (r.start, r.job_id))
    return SimOutcome(
        records=tuple(records),
        samples=tuple(samples),
        total_cpus=sum(n.cpus for n in nodes if n.usable),
        passes=passes,
        sched_seconds=sched,
        wall_seconds=time.perf_counter() - began,
        unfinished=len(pending),
    )


def _record(done: _Running, now: float) -> JobRecord:
    pending = done.job.pending
    return JobRecord(
        job_id=pending.job_id,
        submit=pending.submit_time,
        start=done.start,
        end=now,
        cpus=done.running.allocation.cpus,
        nodes=done.running.allocation.node_names,
    )


# ---------------------------------------------------------------- traces


@dataclass(frozen=True)
class TraceSetup:
    """A trace made ready to simulate."""

    jobs: tuple[SimJob, ...]
    nodes: tuple[NodeView, ...]
    partitions: tuple[PartitionView, ...]
    size: int  # processors (= nodes of one CPU)
    skipped: int  # records left out: no run time, no processors, or wider than the machine


def trace_setup(path: str, limit: int | None = None, size: int | None = None) -> TraceSetup:
    """Read an SWF trace and model it: one-CPU nodes, one partition, ``-N p -n p`` jobs.

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
    nodes = tuple(NodeView(f"n{i}", 1, 1, (), 1, 1, (), True) for i in range(1, size + 1))
    partition = PartitionView("batch", tuple(n.name for n in nodes))
    jobs = tuple(
        SimJob(
            PendingJob(
                job_id=j.job_id,
                partition=partition.name,
                priority=1,
                submit_time=j.submit_time,
                request=ResourceRequest(
                    min_nodes=j.procs, max_nodes=j.procs, ntasks=j.procs, nodes_set=True
                ),
                time_limit=max(1, math.ceil(j.limit / 60)),
                limit_seconds=j.limit,
            ),
            j.run_time,
        )
        for j in work
    )
    return TraceSetup(jobs, nodes, (partition,), size, skipped)


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
