"""Requeue: a batch job goes back to PENDING under its own id, to run again.

Three roads lead here: ``scontrol requeue``/``requeuehold`` of a running job
(its kill begins, and the job is requeued when its node confirms it), of a
finished job (at once), and the failure of a node under a job that may be
requeued (``--requeue``, or ``JobRequeue=1`` unless ``--no-requeue``).
A requeued job counts one more restart (``Restarts``, ``SLURM_RESTART_COUNT``)
and may not start again before ``RequeueDelay`` seconds have passed: Slurm
holds it about two minutes with reason ``BeginTime``; the delay is a setting
here, short by default, so a training run is back within seconds.

Imports minislurm and ctld's pure modules; no database, no gRPC server.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import replace

from ctld import jobs as jobops
from ctld.holds import REASON_LAUNCH_HELD, REASON_REQUEUE_HELD, held_reason
from ctld.intents import Intent, Terminate
from ctld.jobrequests import INVALID_ID, Outcome, authorize
from ctld.selection import select
from ctld.state import ClusterState
from minislurm.errors import InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_NONE, HOLD_USER, Job
from minislurm.requests import HoldAction, HoldRequest
from minislurm.states import ACTIVE_JOB_STATES, JobEvent, JobState, kill_ends_in

REASON_BEGIN_TIME = "BeginTime"
SIGTERM = 15  # what Slurm shows a cancelled or timed-out job killed by (ExitCode 0:15)
NOT_BATCH = "Only batch jobs are accepted or processed"
DISABLED = "Requested operation is presently disabled"
PENDING_ALREADY = "Job is pending execution"


def may_requeue(job: Job) -> bool:
    """Whether a node failure sends the job back to the queue (else it ends NODE_FAIL).

    Args:
        job: the job.

    Returns:
        True for a batch job that may be requeued.
    """
    return job.batch and job.requeue


def requeueing(job: Job) -> bool:
    """Whether a job's kill in progress sends it back to the queue once its node confirms.

    Args:
        job: the job.

    Returns:
        True for ``scontrol requeue`` of a running job and a preemption that requeues.
    """
    return job.kill_event is not None and kill_ends_in(job.kill_event) is JobState.PENDING


def preempted(job: Job, mode: str, now: float) -> tuple[Job, list[Intent]]:
    """A running job preempted: its kill begins (Slurm's PreemptMode).

    Under REQUEUE a batch job that may be requeued goes back to the queue
    once its node confirms the kill; any other job (CANCEL, ``--no-requeue``,
    an interactive allocation) ends PREEMPTED, as Slurm kills it.

    Args:
        job: a RUNNING job.
        mode: its PreemptMode, CANCEL or REQUEUE.
        now: the time.

    Returns:
        The COMPLETING job, and the kill to ask of its nodes.
    """
    requeue = mode == "REQUEUE" and may_requeue(job)
    event = JobEvent.PREEMPT_REQUEUE if requeue else JobEvent.PREEMPT
    return jobops.begin_kill(job, event, now)


def requeued(job: Job, now: float, delay: float) -> Job:
    """The job back in the queue, eligible after ``delay`` seconds.

    Args:
        job: a RUNNING or COMPLETING job whose run is over, or a finished job.
        now: the time.
        delay: RequeueDelay, seconds.

    Returns:
        The PENDING job: one more restart, submitted now, no allocation,
        reason ``BeginTime`` (or its hold's reason when it is held).

    Raises:
        InvalidTransition: the job cannot be requeued from its state.
    """
    event = JobEvent.REQUEUED if job.state in ACTIVE_JOB_STATES else JobEvent.REQUEUE
    # Slurm shows a requeuehold's delay as EligibleTime, not that of a job held before.
    eligible = now + delay
    if not job.held:
        reason = REASON_BEGIN_TIME
    elif job.reason in (REASON_REQUEUE_HELD, REASON_LAUNCH_HELD):
        reason = job.reason
    else:
        reason, eligible = held_reason(job.hold), 0.0
    back, _ = jobops.apply_event(
        job,
        event,
        "requeue",
        reason=reason,
        restarts=job.restarts + 1,
        submit_time=now,  # Slurm's too: the new run's record is submitted by the requeue
        allocation=None,
        begin_time=now + delay,
        eligible_time=eligible,
        start_time=0.0,
        end_time=0.0,
        exit_code=0,
        exit_signal=0,
        kill_event=None,
        launched=False,
        warn_sent=False,
        max_rss=0,
        total_cpu=0.0,
        cancelled_by=-1,
    )
    return back


def lost(job: Job, now: float, delay: float) -> Job:
    """A job whose node failed: requeued when it may be, else NODE_FAIL.

    Args:
        job: a RUNNING or COMPLETING job on the failed node.
        now: the time.
        delay: RequeueDelay, seconds.

    Returns:
        The job's next record; a job whose cancel or time limit was being
        carried out ends as that (CANCELLED, TIMEOUT), as Slurm records it.
    """
    if job.state is JobState.COMPLETING and not requeueing(job):
        return jobops.ended(job, 0, SIGTERM, now)  # the node's failure completed the kill
    if may_requeue(job):
        return requeued(job, now, delay)
    return jobops.node_failed(job, now)


def prolog_failed(job: Job, now: float, delay: float, hold: bool) -> Job:
    """A batch job whose Prolog failed on one of its nodes: back in the queue, as Slurm does it.

    Args:
        job: a RUNNING batch job.
        now: the time.
        delay: RequeueDelay, seconds.
        hold: held (Slurm's default), or not (``nohold_on_prolog_fail``).

    Returns:
        The PENDING job; held, it waits with reason ``launch failed requeued held``.
    """
    held = replace(job, hold=HOLD_ADMIN, reason=REASON_LAUNCH_HELD) if hold else job
    return requeued(held, now, delay)


def failed_run(
    job: Job, hold: bool, forced: bool, now: float, delay: float
) -> tuple[Job, list[Intent]]:
    """A run whose Prolog (or PrologSlurmctld) failed ends as Slurm ends it.

    A batch job is requeued (held when ``hold``), one that may not be
    (unless ``forced``, PrologFlags=ForceRequeueOnFail) ends as a launch
    failure, an allocation without a script is cancelled; what of the run
    started on its nodes is killed.

    Args:
        job: a RUNNING job.
        hold: requeue it held (a Prolog's failure, unless nohold_on_prolog_fail).
        forced: requeue a batch job even with ``--no-requeue``.
        now: the time.
        delay: RequeueDelay, seconds.

    Returns:
        The job's next record and the kills to ask of its nodes.
    """
    assert job.allocation is not None
    nodes = job.allocation.node_names
    if job.batch and (job.requeue or forced):
        return prolog_failed(job, now, delay, hold), [Terminate(job.job_id, nodes, "REQUEUE")]
    if job.batch:
        ended = jobops.ended(job, 1, 0, now, launch_failed=True)
        return ended, [Terminate(job.job_id, nodes, "CANCELLED")]
    return jobops.begin_kill(job, JobEvent.CANCEL, now)


def requested(job: Job, hold: str, now: float, delay: float) -> tuple[Job, list[Intent]]:
    """The job after ``scontrol requeue`` (``hold`` empty) or ``requeuehold``.

    A running job starts its kill and is requeued when its node confirms;
    a finished job is requeued at once.

    Args:
        job: the job.
        hold: HOLD_NONE, HOLD_USER or HOLD_ADMIN.
        now: the time.
        delay: RequeueDelay, seconds.

    Returns:
        The COMPLETING job and its kill to ask of its nodes, or the PENDING job.

    Raises:
        InvalidTransition: a job that is not a batch job, may not be
            requeued, is pending, or is already being killed.
    """
    if not job.batch:
        raise InvalidTransition(NOT_BATCH)
    if not job.requeue:
        raise InvalidTransition(DISABLED)
    if job.state is JobState.PENDING or requeueing(job):
        raise InvalidTransition(PENDING_ALREADY)  # Slurm says so of a requeue in progress too
    held = replace(job, hold=hold, reason=REASON_REQUEUE_HELD) if hold != HOLD_NONE else job
    if job.state is JobState.RUNNING:
        return jobops.apply_event(held, JobEvent.REQUEUE, "scontrol requeue", end_time=now)
    if job.state is JobState.COMPLETING:
        raise InvalidTransition(jobops.ALREADY_DONE)
    return requeued(held, now, delay), []


def request(
    state: ClusterState,
    req: HoldRequest,
    operators: Container[int],
    now: float,
    delay: float,
) -> Outcome:
    """``scontrol requeue`` and ``requeuehold`` of jobs, arrays or array tasks.

    Args:
        state: the cluster.
        req: ids or task references; the action REQUEUE or REQUEUE_HOLD.
        operators: uids of operators.
        now: the time.
        delay: RequeueDelay, seconds.

    Returns:
        The outcome: one result per record, kills of the running ones.
    """
    out = Outcome()
    chosen = select(state, list(req.job_ids), list(req.array_tasks))
    out.results += [(0, ref, INVALID_ID) for ref in chosen.missing]
    out.results += [(array_id, ref, PENDING_ALREADY) for ref, array_id, _ in chosen.waiting]
    hold = HOLD_USER if req.action == HoldAction.REQUEUE_HOLD else HOLD_NONE
    for ref, job in chosen.jobs:
        try:
            authorize(job, req.requester_uid, operators)
            new, intents = requested(job, hold, now, delay)
        except (PermissionDenied, InvalidTransition) as err:
            out.results.append((job.job_id, ref, str(err)))
            continue
        out.changed[job.job_id] = new
        out.intents += intents
        out.results.append((job.job_id, ref, ""))
    return out
