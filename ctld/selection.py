"""Which job records a request names: ``123``, an array's ``123``, ``123_4``, ``123_[1-3]``.

A plain id names a job, or every record of the array with that id (its
tasks and its pending tasks, which are acted on together). A task
reference names the tasks' records; tasks still pending are split off
the array's pending record first, so that they can be acted on alone
(the caller commits the split with the action).

Imports ctld.arrays, ctld.state and minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctld.arrays import select_tasks, split_task
from ctld.state import ClusterState
from minislurm.arrays import parse_job_ref
from minislurm.model import Job


@dataclass
class Selection:
    """The records a request acts on, and the splits that made some of them."""

    jobs: list[tuple[str, Job]] = field(default_factory=list)  # (reference, record)
    missing: list[str] = field(default_factory=list)  # references that named nothing
    waiting: list[tuple[str, int, list[int]]] = field(default_factory=list)
    # ^ (reference, array id, task ids) named while still in the array's pending record
    pending: dict[int, Job] = field(default_factory=dict)  # pending records that lost tasks
    new_ids: set[int] = field(default_factory=set)  # records split off: insert, not update


def select(state: ClusterState, job_ids: list[int], refs: list[str]) -> Selection:
    """Resolve job ids and array task references to records.

    Args:
        state: the cluster.
        job_ids: plain job ids.
        refs: array task references (``123_4``, ``123_[1-3]``).

    Returns:
        The selection; unknown ids and malformed references are in ``missing``;
        tasks still pending are in ``waiting`` (see :func:`split_waiting`).
    """
    chosen = Selection()
    for job_id in job_ids:
        records = state.array_records(job_id) if job_id in state.arrays else []
        if not records and job_id in state.jobs:
            records = [state.jobs[job_id]]
        if not records:
            chosen.missing.append(str(job_id))
        chosen.jobs += [(str(job_id), r) for r in records]
    for ref in refs:
        try:
            array_id, tasks, _ = parse_job_ref(ref)
        except ValueError:
            chosen.missing.append(ref)
            continue
        named, waiting = select_tasks(state.array_records(array_id), tasks)
        chosen.jobs += [(ref, r) for r in named]
        if waiting:
            chosen.waiting.append((ref, array_id, waiting))
        elif not named:
            chosen.missing.append(ref)
    return chosen


def split_waiting(chosen: Selection, state: ClusterState) -> None:
    """Give the pending tasks a selection names records of their own, to act on them alone.

    Args:
        chosen: the selection; its ``waiting`` tasks move to ``jobs``.
        state: the cluster (for the array records and the next job id).
    """
    last_id = state.last_job_id
    for ref, array_id, tasks in chosen.waiting:
        rest: Job | None = chosen.pending.get(array_id) or state.jobs[array_id]
        for task in tasks:
            assert rest is not None
            task_record, rest = split_task(rest, task, last_id + 1)
            if task_record.job_id != array_id:
                last_id = task_record.job_id
                chosen.new_ids.add(last_id)
            chosen.jobs.append((ref, task_record))
        if rest is None:
            chosen.pending.pop(array_id, None)
        else:
            chosen.pending[array_id] = rest
    chosen.waiting = []
