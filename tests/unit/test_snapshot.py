"""The snapshot a pass reads: event passes keep plain jobs' entries, full passes compute all."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import KeptEntries, build_snapshot
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import Allocation, Job, Node, NodeAlloc, PendingJob, ResourceRequest
from minislurm.states import JobState, NodeFlag, NodeState

pytestmark = pytest.mark.timeout(30)

NOW = 1_000_000.0
LATER = NOW + 3600.0  # an hour older: every job's age factor has grown
WEIGHTS = PriorityWeights(age=100_000, job_size=1000, max_age=86_400.0)


def _job(job_id: int, **fields: object) -> Job:
    request = ResourceRequest(min_nodes=1, max_nodes=1, ntasks=1)
    job = Job(job_id, "j", 0, 0, "u", "u", "p", JobState.PENDING, request, NOW - 600)
    return replace(job, **fields)


def _state(*jobs: Job, memory_consumable: bool = True) -> ClusterState:
    nodes = [Node(n, 4, 4000, (), ("p",), state=NodeState.IDLE) for n in ("n1", "n2")]
    nodes.append(Node("big", 4, 64000, (), ("p",), state=NodeState.IDLE))
    part = PartitionConfig("p", ("n1", "n2", "big"), default=True)
    state = ClusterState(nodes, [part], memory_consumable)
    for job in jobs:
        state.put_job(job)
    return state


def _entries(
    state: ClusterState, now: float, kept: KeptEntries, reuse: bool
) -> dict[int, PendingJob]:
    snapshot = build_snapshot(state, now, WEIGHTS, None, kept, reuse)
    return {entry.job_id: entry for entry in snapshot.pending}


def test_an_event_pass_reads_the_kept_entries_of_unchanged_plain_jobs() -> None:
    state = _state(_job(1), _job(2), _job(3, dependency="afterok:1"), _job(4, begin_time=NOW + 60))
    kept = KeptEntries()
    full = _entries(state, NOW, kept, reuse=False)
    assert full[3].blocked == "Dependency" and full[4].blocked == "BeginTime"

    event = _entries(state, LATER, kept, reuse=True)
    fresh = _entries(state, LATER, KeptEntries(), reuse=False)
    assert event[1] == full[1] and event[2] == full[2]  # as of the last full pass
    assert fresh[1].priority > full[1].priority  # which an hour's age has since raised
    assert event[3] == fresh[3]  # a dependency is looked at again in every pass
    assert event[4] == fresh[4] and not event[4].blocked  # as is a begin time, now passed


def test_an_event_pass_computes_the_entries_of_changed_new_and_no_longer_plain_jobs() -> None:
    state = _state(_job(1), _job(2), _job(3))
    kept = KeptEntries()
    _entries(state, NOW, kept, reuse=False)
    state.put_job(replace(state.jobs[1], nice=500))  # a changed record
    state.put_job(replace(state.jobs[2], state=JobState.CANCELLED))  # no longer queued
    state.put_job(replace(state.jobs[3], dependency="afterok:1"))  # no longer plain
    state.put_job(_job(4))  # a new job

    event = _entries(state, LATER, kept, reuse=True)
    fresh = _entries(state, LATER, KeptEntries(), reuse=False)
    assert event == fresh
    assert event[3].blocked == "Dependency"
    assert set(kept.entries) == {1, 4}  # what the next event pass may take again


def test_a_full_pass_computes_every_entry_anew() -> None:
    state = _state(_job(1), _job(2, nice=10))
    kept = KeptEntries()
    _entries(state, NOW, kept, reuse=False)
    assert _entries(state, LATER, kept, reuse=False) == _entries(
        state, LATER, KeptEntries(), reuse=False
    )


def _asking(job_id: int, **memory: int) -> Job:
    return _job(job_id, request=ResourceRequest(req_nodes=("n1",) if job_id < 3 else (), **memory))


def test_jobs_share_a_nodes_memory_where_memory_is_not_consumable() -> None:
    state = _state(_asking(1, mem_per_node=3000), _asking(2, mem_per_node=3000),
                   _asking(3, mem_per_node=8000), _asking(4, mem_per_cpu=5000),
                   memory_consumable=False)  # fmt: skip
    snapshot = build_snapshot(state, NOW, WEIGHTS)
    requests = {entry.job_id: entry.request for entry in snapshot.pending}
    assert {(r.mem_per_node, r.mem_per_cpu) for r in requests.values()} == {(0, 0)}
    assert requests[1].exc_nodes == ()  # n1 has the 3000M it asks for
    assert requests[3].exc_nodes == requests[4].exc_nodes == ("n1", "n2")  # too little memory

    starts = {s.job_id: s.allocation for s in plan(snapshot, NOW, SchedConfig()).starts}
    assert [starts[j].node_names for j in (1, 2, 3, 4)] == [("n1",), ("n1",), ("big",), ("big",)]
    assert sum(alloc.mem for alloc in starts.values()) == 0  # held by none of them


def test_jobs_hold_their_memory_where_it_is_consumable() -> None:
    state = _state(_asking(1, mem_per_node=3000), _asking(2, mem_per_node=3000))
    snapshot = build_snapshot(state, NOW, WEIGHTS)
    starts = plan(snapshot, NOW, SchedConfig()).starts
    assert [(s.job_id, s.allocation.mem) for s in starts] == [(1, 3000)]  # 2 waits for memory


NODE_NAMES = ("n1", "n2", "big")
JobStep = tuple[int, bool, list[str], int]  # a job runs (or ends) on some nodes, CPUs on each
NodeStep = tuple[str, bool]  # a node is drained, or not
job_steps = st.tuples(
    st.integers(1, 4),
    st.booleans(),
    st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=3, unique=True),
    st.integers(1, 2),
)
node_steps = st.tuples(st.sampled_from(NODE_NAMES), st.booleans())


@given(st.lists(st.one_of(job_steps, node_steps), max_size=20))
def test_kept_node_views_follow_every_change_of_a_node_or_its_usage(
    steps: list[JobStep | NodeStep],
) -> None:
    state = _state()
    kept = KeptEntries()
    last = build_snapshot(state, NOW, WEIGHTS, None, kept).nodes
    for step in steps:
        if len(step) == 4:
            job_id, running, names, cpus = step
            old = state.jobs.get(job_id)
            touched = set(old.allocation.node_names) if old and old.allocation else set()
            touched.update(names)
            alloc = Allocation(tuple(NodeAlloc(n, cpus, 100) for n in names))
            job_state = JobState.RUNNING if running else JobState.COMPLETED
            state.put_job(_job(job_id, state=job_state, allocation=alloc))
        else:
            name, drained = step
            touched = {name}
            flags = frozenset({NodeFlag.DRAIN} if drained else ())
            state.put_node(replace(state.nodes[name], flags=flags))
        nodes = build_snapshot(state, NOW, WEIGHTS, None, kept).nodes
        assert nodes == build_snapshot(state, NOW, WEIGHTS).nodes  # as made anew
        for before, view in zip(last, nodes, strict=True):
            assert view is before or view.name in touched  # the others are kept
        last = nodes
