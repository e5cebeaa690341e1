"""Tests of minislurm.wire.jobinfos: GetJobs' messages, each record converted once."""

from __future__ import annotations

from dataclasses import replace

from test_build_job import NOW, pending_job, running_job

from ctld.holds import hold
from minislurm.model import HOLD_USER, Job
from minislurm.wire import convert
from minislurm.wire.jobinfos import JobInfos
from minislurm.wire.rpc import minislurm_pb2 as pb


def priority(job: Job, now: float) -> int:
    return 0 if job.held else int(now) - 1_700_000_000 + job.job_id


def expected_start(job: Job) -> float:
    return NOW + 600 if not job.held else 0.0


def shown(infos: JobInfos, jobs: list[Job], now: float) -> list[pb.JobInfo]:
    reply = pb.GetJobsReply()
    infos.add(reply.jobs, jobs, now)
    return list(reply.jobs)


def fresh(jobs: list[Job], now: float) -> list[pb.JobInfo]:
    return [convert.job_info(j, priority(j, now), now, expected_start(j)) for j in jobs]


def test_messages_are_job_info_with_the_time_of_each_ask() -> None:
    jobs = [pending_job(job_id=2), running_job(job_id=3)]
    known = {j.job_id: j for j in jobs}
    infos = JobInfos(known, priority, expected_start)
    for now in (NOW + 10, NOW + 70):  # the second ask reuses the records' part
        assert shown(infos, jobs, now) == fresh(jobs, now)
    running = shown(infos, jobs, NOW + 70)[1]
    assert (running.run_time, running.priority) == (65, 100_000_073)


def test_a_changed_record_is_converted_again() -> None:
    job = pending_job(job_id=2)
    known = {2: job}
    infos = JobInfos(known, priority, expected_start)
    shown(infos, [job], NOW)
    known[2] = held = hold(job, HOLD_USER, NOW + 1)
    [info] = shown(infos, [held], NOW + 2)
    assert (info.reason, info.priority) == ("JobHeldUser", 0)
    assert info == fresh([held], NOW + 2)[0]


def test_purged_jobs_are_forgotten() -> None:
    jobs = [pending_job(job_id=i) for i in (2, 3, 4)]
    known = {j.job_id: j for j in jobs}
    infos = JobInfos(known, priority, expected_start)
    shown(infos, jobs, NOW)
    del known[2], known[3]
    renamed = replace(jobs[2], name="again")
    known[4] = renamed
    [info] = shown(infos, [renamed], NOW)
    assert info.name == "again"
    assert set(infos._kept) == {4}
