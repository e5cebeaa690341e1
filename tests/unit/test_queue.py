"""Tests of the pass's queue order: the top sorted first is the full sort's order.

Imports ctld.sched and minislurm.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from ctld.sched.queue import PassContext, job_order, queue_order, queue_top_first
from minislurm.model import PartitionView, PendingJob, ResourceRequest, Snapshot

PARTS = ("a", "b", "c")


@st.composite
def pending_jobs(draw: st.DrawFn) -> list[PendingJob]:
    """Jobs with few distinct priorities and submit times (many ties), some array tasks."""
    count = draw(st.integers(0, 60))
    jobs = []
    for job_id in range(1, count + 1):
        task = draw(st.one_of(st.none(), st.integers(0, 3)))
        jobs.append(
            PendingJob(
                job_id=draw(st.integers(1, count)) if task is not None else job_id,
                partition=draw(st.sampled_from(PARTS)),
                priority=draw(st.integers(0, 5)),
                submit_time=float(draw(st.integers(0, 4))),
                request=ResourceRequest(),
                array_task_id=task,
            )
        )
    return draw(st.permutations(jobs))


@settings(max_examples=300, deadline=None)
@given(
    pending_jobs(),
    st.lists(st.integers(0, 2), min_size=3, max_size=3),
    st.integers(0, 70),
)
def test_top_first_order_is_the_full_sort(
    jobs: list[PendingJob], tier_values: list[int], first: int
) -> None:
    tiers = dict(zip(PARTS, tier_values, strict=True))
    full = queue_order(jobs, tiers)
    assert full == sorted(jobs, key=lambda j: job_order(j, tiers[j.partition]))
    assert list(queue_top_first(jobs, tiers, first)) == full
    read = max(first - 1, 0)  # a reader that stops early sees the same prefix
    assert list(itertools.islice(queue_top_first(jobs, tiers, first), read)) == full[:read]


def test_context_queues_jobs_of_known_partitions_that_are_not_held() -> None:
    def pending(job_id: int, partition: str, held: bool = False) -> PendingJob:
        return PendingJob(job_id, partition, 1, float(job_id), ResourceRequest(), held=held)

    jobs = (pending(3, "a"), pending(1, "a"), pending(2, "gone"), pending(4, "a", held=True))
    ctx = PassContext(Snapshot((), (PartitionView("a", ()),), jobs, ()))
    assert [j.job_id for j in ctx.jobs] == [3, 1]
    assert [j.job_id for j in ctx.queue(1)] == [1, 3]
