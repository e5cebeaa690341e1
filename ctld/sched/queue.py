"""The pending queue of one pass: its order, and the reasons that need no placement.

Both policies (``sched/builtin`` and ``sched/backfill``) walk the queue in
the order of :func:`job_order` and first ask :meth:`PassContext.static_reason`
whether a job can be tried at all: its partition is down, a limit rules it
out, a required node is unusable, or the snapshot marks it blocked
(Dependency, BeginTime, JobArrayTaskLimit). Such jobs wait without blocking
anyone. The facts about each partition are gathered once per pass, so the
per-job test costs a few comparisons (the controller runs a pass on every
event, over queues of thousands of jobs); its outcome, with the job's
shape, is kept while the job object is (:meth:`PassContext.triage`). The queue is put in order by
stable sorts on single fields (age, then priority, then tier), which is
:func:`job_order`'s order at a fraction of the cost of its tuples. A pass
that tests only the top of the queue (``bf_max_job_test``) orders only
that top: :func:`queue_top_first` sorts the jobs of the highest priorities
first and the rest only when the pass gets that far.

Imports minislurm.model, minislurm.hostlist and ctld.sched.nodetable.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import filterfalse
from operator import attrgetter

from ctld.sched.nodetable import NodeTable, table_of
from minislurm import hostlist
from minislurm.model import (
    Allocation,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    Reservation,
    ResourceRequest,
    Snapshot,
    StartJob,
)
from minislurm.units import INFINITE

REASON_RESOURCES = "Resources"
REASON_PRIORITY = "Priority"
REASON_PARTITION_CONFIG = "PartitionConfig"
REASON_PARTITION_TIME = "PartitionTimeLimit"
REASON_PARTITION_NODES = "PartitionNodeLimit"
REASON_REQ_NODE_NOT_AVAIL = "ReqNodeNotAvail"
PARTITION_STATE_REASONS = {"DOWN": "PartitionDown", "INACTIVE": "PartitionInactive"}


def job_order(job: PendingJob, tier: int) -> tuple[int, int, float, tuple[int, int]]:
    """The sort key of pending jobs: tier, priority (both descending), age, id, array task.

    Args:
        job: the pending job.
        tier: its partition's PriorityTier.

    Returns:
        A key for ``sorted``.
    """
    return (-tier, -job.priority, job.submit_time, job.key)


def queue_order(jobs: Iterable[PendingJob], tiers: dict[str, int]) -> list[PendingJob]:
    """The jobs sorted by :func:`job_order`.

    Args:
        jobs: pending jobs of known partitions.
        tiers: each partition's PriorityTier.

    Returns:
        The jobs in order.
    """
    queue = sorted(jobs, key=_AGE)
    queue.sort(key=_PRIORITY, reverse=True)  # reverse sorts are stable too
    if len(set(tiers.values())) > 1:
        queue.sort(key=lambda j: tiers[j.partition], reverse=True)
    return queue


def queue_top_first(
    jobs: list[PendingJob], tiers: dict[str, int], first: int
) -> Iterator[PendingJob]:
    """The jobs in :func:`queue_order`'s order, sorting only as far as they are read.

    The jobs of the ``first`` highest priorities (all those that tie with the
    last of them too) are sorted first; when they are all read, the rest in
    batches four times larger each. With more than one PriorityTier the whole
    queue is sorted at once.

    Args:
        jobs: pending jobs of known partitions.
        tiers: each partition's PriorityTier.
        first: how many jobs the reader expects to read, about.

    Yields:
        The jobs in order.
    """
    rest, size = jobs, max(first, 1)
    if len(set(tiers.values())) > 1:
        size = len(jobs)
    while len(rest) > size:
        cut = heapq.nlargest(size, map(_PRIORITY, rest))[-1]
        yield from queue_order([j for j in rest if j.priority >= cut], tiers)
        rest = [j for j in rest if j.priority < cut]  # only once the reader gets here
        size *= 4
    yield from queue_order(rest, tiers)


_AGE = attrgetter("submit_time", "key")
_PRIORITY = attrgetter("priority")
_NAME = attrgetter("name")
_HELD = attrgetter("held")
_PARTITION = attrgetter("partition")
_CPUS = attrgetter("cpus")
_KEPT = 1 << 10  # partitions' facts kept from pass to pass, at most
_FACTS: dict[int, tuple[PartitionView, NodeTable, PartitionFacts]] = {}
_KEPT_JOBS = 1 << 16  # jobs' triage kept from pass to pass, at most
# A job's shape: its partition, request (a number per distinct request and end of its
# wait for switches: equal ones have the same), time limit in seconds and the nodes it
# needs at least. Jobs of one shape fare alike in the placements of a pass.
Shape = tuple[str, int, float, int]
_NUMBERS: dict[tuple[ResourceRequest, float], int] = {}
# By the job's identity: the job, its partition's facts then (kept while the partition
# and the nodes' configuration and usability are), its static reason and shape.
_TRIAGED: dict[int, tuple[PendingJob, PartitionFacts, tuple[str, Shape]]] = {}


@dataclass(frozen=True)
class PartitionFacts:
    """What a partition offers whatever runs on it: its nodes in the snapshot and their CPUs."""

    part: PartitionView
    members: frozenset[str]
    node_count: int
    total_cpus: int
    max_time: float  # minutes (inf: no limit)
    max_nodes: int  # nodes a job may ask for at least: MaxNodes, or fewer when fewer are there
    state_reason: str  # why no job of it may start (DOWN, INACTIVE), or ""


def partition_facts(part: PartitionView, nodes: dict[str, NodeView]) -> PartitionFacts:
    """Gather a partition's facts.

    Args:
        part: the partition.
        nodes: every node of the snapshot by name.

    Returns:
        The facts; partition nodes missing from the snapshot do not count.
    """
    present = list(filter(None, map(nodes.get, part.nodes)))
    count = len(present)
    return PartitionFacts(
        part,
        frozenset(part.nodes),
        count,
        sum(map(_CPUS, present)),
        float("inf") if part.max_time == INFINITE else part.max_time,
        count if part.max_nodes == INFINITE else min(count, part.max_nodes),
        PARTITION_STATE_REASONS.get(part.state, ""),
    )


def partition_limit(job: PendingJob, facts: PartitionFacts) -> str:
    """Which partition limit rules the job out, as real Slurm 22.05 names it, or "".

    Args:
        job: the pending job.
        facts: its partition's facts.

    Returns:
        PartitionTimeLimit (over MaxTime), PartitionNodeLimit (more nodes than
        the partition has or MaxNodes allows, fewer than MinNodes),
        PartitionConfig (required nodes outside it, more CPUs than it has), or "".
    """
    if job.time_limit > facts.max_time:
        return REASON_PARTITION_TIME
    req = job.request
    if not facts.part.min_nodes <= req.min_nodes <= facts.max_nodes:
        return REASON_PARTITION_NODES
    if req.req_nodes and not facts.members.issuperset(req.req_nodes):
        return REASON_PARTITION_CONFIG
    return REASON_PARTITION_CONFIG if req.min_cpus > facts.total_cpus else ""


def exceeds_partition(job: PendingJob, part: PartitionView, nodes: dict[str, NodeView]) -> bool:
    """Whether the job can never run in its partition as configured.

    Args:
        job: the pending job.
        part: its partition.
        nodes: every node by name.

    Returns:
        True when a limit or the partition's size rules the job out.
    """
    return bool(partition_limit(job, partition_facts(part, nodes)))


def _usable(node: NodeView | None) -> bool:
    return node is not None and node.usable


class PassContext:
    """The snapshot of one pass, indexed: nodes and partitions by name, and its queue.

    ``jobs`` are the queued jobs (not held, of a known partition), in the
    snapshot's order; :meth:`queue` gives them in priority order.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        if len(_TRIAGED) >= _KEPT_JOBS:  # between passes only: a pass's numbers must hold
            _TRIAGED.clear()
            _NUMBERS.clear()
        self.snapshot = snapshot
        self.parts = {p.name: p for p in snapshot.partitions}
        table = table_of(snapshot.nodes)
        self.facts = {p.name: self._facts(p, table) for p in snapshot.partitions}
        self.tiers = {p.name: p.priority_tier for p in snapshot.partitions}
        jobs = list(filterfalse(_HELD, snapshot.pending))
        if not self.tiers.keys() >= set(map(_PARTITION, jobs)):
            jobs = [j for j in jobs if j.partition in self.tiers]
        self.jobs = jobs

    @functools.cached_property
    def nodes(self) -> dict[str, NodeView]:
        """The snapshot's nodes by name."""
        nodes = self.snapshot.nodes
        return dict(zip(map(_NAME, nodes), nodes, strict=True))

    def queue(self, first: int) -> Iterator[PendingJob]:
        """The queued jobs in priority order (see :func:`queue_top_first`).

        Args:
            first: how many of them the pass expects to read, about.

        Returns:
            The jobs in order.
        """
        return queue_top_first(self.jobs, self.tiers, first)

    def static_reason(self, job: PendingJob) -> str:
        """Why the job cannot even be tried now, or "" when it can.

        Args:
            job: a queued job of a known partition.

        Returns:
            Its blocking reason, a partition state, a partition limit
            (PartitionTimeLimit, PartitionNodeLimit, PartitionConfig),
            ``ReqNodeNotAvail, UnavailableNodes:n2`` (its required nodes
            that cannot take work, as Slurm names them), or "".
        """
        return self.triage(job)[0]

    def triage(self, job: PendingJob) -> tuple[str, Shape]:
        """The job's :meth:`static_reason` and its shape.

        Kept from pass to pass while the job object and its partition's facts
        are (a simulation's passes see the same jobs again and again).

        Args:
            job: a queued job of a known partition.

        Returns:
            (why it cannot be tried or "", its shape).
        """
        facts = self.facts[job.partition]
        kept = _TRIAGED.get(id(job))
        if kept is not None and kept[0] is job and kept[1] is facts:
            return kept[2]
        reason = job.blocked or facts.state_reason or partition_limit(job, facts)
        if not reason and job.request.req_nodes:
            nodes, wanted = self.nodes, set(job.request.req_nodes)
            down = [n for n in facts.part.nodes if n in wanted and not _usable(nodes.get(n))]
            if down:
                reason = f"{REASON_REQ_NODE_NOT_AVAIL}, UnavailableNodes:{hostlist.compress(down)}"
        req = job.request
        number = _NUMBERS.setdefault((req, job.switch_until), len(_NUMBERS))
        found = (reason, (job.partition, number, job.duration, max(req.min_nodes, 1)))
        _TRIAGED[id(job)] = (job, facts, found)
        return found

    def _facts(self, part: PartitionView, table: NodeTable) -> PartitionFacts:
        """A partition's facts, kept while it and its nodes' configuration stay the same."""
        kept = _FACTS.get(id(part))
        if kept is not None and kept[0] is part and kept[1] is table:
            return kept[2]
        if len(_FACTS) >= _KEPT:
            _FACTS.clear()
        facts = partition_facts(part, self.nodes)
        _FACTS[id(part)] = (part, table, facts)
        return facts


class PlanBuilder:
    """A pass's decisions as they are made; :meth:`plan` freezes them.

    A job that waits says ``Resources`` when it is the first of its
    partition to wait in this pass and ``Priority`` behind it (what
    Slurm's main scheduler sets and its backfill leaves); an array keeps
    the reason and the earliest start of its first task that waits.
    """

    def __init__(self) -> None:
        self.starts: list[StartJob] = []
        self.reasons: dict[int, str] = {}
        self.start_times: dict[int, float] = {}
        self.reservations: list[Reservation] = []
        self._waiting: set[str] = set()

    def note(self, job: PendingJob, reason: str) -> None:
        """Record why a job waits, unless its array already has a reason.

        Args:
            job: the job.
            reason: the reason.
        """
        self.reasons.setdefault(job.job_id, reason)

    def start(self, job: PendingJob, alloc: Allocation) -> None:
        """Record a start.

        Args:
            job: the job or array task.
            alloc: where it runs.
        """
        self.starts.append(StartJob(job.job_id, alloc, job.array_task_id))

    def wait(self, job: PendingJob, expected: float | None = None) -> None:
        """Record a job that cannot start now.

        Args:
            job: the job or array task.
            expected: its reserved start, if it got one.
        """
        if job.partition in self._waiting:
            self.reasons.setdefault(job.job_id, REASON_PRIORITY)
        else:
            self._waiting.add(job.partition)
            self.reasons.setdefault(job.job_id, REASON_RESOURCES)
        if expected is not None:
            known = self.start_times.get(job.job_id, expected)
            self.start_times[job.job_id] = min(known, expected)

    def reserve(self, job: PendingJob, start: float, end: float, alloc: Allocation) -> None:
        """Record the resources set aside for a job.

        Args:
            job: the job or array task.
            start: from when (now for a start).
            end: until when.
            alloc: what.
        """
        self.reservations.append(Reservation(job.job_id, job.array_task_id, start, end, alloc))

    def plan(self) -> Plan:
        """The decisions.

        Returns:
            The plan.
        """
        return Plan(tuple(self.starts), self.reasons, self.start_times, tuple(self.reservations))
