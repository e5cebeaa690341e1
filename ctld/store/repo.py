"""Queries on the controller's database.

Every function takes a :class:`~sqlalchemy.orm.Session` whose transaction
the caller owns (one per RPC or scheduling cycle) and speaks in
:mod:`minislurm.model` dataclasses, never rows.

Imports ctld.store.models, minislurm.model and minislurm.states.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, fields
from typing import Any

from sqlalchemy import (
    Engine,
    Table,
    bindparam,
    event,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from ctld.store.models import JobRow, JobScriptRow, NodeRow, StepRow, StepUsageRow
from minislurm.model import (
    Allocation,
    Job,
    JobScript,
    NodeAlloc,
    ResourceRequest,
    Step,
    StepNodeAlloc,
)
from minislurm.requests import NodeStepStat, TaskUsage
from minislurm.states import ACTIVE_JOB_STATES, KILL_EVENTS, JobState, kill_name

_JOB_FIELDS = tuple(f.name for f in fields(Job))
_REQUEST_FIELDS = tuple(f.name for f in fields(ResourceRequest))
# Inserts go to the tables (Core), not through the ORM's per-object bookkeeping.
JOBS: Table = JobRow.__table__  # type: ignore[assignment]
JOB_SCRIPTS: Table = JobScriptRow.__table__  # type: ignore[assignment]
STEPS: Table = StepRow.__table__  # type: ignore[assignment]
# The kill that began is kept in column kill_outcome under its name (CANCELLED, TIMEOUT...).
_ROW_ONLY = frozenset({"request", "allocation", "state", "options", "kill_event"})


def enable_sqlite_pragmas(engine: Engine) -> None:
    """Put every connection of ``engine`` in WAL mode with a single writer in mind.

    ``synchronous=NORMAL`` in WAL mode keeps every committed transaction
    across a crash of the process (SIGKILL), which is what "acknowledged
    means durable" asks; only a power loss may drop the last commits.

    Args:
        engine: a SQLite engine.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=5000")
        cur.close()


def _request_to_json(req: ResourceRequest) -> dict[str, object]:
    # Flat fields read one by one: asdict() deep-copies each, at 4x the cost.
    data: dict[str, object] = {name: getattr(req, name) for name in _REQUEST_FIELDS}
    data["req_nodes"] = list(req.req_nodes)
    data["exc_nodes"] = list(req.exc_nodes)
    data["untyped_nodes"] = sorted(req.untyped_nodes)
    return data


def _request_from_json(data: dict[str, Any]) -> ResourceRequest:
    data = dict(data)
    data["req_nodes"] = tuple(data.get("req_nodes", ()))
    data["exc_nodes"] = tuple(data.get("exc_nodes", ()))
    data["untyped_nodes"] = frozenset(data.get("untyped_nodes", ()))
    return ResourceRequest(**data)


def _alloc_to_json(alloc: Allocation | None) -> list[dict[str, object]] | None:
    if alloc is None:
        return None
    return [
        {"node": n.node, "cpus": n.cpus, "mem": n.mem, "gpus": list(n.gpus), "ntasks": n.ntasks}
        for n in alloc.nodes
    ]


def _alloc_from_json(data: list[dict[str, Any]] | None) -> Allocation | None:
    if data is None:
        return None
    return Allocation(
        tuple(
            NodeAlloc(d["node"], d["cpus"], d["mem"], tuple(d["gpus"]), d["ntasks"]) for d in data
        )
    )


def job_columns(job: Job) -> dict[str, Any]:
    """The column values of ``job``'s row.

    Args:
        job: the record.

    Returns:
        A mapping from column name to value.
    """
    values: dict[str, Any] = {
        name: getattr(job, name) for name in _JOB_FIELDS if name not in _ROW_ONLY
    }
    values["state"] = job.state.value
    values["kill_outcome"] = kill_name(job.kill_event)
    values["request"] = _request_to_json(job.request)
    values["allocation"] = _alloc_to_json(job.allocation)
    values["options"] = dict(job.options)
    return values


def job_from_row(row: JobRow) -> Job:
    """The record a job's row holds.

    Args:
        row: the row (or one built from :func:`job_columns`).

    Returns:
        The job.
    """
    values = {name: getattr(row, name) for name in _JOB_FIELDS if name not in _ROW_ONLY}
    return Job(
        state=JobState(row.state),
        kill_event=KILL_EVENTS.get(row.kill_outcome),
        request=_request_from_json(row.request),
        allocation=_alloc_from_json(row.allocation),
        options=dict(row.options or {}),
        **values,
    )


def insert_jobs(session: Session, jobs: list[tuple[Job, JobScript]]) -> None:
    """Insert new jobs with their scripts, in one round of statements.

    Args:
        session: the open transaction.
        jobs: the new records with their scripts.
    """
    insert_records(session, [job for job, _ in jobs])
    session.execute(
        insert(JOB_SCRIPTS),
        [
            {
                "job_id": job.job_id,
                "script": script.script,
                "argv": script.argv,
                "environment": script.environment,
                "umask": script.umask,
            }
            for job, script in jobs
        ],
    )


def insert_records(session: Session, jobs: list[Job]) -> None:
    """Insert job records that have no script of their own (array tasks split off).

    Args:
        session: the open transaction.
        jobs: the new records.
    """
    session.execute(insert(JOBS), [job_columns(job) for job in jobs])


# One statement for every save: the row's key is a parameter, and the columns come
# with the parameters. A statement carrying its values is compiled and cache-keyed
# anew each time: 60% of the controller's CPU when a thousand jobs start and end.
_SAVE_JOB = update(JOBS).where(JOBS.c.job_id == bindparam("saved_job_id"))


def save_jobs(session: Session, jobs: list[Job]) -> None:
    """Write every column of existing jobs, in one statement executed for each.

    Args:
        session: the open transaction.
        jobs: the records as they now are.
    """
    if jobs:
        session.execute(
            _SAVE_JOB, [{**job_columns(job), "saved_job_id": job.job_id} for job in jobs]
        )


def load_jobs(session: Session, ended_since: float) -> list[Job]:
    """Jobs still pending or holding resources, and those ended since a time.

    Args:
        session: the open transaction.
        ended_since: epoch seconds; finished jobs that ended earlier are left out.

    Returns:
        The records, by job id.
    """
    active = [s.value for s in ACTIVE_JOB_STATES] + [JobState.PENDING.value]
    rows = session.scalars(
        select(JobRow)
        .where(or_(JobRow.state.in_(active), JobRow.end_time >= ended_since))
        .order_by(JobRow.job_id)
    )
    return [job_from_row(r) for r in rows]


def load_script(session: Session, job_id: int) -> JobScript:
    """A job's script, arguments, environment and umask.

    Args:
        session: the open transaction.
        job_id: the job.

    Returns:
        The script.

    Raises:
        KeyError: no script stored for that job.
    """
    row = session.get(JobScriptRow, job_id)
    if row is None:
        raise KeyError(job_id)
    return JobScript(row.script, list(row.argv), dict(row.environment), row.umask)


def max_job_id(session: Session) -> int:
    """The highest job id ever used, 0 when none.

    Args:
        session: the open transaction.

    Returns:
        The id.
    """
    return session.scalar(select(func.max(JobRow.job_id))) or 0


def save_node(
    session: Session,
    name: str,
    state: str,
    drain: bool,
    reason: str,
    uid: int,
    reboot: str,
    reboot_next: str,
    when: float,
) -> None:
    """Record a node's operator-visible state (insert or replace).

    Args:
        session: the open transaction.
        name: the node.
        state: its stored base state.
        drain: whether it is drained.
        reason: the operator's or controller's reason, "" when none.
        uid: who set the reason.
        reboot: REBOOT_REQUESTED or REBOOT_ISSUED while ``scontrol reboot`` is under way.
        reboot_next: the reboot's next state.
        when: when the reason was set.
    """
    row = session.get(NodeRow, name)
    if row is None:
        row = NodeRow(name=name)
        session.add(row)
    row.state, row.drain, row.reason, row.reason_uid, row.reason_time = (
        state,
        drain,
        reason,
        uid,
        when,
    )
    row.reboot, row.reboot_next = reboot, reboot_next


def load_nodes(session: Session) -> list[tuple[str, str, bool, str, int, float, str, str]]:
    """Every node's saved state.

    Args:
        session: the open transaction.

    Returns:
        ``(name, state, drain, reason, reason_uid, reason_time, reboot, reboot_next)`` tuples.
    """
    return [
        (r.name, r.state, r.drain, r.reason, r.reason_uid, r.reason_time, r.reboot, r.reboot_next)
        for r in session.scalars(select(NodeRow))
    ]


_STEP_FIELDS = tuple(f.name for f in fields(Step))


def step_columns(step: Step) -> dict[str, Any]:
    """The column values of ``step``'s row.

    Args:
        step: the record.

    Returns:
        A mapping from column name to value.
    """
    values: dict[str, Any] = {name: getattr(step, name) for name in _STEP_FIELDS}
    values["state"] = step.state.value
    values["reported"] = sorted(step.reported)
    values["nodes"] = [
        {
            "node": n.node,
            "cpus": n.cpus,
            "mem": n.mem,
            "gpus": list(n.gpus),
            "task_ids": list(n.task_ids),
        }
        for n in step.nodes
    ]
    return values


def step_from_row(row: StepRow) -> Step:
    """The record a step's row holds.

    Args:
        row: the row (or one built from :func:`step_columns`).

    Returns:
        The step.
    """
    # A column an older version lacked (an archived run's steps) keeps the field's default.
    values = {name: getattr(row, name) for name in _STEP_FIELDS if getattr(row, name) is not None}
    values["state"] = JobState(row.state)
    values["reported"] = frozenset(row.reported)
    values["nodes"] = tuple(
        StepNodeAlloc(n["node"], n["cpus"], n["mem"], tuple(n["gpus"]), tuple(n["task_ids"]))
        for n in row.nodes
    )
    return Step(**values)


# What nodes' reports of a step's end change: not its layout (``nodes``, as many
# entries as the step has nodes, written once when the step starts).
_REPORT_FIELDS = ("state", "end_time", "exit_code", "signal", "reported", "max_rss", "total_cpu")
_SAVE_REPORT = (
    update(STEPS)
    .where(STEPS.c.job_id == bindparam("saved_job_id"))
    .where(STEPS.c.step_id == bindparam("saved_step_id"))
)


def save_step_reports(session: Session, steps: list[Step]) -> None:
    """Write the columns that nodes' reports change of existing steps, in one statement.

    Args:
        session: the open transaction.
        steps: the records as they now are.
    """
    if not steps:
        return
    rows = []
    for step in steps:
        values = {name: getattr(step, name) for name in _REPORT_FIELDS}
        values["state"] = step.state.value
        values["reported"] = sorted(step.reported)
        rows.append({**values, "saved_job_id": step.job_id, "saved_step_id": step.step_id})
    session.execute(_SAVE_REPORT, rows)


UsageKey = tuple[int, int, int]  # job id, run (the job's Restarts), step id


def save_usage(session: Session, rows: list[tuple[UsageKey, NodeStepStat]]) -> None:
    """Keep what steps' tasks used on nodes (one row per node report; a repeat replaces it).

    Args:
        session: the open transaction.
        rows: each report's step and the node's tasks' figures.
    """
    for (job_id, run, step_id), stat in rows:
        session.merge(
            StepUsageRow(
                job_id=job_id,
                run=run,
                step_id=step_id,
                node=stat.node,
                tasks=[asdict(task) for task in stat.tasks],
            )
        )


def load_usage(session: Session, job_ids: Collection[int]) -> dict[UsageKey, list[NodeStepStat]]:
    """What the steps of the given jobs used, node by node.

    Args:
        session: the open transaction.
        job_ids: the jobs.

    Returns:
        Each step's nodes' figures, by (job id, run, step id); nodes in name order.
    """
    found: dict[UsageKey, list[NodeStepStat]] = {}
    ids = sorted(job_ids)
    for start in range(0, len(ids), _ID_CHUNK):
        query = select(StepUsageRow).where(StepUsageRow.job_id.in_(ids[start : start + _ID_CHUNK]))
        for row in session.scalars(query.order_by(StepUsageRow.node)):
            tasks = tuple(TaskUsage(**task) for task in row.tasks)
            key = (row.job_id, row.run, row.step_id)
            found.setdefault(key, []).append(NodeStepStat(node=row.node, tasks=tasks))
    return found


def save_step(session: Session, step: Step, new: bool = False) -> None:
    """Insert a new step or write every column of an existing one.

    Args:
        session: the open transaction.
        step: the record as it now is.
        new: insert rather than update.
    """
    values = step_columns(step)
    if new:
        session.execute(insert(STEPS), [values])
    else:
        session.execute(
            update(StepRow)
            .where(StepRow.job_id == step.job_id, StepRow.step_id == step.step_id)
            .values(values)
        )


def load_steps(session: Session, job_ids: list[int]) -> list[Step]:
    """The steps of the given jobs.

    Args:
        session: the open transaction.
        job_ids: the jobs.

    Returns:
        Their steps, by job and step id.
    """
    rows = session.scalars(
        select(StepRow).where(StepRow.job_id.in_(job_ids)).order_by(StepRow.job_id, StepRow.step_id)
    )
    return [step_from_row(r) for r in rows]


_ID_CHUNK = 500  # ids per IN (...) list: SQLite caps a statement's parameters


def load_accounting(
    session: Session,
    job_ids: Collection[int] = (),
    users: Collection[str] = (),
    partitions: Collection[str] = (),
    active_since: float = 0.0,
) -> list[tuple[Job, list[Step]]]:
    """Job records with their steps for accounting (sacct), old ones included.

    Only the filters a query can apply exactly are here; the caller applies
    the rest (states, the time window's details, single steps).

    Args:
        session: the open transaction.
        job_ids: only these jobs, or the tasks of these arrays (empty: any).
        users: only jobs of these users, by name or uid as text (empty: any).
        partitions: only jobs submitted to these partitions (empty: any).
        active_since: leave out jobs that ended before this time (0: none).

    Returns:
        ``(job, its steps by step id)`` pairs, by job id.
    """
    query = select(JobRow)
    if job_ids:
        query = query.where(or_(JobRow.job_id.in_(job_ids), JobRow.array_job_id.in_(job_ids)))
    if users:
        uids = [int(u) for u in users if u.isdigit()]
        query = query.where(or_(JobRow.user.in_(users), JobRow.uid.in_(uids)))
    if partitions:
        query = query.where(JobRow.partition.in_(partitions))
    if active_since:
        unfinished = [s.value for s in ACTIVE_JOB_STATES] + [JobState.PENDING.value]
        query = query.where(or_(JobRow.end_time >= active_since, JobRow.state.in_(unfinished)))
    jobs = [job_from_row(r) for r in session.scalars(query.order_by(JobRow.job_id))]
    steps: dict[int, list[Step]] = {job.job_id: [] for job in jobs}
    ids = list(steps)
    for start in range(0, len(ids), _ID_CHUNK):
        for step in load_steps(session, ids[start : start + _ID_CHUNK]):
            steps[step.job_id].append(step)
    return [(job, steps[job.job_id]) for job in jobs]
