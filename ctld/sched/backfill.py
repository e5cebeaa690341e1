"""Backfill scheduling (Slurm's ``sched/backfill``): start what fits without delaying anyone above.

The pass builds the resource-time map of the running jobs (their ends are
start + time limit), then walks the queue in priority order. Each job is
placed at its earliest start in the map: a job that fits now starts, any
other gets a reservation there (when it begins within ``bf_window``), and
the map keeps it, so no job further down can take those resources for a
time that overlaps. A job started out of order therefore only uses what is
free until its own time limit ends, around every reservation above it.
With run times within the limits, no job is delayed past the start the
pass planned for it by a job of lower priority. A waiting job gets again,
where they still fit, the nodes the last pass reserved for it
(``Snapshot.held``): otherwise a reservation could move, between passes, to
nodes a job below was planned on, and delay it. As in Slurm, at most
``bf_max_job_test`` jobs are tested (only so much of the queue is put in
order; the jobs below keep the reason they had, but for those the snapshot
marks blocked, as Dependency), and
with ``bf_job_part_count_reserve`` only that many waiting jobs of each
partition are reserved; below them a job is only tried for a start now.

Speed: a window of slots is first tested by node bitmasks (enough nodes of
the partition with a CPU free throughout, an upper bound of the tasks they
hold); only then is the job placed, as ``select_nodes`` would place it, per
group of nodes alike in what the window leaves them (at most the job's
maximum node count of alike idle nodes), not per node. A job whose
shape (partition, request, time limit) already failed before some time in
this pass starts its search there: the map only fills as the pass goes.

Imports minislurm.model and ctld.sched.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from ctld.sched.knobs import SchedConfig
from ctld.sched.queue import PassContext, PlanBuilder, Shape
from ctld.sched.select import task_capacity
from ctld.sched.timeline import Timeline, build_timeline
from ctld.sched.topo import Wiring, place, wiring_of
from minislurm.model import Allocation, PendingJob, Plan, ResourceRequest

INF = float("inf")
_BLOCKED = attrgetter("blocked")


@dataclass(frozen=True)
class Placement:
    """Where and when a job fits in the map."""

    start: float
    end: float
    allocation: Allocation


@dataclass(frozen=True)
class Candidates:
    """The nodes a job may use (bitmasks) and how many of its tasks an idle node of a class fits."""

    mask: int
    required: int
    classes: tuple[tuple[int, int], ...]  # (class mask, tasks per idle node), classes that can help
    need: int  # nodes it needs at least
    ntasks: int
    wiring: Wiring | None = None  # the switches it is placed under (topology/tree)

    def task_bound(self, nodes: int) -> int:
        """How many tasks the nodes in ``nodes`` could hold at most.

        Args:
            nodes: a bitmask of nodes.

        Returns:
            An upper bound.
        """
        return sum((nodes & members).bit_count() * tasks for members, tasks in self.classes)

    def may_fit(self, nodes: int) -> bool:
        """Whether the job may fit on the nodes of a bitmask: enough of them, its required ones.

        Args:
            nodes: a bitmask of nodes free throughout a window.

        Returns:
            False when it surely does not.
        """
        return (
            nodes.bit_count() >= self.need
            and nodes & self.required == self.required
            and self.task_bound(nodes) >= self.ntasks
        )

    def place(
        self,
        timeline: Timeline,
        req: ResourceRequest,
        start: float,
        end: float,
        whole: int,
        partial: int,
        limit: int,
    ) -> Allocation | None:
        """:meth:`Timeline.place`, by the topology when the job is placed by it."""
        if self.wiring is None:
            return timeline.place(req, start, end, whole, partial, limit)
        return place(timeline, req, start, end, whole, partial, limit, self.wiring, self.may_fit)


def candidates(
    timeline: Timeline, req: ResourceRequest, partition_mask: int, wiring: Wiring | None = None
) -> Candidates:
    """The job's candidates: its partition's usable nodes, less excluded ones and useless classes.

    Args:
        timeline: the map.
        req: the job's request.
        partition_mask: its partition's nodes.
        wiring: the switches that place it, if any (nodes under none are left out).

    Returns:
        The candidates.
    """
    table = timeline.table
    mask = partition_mask & table.usable & ~table.mask(req.excluded)
    if wiring is not None:
        mask &= wiring.covered
    classes = []
    for members, view in zip(table.class_masks, table.class_views, strict=True):
        tasks = task_capacity(req, view)
        if tasks and mask & members:
            classes.append((members, tasks))
        else:
            mask &= ~members
    required = table.mask(req.req_nodes)
    need = max(req.min_nodes, len(req.req_nodes), 1)
    return Candidates(mask, required, tuple(classes), need, req.ntasks, wiring)


def earliest_fit(
    timeline: Timeline,
    req: ResourceRequest,
    duration: float,
    cand: Candidates,
    first: int,
    horizon: float,
    held: int = 0,
) -> Placement | None:
    """The earliest slot, from slot ``first`` on and beginning by ``horizon``, where the job fits.

    Args:
        timeline: the map.
        req: the job's request.
        duration: its time limit, seconds (inf: none).
        cand: its candidate nodes.
        first: the first slot to try.
        horizon: the latest start worth a reservation.
        held: the nodes the last pass reserved for the job (a bitmask): it gets
            them again where they still fit.

    Returns:
        The placement, or None when it fits nowhere in time.
    """
    begins, idle, avail = timeline.begins, timeline.idle, timeline.avail
    count = len(begins)
    mask, required, need = cand.mask, cand.required, cand.need
    limit = -1 if req.req_nodes else req.max_nodes
    i = first
    while i < count and begins[i] <= horizon:
        start = begins[i]
        end = timeline.end_of(start, duration)
        free, whole, bad, k = mask, mask, -1, i
        while k < count and begins[k] < end:
            free &= avail[k]
            if free.bit_count() < need or free & required != required:
                bad = k
                break
            whole &= idle[k]
            k += 1
        if bad >= 0:
            alone = avail[bad] & mask
            # A slot that fails on its own fails every window that holds it.
            short = alone.bit_count() < need or alone & required != required
            i = bad + 1 if short else i + 1
            continue
        if cand.task_bound(free) >= req.ntasks:
            alloc = None
            if held and free & held == held:
                alloc = timeline.place(req, start, end, whole & held, free & held & ~whole, limit)
            if alloc is None:
                alloc = cand.place(timeline, req, start, end, whole, free & ~whole, limit)
            if alloc is not None:
                return Placement(start, end, alloc)
        i += 1
    return None


def plan_backfill(ctx: PassContext, now: float, cfg: SchedConfig) -> Plan:
    """One backfill pass.

    Args:
        ctx: the snapshot, indexed, with its queue in priority order.
        now: the time of the pass.
        cfg: the knobs.

    Returns:
        The starts, the reasons, the expected starts and the reservations.
    """
    horizon = now + cfg.window_seconds
    snapshot = ctx.snapshot
    timeline = build_timeline(snapshot.nodes, snapshot.running, now, cfg.bf_resolution, horizon)
    part_masks = {name: timeline.table.mask(p.nodes) for name, p in ctx.parts.items()}
    out = PlanBuilder()
    floors: dict[Shape, float] = {}
    tested = 0
    reserved: dict[str, int] = {}  # waiting jobs given a reservation, per partition
    capped: set[str] = set()  # partitions whose quota of reservations is reached
    free_now: dict[str, int] = {}  # nodes with a CPU free now, per partition, in this map
    quota, limit, count_all = cfg.bf_job_part_count_reserve, cfg.bf_max_job_test, len(ctx.jobs)
    triage, wait = ctx.triage, out.wait
    for pos, job in enumerate(ctx.queue(limit + limit // 2)):
        reason, shape = triage(job)
        if reason:
            out.note(job, reason)
            continue
        if tested >= limit:
            # The jobs below are not tested: they keep the reason they have, but for
            # those the snapshot marks blocked (Slurm's main scheduler sets them all).
            for rest in filter(_BLOCKED, ctx.jobs):
                out.note(rest, rest.blocked)
            break
        part, _, duration, need = shape
        # Past the partition's quota of reservations, only a start now is worth finding.
        latest = now if part in capped else horizon
        if latest == now:
            count = free_now.get(part, -1)
            if count < 0:
                count = free_now[part] = (timeline.avail[0] & part_masks[part]).bit_count()
            # Too few nodes of its partition have a CPU free now: it waits, whatever
            # its shape says. The shape only matters to count it among those tested,
            # and the count cannot reach the limit when fewer jobs are left.
            if count < need and tested + count_all - pos <= limit:
                wait(job)
                continue
        floor = floors.get(shape, now)
        if floor == INF:  # the same shape found no room this pass: neither will this job
            wait(job)
            continue
        tested += 1
        if latest == now:
            if count < need:
                wait(job)  # too few nodes of its partition have a CPU free now
                continue
            free = timeline.free_until(timeline.end_of(now, duration))
            if (free & part_masks[part]).bit_count() < need:  # nor until its end: no fit now
                floors[shape] = INF
                wait(job)
                continue
        cand = candidates(timeline, job.request, part_masks[part], wiring_of(cfg, timeline, job))
        names = snapshot.held.get(job.key)
        # An iterator, not the tuple: the table keeps the masks of tuples (partitions').
        held = timeline.table.mask(iter(names)) & cand.mask if names else 0
        found = earliest_fit(
            timeline, job.request, duration, cand, timeline.slot_at(floor), latest, held
        )
        if found is None:
            floors[shape] = INF
            wait(job)
            continue
        floors[shape] = found.start
        if found.start > now:
            reserved[part] = reserved.get(part, 0) + 1
            if quota and reserved[part] >= quota:
                capped.add(part)
        timeline = timeline.reserve(found.allocation, found.start, found.end)
        free_now.clear()
        _record(out, job, found, now)
    return out.plan()


def _record(out: PlanBuilder, job: PendingJob, found: Placement, now: float) -> None:
    """Record a job's placement: a start when it is now, else a wait with its expected start."""
    out.reserve(job, found.start, found.end, found.allocation)
    if found.start <= now:
        out.start(job, found.allocation)
    else:
        out.wait(job, found.start)
