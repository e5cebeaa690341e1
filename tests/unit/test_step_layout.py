"""Where a step's tasks go inside its job (ctld.steps): distributions, node lists, exclusions."""

from __future__ import annotations

import pytest

from ctld.steps import arbitrary_ranks, assign_tasks, check_gpu_type, place_step
from minislurm.errors import InvalidRequest
from minislurm.model import Allocation, Job, Node, NodeAlloc, ResourceRequest
from minislurm.requests import StepRequest
from minislurm.states import JobState


@pytest.mark.parametrize(
    ("counts", "distribution", "ranks"),
    [
        ([2, 2], "block", [(0, 1), (2, 3)]),
        ([2, 2], "cyclic", [(0, 2), (1, 3)]),
        ([3, 1], "cyclic", [(0, 2, 3), (1,)]),  # as Slurm deals 4 tasks over 3+1 CPUs
        ([2, 2], "plane=2", [(0, 1), (2, 3)]),
        ([3, 1], "plane=2", [(0, 1, 3), (2,)]),
        ([4, 4], "plane=3", [(0, 1, 2, 6), (3, 4, 5, 7)]),
        ([1, 5], "plane=4", [(0,), (1, 2, 3, 4, 5)]),
    ],
)
def test_tasks_are_dealt_by_the_distribution_within_each_nodes_count(
    counts: list[int], distribution: str, ranks: list[tuple[int, ...]]
) -> None:
    assert assign_tasks(counts, distribution) == ranks


def test_arbitrary_puts_task_i_on_the_ith_node_of_the_list() -> None:
    assert arbitrary_ranks("n1,n2,n1,n1", ["n1", "n2"]) == [(0, 2, 3), (1,)]


def two_node_job() -> Job:
    return Job(
        job_id=5,
        name="job",
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="gpu",
        state=JobState.RUNNING,
        request=ResourceRequest(min_nodes=2, max_nodes=2, ntasks=4),
        submit_time=0.0,
        allocation=Allocation((NodeAlloc("n1", 3, 0, (), 3), NodeAlloc("n2", 1, 0, (), 1))),
    )


def layout(**fields: object) -> dict[str, tuple[int, ...]]:
    step = place_step(StepRequest(job_id=5, **fields), two_node_job(), [], 0, 0.0)
    return {n.node: n.task_ids for n in step.nodes}


def test_a_cyclic_step_takes_the_nodes_as_they_have_room() -> None:
    assert layout(ntasks=4, distribution="cyclic") == {"n1": (0, 2, 3), "n2": (1,)}


def test_an_arbitrary_step_follows_its_node_list() -> None:
    assert layout(nodelist="n2,n1,n1", distribution="arbitrary") == {"n1": (1, 2), "n2": (0,)}


def test_a_step_may_exclude_nodes_outside_its_job_but_not_ask_for_them() -> None:
    assert layout(ntasks=1, min_nodes=1, exclude="n1,n9") == {"n2": (0,)}
    with pytest.raises(InvalidRequest, match="Requested node configuration is not available"):
        layout(ntasks=1, nodelist="n9")


@pytest.mark.parametrize("distribution", ["spiral", "plane", "plane=0", "arbitrary", "cyclic=2"])
def test_the_controller_refuses_a_distribution_it_does_not_know(distribution: str) -> None:
    with pytest.raises(InvalidRequest, match="Invalid --distribution specification"):
        layout(ntasks=2, distribution=distribution)


def test_a_step_bigger_than_its_job_is_refused_in_slurms_words() -> None:
    with pytest.raises(InvalidRequest, match=r"^More processors requested than permitted$"):
        layout(ntasks=5)
    with pytest.raises(InvalidRequest) as err:
        layout(ntasks=1, gpus=1)
    assert str(err.value) == (
        "Step requested GRES but job doesn't have GRES\n"
        "Invalid generic resource (gres) specification"
    )


def test_a_step_naming_a_gpu_type_needs_its_jobs_nodes_of_that_type() -> None:
    a100 = [Node("n1", 8, 8000, (0, 1), ("gpu",), gpu_types=("a100",))]
    check_gpu_type(StepRequest(gpu_type="a100"), a100)
    check_gpu_type(StepRequest(gres="gpu:a100:1"), a100)
    check_gpu_type(StepRequest(gres="gpu:1"), a100)
    with pytest.raises(InvalidRequest, match="Requested node configuration is not available"):
        check_gpu_type(StepRequest(gpu_type="v100"), a100)
    with pytest.raises(InvalidRequest, match="Invalid generic resource"):
        check_gpu_type(StepRequest(gpu_type="a100", gres="gpu:v100:1"), a100)
