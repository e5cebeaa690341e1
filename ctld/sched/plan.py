"""One scheduling pass: which pending jobs start now, and why the others wait.

``plan`` is a pure function of a :class:`~minislurm.model.Snapshot` (no I/O,
no clock, no database): the controller and the trace simulator call the
very same code. Jobs are tried in order of partition priority tier, then
priority, submit time and job id. The first job of a partition that does
not fit waits for ``Resources`` and blocks its partition: the jobs behind
it wait for ``Priority`` (Slurm's builtin scheduler, before backfill).
Jobs that can never run in their partition as it is configured wait for
``PartitionConfig`` without blocking anyone, as do jobs the snapshot marks
blocked (a dependency, a begin time, an array's task limit). The pending
tasks of an array come as one entry per task that could start; each start
names its task.

Imports only minislurm.model and ctld.sched.select.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.sched.select import select_nodes
from minislurm.model import (
    Allocation,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    Snapshot,
    StartJob,
)
from minislurm.units import INFINITE

REASON_RESOURCES = "Resources"
REASON_PRIORITY = "Priority"
REASON_PARTITION_CONFIG = "PartitionConfig"
REASON_REQ_NODE_NOT_AVAIL = "ReqNodeNotAvail"
_PARTITION_STATE_REASONS = {"DOWN": "PartitionDown", "INACTIVE": "PartitionInactive"}


def job_order(job: PendingJob, tier: int) -> tuple[int, int, float, tuple[int, int]]:
    """The sort key of pending jobs: tier, priority (both descending), age, id, array task.

    Args:
        job: the pending job.
        tier: its partition's PriorityTier.

    Returns:
        A key for ``sorted``.
    """
    return (-tier, -job.priority, job.submit_time, job.key)


def exceeds_partition(job: PendingJob, part: PartitionView, nodes: dict[str, NodeView]) -> bool:
    """Whether the job can never run in its partition as configured.

    Args:
        job: the pending job.
        part: its partition.
        nodes: every node by name.

    Returns:
        True when a limit or the partition's size rules the job out.
    """
    req = job.request
    members = [nodes[n] for n in part.nodes if n in nodes]
    if part.max_time != INFINITE and job.time_limit > part.max_time:
        return True
    if req.min_nodes > len(members) or req.min_nodes < part.min_nodes:
        return True
    if part.max_nodes != INFINITE and req.min_nodes > part.max_nodes:
        return True
    if any(name not in part.nodes for name in req.req_nodes):
        return True
    return req.min_cpus > sum(n.cpus for n in members)


def _consume(node: NodeView, alloc: Allocation) -> NodeView:
    part = alloc.on(node.name)
    if part is None:
        return node
    taken = set(part.gpus)
    return replace(
        node,
        free_cpus=node.free_cpus - part.cpus,
        free_mem=node.free_mem - part.mem,
        free_gpus=tuple(g for g in node.free_gpus if g not in taken),
    )


def plan(snapshot: Snapshot, now: float) -> Plan:
    """Decide which pending jobs start now.

    Args:
        snapshot: nodes with their free resources, partitions, pending jobs.
        now: the time of the pass (unused until time-aware policies need it).

    Returns:
        The jobs (or array tasks) to start with their allocations, and a
        pending reason for every other job that was considered (held jobs
        are left out); an array's reason is that of its first task not started.
    """
    del now
    nodes = {n.name: n for n in snapshot.nodes}
    parts = {p.name: p for p in snapshot.partitions}
    queue = sorted(
        (j for j in snapshot.pending if not j.held and j.partition in parts),
        key=lambda j: job_order(j, parts[j.partition].priority_tier),
    )
    starts: list[StartJob] = []
    reasons: dict[int, str] = {}
    blocked: set[str] = set()
    for job in queue:
        part = parts[job.partition]
        reason = job.blocked or _static_reason(job, part, nodes, blocked)
        if reason:
            reasons.setdefault(job.job_id, reason)
            continue
        alloc = select_nodes(job.request, [nodes[n] for n in part.nodes if n in nodes])
        if alloc is None:
            reasons.setdefault(job.job_id, REASON_RESOURCES)
            blocked.add(part.name)
            continue
        starts.append(StartJob(job.job_id, alloc, job.array_task_id))
        for name in alloc.node_names:
            nodes[name] = _consume(nodes[name], alloc)
    return Plan(tuple(starts), reasons)


def _static_reason(
    job: PendingJob, part: PartitionView, nodes: dict[str, NodeView], blocked: set[str]
) -> str:
    """Why the job cannot even be tried now, or "" when it can."""
    if part.state in _PARTITION_STATE_REASONS:
        return _PARTITION_STATE_REASONS[part.state]
    if exceeds_partition(job, part, nodes):
        return REASON_PARTITION_CONFIG
    if any(not nodes[n].usable for n in job.request.req_nodes if n in nodes):
        return REASON_REQ_NODE_NOT_AVAIL
    if part.name in blocked:
        return REASON_PRIORITY
    return ""
