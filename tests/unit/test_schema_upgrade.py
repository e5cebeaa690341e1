"""The state database's schema version: older databases upgrade in place, newer ones are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.orm import Session
from test_accounting import ran

from ctld.store import repo, schema
from ctld.store.models import Base
from minislurm.model import Step
from minislurm.states import JobState

# Columns added after the first releases (jobs.reservation, qos.preempt*, jobs.launched...).
LATER = {
    "jobs": ("reservation", "launched", "warn_sent", "comment", "partition_time_limit"),
    "qos": ("preempt",),
    "steps": ("srun_host", "srun_pid", "tres_per_node", "cancelled_by"),
}


def _engine(tmp_path: Path) -> Engine:
    return create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")


def test_a_database_before_versions_gets_its_missing_columns_and_a_version(
    tmp_path: Path,
) -> None:
    engine = _engine(tmp_path)
    schema.upgrade(engine)
    with Session(engine) as s, s.begin():
        repo.insert_records(s, [ran(7, "old.sh", JobState.RUNNING, comment="x")])
        repo.save_step(s, Step(7, 0, "bash", JobState.RUNNING, (), 1, 100.0), new=True)
    with engine.begin() as conn:  # what an older release's database looked like
        conn.execute(text("DROP TABLE alembic_version"))
        conn.execute(text("DROP INDEX ix_jobs_end_time"))
        for table, columns in LATER.items():
            for column in columns:
                conn.execute(text(f'ALTER TABLE {table} DROP COLUMN "{column}"'))
    assert schema.version(engine) is None

    schema.upgrade(engine)

    assert schema.version(engine) == schema.HEAD
    for table, columns in LATER.items():
        assert set(columns) <= {c["name"] for c in inspect(engine).get_columns(table)}
    assert "ix_jobs_end_time" in {i["name"] for i in inspect(engine).get_indexes("jobs")}
    with Session(engine) as s:
        (job,) = repo.load_jobs(s, 0.0)
    assert (job.job_id, job.state, job.reservation, job.comment) == (7, JobState.RUNNING, "", "")
    assert (job.launched, job.warn_sent) == (False, False)
    with Session(engine) as s:
        (step,) = repo.load_steps(s, [7])
    assert (step.srun_host, step.srun_pid, step.tres_per_node) == ("", 0, "")
    assert step.cancelled_by == -1  # nobody cancelled the steps of before


def test_the_models_and_the_migrated_schema_agree(tmp_path: Path) -> None:
    """A change of ctld/store/models.py needs a migration that makes it."""
    engine = _engine(tmp_path)
    schema.upgrade(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def test_head_names_the_newest_migration() -> None:
    config = Config()
    config.set_main_option("script_location", schema.MIGRATIONS)
    assert ScriptDirectory.from_config(config).get_current_head() == schema.HEAD


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
    engine = _engine(tmp_path)
    schema.upgrade(engine)
    before = layout(engine)
    schema.upgrade(engine)
    assert layout(engine) == before


def test_a_database_of_a_newer_release_is_refused(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    schema.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    before = layout(engine)
    with pytest.raises(schema.SchemaTooNew, match="schema version 9999, which this slurmctld"):
        schema.upgrade(engine)
    assert layout(engine) == before
