"""Job arrays in the controller: one record for the pending tasks, one per task split off.

An array is submitted as a single record (job id = array job id) that
holds its pending task ids as text. A task gets a record of its own only
when it starts, or when it is acted on alone (held, cancelled, updated):
it is then split off under a new job id, except the last pending task,
which takes over the array's record itself (as Slurm does, so ``8_3`` may
have job id 8). A 10,000-task array is therefore one row until its tasks
run.

Imports minislurm only.
"""

from __future__ import annotations

from dataclasses import replace

from minislurm.arrays import TaskSet
from minislurm.model import Job


def is_pending_record(job: Job) -> bool:
    """Whether a record stands for an array's pending tasks (not one task).

    Args:
        job: a record.

    Returns:
        True for an array's pending tasks' record.
    """
    return bool(job.array_job_id) and job.array_task_id is None


def pending_tasks(job: Job) -> TaskSet:
    """The task ids an array's pending record stands for (empty for other records).

    Args:
        job: a record.

    Returns:
        The ids.
    """
    return TaskSet.parse(job.array_tasks) if is_pending_record(job) else TaskSet()


def task_label(job: Job | None) -> str:
    """The tasks an array's record stands for, as Slurm names them in its replies.

    Args:
        job: a record, or None.

    Returns:
        ``12_4`` for a task, ``12_5-9`` for the pending tasks' record, "" for
        a record that is not an array's.
    """
    if job is None or not job.array_job_id:
        return ""
    tasks = job.array_tasks if job.array_task_id is None else str(job.array_task_id)
    return f"{job.array_job_id}_{tasks}"


def split_task(record: Job, task: int, new_id: int) -> tuple[Job, Job | None]:
    """Give one pending task of an array a record of its own.

    Args:
        record: the array's pending record; ``task`` must be among its tasks.
        task: the task id.
        new_id: the job id the task gets, unless it is the last pending task.

    Returns:
        ``(task_record, pending_record)``: the task's record (with ``new_id``,
        or the array's id when it was the last task) and the pending record
        without that task, or None when no task is left pending.
    """
    rest = TaskSet.parse(record.array_tasks).without([task])
    if not rest:
        return replace(record, array_task_id=task, array_tasks=""), None
    return (
        replace(record, job_id=new_id, array_task_id=task, array_tasks=""),
        replace(record, array_tasks=str(rest)),
    )


def select_tasks(records: list[Job], tasks: TaskSet | None) -> tuple[list[Job], list[int]]:
    """Which records of an array a reference names, and which pending tasks.

    Args:
        records: every remembered record of the array.
        tasks: the task ids named (None: the whole array).

    Returns:
        ``(records, pending)``: the task records named, and the ids named
        that are still in the pending record (to be split off to act on
        them alone). With ``tasks`` None, every record and no split.
    """
    if tasks is None:
        return records, []
    named = [r for r in records if r.array_task_id is not None and r.array_task_id in tasks]
    waiting = next((r for r in records if is_pending_record(r)), None)
    pending = [t for t in pending_tasks(waiting) if t in tasks] if waiting else []
    return named, pending
