"""The controller's scheduling loop: snapshot, plan, apply.

Scheduling is event-driven: anything that may let a job start (a
submission, a job's end, a node registering, a release) calls ``kick()``,
and the loop runs a pass as soon as the event loop is free; kicks that
arrive while one is running coalesce into one more pass. That pass is a
full one (backfill over ``bf_max_job_test`` jobs, or ``sched/builtin``
over the whole queue) unless the last full pass ended less than its own
length ago: then it is the quick event pass over the top
``default_queue_depth`` jobs (:func:`~ctld.sched.plan.plan_event`, Slurm's
main scheduler), and a full pass follows once that time is up. So full
passes take at most half of the controller's time under a burst of
submissions, while the jobs at the top of the queue still start within
milliseconds of the event that lets them. An event pass takes most entries of
its snapshot from the pass before (:class:`KeptEntries`) rather than
compute every queued job's priority again. An event pass that took long is
followed by an equal pause. A periodic full pass covers time-based changes
(job age), at least every ``bf_interval`` seconds.

Imports ctld.sched, ctld.state, ctld.jobs, ctld.acctmgr, ctld.reservations and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from ctld import jobs as jobops
from ctld.acctmgr import Accounting
from ctld.depend import wait_reason
from ctld.reservations import JobLimits, job_limits
from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan, plan_event
from ctld.sched.priority import ClusterSize, PriorityWeights, job_priority
from ctld.state import ClusterState, NodeUsage
from minislurm.arrays import TaskSet
from minislurm.depend import parse_dependency
from minislurm.model import (
    Job,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    ResourceRequest,
    RunningJob,
    Snapshot,
)
from minislurm.states import NodeFlag, NodeState
from minislurm.units import INFINITE

log = logging.getLogger("minislurm.sched")

TICK_SECONDS = 30.0
INF = float("inf")
REASON_BEGIN_TIME = "BeginTime"
REASON_ARRAY_LIMIT = "JobArrayTaskLimit"
MIN_PAUSE_AFTER = 0.002  # seconds; shorter passes run again as soon as kicked
# Slurm's main scheduler runs on events from a background loop that wakes once a second: a
# job whose reason a request left at None (a release, a new array) gets the one a pass finds
# up to a second later. Our passes run at once, for starts; that reason waits as long.
REASON_DELAY = 1.0


def node_usable(state: NodeState, flags: frozenset[NodeFlag]) -> bool:
    """Whether new work may be placed on a node.

    Args:
        state: its stored base state.
        flags: its flags.

    Returns:
        True when it is in service, responding and not drained.
    """
    return state is NodeState.IDLE and not flags


def cluster_size(state: ClusterState) -> ClusterSize:
    """What the job size and partition priority factors are relative to.

    Args:
        state: the cluster.

    Returns:
        Its nodes, CPUs and largest PriorityJobFactor.
    """
    factors = [p.priority_job_factor for p in state.partitions.values()]
    cpus = sum(n.cpus for n in state.nodes.values())
    return ClusterSize(len(state.nodes), cpus, max(factors, default=1))


@dataclass
class KeptEntries:
    """The entries of plain queued jobs, kept from one pass for the next event pass.

    A plain job (no dependency, its begin time passed, not an array's record
    of pending tasks) has one entry, which changes only with its record (a
    change puts a new record) and with its priority. Event passes take the
    kept entry of a job whose record is the same; full passes compute every
    entry anew. So an event pass reads priorities as of the last full pass,
    as Slurm's main scheduler reads those its priority thread last computed
    (PriorityCalcPeriod), and its cost no longer grows with the whole queue.
    """

    entries: dict[int, tuple[Job, PendingJob]] = field(default_factory=dict)


def _plain(job: Job, now: float) -> bool:
    """Whether a queued job's entry depends on its record alone (and its priority)."""
    array_record = job.array_job_id and job.array_task_id is None
    return not job.dependency and job.begin_time <= now and not array_record


def scheduled_request(req: ResourceRequest, state: ClusterState) -> ResourceRequest:
    """The request the scheduler places: as asked where jobs hold memory.

    Where memory is not consumable (``SelectTypeParameters=CR_Core``), a job's
    memory per node (or per CPU, for one task's CPUs) only keeps it off nodes
    with less RealMemory, as Slurm filters nodes by their configuration, and
    its allocation holds none.

    Args:
        req: the job's request.
        state: the cluster.

    Returns:
        The request to place.
    """
    if state.memory_consumable or not (req.mem_per_node or req.mem_per_cpu):
        return req
    need = req.mem_per_node or req.mem_per_cpu * req.cpus_per_task
    small = {n.name for n in state.nodes.values() if n.real_memory < need}
    excluded = tuple(sorted(small.union(req.exc_nodes)))
    return replace(req, mem_per_node=0, mem_per_cpu=0, exc_nodes=excluded)


def build_snapshot(
    state: ClusterState,
    now: float,
    weights: PriorityWeights,
    accounting: Accounting | None = None,
    kept: KeptEntries | None = None,
    reuse: bool = False,
) -> Snapshot:
    """Everything a pass reads, from the in-memory state.

    Args:
        state: the cluster.
        now: the time of the pass.
        weights: priority weights.
        accounting: associations (fair share, limits), if any.
        kept: where plain jobs' entries are kept for the next pass (they replace
            what it held).
        reuse: take the entries ``kept`` holds for unchanged plain jobs, rather
            than compute them.

    Returns:
        The snapshot.
    """
    usage = state.usage()
    empty = NodeUsage()
    nodes = []
    for node in state.nodes.values():
        used = usage.get(node.name, empty)
        nodes.append(
            NodeView(
                name=node.name,
                cpus=node.cpus,
                mem=node.real_memory,
                gpus=node.gpus,
                free_cpus=node.cpus - used.cpus,
                free_mem=node.real_memory - used.mem,
                free_gpus=tuple(g for g in node.gpus if g not in used.gpus),
                usable=node_usable(node.state, node.flags),
                weight=node.weight,
            )
        )
    size = cluster_size(state)
    partitions = tuple(
        PartitionView(
            name=p.name,
            nodes=p.nodes,
            priority_tier=p.priority_tier,
            max_time=p.max_time,
            max_nodes=p.max_nodes,
            min_nodes=p.min_nodes,
            state=p.state,
        )
        for p in state.partitions.values()
    )
    free = {n.name: n.free_cpus for n in nodes if n.usable}
    part_free = {p.name: sum(free.get(n, 0) for n in p.nodes) for p in partitions}
    active = list(state.active_jobs())
    running = Counter(j.array_job_id for j in active if j.array_job_id)
    pending: list[PendingJob] = []
    memo = ReservationMemo()
    old = kept.entries if kept is not None and reuse else {}
    new: dict[int, tuple[Job, PendingJob]] = {}
    for job in state.queued_jobs():
        hit = old.get(job.job_id)
        if hit is not None and hit[0] is job:  # kept as plain, the same record still is
            new[job.job_id] = hit
            entries = [hit[1]]
        else:
            part = state.partitions.get(job.partition)
            fairshare = accounting.fairshare(job) if accounting else 0.0
            qos = accounting.qos_factor(job) if accounting else 0.0
            job_factor = part.priority_job_factor if part else 1
            entry = PendingJob(
                job_id=job.job_id,
                partition=job.partition,
                priority=job_priority(job, now, weights, size, job_factor, fairshare, qos),
                submit_time=job.submit_time,
                request=scheduled_request(job.request, state),
                time_limit=job.time_limit,
                held=job.held,
                array_task_id=job.array_task_id,
            )
            room = part_free.get(job.partition, 0) // max(job.request.min_cpus, 1) + 1
            entries = pending_entries(entry, job, state, now, running[job.array_job_id], room)
            if _plain(job, now):
                new[job.job_id] = (job, entries[0])
        if state.reservations or job.reservation:
            entries = [reservation_bound(e, job, state, now, memo) for e in entries]
        pending += entries
    holding = tuple(
        RunningJob(j.job_id, j.allocation, jobops.time_limit_end(j))
        for j in active
        if j.allocation is not None
    )
    if kept is not None:
        kept.entries = new
    if accounting is not None:
        pending = accounting.hold_back(pending, state.jobs, active)
    return Snapshot(tuple(nodes), partitions, tuple(pending), holding)


@dataclass
class ReservationMemo:
    """What one pass worked out about reservations, shared by the jobs that ask the same.

    Queues hold many jobs of a few shapes: the limits depend only on a job's
    reservation and time limit, the restricted request only on the request,
    the nodes to avoid and the partition.
    """

    limits: dict[tuple[str, float], JobLimits] = field(default_factory=dict)
    bounds: dict[tuple[ResourceRequest, frozenset[str], str], ResourceRequest | str] = field(
        default_factory=dict
    )


def reservation_bound(
    entry: PendingJob, job: Job, state: ClusterState, now: float, memo: ReservationMemo
) -> PendingJob:
    """Keep a pending entry off the nodes that reservations hold while it could run.

    The nodes go into the entry's excluded nodes for this pass; when too few
    nodes are left (or a required one is held), the entry waits with the
    reservation's reason instead. A job in a reservation waits for its window.

    Args:
        entry: one entry of the job, maybe already blocked.
        job: the job (its reservation).
        state: the cluster (reservations, partitions, nodes).
        now: the time of the pass.
        memo: this pass's answers so far.

    Returns:
        The entry, restricted or blocked.
    """
    if entry.blocked:
        return entry
    key = (job.reservation, entry.duration)
    limits = memo.limits.get(key)
    if limits is None:
        resvs = state.reservations.values()
        limits = memo.limits[key] = job_limits(*key, now, resvs, state.nodes)
    if limits.blocked:
        return replace(entry, blocked=limits.blocked)
    if not limits.avoid:
        return entry
    bound_key = (entry.request, limits.avoid, job.partition)
    bound = memo.bounds.get(bound_key)
    if bound is None:
        req = entry.request
        excluded = set(req.exc_nodes) | limits.avoid
        left = [n for n in state.partitions[job.partition].nodes if n not in excluded]
        if len(left) < req.min_nodes or excluded.intersection(req.req_nodes):
            bound = limits.crowded
        else:
            bound = replace(req, exc_nodes=tuple(sorted(excluded)))
        memo.bounds[bound_key] = bound
    if isinstance(bound, str):
        return replace(entry, blocked=bound)
    return replace(entry, request=bound)


def pending_entries(
    entry: PendingJob, job: Job, state: ClusterState, now: float, running: int, room: int
) -> list[PendingJob]:
    """What the scheduler considers of one queued job, and what blocks it.

    A job waits on its begin time, then its dependency. The record of an
    array's pending tasks yields one entry per task that could start now,
    never more than its throttle allows, the free CPUs of its partition
    could take, or one when it is a ``singleton``; no task is materialised.

    Args:
        entry: the job's entry, unblocked.
        job: the job.
        state: the cluster (for dependencies).
        now: the time of the pass.
        running: how many tasks of its array are active.
        room: at most how many of its tasks the partition could start.

    Returns:
        The entries.
    """
    if job.begin_time > now:
        return [replace(entry, blocked=REASON_BEGIN_TIME)]
    dep = parse_dependency(job.dependency)
    if job.array_task_id is not None or not job.array_job_id:
        reason = wait_reason(dep, job, job.array_task_id, state, now)
        return [replace(entry, blocked=reason) if reason else entry]
    limit = job.array_throttle - running if job.array_throttle else room
    if limit <= 0:
        return [replace(entry, blocked=REASON_ARRAY_LIMIT)]
    if any(item.kind == "singleton" for item in dep.items):
        limit = 1
    count = min(limit, room)
    tasks = TaskSet.parse(job.array_tasks).take(count + 1)
    entries = []
    for task in tasks[:count]:
        blocked = wait_reason(dep, job, task, state, now)
        entries.append(replace(entry, array_task_id=task, blocked=blocked))
    if len(tasks) > count and count == job.array_throttle - running:
        # The throttle, not the room, stops the next task: say so if the others start.
        entries.append(replace(entry, array_task_id=tasks[count], blocked=REASON_ARRAY_LIMIT))
    return entries


def next_wakeup(state: ClusterState, now: float) -> float:
    """When a queued job's begin time comes or its deadline can no longer be met, or infinity.

    Args:
        state: the cluster.
        now: the time.

    Returns:
        Epoch seconds.
    """
    times = []
    for job in state.queued_jobs():
        times.append(job.begin_time)
        if job.deadline:
            times.append(latest_start(job))
    return min((t for t in times if t > now), default=INF)


def latest_start(job: Job) -> float:
    """The last moment a job with a deadline may start and still end before it.

    Args:
        job: a job with a deadline.

    Returns:
        Epoch seconds.
    """
    limit = 0 if job.time_limit == INFINITE else job.time_limit * 60
    return job.deadline - limit


class PassHooks(Protocol):
    """Who carries out a pass's decisions (the controller's :class:`ctld.starts.Starts`)."""

    def settle(self, now: float) -> None:
        """Before a pass: settle what time and other jobs decided (dependencies, deadlines)."""

    def apply(self, decided: Plan, now: float) -> None:
        """Start what the pass planned, and give the pending jobs their reasons."""

    def preempt(self, snapshot: Snapshot, decided: Plan, now: float) -> None:
        """After a full pass: preempt for the jobs that wait."""


class SchedulerLoop:
    """Runs scheduling passes when kicked, when a begin time comes, and every ``bf_interval``.

    Each pass first has its hooks settle what time and other jobs decided,
    then plans and hands the plan to its hooks to apply.

    Args:
        state: the cluster.
        weights: the multifactor priority weights.
        hooks: who carries out the passes' decisions.
        cfg: the scheduler's knobs.
        accounting: limits, fair share and QOS.
    """

    def __init__(
        self,
        state: ClusterState,
        weights: PriorityWeights,
        hooks: PassHooks,
        cfg: SchedConfig | None = None,
        accounting: Accounting | None = None,
    ) -> None:
        self._state = state
        self._weights = weights
        self._accounting = accounting
        self.cfg = cfg or SchedConfig()
        self.start_times: dict[int, float] = {}  # the last full pass's expected starts
        self._hooks = hooks
        self._kicked = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._blocked: set[int] = set()  # jobs the last pass found blocked (Dependency, ...)
        self._kept = KeptEntries()  # plain jobs' entries, for event passes
        self._quiet: dict[int, float] = {}  # job id -> until when its reason stays None
        self.passes = 0

    def kick(self) -> None:
        """Ask for a pass as soon as possible."""
        self._kicked.set()

    def keep_reasons(self, job_ids: Iterable[int], now: float) -> None:
        """Leave these jobs' reason (None) as it is for :data:`REASON_DELAY`, as Slurm's does.

        Passes in the meantime may still start them.

        Args:
            job_ids: jobs whose reason a request has just reset.
            now: the time of the request.
        """
        for job_id in job_ids:
            self._quiet[job_id] = now + REASON_DELAY
        self.kick()

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="scheduler")
        self.kick()

    async def stop(self) -> None:
        """Stop the loop (a pass in progress completes first)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def run_pass(self, full: bool = True) -> Plan:
        """One pass now: snapshot, plan, apply; after a full pass, preempt for the jobs that wait.

        Args:
            full: a full pass (:func:`~ctld.sched.plan.plan`), else an event
                pass (:func:`~ctld.sched.plan.plan_event`), which leaves the
                expected starts of the last full pass as they are.

        Returns:
            What the pass decided.
        """
        now = time.time()
        self._hooks.settle(now)
        snapshot = build_snapshot(
            self._state, now, self._weights, self._accounting, self._kept, reuse=not full
        )
        decided = self._unblock(snapshot, (plan if full else plan_event)(snapshot, now, self.cfg))
        decided = self._quieted(decided, now)
        if full:
            self.start_times = decided.start_times
        self._hooks.apply(decided, now)
        if full:
            self._hooks.preempt(snapshot, decided, now)
        self.passes += 1
        if decided.starts:
            log.debug("pass %d started %d job(s)", self.passes, len(decided.starts))
        return decided

    def _unblock(self, snapshot: Snapshot, decided: Plan) -> Plan:
        """Clear the reason of a job out of its block that the pass did not examine.

        A pass gives reasons only to the jobs it examined and those still
        blocked; the others keep theirs, as in Slurm, except a reason that
        named a block now gone (a dependency met, a begin time passed), which
        becomes ``None`` as Slurm sets it then.
        """
        blocked = {job.job_id for job in snapshot.pending if job.blocked}
        freed = self._blocked - blocked - decided.reasons.keys()
        self._blocked = blocked
        if not freed:
            return decided
        cleared = dict.fromkeys(freed, jobops.REASON_NONE)
        return replace(decided, reasons={**decided.reasons, **cleared})

    def _quieted(self, decided: Plan, now: float) -> Plan:
        """The plan without the reasons of jobs whose reason must stay None a while yet."""
        if not self._quiet:
            return decided
        self._quiet = {i: until for i, until in self._quiet.items() if until > now}
        kept = {i: r for i, r in decided.reasons.items() if i not in self._quiet}
        return replace(decided, reasons=kept)

    async def _run(self) -> None:
        tick = min(TICK_SECONDS, self.cfg.bf_interval)
        last_full = -INF  # when the last full pass began (monotonic)
        full_ready = 0.0  # from when a kick may bring on a full pass again
        owed = False  # an event pass ran since the last full pass: one must follow
        while True:
            now = time.monotonic()
            wake = min(next_wakeup(self._state, time.time()), *self._quiet.values(), INF)
            wake += 0.01 - time.time()
            timeout = min(last_full + tick - now, wake, full_ready - now if owed else INF)
            try:
                await asyncio.wait_for(self._kicked.wait(), max(timeout, 0))
            except TimeoutError:
                pass
            self._kicked.clear()
            began = time.monotonic()
            full = began >= full_ready or began >= last_full + tick
            try:
                self.run_pass(full)
            except Exception:
                log.exception("scheduling pass failed")
            took = time.monotonic() - began
            if full:
                # The next full pass waits as long again as this one took.
                last_full, full_ready, owed = began, began + 2 * took, False
            else:
                owed = True
                if took > MIN_PAUSE_AFTER:
                    await asyncio.sleep(took)
