"""One scheduling pass: which pending jobs start now, when the others will, and why they wait.

``plan`` is a pure function of a :class:`~minislurm.model.Snapshot`, the
time and the scheduler's knobs (no I/O, no clock, no database): the
controller and the trace simulator call the very same code. Jobs are tried
in order of partition priority tier, then priority, submit time and job id.

- ``sched/backfill`` (Slurm's default, :mod:`ctld.sched.backfill`): every
  job is placed at its earliest start in a resource-time map; what fits now
  starts, the rest are reserved so that nothing below delays them.
- ``sched/builtin``: the first job of a partition that does not fit waits
  for ``Resources`` and blocks its partition; the jobs behind it wait for
  ``Priority``. The blocked job's expected start is found in the same map.

Jobs that can never run in their partition as it is configured wait for
``PartitionTimeLimit``, ``PartitionNodeLimit`` or ``PartitionConfig``
without blocking anyone, as do jobs the snapshot marks blocked (a
dependency, a begin time, an array's task limit, an association limit). The pending
tasks of an array come as one entry per task that could start; each start
names its task.

Imports only minislurm.model and ctld.sched.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import replace

from ctld.sched.backfill import candidates, earliest_fit, plan_backfill
from ctld.sched.knobs import SchedConfig
from ctld.sched.queue import (
    REASON_PARTITION_CONFIG,
    REASON_PRIORITY,
    REASON_REQ_NODE_NOT_AVAIL,
    REASON_RESOURCES,
    PassContext,
    PlanBuilder,
    exceeds_partition,
    job_order,
)
from ctld.sched.select import select_nodes
from ctld.sched.timeline import build_timeline, slot_end
from minislurm.model import Allocation, NodeView, PendingJob, Plan, Snapshot

__all__ = [
    "REASON_PARTITION_CONFIG",
    "REASON_PRIORITY",
    "REASON_REQ_NODE_NOT_AVAIL",
    "REASON_RESOURCES",
    "exceeds_partition",
    "job_order",
    "plan",
]


def plan(snapshot: Snapshot, now: float, cfg: SchedConfig) -> Plan:
    """Decide which pending jobs start now.

    Args:
        snapshot: nodes with their free resources, partitions, pending and running jobs.
        now: the time of the pass.
        cfg: the scheduler type and its knobs.

    Returns:
        The jobs (or array tasks) to start with their allocations; a pending
        reason for every other job that was considered (held jobs are left
        out; with backfill, so are the jobs below the first
        ``bf_max_job_test`` tested, but for those the snapshot marks
        blocked), an array's being that of its first task not started; the
        expected start of the waiting jobs that got a reservation; and the
        reservations themselves (starts included, from now).
    """
    with _no_collection():
        ctx = PassContext(snapshot)
        if cfg.backfill:
            return plan_backfill(ctx, now, cfg)
        return _plan_builtin(ctx, now, cfg)


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while a pass runs.

    A pass allocates hundreds of thousands of short-lived tuples and records
    that form no cycles (reference counting frees them); the collections
    their allocations trigger only scan the controller's heap in vain: 4 %
    of a full pass over 10,000 jobs (bench/bench_backfill.py, counted in
    instructions). Collection resumes when the pass ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plan_builtin(ctx: PassContext, now: float, cfg: SchedConfig) -> Plan:
    """Strict priority order within each partition: the first job that does not fit blocks it."""
    nodes = dict(ctx.nodes)
    out = PlanBuilder()
    started: list[tuple[PendingJob, Allocation]] = []
    heads: list[PendingJob] = []
    blocked: set[str] = set()
    for job in ctx.queue(len(ctx.jobs)):
        reason = ctx.static_reason(job)
        if reason:
            out.note(job, reason)
            continue
        if job.partition in blocked:
            out.note(job, REASON_PRIORITY)
            continue
        part = ctx.parts[job.partition]
        alloc = select_nodes(job.request, [nodes[n] for n in part.nodes if n in nodes])
        if alloc is None:
            out.wait(job)
            blocked.add(part.name)
            heads.append(job)
            continue
        out.start(job, alloc)
        started.append((job, alloc))
        for name in alloc.node_names:
            nodes[name] = _consume(nodes[name], alloc)
    _estimate_heads(ctx, now, cfg, out, started, heads)
    return out.plan()


def _estimate_heads(
    ctx: PassContext,
    now: float,
    cfg: SchedConfig,
    out: PlanBuilder,
    started: list[tuple[PendingJob, Allocation]],
    heads: list[PendingJob],
) -> None:
    """Reserve the starts, then find when each partition's blocked job would start."""
    for job, alloc in started:
        out.reserve(job, now, slot_end(now, job.duration, cfg.bf_resolution), alloc)
    if not heads:
        return
    snapshot = ctx.snapshot
    horizon = now + cfg.window_seconds
    timeline = build_timeline(snapshot.nodes, snapshot.running, now, cfg.bf_resolution, horizon)
    for held in out.reservations:
        timeline = timeline.reserve(held.allocation, held.start, held.end)
    for job in heads:
        mask = timeline.table.mask(ctx.parts[job.partition].nodes)
        cand = candidates(timeline, job.request, mask)
        found = earliest_fit(timeline, job.request, job.duration, cand, 0, horizon)
        if found is not None:
            timeline = timeline.reserve(found.allocation, found.start, found.end)
            out.reserve(job, found.start, found.end, found.allocation)
            out.start_times[job.job_id] = found.start


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
