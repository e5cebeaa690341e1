"""Slurm's list of running steps: what ``squeue -s``, ``scontrol show step`` and sstat see.

Slurm lists the running steps of running jobs only, each job's batch script
first as its step ``batch`` (``12.batch``: one task on the batch host, no
CPUs of its own, no TRES), then its srun steps by id. A step here carries
what those commands print beside its layout: the job's partition and array
task, its CPUs and TRES, where its srun runs.

Pure functions; imports ctld.accounting.records, ctld.selection, ctld.state and minislurm.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.accounting.records import step_tres
from ctld.selection import select
from ctld.state import ClusterState
from minislurm import hostlist
from minislurm.errors import JobNotFound
from minislurm.model import Job, Step
from minislurm.requests import StepInfo
from minislurm.states import JobState
from minislurm.stepids import BATCH_STEP
from minislurm.units import INFINITE

BATCH_NAME = "batch"


def running_jobs(state: ClusterState, job_id: int) -> list[Job]:
    """The running jobs whose steps a request lists, in Slurm's order.

    Args:
        state: the cluster.
        job_id: one job (an array's id: all its tasks), or 0 for every job.

    Returns:
        The running jobs, by array (or job) id then task id.

    Raises:
        JobNotFound: ``job_id`` names no job the controller knows.
    """
    if job_id:
        chosen = select(state, [job_id], [])
        if chosen.missing:
            raise JobNotFound(job_id)
        jobs = [job for _, job in chosen.jobs]
    else:
        jobs = list(state.jobs.values())
    running = [j for j in jobs if j.state is JobState.RUNNING and j.allocation is not None]
    return sorted(running, key=lambda j: (j.array_job_id or j.job_id, j.array_task_id or 0))


def batch_step(job: Job) -> StepInfo:
    """A running batch job's script as the step ``batch``.

    Args:
        job: a running batch job.

    Returns:
        The step (on the batch host, one task, no CPUs or TRES, as Slurm shows it).
    """
    assert job.allocation is not None
    host = job.allocation.node_names[0]
    info = StepInfo(
        job_id=job.job_id,
        step_id=BATCH_STEP,
        name=BATCH_NAME,
        state=JobState.RUNNING.value,
        ntasks=1,
        nodelist=host,
        start_time=int(job.start_time),
        uid=job.uid,
        gid=job.gid,
    )
    return _with_job(info, job)


def shown_step(step: Step, job: Job) -> StepInfo:
    """A running srun step as Slurm's step list shows it (its layout left out).

    Args:
        step: the step.
        job: its job.

    Returns:
        The step, with its CPUs, TRES and srun's host and pid.
    """
    cpus = sum(n.cpus for n in step.nodes)
    gpus = sum(len(n.gpus) for n in step.nodes)
    mem = sum(n.mem for n in step.nodes)
    info = StepInfo(
        job_id=step.job_id,
        step_id=step.step_id,
        name=step.name,
        state=step.state.value,
        ntasks=step.ntasks,
        cpus_per_task=step.cpus_per_task,
        gpus_per_task=step.gpus_per_task,
        nodelist=hostlist.compress(step.node_names),
        start_time=int(step.start_time),
        distribution=_distribution(step),
        argv=step.argv,
        uid=step.uid,
        gid=step.gid,
        srun_host=step.srun_host,
        srun_pid=step.srun_pid,
        tres=step_tres(cpus, gpus, mem, len(step.nodes)),
        num_cpus=cpus,
        tres_per_node=step.tres_per_node,
    )
    return _with_job(info, job)


def _distribution(step: Step) -> str:
    """Slurm's srun deals one task per node cyclically by default: ``Cyclic`` then."""
    if step.distribution == "block" and step.ntasks <= len(step.nodes):
        return "cyclic"
    return step.distribution


def _with_job(info: StepInfo, job: Job) -> StepInfo:
    info = replace(info, partition=job.partition, time_limit=INFINITE)
    if job.array_job_id:
        info = replace(info, array_job_id=job.array_job_id, array_task_id=job.array_task_id or 0)
    return info


def running_steps(state: ClusterState, job_id: int) -> list[StepInfo]:
    """Slurm's step list: every running step of the running jobs, or of one.

    Args:
        state: the cluster.
        job_id: one job (an array's id: all its tasks), or 0 for every job.

    Returns:
        Per job, its batch step (if a batch job) then its running srun steps by id.

    Raises:
        JobNotFound: ``job_id`` names no job the controller knows.
    """
    out: list[StepInfo] = []
    for job in running_jobs(state, job_id):
        if job.batch:
            out.append(batch_step(job))
        steps = state.steps.get(job.job_id, {})
        out += [
            shown_step(steps[i], job) for i in sorted(steps) if steps[i].state is JobState.RUNNING
        ]
    return out


def stat_nodes(state: ClusterState, job_id: int, step_id: int) -> tuple[Job, tuple[str, ...]]:
    """Where a running step's tasks run, for sstat.

    Args:
        state: the cluster.
        job_id: the step's job.
        step_id: the step (BATCH_STEP: the batch script).

    Returns:
        The job, and the step's nodes in order.

    Raises:
        JobNotFound: no such job, or the step is not running.
    """
    job = state.jobs.get(job_id)
    if job is None or job.state is not JobState.RUNNING or job.allocation is None:
        raise JobNotFound(job_id)
    if step_id == BATCH_STEP and job.batch:
        return job, job.allocation.node_names[:1]
    step = state.steps.get(job_id, {}).get(step_id)
    if step is None or step.state is not JobState.RUNNING:
        raise JobNotFound(job_id)
    return job, step.node_names
