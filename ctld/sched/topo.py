"""Placement on a tree of switches or in blocks (``topology/tree``, ``topology/block``).

Both work on the pass's node bitmasks.

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

In blocks (:func:`place_block`), a job goes into one block of the
smallest level of ``BlockSizes`` that can hold it (the fullest that can,
best fit), and inside it takes base blocks fullest first, so that partly
used blocks fill before clean ones; a job larger than the largest level
may take any blocks. With ``--segment=S`` each S of its nodes lie in one
base block, wherever those are. With ``--exclusive=topo`` it takes only
base blocks no other job uses (the controller keeps others off the rest of
them while it runs: ``RunningJob.kept``). Nodes in no block get no job.

Imports minislurm.model, minislurm.topology and ctld.sched.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctld.sched.knobs import SchedConfig
from ctld.sched.nodetable import NodeTable, lowest_bits
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


@dataclass(frozen=True)
class Blocks:
    """Blocks as bitmasks over one table's nodes."""

    base: tuple[int, ...]  # each base block's nodes, in configuration order
    levels: tuple[tuple[int, ...], ...]  # each level's blocks (level 0: the base blocks)
    covered: int  # the nodes in some block


_FABRICS: dict[tuple[int, int], tuple[NodeTable, Topology, Fabric | Blocks]] = {}


def fabric_of(table: NodeTable, topology: Topology) -> Fabric | Blocks:
    """The switches or blocks of ``topology`` over the table's nodes (kept while both are).

    Args:
        table: the pass's nodes.
        topology: a tree or blocks.

    Returns:
        The fabric of a tree, or the blocks.
    """
    key = (id(table), id(topology))
    kept = _FABRICS.get(key)
    if kept is not None and kept[0] is table and kept[1] is topology:
        return kept[2]
    found = _fabric(table, topology) if topology.tree else _blocks(table, topology)
    if len(_FABRICS) >= 16:
        _FABRICS.clear()
    _FABRICS[key] = (table, topology, found)
    return found


def _blocks(table: NodeTable, topology: Topology) -> Blocks:
    base = tuple(table.mask(b.nodes) for b in topology.blocks)
    levels = []
    for groups in topology.block_groups():
        masks = []
        for group in groups:
            mask = 0
            for i in group:
                mask |= base[i]
            masks.append(mask)
        levels.append(tuple(masks))
    covered = 0
    for mask in base:
        covered |= mask
    return Blocks(base, tuple(levels), covered)


def _fabric(table: NodeTable, topology: Topology) -> Fabric:
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
    return Fabric(levels, tuple(m for m, _ in levels[0]), covered)


@dataclass(frozen=True)
class Wiring:
    """What the tree asks of one job's placement.

    On a tree, ``max_leaves`` is its ``--switches`` count (0: any), which
    holds while the start is before ``until`` (the end of its wait). In
    blocks, ``segment`` is its ``--segment`` (0: none) and ``exclusive``
    its ``--exclusive=topo``.
    """

    fabric: Fabric | Blocks
    max_leaves: int = 0
    until: float = 0.0
    segment: int = 0
    exclusive: bool = False

    @property
    def covered(self) -> int:
        """The nodes a job may be given: under a switch, or in a block."""
        return self.fabric.covered

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
        The wiring, or None without a topology (or, with ``TopoOptional``,
        for a job that asks nothing of it).
    """
    topology = cfg.topology
    if topology is None:
        return None
    req = job.request
    if topology.optional and not (req.switches or req.segment or req.exclusive_topo):
        return None
    fabric = fabric_of(timeline.table, topology)
    return Wiring(fabric, req.switches, job.switch_until, req.segment, req.exclusive_topo)


def place(
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
    """:func:`place_tree` or :func:`place_block`, as the topology is."""
    if isinstance(wiring.fabric, Blocks):
        return place_block(timeline, req, start, end, whole, partial, limit, wiring, fits)
    return place_tree(timeline, req, start, end, whole, partial, limit, wiring, fits)


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
    fabric = wiring.fabric
    assert isinstance(fabric, Fabric)
    free = whole | partial
    most = wiring.leaves_at(start)
    for level, switches in enumerate(fabric.levels):
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


def place_block(
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
    """Where the job goes in blocks: one block of the smallest level that holds it, or None.

    Args:
        timeline, req, start, end, whole, partial, limit: as for :func:`place_tree`.
        wiring: the blocks, the job's segment size and topology exclusivity.
        fits: whether the job may fit on the nodes of a bitmask (a cheap bound).

    Returns:
        The allocation, or None when the blocks do not hold it in this window.
    """
    blocks = wiring.fabric
    assert isinstance(blocks, Blocks)
    if wiring.exclusive:  # only base blocks whose every node is free of other jobs
        clean = 0
        for mask in blocks.base:
            if not mask & ~whole & timeline.table.usable:
                clean |= mask
        whole, partial = whole & clean, 0
    free = whole | partial
    if wiring.segment:
        chosen = _segments(blocks.base, free, max(req.min_nodes, 1), wiring.segment)
        if chosen is None or not fits(chosen):
            return None
        return timeline.place(req, start, end, whole & chosen, partial & chosen, limit)
    need = max(req.min_nodes, 1)
    for level in blocks.levels:
        if max(g.bit_count() for g in level) < need:
            continue  # its blocks are too small
        found = sorted(
            ((free & g).bit_count(), k, g) for k, g in enumerate(level) if fits(free & g)
        )
        for _, _, group in found:  # best fit: the fullest block that can hold it
            alloc = _fullest_first(
                timeline, req, start, end, whole, partial, limit, blocks, group, fits
            )
            if alloc is not None:
                return alloc
    if max(g.bit_count() for g in blocks.levels[-1]) >= need:
        return None
    # Larger than any level: any blocks, the fullest first.
    return _fullest_first(
        timeline, req, start, end, whole, partial, limit, blocks, blocks.covered, fits
    )


def _fullest_first(
    timeline: Timeline,
    req: ResourceRequest,
    start: float,
    end: float,
    whole: int,
    partial: int,
    limit: int,
    blocks: Blocks,
    within: int,
    fits: Callable[[int], bool],
) -> Allocation | None:
    """The job on the base blocks of ``within``, as few as it needs, the fullest first."""
    free = whole | partial
    order = sorted(
        ((free & b).bit_count(), k, free & b) for k, b in enumerate(blocks.base) if b & within
    )
    taken = 0
    for count, _, mask in order:
        if not count:
            continue
        taken |= mask
        if fits(taken):
            alloc = timeline.place(req, start, end, whole & taken, partial & taken, limit)
            if alloc is not None:
                return alloc
    return None


def _segments(base: Sequence[int], free: int, need: int, size: int) -> int | None:
    """Nodes for ``need // size`` segments of ``size``, each in one base block, fullest first.

    Returns:
        The bitmask of the nodes, or None when too few blocks have room.
    """
    wanted = need // size
    order = sorted(((free & b).bit_count(), k, free & b) for k, b in enumerate(base))
    chosen = 0
    for count, _, mask in order:
        take = min(count // size, wanted)
        if take:
            chosen |= lowest_bits(mask, take * size)
            wanted -= take
        if not wanted:
            return chosen
    return None
