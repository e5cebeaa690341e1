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

What a relation means (tiers, QOS ``Preempt=`` lists, modes, exempt time) is
the caller's: :func:`choose` is a pure function of the snapshot, the pass's
plan, the candidates and the relation.

Imports only minislurm.model and ctld.sched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from ctld.sched.queue import REASON_PRIORITY, REASON_RESOURCES, job_order
from ctld.sched.select import select_nodes
from minislurm.model import Allocation, NodeView, PendingJob, Plan, Snapshot

WAITING_FOR_RESOURCES = frozenset({REASON_RESOURCES, REASON_PRIORITY})


@dataclass(frozen=True)
class Preemptee:
    """A running job that may be preempted, as the preemption pass sees it."""

    job_id: int
    allocation: Allocation
    priority: int
    start_time: float


@dataclass(frozen=True)
class Preemption:
    """A decision: ``victims`` go so that ``job_id`` (or its array task) can start."""

    job_id: int
    array_task_id: int | None
    victims: tuple[int, ...]
    allocation: Allocation  # where it fits once they are gone


Relation = Callable[[PendingJob, Preemptee], bool]


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
        may_preempt: whether a pending job may preempt a candidate.
        dying: jobs being killed, whose resources count as free (a job
            waiting for its victims to end preempts no more).

    Returns:
        The preemptions, in the preemptors' queue order; no job is a victim twice.
    """
    nodes = _freed({n.name: n for n in snapshot.nodes}, dying)
    for start in decided.starts:
        nodes = _apply(nodes, start.allocation, -1)
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
        names = [n for n in parts[job.partition].nodes if n in nodes]
        if _fit(job, nodes, names) is not None:
            continue  # it can start without anyone's resources
        offered = [v for v in pool if may_preempt(job, v) and _touches(v, names)]
        found = _fewest(job, nodes, names, offered)
        if found is None:
            continue
        victims, alloc = found
        for victim in victims:
            nodes = _apply(nodes, victim.allocation, 1)
        nodes = _apply(nodes, alloc, -1)
        gone = {v.job_id for v in victims}
        pool = [v for v in pool if v.job_id not in gone]
        ids = tuple(v.job_id for v in victims)
        out.append(Preemption(job.job_id, job.array_task_id, ids, alloc))
    return out


def _fewest(
    job: PendingJob, nodes: dict[str, NodeView], names: list[str], offered: list[Preemptee]
) -> tuple[list[Preemptee], Allocation] | None:
    """The victims in order until the job fits, less those it fits without; None: never."""
    chosen: list[Preemptee] = []
    trial = nodes
    for victim in offered:
        chosen.append(victim)
        trial = _apply(trial, victim.allocation, 1)
        if _fit(job, trial, names) is not None:
            break
    else:
        return None
    for victim in reversed(chosen[:-1]):  # spare those it turns out not to need
        rest = [v for v in chosen if v is not victim]
        if _fit(job, _freed(nodes, rest), names) is not None:
            chosen = rest
    alloc = _fit(job, _freed(nodes, chosen), names)
    assert alloc is not None  # it fitted with these victims freed
    return chosen, alloc


def _fit(job: PendingJob, nodes: dict[str, NodeView], names: list[str]) -> Allocation | None:
    return select_nodes(job.request, [nodes[n] for n in names])


def _touches(victim: Preemptee, names: list[str]) -> bool:
    return any(n in names for n in victim.allocation.node_names)


def _freed(nodes: dict[str, NodeView], victims: Iterable[Preemptee]) -> dict[str, NodeView]:
    for victim in victims:
        nodes = _apply(nodes, victim.allocation, 1)
    return nodes


def _apply(nodes: dict[str, NodeView], alloc: Allocation, sign: int) -> dict[str, NodeView]:
    """A copy of ``nodes`` with ``alloc`` given back (``sign`` 1) or taken (-1)."""
    out = dict(nodes)
    for part in alloc.nodes:
        node = out.get(part.node)
        if node is None:
            continue
        if sign > 0:
            gpus = tuple(sorted(set(node.free_gpus) | set(part.gpus)))
        else:
            gpus = tuple(g for g in node.free_gpus if g not in part.gpus)
        out[part.node] = replace(
            node,
            free_cpus=node.free_cpus + sign * part.cpus,
            free_mem=node.free_mem + sign * part.mem,
            free_gpus=gpus,
        )
    return out
