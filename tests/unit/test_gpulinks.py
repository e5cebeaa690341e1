"""Tests of minislurm.gpulinks: link maps and the best-linked GPUs of a node."""

from __future__ import annotations

import pytest

from minislurm.gpulinks import GpuLinks, best_gpus, split_gpus


def grouped(size: int, links: int, n: int = 8) -> GpuLinks:
    """``n`` GPUs in groups of ``size`` fully linked by ``links`` each, none across."""
    rows = tuple(
        tuple(-1 if a == b else links if a // size == b // size else 0 for b in range(n))
        for a in range(n)
    )
    return GpuLinks(tuple(range(n)), rows)


QUADS = grouped(4, 4)  # two NVLink quads: 0-3 and 4-7
PAIRS = grouped(2, 4)  # a PCIe box with NVLink pairs: 0-1, 2-3, 4-5, 6-7
ALL_TO_ALL = grouped(8, 18)  # a DGX: NV18 between every two GPUs
ALL = tuple(range(8))


def test_a_map_reads_its_flat_rows_and_answers_by_device_index() -> None:
    links = GpuLinks.of((4, 7), (-1, 2, 2, -1))
    assert links.matrix == ((-1, 2), (2, -1))
    assert links.flat == (-1, 2, 2, -1)
    assert links.between(7, 4) == 2
    assert links.between(4, 4) == -1
    assert links.between(4, 5) == 0  # not in the map: no link


@pytest.mark.parametrize(
    ("gpus", "flat", "fragment"),
    [
        ((0, 1), (-1, 0, 0), "3 link entries for 2 GPUs"),
        ((0, 1), (0, 0, 0, -1), "-1 must be at its own place, 0"),
        ((0, 1), (-1, -1, -1, -1), "-1 must be at its own place"),
        ((0, 1), (-1, -2, -2, -1), "-1 must be at its own place"),
        ((0, 1), (-1, 4, 2, -1), "GPU 0 has 4 links to GPU 1, but GPU 1 has 2 to GPU 0"),
        ((0, 0), (-1, 0, 0, -1), "for GPUs [0, 0]"),
    ],
)
def test_a_map_that_is_no_link_matrix_is_refused(
    gpus: tuple[int, ...], flat: tuple[int, ...], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[")):
        GpuLinks.of(gpus, flat)


@pytest.mark.parametrize(
    ("links", "free", "count", "expected"),
    [
        (None, (1, 2, 3, 4), 2, (1, 2)),  # no map: the lowest indices
        (QUADS, ALL, 4, (0, 1, 2, 3)),
        (QUADS, (4, 5, 6, 7), 4, (4, 5, 6, 7)),
        (QUADS, (3, 4, 5, 6, 7), 4, (4, 5, 6, 7)),  # a quad, not 3-6
        (QUADS, (3, 4, 5, 6, 7), 2, (4, 5)),  # a linked pair, not 3-4
        (QUADS, (3, 4, 5, 6, 7), 1, (3,)),  # the GPU left alone, so the quad stays whole
        (QUADS, (1, 2, 3, 4, 5, 6, 7), 2, (1, 2)),  # from the broken quad
        (QUADS, (2, 3, 4, 5, 6, 7), 3, (4, 5, 6)),  # all-NVLink before mixed
        (PAIRS, (1, 2, 3, 4, 5, 6, 7), 2, (2, 3)),  # a pair, not 1-2
        (PAIRS, (0, 1, 3), 1, (3,)),  # the GPU without its pair
        (PAIRS, ALL, 4, (0, 1, 2, 3)),  # two pairs
        (PAIRS, (1, 2, 3, 5, 6, 7), 4, (2, 3, 6, 7)),  # two pairs rather than one and two halves
        (ALL_TO_ALL, (1, 2, 5, 6, 7), 3, (1, 2, 5)),  # all alike: the lowest
        (QUADS, ALL, 8, ALL),
        (QUADS, (5, 6), 4, (5, 6)),  # not enough: all there are
        (QUADS, ALL, 0, ()),
    ],
)
def test_best_gpus_are_the_best_linked_free_set(
    links: GpuLinks | None, free: tuple[int, ...], count: int, expected: tuple[int, ...]
) -> None:
    assert best_gpus(links, free, count) == expected


def test_many_gpus_are_searched_greedily_and_still_take_a_whole_group() -> None:
    octets = grouped(8, 12, n=16)  # C(15, 8) sets: too many to score one by one
    assert best_gpus(octets, tuple(range(1, 16)), 8) == tuple(range(8, 16))
    assert best_gpus(octets, tuple(range(16)), 8) == tuple(range(8))


def test_split_gpus_groups_linked_gpus_together() -> None:
    assert split_gpus(PAIRS, (1, 2, 3, 4), 2) == [(2, 3), (1, 4)]
    assert split_gpus(None, (1, 2, 3, 4), 2) == [(1, 2), (3, 4)]
    assert split_gpus(QUADS, (2, 3, 4, 5, 6, 7), 4) == [(4, 5, 6, 7), (2, 3)]
    assert split_gpus(PAIRS, (), 2) == []
