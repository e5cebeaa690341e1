"""What srun says of its tasks on a single Ctrl-C, in Slurm 22.05's words.

One line per state, tasks as ranges, in Slurm's order::

    srun: StepId=41.0 task 1: running
    srun: StepId=41.0 task 0: exited abnormally
    srun: StepId=41.0 tasks 2-3,5: exited

"failed to start" (a task that never ran) comes first, "exited abnormally"
is a non-zero exit or a signal.

Imports nothing.
"""

from __future__ import annotations


def task_ranges(ids: list[int]) -> str:
    """Task ids as Slurm's bitmaps print them: ``0-2,5``.

    Args:
        ids: the ids, ascending.

    Returns:
        The ranges.
    """
    parts: list[str] = []
    start = prev = -2
    for task in [*ids, -2]:
        if task == prev + 1:
            prev = task
            continue
        if start >= 0:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = task
    return ",".join(parts)


def status_lines(
    step: str, tasks: list[int], exits: dict[int, tuple[int, int]], failed: set[int]
) -> list[str]:
    """The lines of the status report.

    Args:
        step: ``12.0``.
        tasks: every task of the step.
        exits: (exit code, signal) of the tasks that ended.
        failed: the tasks that never started.

    Returns:
        The lines, without srun's prefix.
    """
    states: dict[str, list[int]] = {
        "failed to start": [],
        "running": [],
        "exited abnormally": [],
        "exited": [],
    }
    for task in sorted(tasks):
        if task in failed:
            states["failed to start"].append(task)
        elif task not in exits:
            states["running"].append(task)
        else:
            states["exited" if exits[task] == (0, 0) else "exited abnormally"].append(task)
    return [
        f"StepId={step} task{'s' if len(ids) > 1 else ''} {task_ranges(ids)}: {state}"
        for state, ids in states.items()
        if ids
    ]
