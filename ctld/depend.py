"""Whether a pending job's dependency holds, given the other jobs as they now are.

``resolve`` settles what can be settled for good: fulfilled items are
dropped and items that can never be fulfilled are marked failed (the
controller persists the result, so that a job's fate does not hang on
other jobs staying in memory). ``wait_reason`` answers, for the job or one
of its array tasks, whether it must still wait: ``Dependency``,
``DependencyNeverSatisfied`` or "".

A job id that the controller does not know is taken as fulfilled (Slurm
accepts ``afterok:<unknown id>`` and does not wait on it).

Imports ctld.state and minislurm.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.state import ClusterState
from minislurm.arrays import TaskSet
from minislurm.depend import Dependency, DepItem
from minislurm.model import Job
from minislurm.states import ACTIVE_JOB_STATES, TERMINAL_JOB_STATES, JobState

REASON_DEPENDENCY = "Dependency"
REASON_NEVER = "DependencyNeverSatisfied"

OPEN, FULFILLED, FAILED = "open", "fulfilled", "failed"


def _targets(item: DepItem, task: int | None, state: ClusterState) -> list[Job] | None:
    """The records an item waits on; None when they are unknown (taken as fulfilled).

    A pending array's record stands for all its pending tasks.
    """
    if item.kind == "aftercorr" and task is not None:
        wanted: int | None = task
    else:
        wanted = item.task
    members = state.array_records(item.job_id)
    if not members:
        job = state.jobs.get(item.job_id)
        if job is None:
            return None
        if job.array_job_id != job.job_id or wanted is None:
            return [job]
        members = state.array_records(job.array_job_id)
    if wanted is None:
        return members
    found = [
        j
        for j in members
        if j.array_task_id == wanted
        or (j.array_task_id is None and wanted in TaskSet.parse(j.array_tasks))
    ]
    return found or None


def _status(kind: str, jobs: list[Job], minutes: int, now: float) -> str:
    states = [j.state for j in jobs]
    if kind == "after":
        started = all(s is not JobState.PENDING for s in states)
        late = all(j.start_time + minutes * 60 <= now for j in jobs)
        return FULFILLED if started and late else OPEN
    done = all(s in TERMINAL_JOB_STATES for s in states)
    if kind == "afterany":
        return FULFILLED if done else OPEN
    bad = [s in TERMINAL_JOB_STATES and s is not JobState.COMPLETED for s in states]
    if kind in ("afterok", "aftercorr"):
        return FAILED if any(bad) else FULFILLED if done else OPEN
    # afternotok
    if not done:
        return OPEN
    return FULFILLED if any(bad) else FAILED


def item_status(item: DepItem, task: int | None, state: ClusterState, now: float) -> str:
    """Whether one item is fulfilled, failed or still open.

    Args:
        item: the item (not singleton).
        task: the dependent array task, for ``aftercorr`` (None: not a task).
        state: the cluster.
        now: the time (``after:ID+minutes``).

    Returns:
        OPEN, FULFILLED or FAILED.
    """
    if item.failed:
        return FAILED
    jobs = _targets(item, task, state)
    if jobs is None:
        return FULFILLED
    return _status(item.kind, jobs, item.minutes, now)


def singleton_free(job: Job, state: ClusterState) -> bool:
    """No other job of the same user and name runs, nor waits since before this one.

    Args:
        job: the dependent job.
        state: the cluster.

    Returns:
        True when a ``singleton`` job may start.
    """
    for other in state.jobs.values():
        if other.uid != job.uid or other.name != job.name or other.job_id == job.job_id:
            continue
        if other.state in ACTIVE_JOB_STATES and other.state is not JobState.COMPLETING:
            return False
        if other.state is JobState.PENDING and other.job_id < job.job_id:
            return False
    return True


def resolve(dep: Dependency, job: Job, state: ClusterState, now: float) -> Dependency:
    """Settle what can be settled of a pending job's dependency.

    ``singleton`` items, and ``aftercorr`` items of an array's pending
    tasks (each task has its own), stay open: they are decided each time.

    Args:
        dep: the job's dependency.
        job: the job.
        state: the cluster.
        now: the time.

    Returns:
        The dependency without fulfilled items (empty when a ``?`` item was
        fulfilled), with failed items marked.
    """
    kept: list[DepItem] = []
    for item in dep.items:
        per_task = item.kind == "aftercorr" and job.array_task_id is None and job.array_job_id
        if item.kind == "singleton" or per_task or item.failed:
            kept.append(item)
            continue
        status = item_status(item, job.array_task_id, state, now)
        if status == FULFILLED:
            if dep.any_of:
                return Dependency()
            continue
        kept.append(replace(item, failed=True) if status == FAILED else item)
    return Dependency(tuple(kept), dep.any_of)


def wait_reason(
    dep: Dependency, job: Job, task: int | None, state: ClusterState, now: float
) -> str:
    """Why a job (or one of its array's pending tasks) must still wait on its dependency.

    Args:
        dep: the job's dependency, as resolved.
        job: the job.
        task: the array task considered, or None.
        state: the cluster.
        now: the time.

    Returns:
        "" (free to start), ``Dependency`` or ``DependencyNeverSatisfied``.
    """
    if not dep.items:
        return ""
    statuses = []
    for item in dep.items:
        if item.kind == "singleton":
            statuses.append(FULFILLED if singleton_free(job, state) else OPEN)
        else:
            statuses.append(item_status(item, task, state, now))
    if dep.any_of:
        if FULFILLED in statuses:
            return ""
        return REASON_NEVER if all(s == FAILED for s in statuses) else REASON_DEPENDENCY
    if FAILED in statuses:
        return REASON_NEVER
    return "" if all(s == FULFILLED for s in statuses) else REASON_DEPENDENCY
