"""Which GPUs of a node a job or step gets when the node's GPUs have a link map."""

from __future__ import annotations

from dataclasses import replace

import pytest
from plan_checks import check_plan

from ctld import nodes as nodeops
from ctld.sched.knobs import BUILTIN, SchedConfig
from ctld.sched.nodetable import table_of
from ctld.sched.plan import plan
from ctld.sched.select import select_alike, select_nodes
from ctld.steps import place_step
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest
from minislurm.gpulinks import GpuLinks
from minislurm.model import (
    Allocation,
    Job,
    Node,
    NodeAlloc,
    NodeView,
    PartitionView,
    PendingJob,
    ResourceRequest,
    Snapshot,
)
from minislurm.requests import Registration, StepRequest
from minislurm.states import JobState, NodeState


def linked(pairs: list[tuple[int, int]], links: int = 4, n: int = 8) -> GpuLinks:
    """``n`` GPUs joined by ``links`` NVLinks where ``pairs`` say, by PCIe elsewhere."""
    joined = {frozenset(p) for p in pairs}
    return GpuLinks(
        tuple(range(n)),
        tuple(
            tuple(-1 if a == b else links if {a, b} in joined else 0 for b in range(n))
            for a in range(n)
        ),
    )


QUADS = linked([(a, b) for q in (0, 4) for a in range(q, q + 4) for b in range(a + 1, q + 4)])
PAIRS = linked([(0, 1), (2, 3), (4, 5), (6, 7)])
CROSS = linked([(0, 4), (1, 5), (2, 6), (3, 7)])  # GPU i is linked to GPU i + 4 alone


def view(
    name: str, links: GpuLinks | None, free_gpus: tuple[int, ...] = tuple(range(8))
) -> NodeView:
    return NodeView(name, 8, 8000, tuple(range(8)), 8, 8000, free_gpus, True, gpu_links=links)


def gpus(alloc: Allocation | None) -> dict[str, tuple[int, ...]]:
    assert alloc is not None
    return {p.node: p.gpus for p in alloc.nodes}


@pytest.mark.parametrize(
    ("links", "free", "count", "expected"),
    [
        (QUADS, tuple(range(8)), 4, (0, 1, 2, 3)),
        (QUADS, (4, 5, 6, 7), 4, (4, 5, 6, 7)),
        (QUADS, (3, 4, 5, 6, 7), 4, (4, 5, 6, 7)),  # not the lowest, 3-6
        (QUADS, (3, 4, 5, 6, 7), 2, (4, 5)),
        (PAIRS, (1, 2, 3, 4, 5, 6, 7), 2, (2, 3)),  # not the lowest, 1-2
        (None, (1, 2, 3, 4, 5, 6, 7), 2, (1, 2)),
        (CROSS, tuple(range(8)), 2, (0, 4)),
    ],
)
def test_a_job_gets_the_best_linked_free_gpus_of_its_node(
    links: GpuLinks | None, free: tuple[int, ...], count: int, expected: tuple[int, ...]
) -> None:
    req = ResourceRequest(gpus_per_node=count)
    assert gpus(select_nodes(req, [view("n1", links, free)])) == {"n1": expected}


def pending(job_id: int, **request: object) -> PendingJob:
    return PendingJob(job_id, "gpu", 1, float(job_id), ResourceRequest(**request))  # type: ignore[arg-type]


@pytest.mark.parametrize("cfg", [BUILTIN, SchedConfig()], ids=["builtin", "backfill"])
def test_jobs_of_one_pass_each_get_a_quad_or_a_linked_pair(cfg: SchedConfig) -> None:
    nodes = (view("n1", QUADS), view("n2", PAIRS))
    jobs = (
        pending(1, gpus_per_node=3, req_nodes=("n1",)),
        pending(2, gpus_per_node=4, req_nodes=("n1",)),
        pending(3, gpus_per_node=1, req_nodes=("n2",)),
        pending(4, gpus_per_node=2, req_nodes=("n2",)),
    )
    snapshot = Snapshot(nodes, (PartitionView("gpu", ("n1", "n2")),), jobs)
    result = plan(snapshot, 1000.0, cfg)
    check_plan(snapshot, result)
    started = {s.job_id: gpus(s.allocation) for s in result.starts}
    assert started == {
        1: {"n1": (0, 1, 2)},
        2: {"n1": (4, 5, 6, 7)},  # the other quad, not 3-6
        3: {"n2": (0,)},
        4: {"n2": (2, 3)},  # a linked pair, not 1-2
    }


@pytest.mark.parametrize("cfg", [BUILTIN, SchedConfig()], ids=["builtin", "backfill"])
def test_idle_nodes_alike_but_for_their_links_are_not_taken_for_one_another(
    cfg: SchedConfig,
) -> None:
    nodes = (view("n1", CROSS), view("n2", None), view("n3", CROSS))
    jobs = (pending(1, min_nodes=3, max_nodes=3, ntasks=3, gpus_per_node=2),)
    snapshot = Snapshot(nodes, (PartitionView("gpu", ("n1", "n2", "n3")),), jobs)
    result = plan(snapshot, 1000.0, cfg)
    check_plan(snapshot, result)
    assert gpus(result.starts[0].allocation) == {"n1": (0, 4), "n2": (0, 1), "n3": (0, 4)}


def test_node_classes_and_alike_patterns_keep_each_nodes_links() -> None:
    plain = [view("n1", None), view("n2", None)]
    table = table_of(plain)
    assert len(table.class_masks) == 1
    relinked = [plain[0], replace(plain[1], gpu_links=CROSS)]  # n2 registered its links
    table = table_of(relinked)
    assert len(table.class_masks) == 2
    assert [v.gpu_links for v in table.class_views] == [None, CROSS]
    req = ResourceRequest(gpus_per_node=2)
    for class_view, expected in zip(table.class_views, [(0, 1), (0, 4)], strict=True):
        pattern = select_alike(req, class_view, 1)
        assert pattern is not None and pattern[0][1].gpus == expected


def running_job(gpus: tuple[int, ...]) -> Job:
    return Job(
        job_id=7,
        name="job",
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="gpu",
        state=JobState.RUNNING,
        request=ResourceRequest(gpus_per_node=len(gpus)),
        submit_time=0.0,
        allocation=Allocation((NodeAlloc("n1", 8, 0, gpus, 1),)),
    )


def test_a_step_gets_the_best_linked_of_its_jobs_gpus() -> None:
    job = running_job((1, 2, 3, 4))
    spec = StepRequest(job_id=7, gpus=2, exact=True)
    step = place_step(spec, job, [], 0, 0.0, {"n1": PAIRS})
    assert step.nodes[0].gpus == (2, 3)
    second = place_step(spec, job, [step], 1, 0.0, {"n1": PAIRS})
    assert second.nodes[0].gpus == (1, 4)
    assert place_step(spec, job, [], 0, 0.0).nodes[0].gpus == (1, 2)  # no map: the lowest


def registration(**fields: object) -> Registration:
    return Registration(name="n1", cpus=8, real_memory=8000, gpus=(0, 1), **fields)  # type: ignore[arg-type]


def test_a_registered_node_keeps_the_links_its_agent_sent() -> None:
    node = Node("n1", 8, 8000, (0, 1), ("gpu",), state=NodeState.UNKNOWN)
    conf = SlurmConfig()
    updated = nodeops.registered(node, registration(gpu_links=(-1, 4, 4, -1)), 1.0, conf)
    assert updated.gpu_links == GpuLinks((0, 1), ((-1, 4), (4, -1)))
    assert nodeops.registered(updated, registration(), 2.0, conf).gpu_links is None
    fewer = Registration(name="n1", cpus=8, real_memory=8000, gpus=(0,), gpu_links=(-1,))
    assert (
        nodeops.registered(node, fewer, 1.0, conf).gpu_links is None
    )  # drained, GPUs as configured


@pytest.mark.parametrize("flat", [(-1, 4, 4), (-1, 4, 2, -1), (0, 0, 0, 0)])
def test_links_that_are_no_matrix_over_the_gpus_are_refused(flat: tuple[int, ...]) -> None:
    with pytest.raises(InvalidRequest, match="Node n1: invalid GPU links"):
        nodeops.gpu_links(registration(gpu_links=flat))
