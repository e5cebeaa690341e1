"""Tests of placement on a tree of switches (ctld.sched.topo) through whole passes.

32 nodes of 8 CPUs under four leaf switches of 8 and one spine. Jobs take
whole nodes (8 CPUs per task) so that placements are plain to read. Every
pass is checked with :func:`plan_checks.check_plan` (STYLE.md #18).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from plan_checks import check_plan

from ctld.sched.knobs import BUILTIN, SchedConfig
from ctld.sched.plan import plan, plan_event
from ctld.sched.timeline import build_timeline
from ctld.sched.topo import _Within
from minislurm.model import (
    Allocation,
    NodeAlloc,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    ResourceRequest,
    RunningJob,
    Snapshot,
)
from minislurm.topology import TREE, Block, Switch, Topology

NOW = 1_000_000.0
NAMES = [f"n{i}" for i in range(1, 33)]
LEAVES = tuple(Switch(f"leaf{k + 1}", 0, tuple(NAMES[8 * k : 8 * k + 8])) for k in range(4))
SPINE = Switch("spine", 1, tuple(NAMES), tuple(s.name for s in LEAVES))
TREE_TOPOLOGY = Topology(TREE, switches=(*LEAVES, SPINE))
BACKFILL = SchedConfig(topology=TREE_TOPOLOGY)
PART = PartitionView("p", tuple(NAMES))


def idle(name: str) -> NodeView:
    return NodeView(name, 8, 8000, (), 8, 8000, (), True)


def busy(name: str) -> NodeView:
    return NodeView(name, 8, 8000, (), 0, 8000, (), True)


def job(job_id: int, nodes: int, switches: int = 0, until: float = 0.0) -> PendingJob:
    req = ResourceRequest(
        min_nodes=nodes, max_nodes=nodes, ntasks=nodes, cpus_per_task=8, nodes_set=True
    )
    return PendingJob(
        job_id,
        "p",
        1000 - job_id,
        NOW - 100,
        replace(req, switches=switches),
        time_limit=60,
        switch_until=until,
    )


def holding(job_id: int, names: list[str], minutes: int = 60) -> RunningJob:
    parts = tuple(NodeAlloc(n, 8, 0, (), 1) for n in names)
    return RunningJob(job_id, Allocation(parts), NOW + minutes * 60)


def cluster(taken: dict[int, list[str]] | None = None, minutes: int = 60) -> tuple:
    """The nodes (those ``taken`` busy) and the running jobs holding them."""
    taken = taken or {}
    held = {n for names in taken.values() for n in names}
    nodes = tuple(busy(n) if n in held else idle(n) for n in NAMES)
    running = tuple(holding(i, names, minutes) for i, names in taken.items())
    return nodes, running


def run(
    pending: list[PendingJob],
    taken: dict[int, list[str]] | None = None,
    cfg: SchedConfig = BACKFILL,
    part: PartitionView = PART,
) -> Plan:
    nodes, running = cluster(taken)
    snapshot = Snapshot(nodes, (part,), tuple(pending), running)
    decided = plan(snapshot, NOW, cfg)
    check_plan(snapshot, decided, NOW)
    return decided


def placed(decided: Plan) -> dict[int, list[str]]:
    return {s.job_id: list(s.allocation.node_names) for s in decided.starts}


def leaves_of(names: list[str]) -> set[str]:
    return {leaf.name for leaf in LEAVES for n in names if n in leaf.nodes}


def test_four_eight_node_jobs_get_a_leaf_each() -> None:
    # n1 is busy: leaf1 can no longer hold eight, and the first job goes to leaf2.
    decided = run([job(i, 8) for i in range(1, 5)], {90: ["n1"]})
    got = placed(decided)
    assert got == {1: NAMES[8:16], 2: NAMES[16:24], 3: NAMES[24:32]}
    assert decided.reasons == {4: "Resources"}


def test_the_fullest_leaf_that_fits_is_chosen() -> None:
    # leaf1 has 2 free, leaf2 3, leaf3 and leaf4 8: a 3-node job goes to leaf2, a 2-node one
    # to leaf1; the spine is never needed.
    taken = {90: NAMES[0:6], 91: NAMES[8:13]}
    got = placed(run([job(1, 3), job(2, 2)], taken))
    assert got == {1: NAMES[13:16], 2: NAMES[6:8]}


def per_leaf(names: list[str]) -> dict[str, int]:
    return {s.name: k for s in LEAVES if (k := len([n for n in names if n in s.nodes]))}


def test_a_job_no_leaf_holds_takes_the_fewest_leaves_best_fit() -> None:
    # Free: leaf1 8, leaf2 4, leaf3 6, leaf4 8. Twelve nodes: no leaf holds them; the
    # roomiest leaf first (leaf1, the first of the two with 8), then the one that holds
    # the other four with the fewest free (leaf2), not a spread over every leaf.
    taken = {90: NAMES[8:12], 91: NAMES[16:18]}
    got = placed(run([job(1, 12)], taken))[1]
    assert per_leaf(got) == {"leaf1": 8, "leaf2": 4}
    # Nothing busy: two whole leaves, the first two.
    assert per_leaf(placed(run([job(1, 12)]))[1]) == {"leaf1": 8, "leaf2": 4}
    # Twenty nodes: three leaves, the last one best fit for the four left.
    got = placed(run([job(1, 20)], taken))[1]
    assert per_leaf(got) == {"leaf1": 8, "leaf4": 8, "leaf2": 4}


def test_switches_bound_the_leaves_of_a_job_no_leaf_holds() -> None:
    got = placed(run([job(1, 12, switches=2, until=NOW + 600)]))[1]
    assert len(leaves_of(got)) == 2
    # Free: leaf1 8, leaf2 4, leaf3 6, leaf4 6: twenty nodes fit under three leaves only
    # as leaf1 and the two of six, which the rule takes; two leaves cannot hold them.
    taken = {90: NAMES[8:12], 91: NAMES[16:18], 92: NAMES[24:26]}
    got = placed(run([job(1, 20, switches=3, until=NOW + 600)], taken))[1]
    assert per_leaf(got) == {"leaf1": 8, "leaf3": 6, "leaf4": 6}
    decided = run([job(1, 20, switches=2, until=NOW + 600)], taken)
    assert not decided.starts and decided.reasons[1] == "Resources"


def test_the_bound_counts_the_tasks_of_only_as_many_nodes_as_the_job_may_take() -> None:
    # Four nodes with 4 of their 8 CPUs free: 16 one-CPU tasks in all, 4 on any one node.
    nodes = tuple(NodeView(n, 8, 8000, (), 4, 8000, (), True) for n in NAMES[:4])
    timeline = build_timeline(nodes, (), NOW, 60, NOW + 86400)
    partial = timeline.avail[0] & ~timeline.idle[0]
    assert partial.bit_count() == 4

    def bound(nodes: int, tasks: int) -> bool:
        req = ResourceRequest(min_nodes=nodes, max_nodes=nodes, ntasks=tasks)
        within = _Within(timeline, req, NOW, NOW + 3600, 0, partial, 4, lambda _: True)
        return within.holds(partial)

    assert not bound(1, 8)  # one node must fit all eight: none does
    assert bound(2, 8) and not bound(2, 9)  # the two roomiest nodes: 8 tasks
    assert bound(4, 16) and not bound(4, 17)


DRAGONFLY = SchedConfig(topology=replace(TREE_TOPOLOGY, dragonfly=True))


def test_with_dragonfly_a_job_no_leaf_holds_is_spread_over_the_leaves() -> None:
    got = placed(run([job(1, 12)], cfg=DRAGONFLY))[1]
    # Taken from the leaves in turn: three nodes of each of the four.
    assert sorted(got, key=NAMES.index) == got
    assert per_leaf(got) == {"leaf1": 3, "leaf2": 3, "leaf3": 3, "leaf4": 3}
    # --switches bounds the spread too: the two roomiest leaves.
    got = placed(run([job(1, 12, switches=2, until=NOW + 600)], cfg=DRAGONFLY))[1]
    assert len(leaves_of(got)) == 2
    # A job one leaf holds goes there all the same.
    assert per_leaf(placed(run([job(1, 8)], {90: ["n1"]}, DRAGONFLY))[1]) == {"leaf2": 8}


def test_a_job_waits_for_one_leaf_while_its_wait_lasts() -> None:
    # Every leaf has one busy node, until an hour from now: 28 nodes free, no leaf of 8.
    taken = {90 + k: [LEAVES[k].nodes[0]] for k in range(4)}
    decided = run([job(1, 8, switches=1, until=NOW + 60)], taken)
    assert not decided.starts
    assert decided.reasons[1] == "Resources"
    # It is reserved a whole leaf when the first busy node frees.
    (reserved,) = decided.reservations
    assert leaves_of(list(reserved.allocation.node_names)) == {"leaf1"}
    assert decided.start_times[1] == reserved.start > NOW
    # A job behind it that fits now, and runs past that start, is backfilled around it.
    decided = run(
        [job(1, 8, switches=1, until=NOW + 60), replace(job(2, 4), time_limit=120)], taken
    )
    assert set(placed(decided)[2]).isdisjoint(reserved.allocation.node_names)


def test_once_the_wait_is_over_the_job_starts_anywhere() -> None:
    taken = {90 + k: [LEAVES[k].nodes[0]] for k in range(4)}
    got = placed(run([job(1, 8, switches=1, until=NOW - 1)], taken))[1]
    assert len(leaves_of(got)) > 1
    # Without a switch count it never waited.
    assert len(leaves_of(placed(run([job(1, 8)], taken))[1])) > 1


def test_the_event_pass_and_builtin_place_by_the_tree_too() -> None:
    nodes, running = cluster({90: ["n1"]})
    snapshot = Snapshot(nodes, (PART,), (job(1, 8),), running)
    for decided in (
        plan_event(snapshot, NOW, BACKFILL),
        plan(snapshot, NOW, replace(BUILTIN, topology=TREE_TOPOLOGY)),
    ):
        check_plan(snapshot, decided, NOW)
        assert placed(decided) == {1: NAMES[8:16]}


def test_nodes_under_no_switch_are_never_given() -> None:
    half = Topology(TREE, switches=LEAVES[:2])  # n17-n32 under no switch
    cfg = replace(BACKFILL, topology=half)
    got = placed(run([job(1, 8), job(2, 8), job(3, 1)], cfg=cfg))
    assert got == {1: NAMES[0:8], 2: NAMES[8:16]}
    # Two leaves without a common switch: no job spans them.
    assert placed(run([job(4, 9)], cfg=cfg)) == {}


def test_topo_optional_places_only_the_jobs_that_ask() -> None:
    cfg = replace(BACKFILL, topology=replace(TREE_TOPOLOGY, optional=True))
    taken = {90: ["n1"]}
    assert placed(run([job(1, 8)], taken, cfg)) == {1: NAMES[1:9]}  # packed, flat
    assert placed(run([job(1, 8, switches=1, until=NOW + 60)], taken, cfg)) == {1: NAMES[8:16]}


@pytest.mark.parametrize("count", [1, 2, 5, 8, 16, 32])
def test_without_topology_the_pass_is_unchanged_for_whole_leaves(count: int) -> None:
    flat = placed(run([job(1, count)], cfg=SchedConfig()))
    tree = placed(run([job(1, count)]))
    assert len(flat[1]) == len(tree[1]) == count


# ---------------------------------------------------------------- blocks

BLOCKS = Topology(
    "topology/block",
    blocks=tuple(Block(f"b{k + 1}", tuple(NAMES[8 * k : 8 * k + 8])) for k in range(4)),
    block_sizes=(8, 16, 32),
)
IN_BLOCKS = SchedConfig(topology=BLOCKS)


def blocked(job_id: int, nodes: int, segment: int = 0, exclusive: bool = False) -> PendingJob:
    job_ = job(job_id, nodes)
    req = replace(job_.request, segment=segment, exclusive_topo=exclusive, exclusive=exclusive)
    return replace(job_, request=req)


def blocks_of(names: list[str]) -> list[str]:
    return sorted({b.name for b in BLOCKS.blocks for n in names if n in b.nodes})


def test_segments_take_whole_base_blocks_with_room() -> None:
    assert blocks_of(placed(run([blocked(1, 16, segment=8)], cfg=IN_BLOCKS))[1]) == ["b1", "b2"]
    # Two nodes of b1 busy: no segment of 8 fits there any more.
    got = placed(run([blocked(1, 16, segment=8)], {90: NAMES[:2]}, IN_BLOCKS))[1]
    assert blocks_of(got) == ["b2", "b3"] and len(got) == 16
    # Segments of 4: the fullest blocks first, b1 (six free) takes one.
    got = placed(run([blocked(1, 8, segment=4)], {90: NAMES[:2]}, IN_BLOCKS))[1]
    assert blocks_of(got) == ["b1", "b2"]


def test_partly_used_blocks_fill_before_clean_ones() -> None:
    # b3 has three busy nodes: a 4-node job goes there, not to a clean block.
    got = placed(run([blocked(1, 4)], {90: NAMES[16:19]}, IN_BLOCKS))[1]
    assert got == NAMES[19:23]
    # Twelve nodes: the smallest level that holds them is a pair of blocks, the fullest pair.
    got = placed(run([blocked(1, 12)], {90: NAMES[16:19]}, IN_BLOCKS))[1]
    assert blocks_of(got) == ["b3", "b4"]


def test_a_job_larger_than_a_block_stays_in_one_block_of_the_next_level() -> None:
    # b2 and b3 half busy: a 10-node job cannot take b2 and b3 (not one block of 16).
    taken = {90: NAMES[8:12], 91: NAMES[16:20]}
    got = placed(run([blocked(1, 10)], taken, IN_BLOCKS))[1]
    assert blocks_of(got) in (["b1", "b2"], ["b3", "b4"])


def test_exclusive_topo_takes_clean_blocks_and_keeps_the_rest_of_them() -> None:
    taken = {90: NAMES[:8], 91: NAMES[16:17]}  # b1 is full, b3 not clean
    got = placed(run([blocked(1, 6, exclusive=True)], taken, IN_BLOCKS))[1]
    assert blocks_of(got) == ["b2"]
    # While it runs, the two nodes of b2 it left are no one else's: a one-node job
    # would fill them first (the fullest block).
    nodes, running = cluster({**taken, 1: got})
    kept = tuple(n for n in BLOCKS.blocks[1].nodes if n not in got)
    running = (*running[:2], replace(running[2], kept=kept))
    snapshot = Snapshot(nodes, (PART,), (blocked(2, 1), blocked(3, 8)), running)
    decided = plan(snapshot, NOW, IN_BLOCKS)
    check_plan(snapshot, decided, NOW)
    assert blocks_of(placed(decided)[2]) == ["b3"]
    assert blocks_of(placed(decided)[3]) == ["b4"]
    # Without them kept, the one-node job would go there.
    free = replace(snapshot, running=(*running[:2], replace(running[2], kept=())))
    assert blocks_of(placed(plan(free, NOW, IN_BLOCKS))[2]) == ["b2"]


def test_nodes_in_no_block_are_never_given() -> None:
    half = replace(BLOCKS, blocks=BLOCKS.blocks[:2], block_sizes=(8, 16))
    got = placed(run([blocked(1, 16), blocked(2, 1)], cfg=replace(IN_BLOCKS, topology=half)))
    assert got == {1: NAMES[:16]}
