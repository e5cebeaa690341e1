"""What a user's request does to jobs: find, cancel, hold, release, update.

Each function reads the cluster state and returns an :class:`Outcome`
(records to save, records to insert, intents, per-job results) without
changing anything; the controller commits it. Jobs are named by id, by
array (``123``: every record of the array), or by array tasks
(``123_4``, ``123_[1-3]``) through :mod:`ctld.selection`.

Imports ctld's pure modules and minislurm.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field, replace

from ctld import arrays as arrayops
from ctld import holds, jobupdate
from ctld import jobs as jobops
from ctld.intents import Intent, Signal, SignalStep
from ctld.selection import Selection, select, split_waiting
from ctld.state import ClusterState
from minislurm.errors import InvalidTransition, JobNotFound, PermissionDenied
from minislurm.model import Job, Step
from minislurm.requests import CancelRequest, HoldRequest, JobQuery, JobUpdate
from minislurm.states import TERMINAL_JOB_STATES, JobEvent, JobState

INVALID_ID = "Invalid job id specified"
INVALID_USER = "Invalid user id"  # Slurm's refusal of a step to one not its job's owner
SIGKILL = 9


@dataclass
class Outcome:
    """What a request changes, and what it answers."""

    changed: dict[int, Job] = field(default_factory=dict)  # by job id
    new_ids: set[int] = field(default_factory=set)  # array tasks split off: to insert
    intents: list[Intent] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # steps changed: to save
    results: list[tuple[int, str, str]] = field(default_factory=list)  # (job id, ref, error)

    def records(self) -> tuple[list[Job], list[Job]]:
        """The records to save and those to insert."""
        saved = [j for i, j in self.changed.items() if i not in self.new_ids]
        inserted = [j for i, j in self.changed.items() if i in self.new_ids]
        return saved, inserted


def authorize(job: Job, uid: int, operators: Container[int], message: str = jobops.DENIED) -> None:
    """Only the owner, root or an operator may act on a job.

    Args:
        job: the job.
        uid: the requester.
        operators: uids of configured operators.
        message: what anyone else is told: Slurm says ``Access/permission
            denied`` to a cancel or requeue, ``Invalid user id`` to a hold,
            release or update.

    Raises:
        PermissionDenied: anyone else.
    """
    if uid != 0 and uid != job.uid and uid not in operators:
        raise PermissionDenied(message)


def find(state: ClusterState, request: JobQuery) -> list[Job]:
    """The jobs a query selects, by job id.

    An array's id selects all its records; a task reference selects the
    tasks' records, and the array's pending record when it holds one of them.

    Args:
        state: the cluster.
        request: ids, task references, users, partitions, states and names to match.

    Returns:
        The matching jobs.

    Raises:
        JobNotFound: ids were given and none of them is known.
    """
    if request.job_ids or request.array_tasks:
        chosen = select(state, list(request.job_ids), list(request.array_tasks))
        found = {job.job_id: job for _, job in chosen.jobs}
        for _, array_id, _ in chosen.waiting:
            found[array_id] = state.jobs[array_id]
        if not found:
            raise JobNotFound(request.job_ids[0] if request.job_ids else 0)
        candidates: Iterable[Job] = [found[i] for i in sorted(found)]
    else:
        candidates = (state.jobs[i] for i in sorted(state.jobs))
    return [job for job in candidates if _matches(job, request)]


def _matches(job: Job, request: JobQuery) -> bool:
    if request.states:
        if job.state.value not in request.states:
            return False
    elif not request.all_states and job.state in TERMINAL_JOB_STATES:
        return False
    users = request.users
    return (
        (not users or job.user in users or str(job.uid) in users)
        and (not request.partitions or job.partition in request.partitions)
        and (not request.names or job.name in request.names)
    )


def cancel(
    state: ClusterState, request: CancelRequest, operators: Container[int], now: float
) -> Outcome:
    """scancel: cancel or signal jobs, array tasks or one step.

    Pending tasks named alone leave the array's pending record (they never
    ran, so nothing else remains of them, as in Slurm). SIGKILL to a job,
    unless to its batch shell alone, cancels it, as Slurm's scancel's
    default signal does.

    Args:
        state: the cluster.
        request: ids, task references or filters; a signal; a step.
        operators: uids of operators.
        now: the time.

    Returns:
        The outcome, with one result per record considered.
    """
    out = Outcome()
    if request.has_step:
        _cancel_step(state, request, operators, out)
        return out
    if request.signal == SIGKILL and not request.batch_only:
        # Slurm's SIGKILL to a job (not to its batch shell alone) is its cancellation.
        request = replace(request, signal=0)
    if request.job_ids or request.array_tasks:
        chosen = select(state, list(request.job_ids), list(request.array_tasks))
        targets = chosen.jobs
        out.results += [(0, ref, INVALID_ID) for ref in chosen.missing]
        _drop_waiting(state, chosen, request, operators, now, out)
    else:
        query = JobQuery(
            users=(request.user,) if request.user else (),
            partitions=(request.partition,) if request.partition else (),
            states=request.states,
            names=(request.name,) if request.name else (),
        )
        targets = [(str(j.job_id), j) for j in find(state, query)]
    for ref, job in targets:
        error = _cancel_one(out.changed.get(job.job_id, job), request, operators, now, out)
        out.results.append((job.job_id, ref, error))
    return out


def _drop_waiting(
    state: ClusterState,
    chosen: Selection,
    request: CancelRequest,
    operators: Container[int],
    now: float,
    out: Outcome,
) -> None:
    for ref, array_id, tasks in chosen.waiting:
        record = out.changed.get(array_id, state.jobs[array_id])
        try:
            authorize(record, request.requester_uid, operators)
        except PermissionDenied as err:
            out.results.append((array_id, ref, str(err)))
            continue
        if request.signal:
            out.results.append((array_id, ref, jobops.NOT_NOW))
            continue
        rest = arrayops.pending_tasks(record).without(tasks)
        if rest:
            out.changed[array_id] = replace(record, array_tasks=str(rest))
        else:
            cancelled = jobops.cancel_pending(record, now)
            out.changed[array_id] = replace(cancelled, cancelled_by=request.requester_uid)
        out.results.append((array_id, ref, ""))


def _cancel_one(
    job: Job, request: CancelRequest, operators: Container[int], now: float, out: Outcome
) -> str:
    try:
        authorize(job, request.requester_uid, operators)
    except PermissionDenied as err:
        return str(err)
    if job.state in TERMINAL_JOB_STATES or job.state is JobState.COMPLETING:
        return jobops.ALREADY_DONE
    alloc = job.allocation
    if request.signal:
        if job.state is JobState.PENDING or alloc is None:
            return jobops.NOT_NOW
        signal = Signal(
            job.job_id, alloc.node_names, request.signal, request.batch_only, request.full
        )
        out.intents.append(signal)
        return ""
    by = request.requester_uid
    if job.state is JobState.PENDING:
        out.changed[job.job_id] = replace(jobops.cancel_pending(job, now), cancelled_by=by)
        return ""
    assert alloc is not None
    killing, kill = jobops.begin_kill(job, JobEvent.CANCEL, now)
    out.changed[job.job_id] = replace(killing, cancelled_by=by)
    out.intents += kill
    return ""


def _cancel_step(
    state: ClusterState, request: CancelRequest, operators: Container[int], out: Outcome
) -> None:
    """``scancel 123.0``: kill one running step, or send its tasks a signal.

    A kill (no signal, or SIGKILL) records who asked: the step ends
    CANCELLED (``CANCELLED by <uid>``) however its tasks die. A step that is
    not running, or whose job is not, is ``Invalid job id specified``.
    """
    refs = [*map(str, request.job_ids), *request.array_tasks]
    ref = f"{refs[0] if refs else ''}.{request.step_id}"
    chosen = select(state, list(request.job_ids), list(request.array_tasks))
    jobs = [j for _, j in chosen.jobs if j.array_task_id is not None or not j.array_job_id]
    if len(jobs) != 1:
        out.results.append((0, ref, INVALID_ID))
        return
    job = jobs[0]
    try:
        authorize(job, request.requester_uid, operators)
    except PermissionDenied:
        out.results.append((job.job_id, ref, INVALID_USER))
        return
    step = state.steps.get(job.job_id, {}).get(request.step_id)
    if job.state is not JobState.RUNNING or step is None or step.state is not JobState.RUNNING:
        out.results.append((job.job_id, ref, INVALID_ID))
        return
    signal = request.signal or SIGKILL
    if signal == SIGKILL:
        out.steps.append(replace(step, cancelled_by=request.requester_uid))
    out.intents.append(SignalStep(job.job_id, step.step_id, step.node_names, signal))
    out.results.append((job.job_id, ref, ""))


def hold(
    state: ClusterState, request: HoldRequest, operators: Container[int], now: float
) -> Outcome:
    """scontrol hold, uhold and release, of jobs, arrays or array tasks.

    Args:
        state: the cluster.
        request: ids or task references, and the action.
        operators: uids of operators.
        now: the time.

    Returns:
        The outcome, with one result per record.
    """
    out = Outcome()
    chosen = select(state, list(request.job_ids), list(request.array_tasks))
    split_waiting(chosen, state)
    out.results += [(0, ref, INVALID_ID) for ref in chosen.missing]
    operator = request.requester_uid == 0 or request.requester_uid in operators
    for ref, job in chosen.jobs:
        try:
            authorize(job, request.requester_uid, operators, jobops.USER_ID_MISSING)
            out.changed[job.job_id] = holds.hold_action(job, request.action, operator, now)
            out.results.append((job.job_id, ref, ""))
        except (PermissionDenied, InvalidTransition) as err:
            out.results.append((job.job_id, ref, str(err)))
    _keep_split(chosen, out)
    return out


def _keep_split(chosen: Selection, out: Outcome) -> None:
    """Save what a split made (new task records, the smaller pending record), acted on or not."""
    for _, job in chosen.jobs:
        if job.job_id in chosen.new_ids:
            out.changed.setdefault(job.job_id, job)
    for array_id, rest in chosen.pending.items():
        out.changed.setdefault(array_id, rest)
    out.new_ids |= chosen.new_ids


def update(
    state: ClusterState,
    request: JobUpdate,
    operators: Container[int],
    now: float,
    priority_of: Callable[[Job], int],
) -> Outcome:
    """scontrol update JobId=...: change a job, every record of an array, or one task.

    Args:
        state: the cluster.
        request: the job (and array task) and the fields to change.
        operators: uids of operators.
        now: the time.
        priority_of: a job's priority as shown now.

    Returns:
        The outcome.

    Raises:
        JobNotFound: no such job or task.
        PermissionDenied: not the owner or an operator, or a change only operators may make.
        InvalidRequest: an invalid value.
        InvalidTransition: the change needs a pending job.
    """
    if request.array_task_id is not None:
        chosen = select(state, [], [f"{request.job_id}_{request.array_task_id}"])
    else:
        chosen = select(state, [request.job_id], [])
    split_waiting(chosen, state)
    if not chosen.jobs:
        raise JobNotFound(request.job_id)
    operator = request.requester_uid == 0 or request.requester_uid in operators
    out = Outcome()
    records = [job for _, job in chosen.jobs]
    live = [job for job in records if job.state not in TERMINAL_JOB_STATES]
    pending = [job for job in live if job.state is JobState.PENDING]
    # A whole array: its pending tasks change; its running ones only when none pends.
    for job in (pending if len(records) > 1 and pending else live) or records[:1]:
        authorize(job, request.requester_uid, operators, jobops.USER_ID_MISSING)
        out.changed[job.job_id] = jobupdate.updated(
            job, request, operator, state, now, priority_of(job)
        )
    _keep_split(chosen, out)
    return out
