"""Placement on a tree of switches (Slurm's ``topology/tree``), over a pass's node bitmasks.

The switches of ``topology.conf`` become bitmasks over the pass's nodes
(:func:`fabric_of`, kept per table). A job is placed under the lowest
switch that can hold it: of the switches of that level where it fits,
the one with the fewest nodes free (best fit). Under a leaf switch the job
is placed as anywhere else; under a higher switch, as Slurm documents for a
job that no leaf can hold, it is spread over as many of that switch's
leaves as it can, for bandwidth (its nodes are taken from the leaves in
turn). ``--switches=N`` bounds the leaves: the job takes the N leaves of the
switch with the most nodes free, and while its wait lasts it starts nowhere
else. Nodes under no switch are given to no job.

Imports minislurm.model, minislurm.topology and ctld.sched.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctld.sched.knobs import SchedConfig
from ctld.sched.nodetable import NodeTable
from ctld.sched.select import select_nodes
from ctld.sched.timeline import Timeline
from minislurm.model import Allocation, NodeView, PendingJob, ResourceRequest
from minislurm.topology import Topology

# A switch as bitmasks: its nodes, and the nodes of each leaf switch beneath it.
SwitchMasks = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class Fabric:
    """A tree of switches as bitmasks over one table's nodes."""

    levels: tuple[tuple[SwitchMasks, ...], ...]  # the switches of each level, leaves first
    leaves: tuple[int, ...]  # each leaf switch's nodes
    covered: int  # the nodes under some switch

    def leaf_count(self, nodes: int) -> int:
        """How many leaf switches the nodes of a bitmask are under (the first of each node)."""
        count = 0
        for leaf in self.leaves:
            if nodes & leaf:
                count += 1
                nodes &= ~leaf
        return count


_FABRICS: dict[tuple[int, int], tuple[NodeTable, Topology, Fabric]] = {}


def fabric_of(table: NodeTable, topology: Topology) -> Fabric:
    """The switches of ``topology`` over the table's nodes (kept while both objects are).

    Args:
        table: the pass's nodes.
        topology: a tree.

    Returns:
        The fabric.
    """
    key = (id(table), id(topology))
    kept = _FABRICS.get(key)
    if kept is not None and kept[0] is table and kept[1] is topology:
        return kept[2]
    masks = {s.name: table.mask(s.nodes) for s in topology.switches}
    leaves_under: dict[str, tuple[int, ...]] = {}
    for switch in sorted(topology.switches, key=lambda s: s.level):
        if switch.level == 0:
            leaves_under[switch.name] = (masks[switch.name],)
        else:
            below = (leaves_under[c] for c in switch.switches)
            leaves_under[switch.name] = tuple(dict.fromkeys(itertools.chain.from_iterable(below)))
    top = max((s.level for s in topology.switches), default=-1)
    levels = tuple(
        tuple((masks[s.name], leaves_under[s.name]) for s in topology.switches if s.level == level)
        for level in range(top + 1)
    )
    covered = 0
    for mask in masks.values():
        covered |= mask
    fabric = Fabric(levels, tuple(m for m, _ in levels[0]), covered)
    if len(_FABRICS) >= 16:
        _FABRICS.clear()
    _FABRICS[key] = (table, topology, fabric)
    return fabric


@dataclass(frozen=True)
class Wiring:
    """What the tree asks of one job's placement.

    ``max_leaves`` is its ``--switches`` count (0: any), which holds while
    the start is before ``until`` (the end of its wait).
    """

    fabric: Fabric
    max_leaves: int = 0
    until: float = 0.0

    def leaves_at(self, start: float) -> int:
        """The most leaf switches a start at ``start`` may use (0: any)."""
        return self.max_leaves if start < self.until else 0


def wiring_of(cfg: SchedConfig, timeline: Timeline, job: PendingJob) -> Wiring | None:
    """What the tree asks of a job's placement; None when it is placed as on a flat network.

    Args:
        cfg: the knobs, with the topology.
        timeline: the pass's map (its nodes).
        job: the job.

    Returns:
        The wiring, or None without a tree (or, with ``TopoOptional``, for a
        job that asks for no switch count).
    """
    topology = cfg.topology
    if topology is None or not topology.tree:
        return None
    switches = job.request.switches
    if topology.optional and not switches:
        return None
    return Wiring(fabric_of(timeline.table, topology), switches, job.switch_until)


def place_tree(
    timeline: Timeline,
    req: ResourceRequest,
    start: float,
    end: float,
    whole: int,
    partial: int,
    limit: int,
    wiring: Wiring,
    fits: Callable[[int], bool],
) -> Allocation | None:
    """Where the job goes under the lowest switch that can hold it, or None.

    Args:
        timeline: the map.
        req: the job's request.
        start, end: the window.
        whole: its candidates idle throughout the window.
        partial: its candidates with a CPU free throughout, not idle throughout.
        limit: as for :meth:`Timeline.place`.
        wiring: the fabric and the job's leaf bound.
        fits: whether the job may fit on the nodes of a bitmask (a cheap bound).

    Returns:
        The allocation, or None when no switch holds it in this window.
    """
    free = whole | partial
    most = wiring.leaves_at(start)
    for level, switches in enumerate(wiring.fabric.levels):
        if level and most == 1:
            break  # one leaf: the leaves were the only choice
        found = []
        for k, (members, leaves) in enumerate(switches):
            here = free & members
            if fits(here):
                found.append((here.bit_count(), k, members, leaves))
        found.sort()  # best fit: the fewest nodes free first
        for _, _, members, leaves in found:
            if not level:
                alloc = timeline.place(req, start, end, whole & members, partial & members, limit)
            else:
                alloc = _spread(timeline, req, start, end, whole, partial, leaves, most, fits)
            if alloc is not None:
                return alloc
    return None


def _spread(
    timeline: Timeline,
    req: ResourceRequest,
    start: float,
    end: float,
    whole: int,
    partial: int,
    leaves: Sequence[int],
    most: int,
    fits: Callable[[int], bool],
) -> Allocation | None:
    """The job over as many of the leaves as it can use (at most ``most``; 0: any), in turn."""
    free = whole | partial
    offered = [leaf & free for leaf in leaves if leaf & free]
    if most:
        offered.sort(key=lambda m: -m.bit_count())  # the roomiest leaves: fewest needed
        offered = offered[:most]
    chosen = 0
    for mask in offered:
        chosen |= mask
    if not fits(chosen):
        return None
    views = timeline.views(start, end, whole & chosen, partial & chosen, -1)
    index = timeline.table.index
    by_leaf: list[list[NodeView]] = [[] for _ in offered]
    for view in views:
        i = index[view.name]
        k = next(k for k, mask in enumerate(offered) if mask >> i & 1)
        by_leaf[k].append(view)
    turns = itertools.zip_longest(*by_leaf)
    ordered = [view for turn in turns for view in turn if view is not None]
    alloc = select_nodes(req, ordered)
    if alloc is None:
        return None
    # Slurm lists a job's nodes (and picks its batch host) in configuration order.
    return Allocation(tuple(sorted(alloc.nodes, key=lambda part: index[part.node])))
