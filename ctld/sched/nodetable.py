"""The nodes of a pass, indexed: positions, bitmasks, classes of alike nodes.

Bit ``i`` of every node bitmask of a pass is ``snapshot.nodes[i]``. A
:class:`NodeTable` holds what does not change while passes run (the nodes'
configuration and usability), so consecutive passes over the same nodes
share one (:func:`table_of`). It also keeps, bounded and known by object
identity, what passes work out again and again from it: partitions'
masks, allocations by node position, and allocations on alike idle nodes
named after them (a trace simulation places the same wide job on the
same nodes pass after pass).

Imports only minislurm.gpulinks and minislurm.model.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from minislurm.gpulinks import GpuLinks
from minislurm.model import Allocation, NodeAlloc, NodeView

INF = math.inf

_MAX_PARTS = 1 << 16  # allocations kept per table
_MAX_ROWS = 64  # nameless parts kept named after every node

# A node's free CPUs, memory (MiB) and GPU indices (a bitmask) from ``begin`` on.
Step = tuple[float, int, int, int]
# Parts of an allocation without node names, each with its node's place among those offered.
Pattern = tuple[tuple[int, NodeAlloc], ...]
# An allocation's nodes, those it holds every CPU of, and those it holds whole.
Indexed = tuple[int, int, int]
Entry = tuple[int, int, int, int]  # a part: node position, CPUs, memory, GPU mask


def gpu_mask(indices: Iterable[int]) -> int:
    """The bitmask of GPU device indices.

    Args:
        indices: device indices.

    Returns:
        An int with bit ``i`` set for each index ``i``.
    """
    mask = 0
    for index in indices:
        mask |= 1 << index
    return mask


@functools.cache
def gpu_tuple_mask(indices: tuple[int, ...]) -> int:
    """:func:`gpu_mask` of a tuple (cached: nodes have few sets of free GPUs).

    Args:
        indices: device indices.

    Returns:
        The bitmask.
    """
    return gpu_mask(indices)


@functools.cache
def gpu_tuple(mask: int) -> tuple[int, ...]:
    """The GPU indices of a bitmask, ascending (cached: nodes have few GPU masks).

    Args:
        mask: a non-negative GPU bitmask.

    Returns:
        The indices.
    """
    return tuple(bit_indices(mask))


def bit_indices(mask: int, limit: int = -1) -> list[int]:
    """The positions of the set bits of ``mask``, lowest first.

    Args:
        mask: a non-negative int.
        limit: at most this many (-1: all).

    Returns:
        The bit positions.
    """
    digits = bin(mask)[:1:-1]  # least significant first, without "0b"
    out: list[int] = []
    pos = digits.find("1")
    while pos >= 0 and len(out) != limit:
        out.append(pos)
        pos = digits.find("1", pos + 1)
    return out


def lowest_bits(mask: int, count: int) -> int:
    """The ``count`` lowest set bits of ``mask`` (all of them when it has no more).

    Args:
        mask: a non-negative int.
        count: how many.

    Returns:
        The bitmask.
    """
    if count <= 0:
        return 0
    if mask.bit_count() <= count:
        return mask
    lo, hi = 0, mask.bit_length()  # the least width whose low bits hold ``count`` of them
    while lo < hi:
        mid = (lo + hi) // 2
        if (mask & (1 << mid) - 1).bit_count() >= count:
            hi = mid
        else:
            lo = mid + 1
    return mask & (1 << lo) - 1


@dataclass(frozen=True)
class NodeTable:
    """The pass's nodes by position, and what does not change while it runs."""

    names: tuple[str, ...]
    index: dict[str, int]
    capacity: tuple[Step, ...]  # (-inf, cpus, mem, gpu mask) of each node
    usable: int  # bitmask of the usable nodes
    class_masks: tuple[int, ...]  # nodes alike in CPUs, memory, GPUs, weight and GPU links
    class_views: tuple[NodeView, ...]  # one idle member of each class, nameless
    classes: tuple[int, ...]  # each node's class (-1: unusable)
    idle_profiles: tuple[tuple[Step], ...]  # each node's capacity from ever on
    _rows: dict[int, tuple[NodeAlloc, tuple[NodeAlloc, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _named: dict[tuple[int, int, int], tuple[Pattern, Allocation]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _masks: dict[int, tuple[tuple[str, ...], int]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _indexed: dict[int, tuple[Allocation, Indexed]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, nodes: Sequence[NodeView]) -> NodeTable:
        """Index the snapshot's nodes.

        Args:
            nodes: the snapshot's nodes, in configuration order.

        Returns:
            The table.
        """
        capacity = []
        classes: dict[tuple[int, int, tuple[int, ...], int, GpuLinks | None], int] = {}
        usable = 0
        shapes = []
        for i, node in enumerate(nodes):
            capacity.append((-INF, node.cpus, node.mem, gpu_mask(node.gpus)))
            # Nodes whose GPUs are linked otherwise get other GPUs for the same job.
            shape = (node.cpus, node.mem, node.gpus, node.weight, node.gpu_links)
            shapes.append(shape)
            if node.usable:
                usable |= 1 << i
                classes[shape] = classes.get(shape, 0) | 1 << i
        views = tuple(
            NodeView("", c, m, g, c, m, tuple(sorted(g)), True, w, links)
            for (c, m, g, w, links) in classes
        )
        position = {shape: k for k, shape in enumerate(classes)}
        return cls(
            names=tuple(n.name for n in nodes),
            index={n.name: i for i, n in enumerate(nodes)},
            capacity=tuple(capacity),
            usable=usable,
            class_masks=tuple(classes.values()),
            class_views=views,
            idle_profiles=tuple((cap,) for cap in capacity),
            classes=tuple(
                position[shape] if n.usable else -1 for shape, n in zip(shapes, nodes, strict=True)
            ),
        )

    def named(self, pattern: Pattern, members: int, first: int) -> Allocation:
        """A pattern of parts on alike ``members``, those of ``first`` then the others.

        Kept: the passes of a pass-by-pass simulation place the same large
        job on the same nodes again and again. Its :meth:`indexed` is known
        at once.

        Args:
            pattern: (position among the members, nameless part), known by identity.
            members: a bitmask of alike nodes.
            first: those of them that come first.

        Returns:
            The allocation.
        """
        span = pattern[-1][0] + 1 if pattern else 0  # parts in order: the first nodes offered
        taken_ahead = lowest_bits(first, span)
        taken = taken_ahead | lowest_bits(members & ~first, span - taken_ahead.bit_count())
        key = (id(pattern), taken, taken_ahead)  # the nodes it may use, and their order
        kept = self._named.get(key)
        if kept is not None and kept[0] is pattern:
            return kept[1]
        chosen = bit_indices(taken_ahead) + bit_indices(taken & ~taken_ahead)
        if len(self._named) >= _MAX_PARTS:
            self._named.clear()
        one = pattern[0][1] if pattern else None
        holders: dict[int, tuple[NodeAlloc, int]] = {}  # nameless part's id -> it, its nodes
        if one is not None and len(pattern) == span and all(p is one for _, p in pattern):
            out = list(map(self._row(one).__getitem__, chosen))  # the same part on each node
            holders[id(one)] = (one, taken)
        else:
            out = []
            for k, p in pattern:
                i = chosen[k]
                out.append(self._row(p)[i])
                held = holders.get(id(p))
                holders[id(p)] = (p, (held[1] if held else 0) | 1 << i)
        alloc = Allocation(tuple(out))
        used = all_cpus = whole = 0
        for p, nodes in holders.values():  # alike nodes: what a part holds of one, of each
            used |= nodes
            cpus_all, gpus_all = self._holds(nodes.bit_length() - 1, p)
            all_cpus |= nodes if cpus_all else 0
            whole |= nodes if cpus_all and gpus_all else 0
        self._keep(alloc, (used, all_cpus, whole))
        self._named[key] = (pattern, alloc)
        return alloc

    def indexed(self, alloc: Allocation) -> Indexed:
        """An allocation's nodes (kept while the allocation object is).

        Args:
            alloc: a running job's or a reservation's allocation.

        Returns:
            The bitmask of its nodes in the table; of those it holds every CPU
            of; of those it holds every CPU and GPU of.
        """
        kept = self._indexed.get(id(alloc))
        if kept is not None and kept[0] is alloc:
            return kept[1]
        used = all_cpus = whole = 0
        for i, part in self._positions(alloc):
            used |= 1 << i
            cpus_all, gpus_all = self._holds(i, part)
            all_cpus |= cpus_all << i
            whole |= (cpus_all and gpus_all) << i
        found = (used, all_cpus, whole)
        self._keep(alloc, found)
        return found

    def entries(self, alloc: Allocation) -> tuple[Entry, ...]:
        """An allocation's parts: (position, CPUs, memory, GPU mask) each.

        Args:
            alloc: a running job's or a reservation's allocation.

        Returns:
            The parts on the table's nodes.
        """
        return tuple(
            (i, part.cpus, part.mem, gpu_tuple_mask(part.gpus) if part.gpus else 0)
            for i, part in self._positions(alloc)
        )

    def _positions(self, alloc: Allocation) -> Iterator[tuple[int, NodeAlloc]]:
        for part in alloc.nodes:
            i = self.index.get(part.node)
            if i is not None:
                yield i, part

    def _row(self, pattern: NodeAlloc) -> tuple[NodeAlloc, ...]:
        """A nameless part named after each node, by position (kept by the part's identity)."""
        kept = self._rows.get(id(pattern))
        if kept is not None and kept[0] is pattern:
            return kept[1]
        if len(self._rows) >= _MAX_ROWS:
            self._rows.clear()
        p = pattern
        row = tuple(NodeAlloc(name, p.cpus, p.mem, p.gpus, p.ntasks) for name in self.names)
        self._rows[id(pattern)] = (pattern, row)
        return row

    def _holds(self, i: int, part: NodeAlloc) -> tuple[bool, bool]:
        """Whether ``part`` holds every CPU of node ``i``, and every GPU."""
        _, cpus, _, gpus = self.capacity[i]
        held = gpu_tuple_mask(part.gpus) if part.gpus else 0
        return part.cpus >= cpus, held & gpus == gpus

    def _keep(self, alloc: Allocation, found: Indexed) -> None:
        if len(self._indexed) >= _MAX_PARTS:
            self._indexed.clear()
        self._indexed[id(alloc)] = (alloc, found)

    def mask(self, names: Iterable[str]) -> int:
        """The bitmask of the named nodes (unknown names are left out).

        Args:
            names: node names.

        Returns:
            The mask.
        """
        if isinstance(names, tuple):  # a partition's nodes: kept while the tuple is
            kept = self._masks.get(id(names))
            if kept is not None and kept[0] is names:
                return kept[1]
            if len(self._masks) >= _MAX_PARTS:
                self._masks.clear()
            self._masks[id(names)] = (names, self.mask(list(names)))
            return self._masks[id(names)][1]
        mask = 0
        for name in names:
            i = self.index.get(name)
            if i is not None:
                mask |= 1 << i
        return mask


_CONFIGURATION = attrgetter("name", "cpus", "mem", "gpus", "usable", "weight", "gpu_links")
Configuration = list[tuple[str, int, int, tuple[int, ...], bool, int, GpuLinks | None]]
_LAST: list[tuple[Sequence[NodeView], Configuration, NodeTable]] = []  # the last table


def renewed(last: Sequence[NodeView], nodes: Sequence[NodeView]) -> Iterator[int]:
    """The positions whose node is another object than the last time (of as many nodes).

    Node views are immutable: a pass that reads a node of the last pass by
    identity knows what it worked out from it then.

    Args:
        last: the nodes of the last call.
        nodes: the nodes now, as many.

    Returns:
        The positions, ascending.
    """
    return itertools.compress(range(len(nodes)), map(operator.is_not, last, nodes))


def table_of(nodes: Sequence[NodeView]) -> NodeTable:
    """The table of these nodes, reused while their configuration and usability stay the same.

    Passes come one after another over the same nodes; only their free
    resources change, which a table does not hold (its idle views are built
    from the configuration alone).
    """
    if _LAST:
        last, configuration, table = _LAST[0]
        if last is nodes:
            return table
        if len(last) == len(nodes):
            # Only the nodes that are new objects since the last call need a look.
            if all(_CONFIGURATION(nodes[i]) == configuration[i] for i in renewed(last, nodes)):
                _LAST[0] = (nodes, configuration, table)
                return table
    key = list(map(_CONFIGURATION, nodes))
    table = NodeTable.of(nodes)
    _LAST[:] = [(nodes, key, table)]
    return table
