"""Tests of ctld.accounting.runs and ctld.store.runrepo: a requeued job's earlier runs in sacct.

What real Slurm 22.05 keeps (``sacct -D``) for a batch job with two srun
steps, requeued by ``scontrol requeue`` while its second step ran, and for
the same job on a node set DOWN under it::

    1|REQUEUED|0:0|n1            2|NODE_FAIL|0:0|n2
    1.batch|CANCELLED|0:15|n1    2.batch|CANCELLED||n2
    1.0|COMPLETED|0:0|n1         2.0|COMPLETED|0:0|n2
    1.1|CANCELLED|0:15|n1        2.1|CANCELLED||n2
    1|PENDING|0:0|None assigned  2|PENDING|0:0|None assigned

The run ends when the requeue is asked for; the next run is submitted then,
and numbers its steps from 0 again. A finished job requeued shows its run
REQUEUED, with its batch step's own outcome.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from test_accounting import T0, ran, step

from ctld import steps as stepops
from ctld.accounting.runs import REQUEUED, ended_runs, run_records
from ctld.requeue import preempted, requested, requeued
from ctld.store import repo, runrepo, schema
from ctld.store.models import JobRow
from minislurm.model import HOLD_NONE, EarlierRun, Job, Step
from minislurm.requests import AcctRecord
from minislurm.states import JobEvent, JobState

NOW = T0 + 300


def two_steps(job_id: int) -> list[Step]:
    done = step(job_id, (("n1", 1, 0),), step_id=0, name="sleep", end_time=T0 + 13)
    running = step(job_id, (("n1", 1, 0),), step_id=1, name="sleep", state=JobState.RUNNING)
    return [done, running]


def runs_after(old: Job, new: Job, steps: list[Step], now: float) -> list[EarlierRun]:
    """What the controller's commit finds: the requeue ends the running steps."""
    ended = [stepops.cancelled(s, now) for s in steps if s.state is JobState.RUNNING]
    by_id = {old.job_id: {s.step_id: s for s in steps}}
    return ended_runs({old.job_id: old}, by_id, ended, [new], now)


def table(records: list[AcctRecord]) -> list[str]:
    return [f"{r.job_id}|{r.state}|{r.exit_code}:{r.exit_signal}|{r.nodes}" for r in records]


def test_scontrol_requeue_keeps_the_run_requeued_with_its_steps() -> None:
    running = ran(1, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    asked, _ = requested(running, HOLD_NONE, T0 + 15, 0.0)  # its kill begins
    pending = requeued(asked, T0 + 16, 120.0)  # the node confirms the kill
    (run,) = runs_after(asked, pending, two_steps(1), T0 + 16)
    assert (run.state, run.ended, run.job.restarts) == (REQUEUED, T0 + 15, 0)
    records = run_records(run, NOW, "anchor")
    assert table(records) == [
        "1|REQUEUED|0:0|n1",
        "1.batch|CANCELLED|0:15|n1",
        "1.0|COMPLETED|0:0|n1",
        "1.1|CANCELLED|0:0|n1",
    ]
    assert (records[0].start_time, records[0].end_time, records[0].elapsed) == (T0 + 3, T0 + 15, 12)
    assert (pending.submit_time, pending.restarts) == (T0 + 16, 1)


def test_a_node_failure_keeps_the_run_as_node_fail() -> None:
    running = ran(2, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    pending = requeued(running, T0 + 20, 120.0)
    (run,) = runs_after(running, pending, two_steps(2), T0 + 20)
    assert (run.state, run.ended) == (JobState.NODE_FAIL.value, T0 + 20)
    assert table(run_records(run, NOW, "anchor"))[:2] == [
        "2|NODE_FAIL|0:0|n1",
        "2.batch|CANCELLED|0:15|n1",
    ]


def test_a_finished_job_requeued_keeps_its_batch_outcome() -> None:
    finished = ran(3, "q.sh", JobState.COMPLETED, requeue=True, batch=True, end_time=T0 + 4)
    pending, _ = requested(finished, HOLD_NONE, T0 + 9, 120.0)
    (run,) = runs_after(finished, pending, [], T0 + 9)
    assert table(run_records(run, NOW, "anchor")) == [
        "3|REQUEUED|0:0|n1",
        "3.batch|COMPLETED|0:0|n1",
    ]
    assert run.ended == T0 + 9


def test_a_preemption_that_requeues_keeps_the_run_as_preempted() -> None:
    running = ran(5, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    killing, _ = preempted(running, "REQUEUE", T0 + 15)
    pending = requeued(killing, T0 + 16, 5.0)
    (run,) = runs_after(killing, pending, [], T0 + 16)
    assert (run.state, run.ended) == (JobState.PREEMPTED.value, T0 + 15)
    assert table(run_records(run, NOW, "anchor")) == [
        "5|PREEMPTED|0:0|n1",
        "5.batch|CANCELLED|0:15|n1",
    ]


def test_changes_that_requeue_nothing_keep_no_run() -> None:
    running = ran(4, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    done = replace(running, state=JobState.COMPLETED, end_time=T0 + 9)
    assert ended_runs({4: running}, {}, [], [done], T0 + 9) == []
    assert ended_runs({}, {}, [], [done], T0 + 9) == []  # a new record


def test_runs_are_stored_with_their_steps_and_taken_off_the_job(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    schema.upgrade(engine)
    running = ran(5, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    steps = two_steps(5)
    with Session(engine) as s, s.begin():
        repo.insert_records(s, [running])
        for one in steps:
            repo.save_step(s, one, new=True)
    pending = requeued(running, T0 + 20, 0.0)
    (run,) = runs_after(running, pending, steps, T0 + 20)
    with Session(engine) as s, s.begin():
        repo.save_jobs(s, [pending])
        runrepo.archive_run(s, run)
    with Session(engine) as s:
        assert repo.load_steps(s, [5]) == []
        assert runrepo.load_runs(s, [5, 6]) == {5: [run]}


def test_a_kill_in_progress_is_stored_under_its_name_and_loaded_back(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    schema.upgrade(engine)
    running = ran(7, "j.sh", JobState.RUNNING, requeue=True, batch=True)
    killing, _ = preempted(running, "REQUEUE", T0 + 15)
    with Session(engine) as s, s.begin():
        repo.insert_records(s, [killing])
    with Session(engine) as s:
        column = s.scalar(select(JobRow.kill_outcome).where(JobRow.job_id == 7))
        (loaded,) = repo.load_jobs(s, 0.0)
    assert (column, loaded.kill_event, loaded) == (
        "PREEMPT_REQUEUE",
        JobEvent.PREEMPT_REQUEUE,
        killing,
    )


def test_step_reports_write_what_the_reports_change_and_keep_the_layout(
    tmp_path: Path,
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    schema.upgrade(engine)
    job = ran(5, "j.sh", JobState.RUNNING, batch=True)
    first, second = two_steps(5)
    running = replace(first, state=JobState.RUNNING, end_time=0.0)
    with Session(engine) as s, s.begin():
        repo.insert_records(s, [job])
        repo.save_step(s, running, new=True)
        repo.save_step(s, second, new=True)
    reported = replace(
        running,
        state=JobState.FAILED,
        end_time=T0 + 30,
        exit_code=3,
        signal=9,
        reported=frozenset(running.node_names),
        max_rss=2048,
        total_cpu=1.5,
    )
    with Session(engine) as s, s.begin():
        repo.save_step_reports(s, [reported])
    with Session(engine) as s:
        assert repo.load_steps(s, [5]) == [reported, second]
