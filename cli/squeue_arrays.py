"""How squeue shows job arrays: a line per pending task with ``-r``, or one for them all.

Imports minislurm.arrays only.
"""

from __future__ import annotations

from minislurm.arrays import TaskSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container

    from minislurm.wire.protowire import Message


def expand(jobs: list[Message], every_task: bool, named: dict[int, TaskSet]) -> list[Message]:
    """One line per pending array task with ``-r`` or when tasks were named with ``-j``.

    Args:
        jobs: the jobs of the reply.
        every_task: ``-r``.
        named: the tasks ``-j`` named, by array.

    Returns:
        The jobs, pending records expanded, and only the named tasks of an
        array whose tasks were named.
    """
    out: list[Message] = []
    for job in jobs:
        tasks = named.get(job.array_job_id) if job.array_job_id else None
        if job.has("array_task_id"):
            if tasks is None or job.array_task_id in tasks:
                out.append(job)
        elif job.array_job_id and (every_task or tasks is not None):
            out += [
                job.replaced(array_task_id=task, array_tasks="")
                for task in TaskSet.parse(job.array_tasks)
                if tasks is None or task in tasks
            ]
        else:
            out.append(job)
    return out


def combine(jobs: list[Message], named: Container[int] = ()) -> list[Message]:
    """Fold an array's pending tasks that have records of their own into its pending record.

    As Slurm's squeue does without ``-r`` or ``--array-unique``: a task split
    from the record (held, updated) that still pends, with the same name and
    partition, shows in its array's line again, whose reason gains the
    task's (``None,JobHeldAdmin``) and whose tasks are then written as runs
    of ids, without the throttle.

    Args:
        jobs: the jobs to print.
        named: arrays whose tasks ``-j`` named (each of those shows apart).

    Returns:
        The jobs, such tasks folded into their array's record.
    """
    records = {
        job.array_job_id: job
        for job in jobs
        if job.array_job_id
        and not job.has("array_task_id")
        and job.state == "PENDING"
        and job.array_job_id not in named
    }
    folded: dict[int, tuple[list[int], list[str]]] = {}  # array -> tasks, reasons
    out: list[Message] = []
    for job in jobs:
        record = records.get(job.array_job_id) if job.has("array_task_id") else None
        if (
            record is None
            or job.state != "PENDING"
            or (job.name, job.partition)
            != (
                record.name,
                record.partition,
            )
        ):
            out.append(job)
            continue
        tasks, reasons = folded.setdefault(job.array_job_id, ([], [record.reason]))
        tasks.append(job.array_task_id)
        if job.reason != record.reason and job.reason not in ",".join(reasons):
            reasons.append(job.reason)
    return [_folded(job, folded) for job in out]


def _folded(job: Message, folded: dict[int, tuple[list[int], list[str]]]) -> Message:
    if job.has("array_task_id") or job.array_job_id not in folded:
        return job
    tasks, reasons = folded[job.array_job_id]
    ids = TaskSet.of([*TaskSet.parse(job.array_tasks), *tasks])
    return job.replaced(array_tasks=str(ids), array_throttle=0, reason=",".join(reasons))
