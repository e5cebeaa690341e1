"""Placement on a tree of switches or in blocks (``topology/tree``, ``topology/block``).

Both work on the pass's node bitmasks.

The switches of ``topology.conf`` become bitmasks over the pass's nodes
(:func:`fabric_of`, kept per table). A job is placed under the lowest
switch that can hold it: of the switches of that level where it fits,
the one with the fewest nodes free (best fit). Under a leaf switch the job
is placed as anywhere else. Under a higher switch (no leaf can hold it) it
takes as few of that switch's leaves as it can, as Slurm's default
``topology/tree`` does: one leaf at a time, the one that best fits what is
still needed (the fewest nodes free of those that can hold the rest), else
the one with the most nodes free. With ``TopologyParam=Dragonfly`` it is
instead spread over as many of the leaves as it can, for bandwidth (its
nodes taken from the leaves in turn). ``--switches=N`` bounds the leaves,
and while its wait lasts the job starts nowhere else. Nodes under no switch
are given to no job.

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
from ctld.sched.select import task_capacity
from ctld.sched.timeline import Groups, Timeline
from minislurm.model import Allocation, PendingJob, ResourceRequest
from minislurm.topology import Topology

# A switch as bitmasks: its nodes, and the nodes of each leaf switch beneath it.
SwitchMasks = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class Fabric:
    """A tree of switches as bitmasks over one table's nodes."""

    levels: tuple[tuple[SwitchMasks, ...], ...]  # the switches of each level, leaves first
    covered: int  # the nodes under some switch


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
    return Fabric(levels, covered)


@dataclass(frozen=True)
class Wiring:
    """What the tree asks of one job's placement.

    On a tree, ``max_leaves`` is its ``--switches`` count (0: any), which
    holds while the start is before ``until`` (the end of its wait), and
    ``dragonfly`` spreads a job no leaf holds (``TopologyParam=Dragonfly``).
    In blocks, ``segment`` is its ``--segment`` (0: none) and ``exclusive``
    its ``--exclusive=topo``.
    """

    fabric: Fabric | Blocks
    max_leaves: int = 0
    until: float = 0.0
    segment: int = 0
    exclusive: bool = False
    dragonfly: bool = False

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
    return Wiring(
        fabric,
        req.switches,
        job.switch_until,
        req.segment,
        req.exclusive_topo,
        topology.dragonfly,
    )


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
    within = _Within(timeline, req, start, end, whole, partial, limit, fits)
    need = max(req.min_nodes, 1)
    over = _spread if wiring.dragonfly else _fewest  # how a job goes over several leaves
    for level, switches in enumerate(fabric.levels):
        if level and most == 1:
            break  # one leaf: the leaves were the only choice
        found = []
        for k, (members, leaves) in enumerate(switches):
            here = free & members
            count = here.bit_count()
            if count >= need and within.holds(here):
                found.append((count, k, members, leaves))
        found.sort()  # best fit: the fewest nodes free first
        for _, _, members, leaves in found:
            alloc = within(members) if not level else over(within, leaves, most)
            if alloc is not None:
                return alloc
    return None


class _Within:
    """A job's placement in one window on the nodes of a bitmask, the window's groups found once.

    Narrowing the groups of free resources to a switch's nodes costs a few
    integer ANDs; working them out again for each switch tried would cost
    the window's partly used nodes each time.
    """

    def __init__(
        self,
        timeline: Timeline,
        req: ResourceRequest,
        start: float,
        end: float,
        whole: int,
        partial: int,
        limit: int,
        fits: Callable[[int], bool],
    ) -> None:
        self.timeline, self.req, self.start, self.end = timeline, req, start, end
        self.whole, self.partial, self.limit, self.fits = whole, partial, limit, fits
        self._groups: tuple[Groups, Groups] | None = None
        self._capacity: list[tuple[int, int]] | None = None  # (nodes, tasks each fits)

    def _found(self) -> tuple[Groups, Groups]:
        if self._groups is None:
            self._groups = self.timeline.groups(self.start, self.end, self.whole, self.partial, -1)
        return self._groups

    def holds(self, mask: int) -> bool:
        """Whether the nodes of ``mask`` fit enough of the job's tasks, as the window leaves them.

        A bound (the job's other limits may still rule them out), but a tight
        one: each group of alike nodes counts for the tasks it fits, where
        the pass's first test counts partly used nodes as if idle, and only
        the job's most nodes count, the roomiest (one node must fit every
        task of a one-node job).
        """
        if self.limit < 0:  # required nodes: the pass's own bound (they must be there)
            return self.fits(mask)
        if self._capacity is None:
            alike, partly = self._found()
            self._capacity = sorted(
                (
                    (members, cap)
                    for view, members in alike + partly
                    if (cap := task_capacity(self.req, view)) > 0
                ),
                key=lambda group: -group[1],
            )
        nodes = tasks = 0
        room = max(self.req.max_nodes, 1)  # nodes whose tasks may still count
        for members, cap in self._capacity:
            here = members & mask
            if here:
                nodes |= here
                if room:
                    counted = min(here.bit_count(), room)
                    tasks += counted * cap
                    room -= counted
        return tasks >= self.req.ntasks and nodes.bit_count() >= max(self.req.min_nodes, 1)

    def __call__(self, mask: int) -> Allocation | None:
        timeline, req, start = self.timeline, self.req, self.start
        if self.limit < 0:  # required nodes: placed node by node
            whole, partial = self.whole & mask, self.partial & mask
            return timeline.place(req, start, self.end, whole, partial, self.limit)
        alike, partly = self._found()
        alike = [(view, members & mask) for view, members in alike if members & mask]
        partly = [(view, members & mask) for view, members in partly if members & mask]
        if not (alike or partly):
            return None
        return timeline.place_groups(req, start, alike, partly)


def _fewest(within: _Within, leaves: Sequence[int], most: int) -> Allocation | None:
    """The job on as few of the leaves as it needs (at most ``most``; 0: any), best fit.

    Slurm's ``topology/tree`` rule: leaves are taken one at a time, the one
    with the fewest nodes free among those that can hold what the job still
    needs, else the one with the most nodes free (the first in the file on a
    tie); once they hold it, the job is placed on their free nodes. Should
    the job's other limits rule those out, it is offered every free node of
    the leaves once, packed (unless ``most`` bounds its leaves).
    """
    free = within.whole | within.partial
    masks = (leaf & free for leaf in leaves)
    offered = [(mask.bit_count(), k, mask) for k, mask in enumerate(masks) if mask]
    chosen = taken = 0
    while offered and (not most or taken < most):
        fitting = [o for o in offered if within.holds(chosen | o[2])]
        pick = min(fitting) if fitting else max(offered, key=lambda o: (o[0], -o[1]))
        offered.remove(pick)
        chosen |= pick[2]
        taken += 1
        if fitting:
            alloc = within(chosen)
            if alloc is not None or most:
                return alloc
            everything = 0
            for _, _, mask in offered:
                everything |= mask
            return within(chosen | everything) if everything else None
    return None


def _spread(within: _Within, leaves: Sequence[int], most: int) -> Allocation | None:
    """The job over as many of the leaves as it can use (at most ``most``; 0: any).

    Its nodes are taken from the leaves in turn (idle ones first in each);
    when those cannot hold it (partly used nodes too small), every free
    node of the leaves is offered, packed.
    """
    whole, free = within.whole, within.whole | within.partial
    offered = [leaf & free for leaf in leaves if leaf & free]
    if most:
        offered.sort(key=lambda m: -m.bit_count())  # the roomiest leaves: fewest needed
        offered = offered[:most]
    chosen = 0
    for mask in offered:
        chosen |= mask
    if not within.holds(chosen):
        return None
    quotas = [0] * len(offered)
    room = [mask.bit_count() for mask in offered]
    left = max(within.req.min_nodes, 1)
    while left:
        for k in range(len(offered)):
            if left and quotas[k] < room[k]:
                quotas[k] += 1
                left -= 1
    turns = 0
    for mask, quota in zip(offered, quotas, strict=True):
        idle = lowest_bits(mask & whole, quota)
        turns |= idle | lowest_bits(mask & ~whole, quota - idle.bit_count())
    alloc = within(turns)
    return alloc if alloc is not None else within(chosen)


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
    within = _Within(timeline, req, start, end, whole, partial, limit, fits)
    free = whole | partial
    if wiring.segment:
        chosen = _segments(blocks.base, free, max(req.min_nodes, 1), wiring.segment)
        if chosen is None or not within.holds(chosen):
            return None
        return within(chosen)
    need = max(req.min_nodes, 1)
    for level in blocks.levels:
        if max(g.bit_count() for g in level) < need:
            continue  # its blocks are too small
        found = sorted(
            ((free & g).bit_count(), k, g)
            for k, g in enumerate(level)
            if (free & g).bit_count() >= need and within.holds(free & g)
        )
        for _, _, group in found:  # best fit: the fullest block that can hold it
            alloc = _fullest_first(within, blocks.base, group)
            if alloc is not None:
                return alloc
    if max(g.bit_count() for g in blocks.levels[-1]) >= need:
        return None
    return _fullest_first(within, blocks.base, blocks.covered)  # larger than any level


def _fullest_first(within: _Within, base: Sequence[int], region: int) -> Allocation | None:
    """The job on the base blocks of ``region``, as few as it needs, the fullest first."""
    free = within.whole | within.partial
    order = sorted(((free & b).bit_count(), k, free & b) for k, b in enumerate(base) if b & region)
    taken = 0
    for count, _, mask in order:
        if not count:
            continue
        taken |= mask
        if within.holds(taken):
            alloc = within(taken)
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
