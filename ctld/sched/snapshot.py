"""The scheduler's snapshot: everything one pass reads, built from the cluster's state.

Nodes with their free resources, partitions, the pending entries (one per
queued job, or per array task that could start now) with their priorities,
what blocks them (begin time, dependency, array throttle, reservations,
association limits), and the running jobs with their expected ends. The
controller builds it from its in-memory state before each pass; the trace
simulator builds it the same way from its own.

Pure: no I/O, no clock (``now`` is an argument). Imports ctld.sched,
ctld.state, ctld.depend, ctld.resv.rules and minislurm; accounting is what
:class:`Associations` says, so the simulator needs no database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from ctld.depend import wait_reason
from ctld.resv.rules import JobLimits, job_limits
from ctld.sched.priority import ClusterSize, PriorityWeights, job_priority
from ctld.state import ClusterState, NodeUsage
from minislurm.arrays import TaskSet
from minislurm.config import PartitionConfig
from minislurm.depend import parse_dependency
from minislurm.model import (
    Job,
    Node,
    NodeView,
    PartitionView,
    PendingJob,
    ResourceRequest,
    RunningJob,
    Snapshot,
    time_limit_end,
)
from minislurm.states import NodeFlag, NodeState

REASON_BEGIN_TIME = "BeginTime"
REASON_ARRAY_LIMIT = "JobArrayTaskLimit"
_NO_USAGE = NodeUsage()  # a node nothing is allocated on
_MAX_MADE = 1 << 16  # node views kept by record and usage


class Associations(Protocol):
    """What a pass asks of accounting (:class:`ctld.accounting.manager.Accounting`)."""

    def fairshare(self, job: Job) -> float:
        """The Fair Tree factor of the job's association."""
        ...

    def qos_factor(self, job: Job) -> float:
        """The job's QOS priority factor."""
        ...

    def hold_back(
        self, pending: list[PendingJob], jobs: dict[int, Job], running: list[Job]
    ) -> list[PendingJob]:
        """The entries, those that association limits keep from starting blocked."""
        ...


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
    Running jobs' entries depend on their record alone: every pass takes
    those of unchanged records.

    It also keeps the node views, which the next pass takes again but for
    the nodes whose record or usage changed since (the state counts the
    changes), and each partition's view while its configuration is the
    same: the planner works out once what it needs of a node or partition
    view it has seen (by identity). Nodes go back and forth between a few
    usages (a trace's one-CPU nodes between idle and busy), so a changed
    node's view is taken from those made before for its record and usage
    (``made``, at most ``_MAX_MADE``), as making one costs more than finding it.
    """

    entries: dict[int, tuple[Job, PendingJob]] = field(default_factory=dict)
    running: dict[int, tuple[Job, RunningJob]] = field(default_factory=dict)  # by record
    nodes: list[NodeView] = field(default_factory=list)  # in the order of the state's nodes
    where: dict[str, int] = field(default_factory=dict)  # each node's place in ``nodes``
    source: ClusterState | None = None  # the state the views are of
    node_changes: int = 0  # its count of node changes then
    made: dict[tuple[str, NodeUsage], tuple[Node, NodeView]] = field(default_factory=dict)
    partitions: dict[str, tuple[PartitionConfig, PartitionView]] = field(default_factory=dict)


def _plain(job: Job, now: float) -> bool:
    """Whether a queued job's entry depends on its record alone (and its priority)."""
    array_record = job.array_job_id and job.array_task_id is None
    return not job.dependency and job.begin_time <= now and not array_record


def kept_nodes(job: Job, state: ClusterState) -> tuple[str, ...]:
    """The nodes an ``--exclusive=topo`` job keeps other jobs off: the rest of its base blocks.

    Args:
        job: an active job with its allocation.
        state: the cluster, with its topology.

    Returns:
        Node names (none for other jobs, or without blocks).
    """
    topology = state.topology
    if not job.request.exclusive_topo or topology is None or not topology.block:
        return ()
    assert job.allocation is not None
    mine = set(job.allocation.node_names)
    return tuple(
        node
        for block in topology.blocks
        if mine.intersection(block.nodes)
        for node in block.nodes
        if node not in mine
    )


def switch_until(job: Job) -> float:
    """When a job's wait for its ``--switches`` count ends (0 when it asks none).

    The wait runs from the job's eligible time.

    Args:
        job: a queued job.

    Returns:
        Epoch seconds.
    """
    req = job.request
    if not req.switches:
        return 0.0
    return (job.eligible_time or job.submit_time) + req.switch_wait


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
    accounting: Associations | None = None,
    kept: KeptEntries | None = None,
    reuse: bool = False,
    held: Mapping[tuple[int, int], tuple[str, ...]] | None = None,
) -> Snapshot:
    """Everything a pass reads, from the in-memory state.

    Args:
        state: the cluster.
        now: the time of the pass.
        weights: priority weights.
        accounting: associations (fair share, limits), if any.
        kept: where plain jobs' entries and node views are kept for the next
            pass (they replace what it held).
        reuse: take the entries ``kept`` holds for unchanged plain jobs, rather
            than compute them.
        held: the nodes the last full pass reserved for the jobs that wait
            (:meth:`Plan.held`).

    Returns:
        The snapshot.
    """
    nodes = _node_views(state, kept)
    size: ClusterSize | None = None  # once a priority is computed
    part_views = {p.name: _partition_view(p, kept) for p in state.partitions.values()}
    partitions = tuple(view for _, view in part_views.values())
    part_free: dict[str, int] | None = None  # free CPUs by partition, once an array asks
    active = list(state.active_jobs())
    running = Counter(j.array_job_id for j in active if j.array_job_id)
    pending: list[PendingJob] = []
    memo = ReservationMemo()
    old = kept.entries if kept is not None and reuse else {}
    new: dict[int, tuple[Job, PendingJob]] = {}
    reserved = bool(state.reservations)  # then they bound every entry
    for job in state.queued_jobs():
        hit = old.get(job.job_id)
        if hit is not None and hit[0] is job:  # kept as plain, the same record still is
            new[job.job_id] = hit
            if not (reserved or job.reservation):  # the entry as kept: the common case
                pending.append(hit[1])
                continue
            entries = [hit[1]]
        else:
            part = state.partitions.get(job.partition)
            fairshare = accounting.fairshare(job) if accounting else 0.0
            qos = accounting.qos_factor(job) if accounting else 0.0
            job_factor = part.priority_job_factor if part else 1
            if size is None:
                size = cluster_size(state)
            entry = PendingJob(
                job_id=job.job_id,
                partition=job.partition,
                priority=job_priority(job, now, weights, size, job_factor, fairshare, qos),
                submit_time=job.submit_time,
                request=scheduled_request(job.request, state),
                time_limit=job.time_limit,
                held=job.held,
                array_task_id=job.array_task_id,
                switch_until=switch_until(job),
            )
            room = 1  # how many of its pending tasks may start: only an array's record asks
            if job.array_job_id and job.array_task_id is None:
                if part_free is None:
                    free = {n.name: n.free_cpus for n in nodes if n.usable}
                    part_free = {p.name: sum(free.get(n, 0) for n in p.nodes) for p in partitions}
                room = part_free.get(job.partition, 0) // max(job.request.min_cpus, 1) + 1
            entries = pending_entries(entry, job, state, now, running[job.array_job_id], room)
            if _plain(job, now):
                new[job.job_id] = (job, entries[0])
        if reserved or job.reservation:
            entries = [reservation_bound(e, job, state, now, memo) for e in entries]
        pending += entries
    holding = _holding(active, state, kept)
    if kept is not None:
        kept.entries = new
        kept.partitions = part_views
    if accounting is not None:
        pending = accounting.hold_back(pending, state.jobs, active)
    return Snapshot(tuple(nodes), partitions, tuple(pending), holding, held or {})


def _holding(
    active: list[Job], state: ClusterState, kept: KeptEntries | None
) -> tuple[RunningJob, ...]:
    """The running jobs' entries: those kept for the same record, made for the others.

    On a cluster of blocks an entry names the nodes its job keeps out of use
    (``--exclusive=topo``), which other jobs change: those are made every time.
    """
    blocks = state.topology is not None and state.topology.block
    cache = None if blocks or kept is None else kept
    old = cache.running if cache is not None else {}
    new: dict[int, tuple[Job, RunningJob]] = {}
    for job in active:
        if job.allocation is None:
            continue
        hit = old.get(job.job_id)
        if hit is None or hit[0] is not job:
            idle = kept_nodes(job, state) if blocks else ()
            hit = (job, RunningJob(job.job_id, job.allocation, time_limit_end(job), idle))
        new[job.job_id] = hit
    if cache is not None:
        cache.running = new
    return tuple(entry for _, entry in new.values())


def _node_views(state: ClusterState, kept: KeptEntries | None) -> list[NodeView]:
    """Every node's view: the kept ones, made again for the nodes changed since they were."""
    usage = state.usage()
    if kept is None or kept.source is not state or len(kept.nodes) != len(state.nodes):
        views = [_node_view(node, usage.get(node.name, _NO_USAGE)) for node in state.nodes.values()]
        if kept is not None:
            kept.source = state
            kept.where = {view.name: i for i, view in enumerate(views)}
    else:
        views = list(kept.nodes)
        made = kept.made
        if len(made) >= _MAX_MADE:
            made.clear()
        for name in state.nodes_changed_since(kept.node_changes):
            node, used = state.nodes[name], usage.get(name, _NO_USAGE)
            seen = made.get((name, used))
            if seen is None or seen[0] is not node:
                seen = made[name, used] = (node, _node_view(node, used))
            views[kept.where[name]] = seen[1]
    if kept is not None:
        kept.nodes = views
        kept.node_changes = state.node_changes
    return views


def _node_view(node: Node, used: NodeUsage) -> NodeView:
    """A node's view: what it has, and what is free of it."""
    return NodeView(
        name=node.name,
        cpus=node.cpus,
        mem=node.real_memory,
        gpus=node.gpus,
        free_cpus=node.cpus - used.cpus,
        free_mem=node.real_memory - used.mem,
        free_gpus=tuple(g for g in node.gpus if g not in used.gpus) if used.gpus else node.gpus,
        usable=node_usable(node.state, node.flags),
        weight=node.weight,
        gpu_links=node.gpu_links,
    )


def _partition_view(
    part: PartitionConfig, kept: KeptEntries | None
) -> tuple[PartitionConfig, PartitionView]:
    """A partition's view, the kept one while its configuration is the same object."""
    seen = kept.partitions.get(part.name) if kept is not None else None
    if seen is not None and seen[0] is part:
        return seen
    view = PartitionView(
        name=part.name,
        nodes=part.nodes,
        priority_tier=part.priority_tier,
        max_time=part.max_time,
        max_nodes=part.max_nodes,
        min_nodes=part.min_nodes,
        state=part.state,
    )
    return part, view


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
