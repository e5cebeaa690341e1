"""How squeue shows job arrays: a line per pending task with ``-r``, or the array's records.

Imports minislurm.arrays only.
"""

from __future__ import annotations

from minislurm.arrays import TaskSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minislurm.protowire import Message


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
