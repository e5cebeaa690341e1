"""The schema of the releases before versioned migrations, and their upgrade.

A database with none of these tables gets them all. A database of an
earlier release (its tables made by ``create_all``, columns added since by
``ALTER TABLE``) keeps its rows: a missing table or index is created, and a
missing column is added, filled in the rows already there with the value
an old row means (the type's empty value: 0, 0.0, "", false; or NULL).

The tables are written out here as they were, not imported from the
models: a later change of the models comes with a migration of its own.

Revision ID: 0001
Revises: none
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

METADATA = sa.MetaData()

sa.Table(
    "accounts",
    METADATA,
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("description", sa.Text(), nullable=False),
    sa.Column("organization", sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
)
sa.Table(
    "acct_users",
    METADATA,
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("default_account", sa.String(), nullable=False),
    sa.Column("admin", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
)
sa.Table(
    "assocs",
    METADATA,
    sa.Column("account", sa.String(), nullable=False),
    sa.Column("user", sa.String(), nullable=False),
    sa.Column("parent", sa.String(), nullable=False),
    sa.Column("shares", sa.BigInteger(), nullable=False),
    sa.Column("max_jobs", sa.BigInteger(), nullable=False),
    sa.Column("max_submit", sa.BigInteger(), nullable=False),
    sa.Column("grp_tres", sa.String(), nullable=False),
    sa.Column("raw_usage", sa.Float(), nullable=False),
    sa.Column("usage_time", sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint("account", "user"),
)
sa.Table(
    "jobs",
    METADATA,
    sa.Column("job_id", sa.Integer(), autoincrement=False, nullable=False),
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("uid", sa.BigInteger(), nullable=False),
    sa.Column("gid", sa.BigInteger(), nullable=False),
    sa.Column("user", sa.String(), nullable=False),
    sa.Column("group", sa.String(), nullable=False),
    sa.Column("account", sa.String(), nullable=False),
    sa.Column("qos", sa.String(), nullable=False),
    sa.Column("partition", sa.String(), nullable=False),
    sa.Column("state", sa.String(), nullable=False),
    sa.Column("reason", sa.String(), nullable=False),
    sa.Column("nice", sa.Integer(), nullable=False),
    sa.Column("hold", sa.String(), nullable=False),
    sa.Column("time_limit", sa.BigInteger(), nullable=False),
    sa.Column("partition_time_limit", sa.Boolean(), nullable=False),
    sa.Column("submit_time", sa.Float(), nullable=False),
    sa.Column("eligible_time", sa.Float(), nullable=False),
    sa.Column("start_time", sa.Float(), nullable=False),
    sa.Column("end_time", sa.Float(), nullable=False),
    sa.Column("request", sa.JSON(), nullable=False),
    sa.Column("allocation", sa.JSON(), nullable=True),
    sa.Column("exit_code", sa.Integer(), nullable=False),
    sa.Column("exit_signal", sa.Integer(), nullable=False),
    sa.Column("kill_outcome", sa.String(), nullable=False),
    sa.Column("work_dir", sa.Text(), nullable=False),
    sa.Column("submit_dir", sa.Text(), nullable=False),
    sa.Column("stdout", sa.Text(), nullable=False),
    sa.Column("stderr", sa.Text(), nullable=False),
    sa.Column("stdin", sa.Text(), nullable=False),
    sa.Column("submit_host", sa.String(), nullable=False),
    sa.Column("command", sa.Text(), nullable=False),
    sa.Column("gres", sa.String(), nullable=False),
    sa.Column("batch", sa.Boolean(), nullable=False),
    sa.Column("requeue", sa.Boolean(), nullable=False),
    sa.Column("restarts", sa.Integer(), nullable=False),
    sa.Column("prio_process", sa.Integer(), nullable=False),
    sa.Column("last_sched_eval", sa.Float(), nullable=False),
    sa.Column("launched", sa.Boolean(), nullable=False),
    sa.Column("array_job_id", sa.Integer(), nullable=False),
    sa.Column("array_task_id", sa.Integer(), nullable=True),
    sa.Column("array_tasks", sa.Text(), nullable=False),
    sa.Column("array_throttle", sa.Integer(), nullable=False),
    sa.Column("array_spec", sa.Text(), nullable=False),
    sa.Column("dependency", sa.Text(), nullable=False),
    sa.Column("kill_on_invalid_dep", sa.Boolean(), nullable=False),
    sa.Column("begin_time", sa.Float(), nullable=False),
    sa.Column("deadline", sa.Float(), nullable=False),
    sa.Column("cancelled_by", sa.BigInteger(), nullable=False),
    sa.Column("max_rss", sa.BigInteger(), nullable=False),
    sa.Column("total_cpu", sa.Float(), nullable=False),
    sa.Column("comment", sa.Text(), nullable=False),
    sa.Column("mail_type", sa.String(), nullable=False),
    sa.Column("mail_user", sa.String(), nullable=False),
    sa.Column("open_mode", sa.String(), nullable=False),
    sa.Column("warn_signal", sa.Integer(), nullable=False),
    sa.Column("warn_time", sa.Integer(), nullable=False),
    sa.Column("warn_batch", sa.Boolean(), nullable=False),
    sa.Column("warn_sent", sa.Boolean(), nullable=False),
    sa.Column("reservation", sa.String(), nullable=False),
    sa.Column("priority_set", sa.BigInteger(), nullable=False),
    sa.Column("options", sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint("job_id"),
)
sa.Index("ix_jobs_array_job_id", METADATA.tables["jobs"].c["array_job_id"])
sa.Index("ix_jobs_end_time", METADATA.tables["jobs"].c["end_time"])
sa.Index("ix_jobs_state", METADATA.tables["jobs"].c["state"])
sa.Index("ix_jobs_user", METADATA.tables["jobs"].c["user"])
sa.Table(
    "nodes",
    METADATA,
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("state", sa.String(), nullable=False),
    sa.Column("drain", sa.Boolean(), nullable=False),
    sa.Column("reason", sa.Text(), nullable=False),
    sa.Column("reason_uid", sa.BigInteger(), nullable=False),
    sa.Column("reason_time", sa.Float(), nullable=False),
    sa.Column("reboot", sa.String(), nullable=False),
    sa.Column("reboot_next", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
)
sa.Table(
    "qos",
    METADATA,
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("description", sa.Text(), nullable=False),
    sa.Column("priority", sa.BigInteger(), nullable=False),
    sa.Column("max_jobs_pu", sa.BigInteger(), nullable=False),
    sa.Column("max_submit_pu", sa.BigInteger(), nullable=False),
    sa.Column("preempt", sa.String(), nullable=False),
    sa.Column("preempt_mode", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
)
sa.Table(
    "reservations",
    METADATA,
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("start", sa.Float(), nullable=False),
    sa.Column("end", sa.Float(), nullable=False),
    sa.Column("nodes", sa.JSON(), nullable=False),
    sa.Column("users", sa.JSON(), nullable=False),
    sa.Column("accounts", sa.JSON(), nullable=False),
    sa.Column("flags", sa.JSON(), nullable=False),
    sa.Column("partition", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("name"),
)
sa.Table(
    "step_usage",
    METADATA,
    sa.Column("job_id", sa.Integer(), autoincrement=False, nullable=False),
    sa.Column("run", sa.Integer(), autoincrement=False, nullable=False),
    sa.Column("step_id", sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column("node", sa.String(), nullable=False),
    sa.Column("tasks", sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint("job_id", "run", "step_id", "node"),
)
sa.Table(
    "job_runs",
    METADATA,
    sa.Column("job_id", sa.Integer(), nullable=False),
    sa.Column("run", sa.Integer(), autoincrement=False, nullable=False),
    sa.Column("state", sa.String(), nullable=False),
    sa.Column("ended", sa.Float(), nullable=False),
    sa.Column("job", sa.JSON(), nullable=False),
    sa.Column("steps", sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(
        ["job_id"],
        ["jobs.job_id"],
    ),
    sa.PrimaryKeyConstraint("job_id", "run"),
)
sa.Table(
    "job_scripts",
    METADATA,
    sa.Column("job_id", sa.Integer(), nullable=False),
    sa.Column("script", sa.LargeBinary(), nullable=False),
    sa.Column("argv", sa.JSON(), nullable=False),
    sa.Column("environment", sa.JSON(), nullable=False),
    sa.Column("umask", sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(
        ["job_id"],
        ["jobs.job_id"],
    ),
    sa.PrimaryKeyConstraint("job_id"),
)
sa.Table(
    "steps",
    METADATA,
    sa.Column("job_id", sa.Integer(), nullable=False),
    sa.Column("step_id", sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("state", sa.String(), nullable=False),
    sa.Column("nodes", sa.JSON(), nullable=False),
    sa.Column("ntasks", sa.Integer(), nullable=False),
    sa.Column("cpus_per_task", sa.Integer(), nullable=False),
    sa.Column("gpus_per_task", sa.Integer(), nullable=False),
    sa.Column("distribution", sa.String(), nullable=False),
    sa.Column("overlap", sa.Boolean(), nullable=False),
    sa.Column("argv", sa.Text(), nullable=False),
    sa.Column("uid", sa.BigInteger(), nullable=False),
    sa.Column("gid", sa.BigInteger(), nullable=False),
    sa.Column("start_time", sa.Float(), nullable=False),
    sa.Column("end_time", sa.Float(), nullable=False),
    sa.Column("exit_code", sa.Integer(), nullable=False),
    sa.Column("signal", sa.Integer(), nullable=False),
    sa.Column("reported", sa.JSON(), nullable=False),
    sa.Column("max_rss", sa.BigInteger(), nullable=False),
    sa.Column("total_cpu", sa.Float(), nullable=False),
    sa.Column("srun_host", sa.String(), nullable=False),
    sa.Column("srun_pid", sa.Integer(), nullable=False),
    sa.Column("tres_per_node", sa.String(), nullable=False),
    sa.Column("cancelled_by", sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(
        ["job_id"],
        ["jobs.job_id"],
    ),
    sa.PrimaryKeyConstraint("job_id", "step_id"),
)

# What an old row holds in a column added since, where the type's empty value is not it.
FILL: dict[tuple[str, str], object] = {("steps", "cancelled_by"): -1}


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    existing = set(inspector.get_table_names())
    for table in METADATA.sorted_tables:
        if table.name not in existing:
            table.create(bind)
            continue
        have = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in have:
                op.add_column(table.name, _filled(table.name, column))
        indexes = {index["name"] for index in inspector.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in indexes:
                index.create(bind)


def _filled(table: str, column: sa.Column[Any]) -> sa.Column[Any]:
    """``column`` as added to a table with rows: with the value they get as its default."""
    value = FILL.get((table, column.name))
    if value is None:
        if isinstance(column.type, sa.Boolean):
            value = False
        elif isinstance(column.type, sa.Integer | sa.Float):
            value = column.type.python_type(0)
        elif isinstance(column.type, sa.String):  # and Text
            value = ""
    default = None if value is None else sa.literal(value, column.type)
    return sa.Column(
        column.name,
        column.type,
        nullable=column.nullable or default is None,
        server_default=None if default is None else _sql(default),
    )


def _sql(value: sa.ColumnElement[Any]) -> sa.TextClause:
    bind = op.get_bind()
    return sa.text(str(value.compile(dialect=bind.dialect, compile_kwargs={"literal_binds": True})))
