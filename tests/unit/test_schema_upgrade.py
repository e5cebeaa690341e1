"""A state directory made by an earlier version still loads: missing columns are added."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.orm import Session
from test_accounting import ran

from ctld.store import repo
from minislurm.model import Step
from minislurm.states import JobState

# Columns added after the first releases (jobs.reservation, qos.preempt*, jobs.launched...).
LATER = {
    "jobs": ("reservation", "launched", "warn_sent", "comment", "partition_time_limit"),
    "qos": ("preempt",),
    "steps": ("srun_host", "srun_pid", "tres_per_node", "cancelled_by"),
}


def test_columns_an_older_database_lacks_are_added_with_empty_values(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    repo.create_schema(engine)
    with Session(engine) as s, s.begin():
        repo.insert_records(s, [ran(7, "old.sh", JobState.RUNNING, comment="x")])
        repo.save_step(s, Step(7, 0, "bash", JobState.RUNNING, (), 1, 100.0), new=True)
    with engine.begin() as conn:  # what the older version's database looked like
        for table, columns in LATER.items():
            for column in columns:
                conn.execute(text(f'ALTER TABLE {table} DROP COLUMN "{column}"'))

    repo.create_schema(engine)

    for table, columns in LATER.items():
        assert set(columns) <= {c["name"] for c in inspect(engine).get_columns(table)}
    with Session(engine) as s:
        (job,) = repo.load_jobs(s, 0.0)
    assert (job.job_id, job.state, job.reservation, job.comment) == (7, JobState.RUNNING, "", "")
    assert (job.launched, job.warn_sent) == (False, False)
    with Session(engine) as s:
        (step,) = repo.load_steps(s, [7])
    assert (step.srun_host, step.srun_pid, step.tres_per_node) == ("", 0, "")
    assert step.cancelled_by == -1  # nobody cancelled the steps of before


def layout(engine: Engine) -> dict[str, list[tuple[str, str, bool, object]]]:
    """Each table's columns: name, type, nullable, default."""
    found = inspect(engine)
    return {
        table: [
            (c["name"], str(c["type"]), c["nullable"], c["default"])
            for c in found.get_columns(table)
        ]
        for table in found.get_table_names()
    }


def test_an_up_to_date_database_is_left_alone(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    repo.create_schema(engine)
    before = layout(engine)
    repo.create_schema(engine)
    assert layout(engine) == before
