"""SQLAlchemy 2.0 typed models: the controller's durable state.

The only place table layouts live. Rows never leave the store: ``repo.py``
turns them into :mod:`minislurm.model` dataclasses before commit. A change
here reaches existing databases through a migration of its own in
``migrations/versions/`` (see ``schema.py``): tests/unit/test_schema_upgrade.py
fails while the models and the migrated schema differ.

Imports only SQLAlchemy and the standard library.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of every table."""


class JobRow(Base):
    """One job: its request, state and outcome (the script lives apart)."""

    __tablename__ = "jobs"

    job_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String)
    uid: Mapped[int] = mapped_column(BigInteger)
    gid: Mapped[int] = mapped_column(BigInteger)
    user: Mapped[str] = mapped_column(String, index=True)
    group: Mapped[str] = mapped_column(String)
    account: Mapped[str] = mapped_column(String)
    qos: Mapped[str] = mapped_column(String)
    partition: Mapped[str] = mapped_column(String)
    state: Mapped[str] = mapped_column(String, index=True)
    reason: Mapped[str] = mapped_column(String)
    nice: Mapped[int] = mapped_column(Integer)
    hold: Mapped[str] = mapped_column(String)
    time_limit: Mapped[int] = mapped_column(BigInteger)
    partition_time_limit: Mapped[bool] = mapped_column(Boolean, default=False)
    submit_time: Mapped[float] = mapped_column(Float)
    eligible_time: Mapped[float] = mapped_column(Float)
    start_time: Mapped[float] = mapped_column(Float)
    end_time: Mapped[float] = mapped_column(Float, index=True)
    request: Mapped[dict[str, object]] = mapped_column(JSON)
    allocation: Mapped[list[dict[str, object]] | None] = mapped_column(JSON, nullable=True)
    exit_code: Mapped[int] = mapped_column(Integer)
    exit_signal: Mapped[int] = mapped_column(Integer)
    kill_outcome: Mapped[str] = mapped_column(String)
    work_dir: Mapped[str] = mapped_column(Text)
    submit_dir: Mapped[str] = mapped_column(Text)
    stdout: Mapped[str] = mapped_column(Text)
    stderr: Mapped[str] = mapped_column(Text)
    stdin: Mapped[str] = mapped_column(Text)
    submit_host: Mapped[str] = mapped_column(String)
    command: Mapped[str] = mapped_column(Text)
    gres: Mapped[str] = mapped_column(String)
    batch: Mapped[bool] = mapped_column(Boolean)
    requeue: Mapped[bool] = mapped_column(Boolean)
    restarts: Mapped[int] = mapped_column(Integer)
    prio_process: Mapped[int] = mapped_column(Integer)
    last_sched_eval: Mapped[float] = mapped_column(Float)
    launched: Mapped[bool] = mapped_column(Boolean, default=False)
    array_job_id: Mapped[int] = mapped_column(Integer, index=True)
    array_task_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    array_tasks: Mapped[str] = mapped_column(Text)
    array_throttle: Mapped[int] = mapped_column(Integer)
    array_spec: Mapped[str] = mapped_column(Text)
    dependency: Mapped[str] = mapped_column(Text)
    kill_on_invalid_dep: Mapped[bool] = mapped_column(Boolean)
    begin_time: Mapped[float] = mapped_column(Float)
    deadline: Mapped[float] = mapped_column(Float)
    cancelled_by: Mapped[int] = mapped_column(BigInteger)
    max_rss: Mapped[int] = mapped_column(BigInteger)
    total_cpu: Mapped[float] = mapped_column(Float)
    comment: Mapped[str] = mapped_column(Text)
    mail_type: Mapped[str] = mapped_column(String)
    mail_user: Mapped[str] = mapped_column(String)
    open_mode: Mapped[str] = mapped_column(String)
    warn_signal: Mapped[int] = mapped_column(Integer)
    warn_time: Mapped[int] = mapped_column(Integer)
    warn_batch: Mapped[bool] = mapped_column(Boolean)
    warn_sent: Mapped[bool] = mapped_column(Boolean)
    reservation: Mapped[str] = mapped_column(String, default="")
    priority_set: Mapped[int] = mapped_column(BigInteger, default=0)
    options: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)


class JobScriptRow(Base):
    """What a batch job runs: its script, arguments and environment."""

    __tablename__ = "job_scripts"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.job_id"), primary_key=True)
    script: Mapped[bytes] = mapped_column(LargeBinary)
    argv: Mapped[list[str]] = mapped_column(JSON)
    environment: Mapped[dict[str, str]] = mapped_column(JSON)
    umask: Mapped[int] = mapped_column(Integer)


class NodeRow(Base):
    """What must survive a restart about a node: operator state and reasons."""

    __tablename__ = "nodes"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    state: Mapped[str] = mapped_column(String)
    drain: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str] = mapped_column(Text)
    reason_uid: Mapped[int] = mapped_column(BigInteger)
    reason_time: Mapped[float] = mapped_column(Float)
    reboot: Mapped[str] = mapped_column(String, default="")  # REBOOT_REQUESTED, REBOOT_ISSUED
    reboot_next: Mapped[str] = mapped_column(String, default="")  # RESUME, DOWN, UNDRAIN


class StepRow(Base):
    """One job step: its layout on the nodes, state and outcome."""

    __tablename__ = "steps"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.job_id"), primary_key=True)
    step_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String)
    state: Mapped[str] = mapped_column(String)
    nodes: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    ntasks: Mapped[int] = mapped_column(Integer)
    cpus_per_task: Mapped[int] = mapped_column(Integer)
    gpus_per_task: Mapped[int] = mapped_column(Integer)
    distribution: Mapped[str] = mapped_column(String)
    overlap: Mapped[bool] = mapped_column(Boolean)
    argv: Mapped[str] = mapped_column(Text)
    uid: Mapped[int] = mapped_column(BigInteger)
    gid: Mapped[int] = mapped_column(BigInteger)
    start_time: Mapped[float] = mapped_column(Float)
    end_time: Mapped[float] = mapped_column(Float)
    exit_code: Mapped[int] = mapped_column(Integer)
    signal: Mapped[int] = mapped_column(Integer)
    reported: Mapped[list[str]] = mapped_column(JSON)
    max_rss: Mapped[int] = mapped_column(BigInteger)
    total_cpu: Mapped[float] = mapped_column(Float)
    srun_host: Mapped[str] = mapped_column(String)
    srun_pid: Mapped[int] = mapped_column(Integer)
    tres_per_node: Mapped[str] = mapped_column(String)
    cancelled_by: Mapped[int] = mapped_column(BigInteger, default=-1)


class StepUsageRow(Base):
    """What a step's tasks used on one node, as its stepd last sampled them (for sacct).

    One row per node report, written once; ``run`` is the job's Restarts, so
    the earlier runs of a requeued job keep theirs. The batch script is the
    step ``BATCH_STEP`` on the job's first node.
    """

    __tablename__ = "step_usage"

    job_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    run: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    step_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    node: Mapped[str] = mapped_column(String, primary_key=True)
    tasks: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # TaskUsage's fields, a task each


class JobRunRow(Base):
    """An earlier run of a requeued job, as accounting keeps it (``sacct -D``)."""

    __tablename__ = "job_runs"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.job_id"), primary_key=True)
    run: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    state: Mapped[str] = mapped_column(String)  # how the run ended: REQUEUED, NODE_FAIL
    ended: Mapped[float] = mapped_column(Float)
    job: Mapped[dict[str, Any]] = mapped_column(JSON)  # the job's columns when it was requeued
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # the run's steps' columns


class AccountRow(Base):
    """One account (sacctmgr add account)."""

    __tablename__ = "accounts"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    description: Mapped[str] = mapped_column(Text)
    organization: Mapped[str] = mapped_column(Text)


class AcctUserRow(Base):
    """One user known to accounting (sacctmgr add user)."""

    __tablename__ = "acct_users"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    default_account: Mapped[str] = mapped_column(String)
    admin: Mapped[str] = mapped_column(String)


class AssocRow(Base):
    """One association (an account, or a user in an account), its limits and usage."""

    __tablename__ = "assocs"

    account: Mapped[str] = mapped_column(String, primary_key=True)
    user: Mapped[str] = mapped_column(String, primary_key=True)
    parent: Mapped[str] = mapped_column(String)
    shares: Mapped[int] = mapped_column(BigInteger)
    max_jobs: Mapped[int] = mapped_column(BigInteger)
    max_submit: Mapped[int] = mapped_column(BigInteger)
    grp_tres: Mapped[str] = mapped_column(String)
    raw_usage: Mapped[float] = mapped_column(Float)  # decayed TRES-seconds, charged to users
    usage_time: Mapped[float] = mapped_column(Float)  # when raw_usage was last decayed


class ReservationRow(Base):
    """One advance reservation (scontrol create reservation)."""

    __tablename__ = "reservations"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    start: Mapped[float] = mapped_column(Float)
    end: Mapped[float] = mapped_column(Float)  # inf: unlimited
    nodes: Mapped[list[str]] = mapped_column(JSON)
    users: Mapped[list[str]] = mapped_column(JSON)
    accounts: Mapped[list[str]] = mapped_column(JSON)
    flags: Mapped[list[str]] = mapped_column(JSON)
    partition: Mapped[str] = mapped_column(String)


class QosRow(Base):
    """One QOS (sacctmgr add qos): its priority and per-user limits."""

    __tablename__ = "qos"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    description: Mapped[str] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(BigInteger)
    max_jobs_pu: Mapped[int] = mapped_column(BigInteger)
    max_submit_pu: Mapped[int] = mapped_column(BigInteger)
    preempt: Mapped[str] = mapped_column(String, default="")  # QOS names, comma-separated
    preempt_mode: Mapped[str] = mapped_column(String, default="")  # "": the cluster's
