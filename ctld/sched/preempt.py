"""Preemption: which running jobs a waiting job of higher standing takes resources from.

Slurm's ``preempt/partition_prio`` and ``preempt/qos``: after a pass, each
job that still waits for resources (in queue order) may preempt running jobs
that the preemption relation puts below it. Its victims are the fewest it
needs: candidates are taken lowest priority first, youngest first (Slurm's
order of preemptees), until the job fits on its partition's nodes with their
resources freed; then any victim whose resources turn out not to be needed
is spared. A job that could start without preempting anyone preempts
nobody, and resources freed for one job are not offered to the next; those
of jobs already being killed count as free.

The relation is the caller's (tiers, QOS ``Preempt=`` lists; modes and
exempt time decide who is a candidate at all): each candidate belongs to a
group (its partition, its QOS) and the relation names the groups a pending
job may preempt, so a deep queue of jobs that may preempt nobody costs one
call each. :func:`choose` is a pure function of the snapshot, the pass's
plan, the candidates and the relation.

Imports only minislurm.model and ctld.sched.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from ctld.sched.queue import REASON_PRIORITY, REASON_RESOURCES, job_order
from ctld.sched.select import select_nodes, task_capacity
from minislurm.model import Allocation, NodeView, PendingJob, Plan, Snapshot

WAITING_FOR_RESOURCES = frozenset({REASON_RESOURCES, REASON_PRIORITY})


@dataclass(frozen=True)
class Preemptee:
    """A running job that may be preempted, as the preemption pass sees it."""

    job_id: int
    allocation: Allocation
    priority: int
    start_time: float
    group: str = ""  # what the relation tells it by: its partition, or its QOS


@dataclass(frozen=True)
class Preemption:
    """A decision: ``victims`` go so that ``job_id`` (or its array task) can start."""

    job_id: int
    array_task_id: int | None
    victims: tuple[int, ...]
    allocation: Allocation  # where it fits once they are gone


# The groups of running jobs a pending job may preempt (empty: none).
Relation = Callable[[PendingJob], Collection[str]]


def victim_order(victim: Preemptee) -> tuple[int, float, int]:
    """The order candidates are taken in: lowest priority, then youngest, then newest id.

    Args:
        victim: a candidate.

    Returns:
        A key for ``sorted``.
    """
    return (victim.priority, -victim.start_time, -victim.job_id)


def choose(
    snapshot: Snapshot,
    decided: Plan,
    candidates: Sequence[Preemptee],
    may_preempt: Relation,
    dying: Iterable[Preemptee] = (),
) -> list[Preemption]:
    """Pick, for each job left waiting for resources, the running jobs it preempts.

    Args:
        snapshot: what the pass planned from.
        decided: the pass's plan (its starts take their resources first).
        candidates: running jobs that may be preempted at all.
        may_preempt: the groups of candidates a pending job may preempt.
        dying: jobs being killed, whose resources count as free (a job
            waiting for its victims to end preempts no more).

    Returns:
        The preemptions, in the preemptors' queue order; no job is a victim twice.
    """
    nodes = {n.name: n for n in snapshot.nodes}
    for victim in dying:
        _apply(nodes, victim.allocation, 1)
    for start in decided.starts:
        _apply(nodes, start.allocation, -1)
    parts = {p.name: p for p in snapshot.partitions}
    started = {s.key for s in decided.starts}
    waiting = [
        job
        for job in snapshot.pending
        if job.partition in parts
        and not job.held
        and not job.blocked
        and job.key not in started
        and decided.reasons.get(job.job_id) in WAITING_FOR_RESOURCES
    ]
    waiting.sort(key=lambda j: job_order(j, parts[j.partition].priority_tier))
    pool = sorted(candidates, key=victim_order)
    out = []
    for job in waiting:
        allowed = may_preempt(job)
        if not allowed:
            continue
        names = [n for n in parts[job.partition].nodes if n in nodes]
        inside = set(names)
        offered = [
            v for v in pool if v.group in allowed and not inside.isdisjoint(v.allocation.node_names)
        ]
        if not offered or _fit(job, nodes, names) is not None:
            continue  # nobody to preempt, or it can start without anyone's resources
        found = _fewest(job, nodes, names, offered)
        if found is None:
            continue
        victims, alloc, nodes = found
        _apply(nodes, alloc, -1)
        gone = {v.job_id for v in victims}
        pool = [v for v in pool if v.job_id not in gone]
        ids = tuple(v.job_id for v in victims)
        out.append(Preemption(job.job_id, job.array_task_id, ids, alloc))
    return out


def _fewest(
    job: PendingJob, nodes: dict[str, NodeView], names: list[str], offered: list[Preemptee]
) -> tuple[list[Preemptee], Allocation, dict[str, NodeView]] | None:
    """The victims in order until the job fits, less those it fits without; None: never.

    Returns the victims, the job's allocation, and the nodes with the victims'
    resources freed (a copy; ``nodes`` is left as it was).
    """
    trial = dict(nodes)
    chosen: list[Preemptee] = []
    alloc = None
    for victim in offered:
        chosen.append(victim)
        _apply(trial, victim.allocation, 1)
        # Only the victim's nodes changed: unless one of them can now take a task, no fit.
        touched = (trial[n.node] for n in victim.allocation.nodes if n.node in trial)
        if any(task_capacity(job.request, node) for node in touched):
            alloc = _fit(job, trial, names)
            if alloc is not None:
                break
    if alloc is None:
        return None
    # Spare those it turns out not to need, the last taken too (the fit may lie elsewhere),
    # until none can be: sparing one may move the allocation off another's nodes.
    spared: set[int] = set()
    changed = True
    while changed:
        changed = False
        for victim in reversed(chosen):
            if victim.job_id in spared:
                continue
            _apply(trial, victim.allocation, -1)
            if set(alloc.node_names).isdisjoint(victim.allocation.node_names):
                other: Allocation | None = alloc  # it does not use the victim's nodes
            else:
                other = _fit(job, trial, names)
            if other is None:
                _apply(trial, victim.allocation, 1)
            else:
                spared.add(victim.job_id)
                alloc, changed = other, True
    return [v for v in chosen if v.job_id not in spared], alloc, trial


def _fit(job: PendingJob, nodes: dict[str, NodeView], names: list[str]) -> Allocation | None:
    return select_nodes(job.request, [nodes[n] for n in names])


def _apply(nodes: dict[str, NodeView], alloc: Allocation, sign: int) -> None:
    """Give ``alloc`` back to ``nodes`` (``sign`` 1) or take it (-1), in place."""
    for part in alloc.nodes:
        node = nodes.get(part.node)
        if node is None:
            continue
        if sign > 0:
            gpus = tuple(sorted(set(node.free_gpus) | set(part.gpus)))
        else:
            gpus = tuple(g for g in node.free_gpus if g not in part.gpus)
        nodes[part.node] = replace(
            node,
            free_cpus=node.free_cpus + sign * part.cpus,
            free_mem=node.free_mem + sign * part.mem,
            free_gpus=gpus,
        )
