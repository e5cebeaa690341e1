"""What ``apply_event`` asks of the nodes besides a kill: a batch job's launch."""

from __future__ import annotations

from dataclasses import replace

from test_requeue import ALLOC, NOW, job

from ctld import jobs as jobops
from ctld.intents import Launch
from minislurm.states import JobState


def test_the_start_of_a_batch_job_asks_for_its_launch_and_an_allocation_for_none() -> None:
    pending = replace(job(JobState.PENDING), allocation=None, start_time=0.0, launched=False)
    started, intents = jobops.start(replace(pending, batch=True), ALLOC, NOW)
    assert started.state is JobState.RUNNING and intents == [Launch(pending.job_id)]
    started, intents = jobops.start(replace(pending, batch=False), ALLOC, NOW)  # salloc's
    assert started.state is JobState.RUNNING and intents == []
