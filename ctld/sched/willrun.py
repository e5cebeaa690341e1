"""When a job would start (``sbatch --test-only``): a pure function of a snapshot.

The job is placed on the nodes as they are; when it does not fit, the
running jobs are let go one by one in the order their time limits end
until it does. A running job without a time limit is taken to end in a
year, as Slurm assumes. Pending jobs ahead of it are not considered.

Imports only minislurm.model and ctld.sched.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.sched.select import select_nodes
from minislurm.model import Allocation, NodeView, PendingJob, Snapshot

YEAR = 365 * 24 * 3600.0


def _release(node: NodeView, alloc: Allocation) -> NodeView:
    part = alloc.on(node.name)
    if part is None:
        return node
    return replace(
        node,
        free_cpus=node.free_cpus + part.cpus,
        free_mem=node.free_mem + part.mem,
        free_gpus=tuple(sorted({*node.free_gpus, *part.gpus})),
    )


def expected_start(
    job: PendingJob, snapshot: Snapshot, now: float
) -> tuple[float, Allocation] | None:
    """The earliest time the job could start, and where.

    Args:
        job: the job, not in the snapshot.
        snapshot: nodes, partitions and running jobs (with their end times).
        now: the time.

    Returns:
        ``(start_time, allocation)``, or None when its partition is unknown
        or it cannot fit even on an idle cluster.
    """
    part = next((p for p in snapshot.partitions if p.name == job.partition), None)
    if part is None:
        return None
    nodes = {n.name: n for n in snapshot.nodes}
    when = now
    ends = sorted(snapshot.running, key=lambda r: r.end_time)
    while True:
        alloc = select_nodes(job.request, [nodes[n] for n in part.nodes if n in nodes])
        if alloc is not None:
            return when, alloc
        if not ends:
            return None
        ending = ends.pop(0)
        when = max(when, min(ending.end_time, now + YEAR))
        for name in ending.allocation.node_names:
            if name in nodes:
                nodes[name] = _release(nodes[name], ending.allocation)
