"""Holds: ``scontrol hold``, ``uhold`` and ``release`` of one job record, as Slurm's.

A hold is Slurm's priority 0: it may be put on any job that has not
finished, running ones included (a running job keeps running; the hold
keeps it from starting again after a requeue). ``hold`` by root or an
operator is an administrator's hold (``JobHeldAdmin``), which only they
may release; ``uhold``, and ``hold`` by anyone else, a user's
(``JobHeldUser``). Root or an operator may turn one kind into the other;
a user holding a held job changes nothing. Releasing a job that is not
held succeeds, and only resets a pending job's reason to ``None``, as a
release of a held one does (the scheduler gives it its reason again).

A pending job's future begin time (``--begin``, a requeue's delay)
survives a hold and a release, as Slurm's ``EligibleTime`` shows it; a
past one is forgotten, and the job becomes eligible again on its release
(unless a dependency still holds it back).

Imports ctld.jobs (reasons and messages) and minislurm; no database, no gRPC server.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.jobs import (
    DENIED,
    FINISHED,
    REASON_HELD_ADMIN,
    REASON_HELD_USER,
    REASON_NONE,
)
from minislurm.errors import InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_NONE, HOLD_USER, Job
from minislurm.requests import HoldAction
from minislurm.states import TERMINAL_JOB_STATES, JobState

REASON_REQUEUE_HELD = "job requeued in held state"  # scontrol requeuehold (a user's hold)
REASON_LAUNCH_HELD = "launch failed requeued held"  # its Prolog failed on a node (admin hold)


def held_reason(kind: str) -> str:
    """The reason a job held by ``kind`` waits with.

    Args:
        kind: HOLD_USER or HOLD_ADMIN.

    Returns:
        ``JobHeldUser`` or ``JobHeldAdmin``.
    """
    return REASON_HELD_ADMIN if kind == HOLD_ADMIN else REASON_HELD_USER


def hold(job: Job, kind: str, now: float) -> Job:
    """A job held by its user or an administrator.

    Args:
        job: a job that has not finished.
        kind: HOLD_USER or HOLD_ADMIN.
        now: the time (a begin time after it is kept).

    Returns:
        The held job, not eligible unless for a future begin time.
    """
    eligible = job.begin_time if job.state is JobState.PENDING and job.begin_time > now else 0.0
    return replace(job, hold=kind, reason=held_reason(kind), eligible_time=eligible)


def release(job: Job, now: float) -> Job:
    """A held job released.

    Args:
        job: a held job.
        now: the release time.

    Returns:
        The job with reason ``None``; a pending one eligible from its begin
        time, or from now, unless it waits on a dependency.
    """
    eligible = job.eligible_time
    if job.state is JobState.PENDING:
        if job.begin_time > now:
            eligible = job.begin_time
        else:
            eligible = 0.0 if job.dependency else now
    return replace(job, hold=HOLD_NONE, reason=REASON_NONE, eligible_time=eligible)


def hold_action(job: Job, action: HoldAction, operator: bool, now: float) -> Job:
    """The job after ``scontrol hold``, ``uhold`` or ``release``.

    Args:
        job: the job.
        action: what to do.
        operator: the requester is root or an operator (``hold`` is then an
            admin hold, and admin holds may be released).
        now: the time.

    Returns:
        The changed job (the same record when nothing changes).

    Raises:
        InvalidTransition: the job has finished (or is completing).
        PermissionDenied: a user releasing an admin hold.
    """
    if job.state in TERMINAL_JOB_STATES or job.state is JobState.COMPLETING:
        raise InvalidTransition(FINISHED)
    if action == HoldAction.RELEASE:
        if not job.held:
            # Slurm's release resets a pending job's reason all the same.
            return replace(job, reason=REASON_NONE) if job.state is JobState.PENDING else job
        if job.hold == HOLD_ADMIN and not operator:
            raise PermissionDenied(DENIED)
        return release(job, now)
    if job.held and not operator:
        return job
    kind = HOLD_ADMIN if action == HoldAction.HOLD and operator else HOLD_USER
    if job.held:
        return replace(job, hold=kind, reason=held_reason(kind))
    return hold(job, kind, now)
