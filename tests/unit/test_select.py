"""Tests of ctld.sched.select: where a job's tasks, CPUs, memory and GPUs go."""

from __future__ import annotations

import pytest
from plan_checks import check_allocation

from ctld.sched.select import select_nodes, task_capacity
from minislurm.model import Allocation, NodeView, ResourceRequest


def node(
    name: str,
    cpus: int = 8,
    mem: int = 8000,
    gpus: int = 8,
    free_cpus: int | None = None,
    free_mem: int | None = None,
    free_gpus: tuple[int, ...] | None = None,
    usable: bool = True,
    weight: int = 1,
) -> NodeView:
    """A node like the reference cluster's (8 CPUs, 8000 MiB, 8 GPUs), idle unless told."""
    return NodeView(
        name=name,
        cpus=cpus,
        mem=mem,
        gpus=tuple(range(gpus)),
        free_cpus=cpus if free_cpus is None else free_cpus,
        free_mem=mem if free_mem is None else free_mem,
        free_gpus=tuple(range(gpus)) if free_gpus is None else free_gpus,
        usable=usable,
        weight=weight,
    )


def select(req: ResourceRequest, nodes: list[NodeView]) -> Allocation | None:
    """select_nodes, with the allocation checked against the request when there is one."""
    alloc = select_nodes(req, nodes)
    if alloc is not None:
        check_allocation(req, alloc, {n.name: n for n in nodes})
    return alloc


def shape(alloc: Allocation | None) -> list[tuple[str, int, int, tuple[int, ...]]] | None:
    """(node, ntasks, cpus, gpus) per node, for compact expectations."""
    if alloc is None:
        return None
    return [(p.node, p.ntasks, p.cpus, p.gpus) for p in alloc.nodes]


# ---------------------------------------------------------------- task_capacity


@pytest.mark.parametrize(
    ("req", "view", "expected"),
    [
        (ResourceRequest(), node("n1"), 8),
        (ResourceRequest(cpus_per_task=3), node("n1"), 2),
        (ResourceRequest(cpus_per_task=2), node("n1", free_cpus=5), 2),
        (ResourceRequest(), node("n1", free_cpus=0), 0),
        (ResourceRequest(), node("n1", usable=False), 0),
        (ResourceRequest(exc_nodes=("n1",)), node("n1"), 0),
        (ResourceRequest(exc_nodes=("n2",)), node("n1"), 8),
        (ResourceRequest(gpus_per_node=4), node("n1", free_gpus=(0, 1, 2)), 0),
        (ResourceRequest(gpus_per_node=4), node("n1", free_gpus=(4, 5, 6, 7)), 8),
        (ResourceRequest(gpus_per_task=1), node("n1", free_gpus=(1, 2, 3)), 3),
        (ResourceRequest(gpus_per_task=2), node("n1"), 4),
        (ResourceRequest(gpus_per_task=1), node("n1", gpus=0), 0),
        (ResourceRequest(gpus=4), node("n1", free_gpus=(0, 1, 2)), 0),
        (ResourceRequest(mem_per_node=4000), node("n1", free_mem=3999), 0),
        (ResourceRequest(mem_per_node=4000), node("n1", free_mem=4000), 8),
        (ResourceRequest(mem_per_cpu=1000), node("n1", free_mem=3500), 3),
        (ResourceRequest(mem_per_cpu=1000, cpus_per_task=2), node("n1", free_mem=5000), 2),
        (ResourceRequest(ntasks_per_node=4), node("n1"), 4),
        (ResourceRequest(ntasks_per_node=4), node("n1", free_cpus=3), 3),
        (ResourceRequest(ntasks_per_node=4, cpus_per_task=2), node("n1"), 4),
        (ResourceRequest(ntasks_per_node=4, cpus_per_task=3), node("n1"), 2),
    ],
)
def test_task_capacity_counts_tasks_that_fit_in_free_resources(
    req: ResourceRequest, view: NodeView, expected: int
) -> None:
    assert task_capacity(req, view) == expected


# ---------------------------------------------------------------- single node


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        (ResourceRequest(), [("n1", 1, 1, ())]),
        (ResourceRequest(ntasks=4, max_nodes=4), [("n1", 4, 4, ())]),
        (ResourceRequest(ntasks=2, cpus_per_task=3, max_nodes=2), [("n1", 2, 6, ())]),
        (ResourceRequest(gpus_per_node=4), [("n1", 1, 1, (0, 1, 2, 3))]),
        (ResourceRequest(ntasks=4, gpus_per_task=1), [("n1", 4, 4, (0, 1, 2, 3))]),
        (ResourceRequest(ntasks=2, gpus_per_task=3), [("n1", 2, 2, (0, 1, 2, 3, 4, 5))]),
        (ResourceRequest(gpus=2), [("n1", 1, 1, (0, 1))]),
        (ResourceRequest(ntasks=4, ntasks_per_node=4), [("n1", 4, 4, ())]),
    ],
)
def test_select_places_a_one_node_request_on_the_lowest_free_resources(
    req: ResourceRequest, expected: list[tuple[str, int, int, tuple[int, ...]]]
) -> None:
    assert shape(select(req, [node("n1")])) == expected


@pytest.mark.parametrize(
    ("req", "free_gpus", "expected_gpus"),
    [
        (ResourceRequest(gpus_per_node=2), (3, 5, 6), (3, 5)),
        (ResourceRequest(gpus_per_task=1, ntasks=2), (1, 7), (1, 7)),
        (ResourceRequest(gpus=3), (0, 2, 4, 6), (0, 2, 4)),
    ],
)
def test_select_gives_the_lowest_free_gpu_indices(
    req: ResourceRequest, free_gpus: tuple[int, ...], expected_gpus: tuple[int, ...]
) -> None:
    alloc = select(req, [node("n1", free_gpus=free_gpus)])
    assert alloc is not None
    assert alloc.nodes[0].gpus == expected_gpus


@pytest.mark.parametrize(
    ("req", "expected_mem"),
    [
        (ResourceRequest(mem_per_node=3000), 3000),
        (ResourceRequest(mem_per_cpu=500, ntasks=4, max_nodes=4), 2000),
        (ResourceRequest(mem_per_cpu=500, ntasks=2, cpus_per_task=3, max_nodes=2), 3000),
        (ResourceRequest(), 0),
    ],
)
def test_select_allocates_memory_per_node_or_per_cpu(
    req: ResourceRequest, expected_mem: int
) -> None:
    alloc = select(req, [node("n1")])
    assert alloc is not None
    assert alloc.nodes[0].mem == expected_mem


@pytest.mark.parametrize(
    ("req", "view"),
    [
        (ResourceRequest(mem_per_node=9000), node("n1")),
        (ResourceRequest(mem_per_node=4000), node("n1", free_mem=2000)),
        (ResourceRequest(mem_per_cpu=2000, ntasks=5, max_nodes=1), node("n1")),
        (ResourceRequest(ntasks=9, max_nodes=1), node("n1")),
        (ResourceRequest(cpus_per_task=9), node("n1")),
        (ResourceRequest(gpus_per_node=9), node("n1")),
        (ResourceRequest(gpus=9), node("n1")),
        (ResourceRequest(ntasks=5, gpus_per_task=2, max_nodes=1), node("n1")),
        (ResourceRequest(gpus_per_node=1), node("n1", free_gpus=())),
        (ResourceRequest(), node("n1", usable=False)),
        (ResourceRequest(exc_nodes=("n1",)), node("n1")),
        (ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2), node("n1")),
        (ResourceRequest(req_nodes=("n9",)), node("n1")),
    ],
)
def test_select_returns_none_when_the_request_does_not_fit(
    req: ResourceRequest, view: NodeView
) -> None:
    assert select(req, [view]) is None


# ---------------------------------------------------------------- packing


def test_select_packs_onto_the_busiest_node_that_fits_so_a_whole_node_stays_free() -> None:
    nodes = [node("n1"), node("n2", free_cpus=2, free_gpus=(6, 7)), node("n3")]
    alloc = select(ResourceRequest(gpus_per_node=1), nodes)
    assert shape(alloc) == [("n2", 1, 1, (6,))]


def test_select_skips_the_busiest_node_when_it_cannot_fit_the_job() -> None:
    nodes = [node("n1"), node("n2", free_cpus=1, free_gpus=(7,))]
    alloc = select(ResourceRequest(gpus_per_node=2), nodes)
    assert shape(alloc) == [("n1", 1, 1, (0, 1))]


def test_select_skips_a_busier_node_too_small_for_every_task_of_a_one_node_job() -> None:
    # n2 sorts first (no free GPU) and fits one of the two tasks: the job goes to n1 whole.
    nodes = [node("n1", cpus=4, free_cpus=2, free_gpus=(3,)), node("n2", free_cpus=1, free_gpus=())]
    alloc = select(ResourceRequest(ntasks=2), nodes)
    assert shape(alloc) == [("n1", 2, 2, ())]
    # On two nodes at most, the second must take every task left: the busiest that can.
    nodes = [node("n1", free_cpus=1, free_gpus=()), node("n2", free_cpus=1, free_gpus=(7,))]
    nodes += [
        node("n3", free_cpus=2, free_gpus=(6, 7)),
        node("n4", free_cpus=3, free_gpus=(5, 6, 7)),
    ]
    alloc = select(ResourceRequest(ntasks=3, max_nodes=2), nodes)
    assert alloc is not None and alloc.node_names == ("n1", "n3")


@pytest.mark.parametrize(
    ("free_cpus", "expected"),
    [((8, 3, 5), "n2"), ((2, 8, 8), "n1"), ((8, 8, 7), "n3")],
)
def test_select_prefers_the_node_with_fewest_free_cpus_among_equals(
    free_cpus: tuple[int, int, int], expected: str
) -> None:
    nodes = [node(f"n{i + 1}", gpus=0, free_cpus=c) for i, c in enumerate(free_cpus)]
    alloc = select(ResourceRequest(), nodes)
    assert alloc is not None
    assert alloc.node_names == (expected,)


def test_select_prefers_lower_weight_over_busier_nodes() -> None:
    nodes = [node("n1", weight=1), node("n2", free_cpus=1, weight=5)]
    alloc = select(ResourceRequest(), nodes)
    assert alloc is not None
    assert alloc.node_names == ("n1",)


# ---------------------------------------------------------------- several nodes


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        # srun -N2 -n4 on two idle nodes: 3 tasks on n1, 1 on n2 (srun_N2_n4_procid.txt)
        (
            ResourceRequest(min_nodes=2, max_nodes=2, ntasks=4),
            [("n1", 3, 3, ()), ("n2", 1, 1, ())],
        ),
        (ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2), [("n1", 1, 1, ()), ("n2", 1, 1, ())]),
        # sbatch -N2 --ntasks-per-node=4 --gres=gpu:4 (env_batch_N2_tpn4_gres4.txt)
        (
            ResourceRequest(min_nodes=2, max_nodes=2, ntasks=8, ntasks_per_node=4, gpus_per_node=4),
            [("n1", 4, 4, (0, 1, 2, 3)), ("n2", 4, 4, (0, 1, 2, 3))],
        ),
        (
            ResourceRequest(min_nodes=2, max_nodes=2, ntasks=4, ntasks_per_node=2, cpus_per_task=2),
            [("n1", 2, 4, ()), ("n2", 2, 4, ())],
        ),
        # -n 12 without -N: as few nodes as fit, first one full
        (ResourceRequest(max_nodes=12, ntasks=12), [("n1", 8, 8, ()), ("n2", 4, 4, ())]),
        (
            ResourceRequest(max_nodes=12, ntasks=12, gpus_per_task=1),
            [("n1", 8, 8, tuple(range(8))), ("n2", 4, 4, (0, 1, 2, 3))],
        ),
        # --gpus=12 over two nodes: the first node's GPUs, then the rest on the second
        (
            ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2, gpus=12),
            [("n1", 1, 1, tuple(range(8))), ("n2", 1, 1, (0, 1, 2, 3))],
        ),
    ],
)
def test_select_spreads_tasks_over_several_nodes(
    req: ResourceRequest, expected: list[tuple[str, int, int, tuple[int, ...]]]
) -> None:
    assert shape(select(req, [node("n1"), node("n2")])) == expected


def test_select_uses_no_more_nodes_than_max_nodes() -> None:
    req = ResourceRequest(min_nodes=1, max_nodes=2, ntasks=12)
    nodes = [node("n1", free_cpus=4), node("n2", free_cpus=4), node("n3", free_cpus=4)]
    assert select(req, nodes) is None


def test_select_uses_min_nodes_even_when_one_node_could_hold_every_task() -> None:
    req = ResourceRequest(min_nodes=3, max_nodes=3, ntasks=3)
    alloc = select(req, [node("n1"), node("n2"), node("n3")])
    assert alloc is not None
    assert sorted(alloc.node_names) == ["n1", "n2", "n3"]


def test_select_with_ntasks_per_node_needs_that_many_slots_on_every_node() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=8, ntasks_per_node=4)
    assert select(req, [node("n1"), node("n2", free_cpus=3)]) is None
    alloc = select(req, [node("n1"), node("n2", free_cpus=3), node("n3", free_cpus=4)])
    assert alloc is not None
    assert sorted(alloc.node_names) == ["n1", "n3"]


# ---------------------------------------------------------------- required and excluded


def test_select_includes_required_nodes_even_when_others_are_busier() -> None:
    req = ResourceRequest(req_nodes=("n1",))
    alloc = select(req, [node("n1"), node("n2", free_cpus=1)])
    assert alloc is not None
    assert alloc.node_names == ("n1",)


def test_select_adds_nodes_beyond_the_required_ones_up_to_min_nodes() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2, req_nodes=("n3",))
    alloc = select(req, [node("n1"), node("n2", free_cpus=1), node("n3")])
    assert alloc is not None
    assert set(alloc.node_names) == {"n2", "n3"}


@pytest.mark.parametrize(
    "required",
    [node("n1", usable=False), node("n1", free_cpus=0), node("n1", free_gpus=())],
)
def test_select_fails_when_a_required_node_cannot_take_the_job(required: NodeView) -> None:
    req = ResourceRequest(req_nodes=("n1",), gpus_per_node=1)
    assert select(req, [required, node("n2")]) is None


def test_select_never_uses_excluded_nodes() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2, exc_nodes=("n2",))
    alloc = select(req, [node("n1"), node("n2", free_cpus=1), node("n3")])
    assert alloc is not None
    assert set(alloc.node_names) == {"n1", "n3"}


def test_select_skips_unusable_nodes() -> None:
    alloc = select(ResourceRequest(), [node("n1", usable=False, free_cpus=1), node("n2")])
    assert alloc is not None
    assert alloc.node_names == ("n2",)


def test_an_exclusive_job_takes_only_an_idle_node_and_all_of_it() -> None:
    # Reference: sbatch --exclusive got NumCPUs=8 and CUDA_VISIBLE_DEVICES=0,...,7.
    req = ResourceRequest(exclusive=True)
    busy = node("n1", free_cpus=7, free_gpus=tuple(range(8)))
    partly = node("n2", free_gpus=tuple(range(1, 8)))
    assert task_capacity(req, busy) == task_capacity(req, partly) == 0
    assert shape(select_nodes(req, [busy, partly, node("n3")])) == [("n3", 1, 8, tuple(range(8)))]
    assert select_nodes(req, [busy, partly]) is None


def test_an_exclusive_job_holds_every_node_it_spans() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2, exclusive=True, mem_per_cpu=100)
    alloc = select_nodes(req, [node("n1"), node("n2", cpus=4, gpus=2)])
    assert shape(alloc) == [("n1", 1, 8, tuple(range(8))), ("n2", 1, 4, (0, 1))]
    assert alloc is not None
    assert [p.mem for p in alloc.nodes] == [800, 400]


# ---------------------------------------------------------------- known bugs


def test_select_places_exactly_ntasks_when_ntasks_per_node_is_a_maximum() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=6, ntasks_per_node=4)
    alloc = select_nodes(req, [node("n1"), node("n2")])
    assert alloc is not None
    assert sum(p.ntasks for p in alloc.nodes) == 6
    assert sorted(p.ntasks for p in alloc.nodes) == [2, 4]


def test_select_finds_room_for_a_gpu_total_on_another_node() -> None:
    req = ResourceRequest(min_nodes=1, max_nodes=4, ntasks=4, gpus=4)
    alloc = select_nodes(req, [node("n1", free_gpus=(7,)), node("n2")])
    assert alloc is not None
    assert alloc.gpus == 4


def test_select_lists_allocated_nodes_in_configuration_order() -> None:
    req = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=2)
    alloc = select_nodes(req, [node("n1"), node("n2", free_cpus=4)])
    assert alloc is not None
    assert alloc.node_names == ("n1", "n2")
