"""The nodes of a pass, indexed: positions, bitmasks, classes of alike nodes.

Bit ``i`` of every node bitmask of a pass is ``snapshot.nodes[i]``. A
:class:`NodeTable` holds what does not change while passes run (the nodes'
configuration and usability), so consecutive passes over the same nodes
share one (:func:`table_of`).

Imports only minislurm.model.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from minislurm.model import NodeAlloc, NodeView

INF = math.inf

_MAX_PARTS = 1 << 16  # parts kept per table

# A node's free CPUs, memory (MiB) and GPU indices (a bitmask) from ``begin`` on.
Step = tuple[float, int, int, int]


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


@dataclass(frozen=True)
class NodeTable:
    """The pass's nodes by position, and what does not change while it runs."""

    names: tuple[str, ...]
    index: dict[str, int]
    capacity: tuple[Step, ...]  # (-inf, cpus, mem, gpu mask) of each node
    usable: int  # bitmask of the usable nodes
    class_masks: tuple[int, ...]  # nodes alike in CPUs, memory, GPUs and weight
    class_views: tuple[NodeView, ...]  # one idle member of each class, nameless
    classes: tuple[int, ...]  # each node's class (-1: unusable)
    _parts: dict[tuple[int, int], tuple[NodeAlloc, NodeAlloc]] = field(
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
        classes: dict[tuple[int, int, tuple[int, ...], int], int] = {}
        usable = 0
        shapes = []
        for i, node in enumerate(nodes):
            capacity.append((-INF, node.cpus, node.mem, gpu_mask(node.gpus)))
            shape = (node.cpus, node.mem, node.gpus, node.weight)
            shapes.append(shape)
            if node.usable:
                usable |= 1 << i
                classes[shape] = classes.get(shape, 0) | 1 << i
        views = tuple(
            NodeView("", c, m, g, c, m, tuple(sorted(g)), True, w) for (c, m, g, w) in classes
        )
        position = {shape: k for k, shape in enumerate(classes)}
        return cls(
            names=tuple(n.name for n in nodes),
            index={n.name: i for i, n in enumerate(nodes)},
            capacity=tuple(capacity),
            usable=usable,
            class_masks=tuple(classes.values()),
            class_views=views,
            classes=tuple(
                position[shape] if n.usable else -1 for shape, n in zip(shapes, nodes, strict=True)
            ),
        )

    def part(self, i: int, pattern: NodeAlloc) -> NodeAlloc:
        """``pattern`` on node ``i`` (kept: passes place the same parts on the same nodes).

        Args:
            i: a node's position.
            pattern: the part, under any name; known by identity (an id is
                only trusted while the object it was taken from is kept).

        Returns:
            The part named after the node.
        """
        key = (i, id(pattern))
        kept = self._parts.get(key)
        if kept is not None and kept[0] is pattern:
            return kept[1]
        if len(self._parts) >= _MAX_PARTS:
            self._parts.clear()
        p = pattern
        part = NodeAlloc(self.names[i], p.cpus, p.mem, p.gpus, p.ntasks)
        self._parts[key] = (pattern, part)
        return part

    def mask(self, names: Iterable[str]) -> int:
        """The bitmask of the named nodes (unknown names are left out).

        Args:
            names: node names.

        Returns:
            The mask.
        """
        mask = 0
        for name in names:
            i = self.index.get(name)
            if i is not None:
                mask |= 1 << i
        return mask


_CONFIGURATION = attrgetter("name", "cpus", "mem", "gpus", "usable", "weight")
_TABLES: dict[tuple[tuple[str, int, int, tuple[int, ...], bool, int], ...], NodeTable] = {}


def table_of(nodes: Sequence[NodeView]) -> NodeTable:
    """The table of these nodes, reused while their configuration and usability stay the same.

    Passes come one after another over the same nodes; only their free
    resources change, which a table does not hold (its idle views are built
    from the configuration alone).
    """
    key = tuple(map(_CONFIGURATION, nodes))
    table = _TABLES.get(key)
    if table is None:
        _TABLES.clear()
        table = _TABLES[key] = NodeTable.of(nodes)
    return table
