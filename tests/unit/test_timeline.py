"""Tests of the resource-time map: placement per group of alike nodes is ``select_nodes``' own.

Imports ctld.sched and minislurm; test_plan's request strategy.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_plan import requests

from ctld.sched.nodetable import bit_indices, lowest_bits
from ctld.sched.select import select_nodes
from ctld.sched.timeline import Timeline, build_timeline
from ctld.sched.windows import WindowStates
from minislurm.model import Allocation, NodeAlloc, NodeView, ResourceRequest, RunningJob

NOW = 6000.0
NAMES = [f"g{i}" for i in range(1, 11)]
SHAPES = [(8, 8000, 4), (16, 16000, 8)]  # CPUs, MiB, GPUs
ENDS = [NOW + 60, NOW + 600, NOW + 3600, float("inf")]


@st.composite
def busy_alike_nodes(draw: st.DrawFn) -> tuple[list[NodeView], list[RunningJob]]:
    """Up to ten nodes of two kinds, each holding up to two running jobs of a few shapes."""
    nodes: list[NodeView] = []
    running: list[RunningJob] = []
    for name in NAMES[: draw(st.integers(1, len(NAMES)))]:
        cpus, mem, gpus = draw(st.sampled_from(SHAPES))
        free_cpus, free_mem, free_gpus = cpus, mem, list(range(gpus))
        for _ in range(draw(st.integers(0, 2))):
            c, m, g = draw(st.sampled_from([(2, 1000, 0), (4, 2000, 1), (4, 1000, 2), (8, 0, 0)]))
            if c > free_cpus or m > free_mem or g > len(free_gpus):
                continue
            taken = tuple(free_gpus[:g])
            free_cpus, free_mem, free_gpus = free_cpus - c, free_mem - m, free_gpus[g:]
            part = NodeAlloc(name, c, m, taken, 1)
            end = draw(st.sampled_from(ENDS))
            running.append(RunningJob(100 + len(running), Allocation((part,)), end))
        gpu_ids = tuple(range(gpus))
        nodes.append(
            NodeView(name, cpus, mem, gpu_ids, free_cpus, free_mem, tuple(free_gpus), True)
        )
    return nodes, running


def check_slots(
    timeline: Timeline, req: ResourceRequest, duration: float
) -> list[tuple[float, Allocation]]:
    """At every slot, place (per group) and select_nodes (per node) choose alike; the choices."""
    table = timeline.table
    offered = table.usable & ~table.mask(req.exc_nodes)
    found = []
    for k, start in enumerate(timeline.begins):
        end = timeline.end_of(start, duration)
        free = whole = offered
        j = k
        while j < len(timeline.begins) and timeline.begins[j] < end:
            free &= timeline.avail[j]
            whole &= timeline.idle[j]
            j += 1
        partial = free & ~whole
        # The reference reads the nodes afresh, without what earlier maps have kept.
        fresh = replace(timeline, windows=WindowStates(timeline.table), lineage=())
        expected = select_nodes(req, fresh.views(start, end, whole, partial, req.max_nodes))
        assert timeline.place(req, start, end, whole, partial, req.max_nodes) == expected
        if expected is not None:
            found.append((start, expected))
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    busy_alike_nodes(),
    st.lists(requests(NAMES), min_size=1, max_size=4),
    st.sampled_from([60.0, 900.0, 7200.0, float("inf")]),
)
def test_partly_used_alike_nodes_are_placed_as_select_nodes_places_them(
    cluster: tuple[list[NodeView], list[RunningJob]],
    reqs: list[ResourceRequest],
    duration: float,
) -> None:
    """Along maps derived by reservations, and back on the first one, the choices agree."""
    nodes, running = cluster
    first = timeline = build_timeline(nodes, running, NOW, 60, NOW + 86400)
    for req in reqs:
        req = replace(req, req_nodes=())
        for start, alloc in check_slots(timeline, req, duration)[:1]:
            timeline = timeline.reserve(alloc, start, timeline.end_of(start, duration))
    check_slots(first, replace(reqs[0], req_nodes=()), duration)


@given(st.integers(0, 1 << 300), st.integers(-1, 310))
def test_lowest_bits_are_the_first_set_bits(mask: int, count: int) -> None:
    expected = sum(1 << i for i in bit_indices(mask, max(count, 0)))
    assert lowest_bits(mask, count) == expected
