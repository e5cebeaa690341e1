"""Queries on the job_runs table: the earlier runs of requeued jobs.

Like ``repo.py``, every function takes a Session whose transaction the
caller owns, and speaks in :class:`minislurm.model.EarlierRun`. A run's job
and steps are kept as the column values of their own tables' rows, so one
mapping (``repo``'s) reads both.

Imports ctld.store.models, ctld.store.repo and minislurm.model.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ctld.store import repo
from ctld.store.models import JobRow, JobRunRow, StepRow
from minislurm.model import EarlierRun

_ID_CHUNK = 500  # ids per IN (...) list: SQLite caps a statement's parameters


def archive_run(session: Session, run: EarlierRun) -> None:
    """Keep a run that has ended by requeue, and take its steps off the job.

    The job's next run numbers its steps from 0 again, as Slurm's does.

    Args:
        session: the open transaction.
        run: the run.
    """
    session.add(
        JobRunRow(
            job_id=run.job.job_id,
            run=run.job.restarts,
            state=run.state,
            ended=run.ended,
            job=repo.job_columns(run.job),
            steps=[repo.step_columns(step) for step in run.steps],
        )
    )
    session.execute(delete(StepRow).where(StepRow.job_id == run.job.job_id))


def load_runs(session: Session, job_ids: Collection[int]) -> dict[int, list[EarlierRun]]:
    """The earlier runs of the given jobs.

    Args:
        session: the open transaction.
        job_ids: the jobs.

    Returns:
        Job id -> its earlier runs, first run first (jobs never requeued are absent).
    """
    runs: dict[int, list[EarlierRun]] = {}
    ids = sorted(job_ids)
    for start in range(0, len(ids), _ID_CHUNK):
        query = select(JobRunRow).where(JobRunRow.job_id.in_(ids[start : start + _ID_CHUNK]))
        for row in session.scalars(query.order_by(JobRunRow.job_id, JobRunRow.run)):
            runs.setdefault(row.job_id, []).append(
                EarlierRun(
                    job=repo.job_from_row(JobRow(**row.job)),
                    state=row.state,
                    ended=row.ended,
                    steps=tuple(repo.step_from_row(StepRow(**s)) for s in row.steps),
                )
            )
    return runs
