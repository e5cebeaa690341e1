"""The snapshot a pass reads: event passes keep plain jobs' entries, full passes compute all."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctld.sched.priority import PriorityWeights
from ctld.scheduling import KeptEntries, build_snapshot
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import Job, Node, PendingJob, ResourceRequest
from minislurm.states import JobState, NodeState

pytestmark = pytest.mark.timeout(30)

NOW = 1_000_000.0
LATER = NOW + 3600.0  # an hour older: every job's age factor has grown
WEIGHTS = PriorityWeights(age=100_000, job_size=1000, max_age=86_400.0)


def _job(job_id: int, **fields: object) -> Job:
    request = ResourceRequest(min_nodes=1, max_nodes=1, ntasks=1)
    job = Job(job_id, "j", 0, 0, "u", "u", "p", JobState.PENDING, request, NOW - 600)
    return replace(job, **fields)


def _state(*jobs: Job) -> ClusterState:
    nodes = [Node(n, 4, 4000, (), ("p",), state=NodeState.IDLE) for n in ("n1", "n2")]
    state = ClusterState(nodes, [PartitionConfig("p", ("n1", "n2"), default=True)])
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
