"""Strict priority order: Slurm's main scheduler, and ``sched/builtin``.

Jobs are tried in priority order and each one that fits now starts. The
first job of a partition that does not fit waits for ``Resources`` and
blocks its partition: the jobs behind it there wait for ``Priority``, and
no job further down, of any partition, may use that partition's nodes (as
Slurm's ``schedule()`` takes them out of its available nodes). A job so
started is therefore never one that a job above it, waiting for the same
nodes, would have to wait for, whatever a backfill pass planned.

This is the event-triggered pass of the controller (over the top
``default_queue_depth`` jobs, as Slurm's main scheduler runs when a job is
submitted or ends) and, over the whole queue, the ``sched/builtin`` policy.
Fitting is tested in the resource-time map, as backfill does, for a start
now only. A start now needs nothing of the map beyond now (running jobs
only free resources later), so the event pass builds it without them; the
builtin pass maps them to the horizon, to tell when each blocked job would
start.

Imports minislurm.model and ctld.sched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from ctld.sched.backfill import candidates, earliest_fit
from ctld.sched.knobs import SchedConfig
from ctld.sched.queue import REASON_PRIORITY, PassContext, PlanBuilder
from ctld.sched.timeline import Timeline, build_timeline
from ctld.sched.topo import wiring_of
from minislurm.model import PendingJob

_BLOCKED = attrgetter("blocked")


@dataclass
class StrictPass:
    """What a strict-order walk decided, with the map it left and the jobs that blocked."""

    out: PlanBuilder
    timeline: Timeline  # the running jobs and the starts
    heads: list[PendingJob] = field(default_factory=list)  # each blocked its partition


def strict_pass(
    ctx: PassContext, now: float, cfg: SchedConfig, depth: int, horizon: float
) -> StrictPass:
    """Start the jobs that fit now, in priority order, until one of a partition does not.

    Args:
        ctx: the snapshot, indexed, with its queue.
        now: the time of the pass.
        cfg: the knobs (the map's resolution).
        depth: how many jobs of the queue to look at, at most. The jobs below
            keep the reason they have, but for those the snapshot marks blocked.
        horizon: the map keeps the ends of the running jobs up to then (now:
            none; enough to start jobs now).

    Returns:
        The starts and reasons, the map with the starts in it, and the jobs
        that blocked their partition.
    """
    snapshot = ctx.snapshot
    timeline = build_timeline(snapshot.nodes, snapshot.running, now, cfg.bf_resolution, horizon)
    part_masks = {name: timeline.table.mask(p.nodes) for name, p in ctx.parts.items()}
    done = StrictPass(PlanBuilder(), timeline)
    out, blocked, closed = done.out, set(), 0  # blocked partitions, and their nodes
    for looked, job in enumerate(ctx.queue(depth)):
        if looked == depth:
            for rest in filter(_BLOCKED, ctx.jobs):
                out.note(rest, rest.blocked)
            break
        reason, (part, _, duration, _) = ctx.triage(job)
        if reason:
            out.note(job, reason)
            continue
        if part in blocked:
            out.note(job, REASON_PRIORITY)
            continue
        wiring = wiring_of(cfg, timeline, job)
        cand = candidates(timeline, job.request, part_masks[part] & ~closed, wiring)
        found = earliest_fit(timeline, job.request, duration, cand, 0, now)
        if found is None:
            out.wait(job)
            done.heads.append(job)
            blocked.add(part)
            closed |= part_masks[part]
            continue
        timeline = timeline.reserve(found.allocation, now, found.end)
        out.reserve(job, now, found.end, found.allocation)
        out.start(job, found.allocation)
    done.timeline = timeline
    return done
