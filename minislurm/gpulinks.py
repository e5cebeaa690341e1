"""How the GPUs of one node are linked, and which of them to give a job that asks for k.

A link map (:class:`GpuLinks`) gives, for each pair of a node's GPUs, how
many links join them, as gres.conf's ``Links=`` and ``nvidia-smi topo -m``
tell it: 0 for none (the two talk over PCIe), more for more NVLinks (``NV18``
is 18), -1 for a GPU with itself. A node without a map has GPUs all alike.

:func:`best_gpus` picks k of a node's free GPUs: the set whose weakest
pair is best linked (all-NVLink before mixed), then the one with the most
links in all, then the one that takes the fewest links away from the GPUs
it leaves free (so that a pair taken from a box of NVLink pairs is a pair,
and a well-linked group stays whole for a later job), then the lowest
indices. :func:`split_gpus` cuts GPUs into groups the same way, for
``--gpu-bind=closest``. Both are pure and cached per (map, GPUs, k).

Imports only the standard library.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

SELF = -1  # the entry of a GPU for itself
_EXHAUSTIVE = 5000  # at most this many sets are scored one by one; beyond, a greedy search


@dataclass(frozen=True)
class GpuLinks:
    """The links between a node's GPUs.

    Attributes:
        gpus: the device index of each row (and column), in device order.
        matrix: ``matrix[a][b]``: the links between ``gpus[a]`` and
            ``gpus[b]``; -1 on the diagonal.
    """

    gpus: tuple[int, ...]
    matrix: tuple[tuple[int, ...], ...]
    _place: dict[int, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        check_matrix(self.matrix)
        if len(self.gpus) != len(self.matrix) or len(set(self.gpus)) != len(self.gpus):
            raise ValueError(f"{len(self.matrix)} rows of links for GPUs {list(self.gpus)}")
        object.__setattr__(self, "_place", {gpu: i for i, gpu in enumerate(self.gpus)})

    @classmethod
    def of(cls, gpus: Sequence[int], flat: Sequence[int]) -> GpuLinks:
        """A map from its rows laid end to end (as registration carries it).

        Args:
            gpus: the device indices, in the rows' order.
            flat: ``len(gpus)`` rows of ``len(gpus)`` entries each.

        Returns:
            The map.

        Raises:
            ValueError: not a square of that size, or not a link matrix (:func:`check_matrix`).
        """
        n = len(gpus)
        if len(flat) != n * n:
            raise ValueError(f"{len(flat)} link entries for {n} GPUs (expected {n * n})")
        return cls(tuple(gpus), tuple(tuple(flat[i * n : (i + 1) * n]) for i in range(n)))

    @property
    def flat(self) -> tuple[int, ...]:
        """The rows laid end to end."""
        return tuple(itertools.chain.from_iterable(self.matrix))

    def between(self, a: int, b: int) -> int:
        """The links between GPUs ``a`` and ``b`` (device indices; 0 for a GPU not in the map)."""
        i, j = self._place.get(a), self._place.get(b)
        if i is None or j is None:
            return 0
        return self.matrix[i][j]


def check_matrix(matrix: Sequence[Sequence[int]]) -> None:
    """Check a link matrix: square, -1 on the diagonal alone, other entries >= 0, symmetric.

    Args:
        matrix: the rows.

    Raises:
        ValueError: what is wrong, naming the GPUs by their place.
    """
    n = len(matrix)
    for i, row in enumerate(matrix):
        if len(row) != n:
            raise ValueError(f"the links of GPU {i} have {len(row)} entries for {n} GPUs")
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if (value == SELF) != (i == j) or value < SELF:
                raise ValueError(f"the links of GPU {i}: -1 must be at its own place, {i}, alone")
            if value != matrix[j][i]:
                back = matrix[j][i]
                raise ValueError(
                    f"GPU {i} has {value} links to GPU {j}, but GPU {j} has {back} to GPU {i}"
                )


def best_gpus(links: GpuLinks | None, free: tuple[int, ...], count: int) -> tuple[int, ...]:
    """The ``count`` GPUs to give among ``free``: the best-linked set (see the module).

    Args:
        links: the node's link map (None: GPUs all alike, the lowest indices are taken).
        free: the free GPUs' indices, ascending.
        count: how many are wanted.

    Returns:
        The chosen indices, ascending (all of ``free`` when it has no more).
    """
    if links is None or count <= 0 or count >= len(free):
        return free[:count]
    return _best(links, free, count)


def split_gpus(links: GpuLinks | None, gpus: tuple[int, ...], size: int) -> list[tuple[int, ...]]:
    """GPUs cut into groups of ``size``, each the best-linked of those left, in turn.

    Args:
        links: the node's link map (None: consecutive groups).
        gpus: the GPUs' indices, ascending.
        size: GPUs per group (> 0).

    Returns:
        The groups, the last one short when ``size`` does not divide their number.
    """
    groups = []
    left = gpus
    while left:
        group = best_gpus(links, left, size)
        groups.append(group)
        left = tuple(g for g in left if g not in group)
    return groups


@functools.lru_cache(maxsize=4096)
def _best(links: GpuLinks, free: tuple[int, ...], count: int) -> tuple[int, ...]:
    n = len(free)
    weight = [[links.between(a, b) if a != b else 0 for b in free] for a in free]
    if math.comb(n, count) <= _EXHAUSTIVE:
        candidates: Sequence[tuple[int, ...]] = list(itertools.combinations(range(n), count))
    else:
        candidates = sorted({_grown(weight, seed, count) for seed in range(n)})
    best = max(candidates, key=lambda chosen: _score(weight, chosen))  # the first best: lowest
    return tuple(free[i] for i in best)


def _score(weight: list[list[int]], chosen: tuple[int, ...]) -> tuple[int, int, int]:
    """(weakest pair, links in all, minus the links to the GPUs left), higher is better."""
    inside = [weight[a][b] for a, b in itertools.combinations(chosen, 2)]
    taken = set(chosen)
    outside = sum(w for a in chosen for b, w in enumerate(weight[a]) if b not in taken)
    return (min(inside, default=0), sum(inside), -outside)


def _grown(weight: list[list[int]], seed: int, count: int) -> tuple[int, ...]:
    """A set grown from ``seed`` by the GPU best linked to it each time (weakest, then total)."""
    chosen = [seed]
    rest = [i for i in range(len(weight)) if i != seed]
    while len(chosen) < count:
        pick = max(rest, key=lambda c: (*_to_set(weight[c], chosen), -c))
        chosen.append(pick)
        rest.remove(pick)
    return tuple(sorted(chosen))


def _to_set(row: list[int], chosen: list[int]) -> tuple[int, int]:
    """A GPU's weakest link to the GPUs chosen, and its links to them in all."""
    links = [row[a] for a in chosen]
    return min(links), sum(links)
