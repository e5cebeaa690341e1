"""Earlier runs of requeued jobs: what accounting keeps of them (``sacct -D``).

A requeued job keeps its id, and Slurm's accounting keeps each run that
ended by requeue as a record of its own: the job's line in the state the run
ended in (``NODE_FAIL`` when its node failed, ``REQUEUED`` for ``scontrol
requeue``, ``PREEMPTED`` when a preemption requeued it), its start, end and
nodes, then that run's batch step and srun steps. ``sacct`` shows the latest
run only; ``sacct -D`` (``--duplicates``) shows every run, the earliest
first. The job's next run numbers its steps from 0 again.

Pure functions of their arguments: no database, no clock, no gRPC server.
Imports ctld.accounting.records, ctld.jobs (kill outcomes) and minislurm's core modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ctld.accounting.records import job_records
from minislurm.model import EarlierRun, Job, Step
from minislurm.requests import AcctRecord, NodeStepStat
from minislurm.states import ACTIVE_JOB_STATES, JobEvent, JobState

REQUEUED = "REQUEUED"  # Slurm's state of a run ended by requeue (not a state a job is in here)
_LOST = frozenset({JobState.RUNNING, JobState.SUSPENDED})  # requeued from these: its node failed


def ended_runs(
    before: Mapping[int, Job],
    steps: Mapping[int, Mapping[int, Step]],
    ended_steps: Iterable[Step],
    changed: Iterable[Job],
    now: float,
) -> list[EarlierRun]:
    """The runs that end because these changes requeue their jobs.

    Args:
        before: the jobs as they were, by id.
        steps: the jobs' steps as they were, by job and step id.
        ended_steps: the steps the changes end (the requeued jobs' running ones).
        changed: the jobs' new records.
        now: the time.

    Returns:
        One run per job whose restart count went up.
    """
    ended = {(step.job_id, step.step_id): step for step in ended_steps}
    runs = []
    for job in changed:
        old = before.get(job.job_id)
        if old is None or job.restarts <= old.restarts:
            continue
        state = JobState.NODE_FAIL.value if old.state in _LOST else REQUEUED
        if old.kill_event is JobEvent.PREEMPT_REQUEUE:
            state = JobState.PREEMPTED.value
        # A running job's requeue ends its run when asked, though the kill takes a while.
        asked = old.state is JobState.COMPLETING and old.end_time
        own = steps.get(job.job_id, {})
        run_steps = tuple(ended.get((job.job_id, i), own[i]) for i in sorted(own))
        runs.append(EarlierRun(old, state, old.end_time if asked else now, run_steps))
    return runs


def run_records(
    run: EarlierRun,
    now: float,
    cluster: str,
    usage: Mapping[int, Sequence[NodeStepStat]] | None = None,
) -> list[AcctRecord]:
    """What ``sacct -D`` lists for an earlier run, in sacct's order.

    Args:
        run: the run.
        now: the controller's clock.
        cluster: ClusterName.
        usage: what the run's batch script and steps used, node by node.

    Returns:
        The run's job line, then its batch step and its steps by id.
    """
    job = run.job
    if job.state in ACTIVE_JOB_STATES:  # its script was killed: the batch step CANCELLED 0:15
        job = replace(
            job,
            state=JobState.CANCELLED,
            end_time=job.end_time or run.ended,
            exit_code=0,
            exit_signal=0,
            kill_event=None,
            cancelled_by=-1,
        )
    records = job_records(job, list(run.steps), now, cluster, usage)
    head = replace(
        records[0],
        state=run.state,
        end_time=int(run.ended),
        elapsed=max(int(run.ended - job.start_time), 0),
    )
    return [head, *records[1:]]
