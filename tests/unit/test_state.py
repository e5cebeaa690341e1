"""The controller's in-memory state: what the active jobs hold, kept as jobs change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctld.state import ClusterState, NodeUsage
from minislurm.config import PartitionConfig
from minislurm.model import Allocation, Job, Node, NodeAlloc, ResourceRequest
from minislurm.states import JobState, NodeState

NODES = ("n1", "n2", "n3")
STATES = (JobState.PENDING, JobState.RUNNING, JobState.COMPLETING, JobState.COMPLETED)


def _state() -> ClusterState:
    nodes = [Node(n, 8, 8000, (0, 1, 2, 3), ("p",), state=NodeState.IDLE) for n in NODES]
    return ClusterState(nodes, [PartitionConfig("p", NODES, default=True)])


def _added_up(state: ClusterState) -> dict[str, NodeUsage]:
    """What the active jobs hold, added up from their allocations."""
    cpus: dict[str, int] = {}
    mem: dict[str, int] = {}
    gpus: dict[str, set[int]] = {}
    for job in state.active_jobs():
        assert job.allocation is not None
        for part in job.allocation.nodes:
            cpus[part.node] = cpus.get(part.node, 0) + part.cpus
            mem[part.node] = mem.get(part.node, 0) + part.mem
            gpus.setdefault(part.node, set()).update(part.gpus)
    return {n: NodeUsage(cpus[n], mem[n], frozenset(gpus[n])) for n in cpus}


parts = st.builds(
    NodeAlloc,
    st.sampled_from(NODES),
    st.integers(0, 4),
    st.integers(0, 2000),
    st.lists(st.integers(0, 3), max_size=2, unique=True).map(tuple),
)
changes = st.lists(
    st.tuples(
        st.integers(1, 5),
        st.sampled_from(STATES),
        st.lists(parts, min_size=1, max_size=3, unique_by=lambda p: p.node),
    ),
    max_size=30,
)


@given(changes)
def test_usage_follows_every_change_of_the_active_jobs(
    steps: list[tuple[int, JobState, list[NodeAlloc]]],
) -> None:
    state = _state()
    for job_id, job_state, alloc in steps:
        allocation = Allocation(tuple(alloc)) if job_state is not JobState.PENDING else None
        job = Job(job_id, "j", 0, 0, "u", "u", "p", job_state, ResourceRequest(), 0.0,
                  allocation=allocation)  # fmt: skip
        state.put_job(job)
        assert state.usage() == _added_up(state)


def test_an_active_job_without_an_allocation_is_a_bug_usage_reports() -> None:
    state = _state()
    state.put_job(Job(7, "j", 0, 0, "u", "u", "p", JobState.RUNNING, ResourceRequest(), 0.0))
    with pytest.raises(AssertionError, match="active job 7 without allocation"):
        state.usage()
    state.put_job(Job(7, "j", 0, 0, "u", "u", "p", JobState.COMPLETED, ResourceRequest(), 0.0))
    assert state.usage() == {}
