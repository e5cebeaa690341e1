"""Accounting records: what ``sacct`` lists for a job and its steps.

Turns the controller's :class:`~minislurm.model.Job` and
:class:`~minislurm.model.Step` records into
:class:`~minislurm.requests.AcctRecord` records the way
Slurm 22.05's accounting lists them: the job's line, then its ``batch`` step
(synthesised from the job, which is where we keep the batch script's
outcome), then its srun steps by id. :mod:`ctld.accounting.filters` applies an
:class:`~minislurm.requests.AcctQuery`'s filters to them.

Pure functions of their arguments: no database, no clock, no gRPC server.
Imports minislurm's core modules only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from minislurm import hostlist, units
from minislurm.arrays import array_label
from minislurm.model import Job, Step
from minislurm.requests import AcctRecord, NodeStepStat
from minislurm.states import ACTIVE_JOB_STATES, TERMINAL_JOB_STATES, JobState, kill_ends_in
from minislurm.stepids import BATCH_STEP as BATCH_STEP_ID
from minislurm.stepids import MAX_NORMAL_STEP, step_id_text
from minislurm.units import INFINITE

BATCH_STEP = "batch"
NO_REQUESTER = INFINITE  # cancelled_by when no user asked for the cancel (Slurm's NO_VAL)
SIGTERM = 15

# Job states whose line shows ExitCode 0:0: Slurm records the job when the kill
# begins, before the batch script's status is known.
_KILLED = frozenset({JobState.CANCELLED, JobState.TIMEOUT})


def job_records(
    job: Job,
    steps: list[Step],
    now: float,
    cluster: str,
    usage: Mapping[int, Sequence[NodeStepStat]] | None = None,
) -> list[AcctRecord]:
    """Everything sacct lists for one job, in sacct's order.

    Args:
        job: the controller's record.
        steps: the job's srun steps (any order).
        now: the controller's clock, for the elapsed time of what still runs.
        cluster: ClusterName.
        usage: what the batch script (BATCH_STEP_ID) and each step used, node by node.

    Returns:
        The job's record, then its batch step (a batch job that started), then
        its steps by id, its interactive step first (as slurmdbd, which stores
        special steps' ids as negative numbers, orders them).
    """
    used = usage or {}
    steps = sorted(steps, key=lambda s: (s.step_id <= MAX_NORMAL_STEP, s.step_id))
    records = [_job_record(job, steps, now, cluster)]
    if job.batch and job.allocation is not None and job.state is not JobState.PENDING:
        batch = _batch_record(job, records[0], now)
        records.append(replace(batch, usage=tuple(used.get(BATCH_STEP_ID, ()))))
    records.extend(
        replace(_step_record(job, step, records[0], now), usage=tuple(used.get(step.step_id, ())))
        for step in steps
    )
    return records


def job_order(job: Job) -> tuple[float, int, int]:
    """The order sacct lists jobs in: by submit time, array tasks by task id.

    Args:
        job: a job.

    Returns:
        A sort key.
    """
    if job.array_job_id:
        task = job.array_task_id if job.array_task_id is not None else 1 << 32
        return (job.submit_time, job.array_job_id, task)
    return (job.submit_time, job.job_id, -1)


def job_id_text(job: Job) -> str:
    """The JobID sacct prints for a job: ``123``, ``8_0``, ``19_[0-3%2]``.

    Args:
        job: a job.

    Returns:
        The text.
    """
    if not job.array_job_id:
        return str(job.job_id)
    if job.array_task_id is not None:
        return f"{job.array_job_id}_{job.array_task_id}"
    return f"{job.array_job_id}_[{array_label(job.array_tasks, job.array_throttle)}]"


def accounted_state(job: Job) -> JobState:
    """The state accounting shows for a job.

    A job being killed (our COMPLETING) is already recorded in the state it
    will end in, as Slurm records it when the kill begins.

    Args:
        job: a job.

    Returns:
        Its state for sacct.
    """
    if job.state is not JobState.COMPLETING:
        return job.state
    ends_in = kill_ends_in(job.kill_event) if job.kill_event else JobState.PENDING
    return JobState.RUNNING if ends_in is JobState.PENDING else ends_in  # a requeue's run


def derived_exit(steps: list[Step]) -> tuple[int, int]:
    """DerivedExitCode: the highest exit status among the srun steps.

    Compared as wait statuses, so any exit code beats any signal.

    Args:
        steps: the job's steps.

    Returns:
        ``(exit_code, signal)``; ``(0, 0)`` without steps.
    """
    return max(((s.exit_code, s.signal) for s in steps), default=(0, 0))


def tres_text(parts: dict[str, int | str]) -> str:
    """A TRES list as sacct prints it: names in alphabetical order.

    Args:
        parts: TRES name -> count.

    Returns:
        e.g. ``billing=8,cpu=8,gres/gpu=8,node=2``.
    """
    return ",".join(f"{name}={parts[name]}" for name in sorted(parts))


def job_alloc_tres(job: Job) -> str:
    """AllocTRES of a job: what it holds (``""`` when it never ran).

    Args:
        job: a job.

    Returns:
        e.g. ``billing=4,cpu=4,gres/gpu=4,node=1``.
    """
    alloc = job.allocation
    if alloc is None:
        return ""
    parts: dict[str, int | str] = {"billing": alloc.cpus, "cpu": alloc.cpus}
    parts["node"] = len(alloc.nodes)
    if alloc.gpus:
        parts["gres/gpu"] = alloc.gpus
    if alloc.mem:
        parts["mem"] = units.format_memory_mb(alloc.mem)
    return tres_text(parts)


def job_req_tres(job: Job) -> str:
    """ReqTRES of a job: what it asked for.

    Args:
        job: a job.

    Returns:
        e.g. ``billing=2,cpu=2,gres/gpu=16,node=2``.
    """
    req = job.request
    parts: dict[str, int | str] = {"billing": req.min_cpus, "cpu": req.min_cpus}
    parts["node"] = req.min_nodes
    if req.min_gpus:
        parts["gres/gpu"] = req.min_gpus
    if req.tres_mem:
        parts["mem"] = units.format_memory_mb(req.tres_mem)
    return tres_text(parts)


def step_tres(cpus: int, gpus: int, mem: int, nodes: int) -> str:
    """AllocTRES of a step (``mem=0`` when the step has no memory limit).

    Args:
        cpus: its CPUs.
        gpus: its GPUs.
        mem: its memory, MiB.
        nodes: its node count.

    Returns:
        e.g. ``cpu=4,gres/gpu=4,mem=0,node=1``.
    """
    parts: dict[str, int | str] = {"cpu": cpus, "node": nodes}
    parts["mem"] = units.format_memory_mb(mem) if mem else 0
    if gpus:
        parts["gres/gpu"] = gpus
    return tres_text(parts)


def _elapsed(start: float, end: float, now: float) -> int:
    if not start:
        return 0
    return max(int((end or now) - start), 0)


def _job_record(job: Job, steps: list[Step], now: float, cluster: str) -> AcctRecord:
    state = accounted_state(job)
    started = job.allocation is not None
    code, signal = (0, 0) if state in _KILLED else (job.exit_code, job.exit_signal)
    derived_code, derived_signal = derived_exit(steps)
    return AcctRecord(
        **_common(job, cluster),
        job_id=job_id_text(job),
        name=job.name,
        state=state.value,
        cancelled_by=_requester(job, state),
        exit_code=code,
        exit_signal=signal,
        derived_exit_code=derived_code,
        derived_exit_signal=derived_signal,
        submit_time=int(job.submit_time),
        eligible_time=int(job.eligible_time),
        start_time=int(job.start_time),
        end_time=int(job.end_time) if state in TERMINAL_JOB_STATES else 0,
        elapsed=_elapsed(job.start_time, job.end_time, now) if started else 0,
        nodes=job.allocation.nodelist if job.allocation else "",
        nnodes=len(job.allocation.nodes) if job.allocation else job.request.min_nodes,
        alloc_cpus=job.allocation.cpus if job.allocation else job.request.min_cpus,
        req_cpus=job.request.min_cpus,
        alloc_tres=job_alloc_tres(job),
        req_tres=job_req_tres(job),
        time_limit=job.time_limit,
        total_cpu=job.total_cpu + sum(s.total_cpu for s in steps),
        # Slurm's database keeps no waiting reason of a job cancelled before it started.
        reason=job.reason if started or state is not JobState.CANCELLED else "None",
        restarts=job.restarts,
        work_dir=job.work_dir,
        qos=job.qos,
    )


def _requester(job: Job, state: JobState) -> int:
    if state is JobState.CANCELLED and job.cancelled_by >= 0:
        return job.cancelled_by
    return NO_REQUESTER


def _common(job: Job, cluster: str) -> dict[str, Any]:
    """The fields a job's records share (who, where, which array task)."""
    task = job.array_task_id if job.array_job_id else None
    return {
        "job_id_raw": job.job_id,
        "partition": job.partition,
        "account": job.account,
        "user": job.user,
        "uid": job.uid,
        "group": job.group,
        "gid": job.gid,
        "cluster": cluster,
        "array_job_id": job.array_job_id,
        "array_task_id": task,
    }


def batch_outcome(job: Job) -> tuple[str, int, int]:
    """State and exit status of a job's batch step.

    The step is CANCELLED when a signal ended the script (a scancel or a time
    limit: ``0:15``), FAILED on a non-zero exit, COMPLETED otherwise; RUNNING
    while the script runs (also while it is being killed).

    Args:
        job: a job that started.

    Returns:
        ``(state, exit_code, signal)``.
    """
    state = accounted_state(job)
    if job.state in ACTIVE_JOB_STATES:
        return JobState.RUNNING.value, 0, 0
    if state is JobState.OUT_OF_MEMORY:
        return state.value, job.exit_code, job.exit_signal
    if job.exit_signal:
        return JobState.CANCELLED.value, job.exit_code, job.exit_signal
    if job.exit_code:
        return JobState.FAILED.value, job.exit_code, 0
    if state in _KILLED:
        return JobState.CANCELLED.value, 0, SIGTERM
    return JobState.COMPLETED.value, 0, 0


def _batch_record(job: Job, head: AcctRecord, now: float) -> AcctRecord:
    assert job.allocation is not None
    first = job.allocation.nodes[0]
    state, code, signal = batch_outcome(job)
    ended = state != JobState.RUNNING.value
    end = job.end_time if ended else 0.0
    return AcctRecord(
        **_common(job, head.cluster),
        job_id=f"{head.job_id}.{BATCH_STEP}",
        step=BATCH_STEP,
        name=BATCH_STEP,
        state=state,
        cancelled_by=NO_REQUESTER,
        exit_code=code,
        exit_signal=signal,
        submit_time=int(job.start_time),
        eligible_time=int(job.start_time),
        start_time=int(job.start_time),
        end_time=int(end),
        elapsed=_elapsed(job.start_time, end, now),
        nodes=first.node,
        nnodes=1,
        alloc_cpus=first.cpus,
        req_cpus=first.cpus,
        alloc_tres=step_tres(first.cpus, len(first.gpus), first.mem, 1),
        max_rss=job.max_rss,
        total_cpu=job.total_cpu,
        ntasks=1,
    )


def _step_outcome(job: Job, step: Step) -> tuple[str, float]:
    """A step's state and end: a step left running when its job ended ends with it."""
    if step.state in ACTIVE_JOB_STATES and job.state in TERMINAL_JOB_STATES:
        state = accounted_state(job)
        shown = JobState.CANCELLED if state in _KILLED else state
        return shown.value, step.end_time or job.end_time
    return step.state.value, step.end_time


def _step_requester(step: Step, state: str) -> int:
    """Who cancelled a step: its own scancel (``CANCELLED by 0``), not its job's."""
    if state == JobState.CANCELLED.value and step.cancelled_by >= 0:
        return step.cancelled_by
    return NO_REQUESTER


def _step_record(job: Job, step: Step, head: AcctRecord, now: float) -> AcctRecord:
    state, end = _step_outcome(job, step)
    cpus = sum(n.cpus for n in step.nodes)
    gpus = sum(len(n.gpus) for n in step.nodes)
    mem = sum(n.mem for n in step.nodes)
    return AcctRecord(
        **_common(job, head.cluster),
        job_id=f"{head.job_id}.{step_id_text(step.step_id)}",
        step=step_id_text(step.step_id),
        name=step.name,
        state=state,
        cancelled_by=_step_requester(step, state),
        exit_code=step.exit_code,
        exit_signal=step.signal,
        submit_time=int(step.start_time),
        eligible_time=int(step.start_time),
        start_time=int(step.start_time),
        end_time=int(end),
        elapsed=_elapsed(step.start_time, end, now),
        nodes=hostlist.compress(step.node_names),
        nnodes=len(step.nodes),
        alloc_cpus=cpus,
        req_cpus=cpus,
        alloc_tres=step_tres(cpus, gpus, mem, len(step.nodes)),
        max_rss=step.max_rss,
        total_cpu=step.total_cpu,
        ntasks=step.ntasks,
    )
