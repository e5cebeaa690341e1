"""Node selection: where a job's tasks, CPUs, memory and GPUs go (Slurm's cons_tres).

``select_nodes`` is a pure function of a request and the candidate nodes'
free resources. Nodes are packed: among those that fit, the busiest (fewest
free GPUs, then CPUs) come first, so whole nodes stay free for large jobs.
Specific GPU indices on each node are the best-linked free ones by the
node's link map (:func:`minislurm.gpulinks.best_gpus`; the lowest free ones
on a node without a map). An exclusive job (``--exclusive``) takes only idle
nodes, and all their CPUs and GPUs.

Imports only minislurm.gpulinks and minislurm.model.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TypeVar

from minislurm.gpulinks import best_gpus
from minislurm.model import Allocation, NodeAlloc, NodeView, ResourceRequest

T = TypeVar("T")


def task_capacity(req: ResourceRequest, node: NodeView) -> int:
    """How many of the job's tasks fit on ``node`` right now.

    Args:
        req: the job's request.
        node: the node with its free resources.

    Returns:
        The number of tasks, 0 when the node cannot take the job at all.
    """
    if not node.usable or node.name in req.exc_nodes or node.name in req.untyped_nodes:
        return 0
    if req.exclusive and (node.free_cpus < node.cpus or len(node.free_gpus) < len(node.gpus)):
        return 0
    if len(node.free_gpus) < max(req.gpus_per_node, -(-req.gpus // req.max_nodes)):
        return 0
    if req.mem_per_node and node.free_mem < req.mem_per_node:
        return 0
    cap = node.free_cpus // req.cpus_per_task
    if req.gpus_per_task:
        cap = min(cap, len(node.free_gpus) // req.gpus_per_task)
    if req.mem_per_cpu:
        cap = min(cap, node.free_mem // (req.mem_per_cpu * req.cpus_per_task))
    if req.ntasks_per_node:  # a maximum per node, as in Slurm (-n wins)
        return min(cap, req.ntasks_per_node)
    return cap


def _ordered(req: ResourceRequest, nodes: Sequence[NodeView]) -> list[NodeView] | None:
    """Required nodes first (in request order), then the rest, busiest first.

    A job asking for a total of GPUs (``--gpus``) goes to the nodes with the
    most free GPUs instead: packing it by CPUs could strand it on a node
    without enough GPUs.
    """
    required = []
    if req.req_nodes:
        by_name = {n.name: n for n in nodes}
        for name in req.req_nodes:
            node = by_name.get(name)
            if node is None:
                return None
            required.append(node)
    # Nodes that cannot take one task are left out early (task_capacity would say 0):
    # on a busy cluster they are most of the nodes, and packing sorts them first.
    least = req.cpus_per_task
    rest = [n for n in nodes if n.usable and n.free_cpus >= least and n.name not in req.req_nodes]
    if req.gpus:
        rest.sort(key=lambda n: (n.weight, -len(n.free_gpus), n.free_cpus))
    else:
        rest.sort(key=lambda n: (n.weight, len(n.free_gpus), n.free_cpus))
    return required + rest


def _spread_tasks(req: ResourceRequest, nodes: list[NodeView]) -> list[tuple[NodeView, int]] | None:
    """Assign task counts to nodes in order, as few nodes as the request allows."""
    # Alike nodes take as many tasks: worked out once (large jobs span hundreds of them).
    caps: dict[tuple[int, int, int, int, int, bool, bool], int] = {}

    def offered() -> Iterator[tuple[NodeView, int]]:
        for node in nodes:
            shape = (
                node.free_cpus,
                node.free_mem,
                len(node.free_gpus),
                node.cpus,
                len(node.gpus),
                node.usable,
                node.name in req.exc_nodes or node.name in req.untyped_nodes,
            )
            cap = caps.get(shape, -1)
            if cap < 0:
                cap = caps[shape] = task_capacity(req, node)
            yield node, cap

    return _spread(req, offered())


def _spread(req: ResourceRequest, offered: Iterable[tuple[T, int]]) -> list[tuple[T, int]] | None:
    """Task counts for the nodes offered (each with the tasks it fits), in order, fewest nodes."""
    chosen: list[tuple[T, int]] = []
    remaining = req.ntasks
    n_required = len(req.req_nodes)
    for node, cap in offered:
        must = len(chosen) < n_required
        if remaining <= 0 and len(chosen) >= req.min_nodes and not must:
            break
        if len(chosen) >= req.max_nodes:
            return None
        if cap == 0:
            if must:
                return None
            continue
        still_needed = max(req.min_nodes, n_required) - len(chosen) - 1
        take = min(cap, remaining - max(still_needed, 0))
        if take <= 0:
            return None
        if take < remaining and len(chosen) == req.max_nodes - 1:
            if must:
                return None
            continue  # the last node allowed must take every task left: a roomier one may
        chosen.append((node, take))
        remaining -= take
    if remaining > 0 or len(chosen) < req.min_nodes:
        return None
    return chosen


def _gpus_for(req: ResourceRequest, spread: list[tuple[NodeView, int]]) -> list[int] | None:
    """GPUs per chosen node; ``--gpus`` totals go to the first nodes with room."""
    counts = [max(req.gpus_per_node, req.gpus_per_task * ntasks) for _, ntasks in spread]
    extra = req.gpus - sum(counts)
    for i, (node, _) in enumerate(spread):
        if extra <= 0:
            break
        room = len(node.free_gpus) - counts[i]
        give = min(room, extra)
        counts[i] += give
        extra -= give
    return None if extra > 0 else counts


def select_nodes(req: ResourceRequest, nodes: Sequence[NodeView]) -> Allocation | None:
    """Choose nodes and resources for ``req`` among ``nodes``, or None when it cannot start.

    Args:
        req: the job's resolved request.
        nodes: the candidate nodes (the job's partition) with free resources.

    Returns:
        The allocation, or None when the job does not fit now.
    """
    ordered = _ordered(req, nodes)
    if ordered is None:
        return None
    spread = _spread_tasks(req, ordered)
    if spread is None and req.max_nodes > 1:
        # Packing can fill the allowed nodes with small pieces; the roomiest
        # nodes first needs the fewest of them.
        required = ordered[: len(req.req_nodes)]
        roomy = sorted(ordered[len(req.req_nodes) :], key=lambda n: -task_capacity(req, n))
        spread = _spread_tasks(req, required + roomy)
    if spread is None:
        return None
    gpu_counts = _gpus_for(req, spread)
    if gpu_counts is None:
        return None
    parts = []
    for (node, ntasks), ngpus in zip(spread, gpu_counts, strict=True):
        cpus = node.cpus if req.exclusive else ntasks * req.cpus_per_task
        mem = req.mem_per_node or req.mem_per_cpu * cpus
        gpus = node.free_gpus if req.exclusive else best_gpus(node.gpu_links, node.free_gpus, ngpus)
        parts.append(NodeAlloc(node.name, cpus, mem, gpus, ntasks))
    # Slurm lists a job's nodes (and picks its batch host) in configuration order.
    chosen = {part.node for part in parts}
    position = {n.name: i for i, n in enumerate(nodes) if n.name in chosen}
    parts.sort(key=lambda part: position[part.node])
    return Allocation(tuple(parts))


def select_groups(
    req: ResourceRequest, groups: Sequence[tuple[NodeView, int]], first: int, names: Sequence[str]
) -> Allocation | None:
    """``select_nodes`` over nodes given by groups that share their free resources.

    The nodes offered, in the order ``select_nodes`` would be given them,
    are those of ``first`` and then the others, each by position. Each
    group is sized once, and a node is only looked at when it is taken:
    the cost follows the groups and the nodes chosen, not the nodes offered.

    Args:
        req: a request without required nodes.
        groups: (free resources, nameless; bitmask of the nodes that have them).
        first: the nodes offered first (a bitmask, may be negative).
        names: every node's name, by position.

    Returns:
        The allocation, or None when the job does not fit.
    """
    sign = -1 if req.gpus else 1
    # Packed: by weight, then fewest free GPUs (most, for a --gpus total), then CPUs;
    # select_nodes passes over the groups that fit no task, or, for a job of one
    # node, not every task.
    least = req.ntasks if req.max_nodes == 1 else 1
    keyed = []
    for view, mask in groups:
        cap = task_capacity(req, view)
        if cap >= least:
            keyed.append(
                ((view.weight, sign * len(view.free_gpus), view.free_cpus), (view, mask, cap))
            )
    keyed.sort(key=_KEY)
    spread = _spread(req, _walk(keyed, first))
    if spread is None and req.max_nodes > 1:  # the roomiest nodes first
        roomy = sorted((((-g[2], *k), g) for k, g in keyed), key=_KEY)
        spread = _spread(req, _walk(roomy, first))
    if spread is None:
        return None
    gpu_counts = _gpus_for(req, [(view, ntasks) for (view, _), ntasks in spread])
    if gpu_counts is None:
        return None
    parts = []
    for ((node, i), ntasks), ngpus in zip(spread, gpu_counts, strict=True):
        cpus = node.cpus if req.exclusive else ntasks * req.cpus_per_task
        mem = req.mem_per_node or req.mem_per_cpu * cpus
        gpus = node.free_gpus if req.exclusive else best_gpus(node.gpu_links, node.free_gpus, ngpus)
        parts.append((not first >> i & 1, i, NodeAlloc(names[i], cpus, mem, gpus, ntasks)))
    parts.sort(key=lambda p: p[:2])
    return Allocation(tuple(p[2] for p in parts))


_Group = tuple[NodeView, int, int]  # free resources, bitmask of nodes, tasks a node fits
_KEY = operator.itemgetter(0)


def _walk(
    keyed: Sequence[tuple[tuple[int, ...], _Group]], first: int
) -> Iterator[tuple[tuple[NodeView, int], int]]:
    """The groups' nodes in the order the nodes offered sort by the groups' keys, lazily.

    Yields ((free resources, position), tasks it fits): groups in the order
    given (sorted by key); the nodes of groups with equal keys by their place
    in the offer (those of ``first``, then the others, each by position).
    """
    for _, same in itertools.groupby(keyed, key=_KEY):
        bucket = [group for _, group in same]
        if len(bucket) == 1:
            view, union, cap = bucket[0]
        else:
            union = 0
            for _, mask, _ in bucket:
                union |= mask
        for part in (union & first, union & ~first):
            while part:
                low = part & -part
                part ^= low
                if len(bucket) > 1:
                    view, _, cap = next(g for g in bucket if g[1] & low)
                yield (view, low.bit_length() - 1), cap


@functools.lru_cache(maxsize=4096)
def select_alike(
    req: ResourceRequest, view: NodeView, count: int
) -> tuple[tuple[int, NodeAlloc], ...] | None:
    """``select_nodes`` over ``count`` idle nodes alike to ``view``, as a pattern (cached).

    Alike nodes sort alike, so the choice depends on their number alone: a
    pass places many jobs of the same shape on a few runs of idle nodes of
    one kind, and the trace simulator's nodes are all of one kind.

    Args:
        req: a request without required nodes.
        view: one idle node of the kind (its name is not used).
        count: how many such nodes are offered, in order.

    Returns:
        The allocation's parts, each with the position of its node in the
        list offered (the parts are nameless), or None when the job does not fit.
    """
    # Names no node can have: excluded node names cannot match them.
    nodes = [replace(view, name=f"\0{i}") for i in range(count)]
    alloc = select_nodes(req, nodes)
    if alloc is None:
        return None
    return tuple((int(part.node[1:]), _interned(replace(part, node=""))) for part in alloc.nodes)


_PARTS: dict[NodeAlloc, NodeAlloc] = {}


def _interned(part: NodeAlloc) -> NodeAlloc:
    """One object per nameless part, so that caches may know it by identity."""
    if len(_PARTS) >= 1 << 16:
        _PARTS.clear()
    return _PARTS.setdefault(part, part)
