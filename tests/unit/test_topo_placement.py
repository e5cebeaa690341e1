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
from minislurm.topology import TREE, Switch, Topology

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


def test_a_job_no_leaf_holds_is_spread_over_the_leaves() -> None:
    got = placed(run([job(1, 12)]))[1]
    # Taken from the leaves in turn: three nodes of each of the four.
    assert sorted(got, key=NAMES.index) == got
    assert {leaf: len([n for n in got if n in s.nodes]) for s in LEAVES for leaf in [s.name]} == {
        "leaf1": 3,
        "leaf2": 3,
        "leaf3": 3,
        "leaf4": 3,
    }


def test_switches_bound_the_leaves_of_a_spread_job() -> None:
    got = placed(run([job(1, 12, switches=2, until=NOW + 600)]))[1]
    assert len(leaves_of(got)) == 2


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
