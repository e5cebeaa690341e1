"""Scheduling passes: which pending jobs start now, when the others will, and why they wait.

``plan`` and ``plan_event`` are pure functions of a
:class:`~minislurm.model.Snapshot`, the time and the scheduler's knobs (no
I/O, no clock, no database): the controller and the trace simulator call
the very same code. Jobs are tried in order of partition priority tier,
then priority, submit time and job id.

``plan`` is the full pass:

- ``sched/backfill`` (Slurm's default, :mod:`ctld.sched.backfill`): every
  job is placed at its earliest start in a resource-time map; what fits now
  starts, the rest are reserved so that nothing below delays them.
- ``sched/builtin``: strict priority order (:mod:`ctld.sched.strict`): the
  first job of a partition that does not fit waits for ``Resources`` and
  blocks its partition; the jobs behind it wait for ``Priority``. The
  blocked job's expected start is found in the same map.

``plan_event`` is the quick pass the controller runs on an event while a
full pass must wait (Slurm's main scheduler): strict priority order over
the top ``default_queue_depth`` jobs, starts only.

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

from ctld.sched.backfill import candidates, earliest_fit, plan_backfill
from ctld.sched.knobs import SchedConfig
from ctld.sched.queue import (
    REASON_PARTITION_CONFIG,
    REASON_PRIORITY,
    REASON_REQ_NODE_NOT_AVAIL,
    REASON_RESOURCES,
    PassContext,
    exceeds_partition,
    job_order,
)
from ctld.sched.strict import strict_pass
from ctld.sched.topo import wiring_of
from minislurm.model import Plan, Snapshot

__all__ = [
    "REASON_PARTITION_CONFIG",
    "REASON_PRIORITY",
    "REASON_REQ_NODE_NOT_AVAIL",
    "REASON_RESOURCES",
    "exceeds_partition",
    "job_order",
    "plan",
    "plan_event",
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


def plan_event(snapshot: Snapshot, now: float, cfg: SchedConfig) -> Plan:
    """Start what may start now in strict priority order, over the top ``default_queue_depth`` jobs.

    Args:
        snapshot: as for :func:`plan`.
        now: the time of the pass.
        cfg: the knobs (``default_queue_depth``; either scheduler type).

    Returns:
        The starts, with their reservations from now, and the reasons of the
        jobs looked at (and of the jobs below them that the snapshot marks
        blocked); no expected starts.
    """
    with _no_collection():
        ctx = PassContext(snapshot)
        return strict_pass(ctx, now, cfg, cfg.default_queue_depth, now).out.plan()


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
    """Strict priority order over the whole queue; then when each blocked job would start."""
    horizon = now + cfg.window_seconds
    done = strict_pass(ctx, now, cfg, len(ctx.jobs), horizon)
    timeline, out = done.timeline, done.out
    for job in done.heads:
        mask = timeline.table.mask(ctx.parts[job.partition].nodes)
        cand = candidates(timeline, job.request, mask, wiring_of(cfg, timeline, job))
        found = earliest_fit(timeline, job.request, job.duration, cand, 0, horizon)
        if found is not None:
            timeline = timeline.reserve(found.allocation, found.start, found.end)
            out.reserve(job, found.start, found.end, found.allocation)
            out.start_times[job.job_id] = found.start
    return out.plan()
