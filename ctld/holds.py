"""Holds: ``scontrol hold``, ``uhold`` and ``release`` of one job record.

Imports ctld.jobs (reasons and messages) and minislurm; no database, no gRPC server.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.jobs import (
    DENIED,
    FINISHED,
    NOT_PENDING,
    REASON_HELD_ADMIN,
    REASON_HELD_USER,
    REASON_NONE,
)
from minislurm.errors import InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_NONE, HOLD_USER, Job
from minislurm.rpc import minislurm_pb2 as pb
from minislurm.states import TERMINAL_JOB_STATES, JobState


def hold(job: Job, kind: str) -> Job:
    """A PENDING job held by its user or an administrator.

    Args:
        job: a PENDING job.
        kind: HOLD_USER or HOLD_ADMIN.

    Returns:
        The held job.
    """
    reason = REASON_HELD_ADMIN if kind == HOLD_ADMIN else REASON_HELD_USER
    return replace(job, hold=kind, reason=reason, eligible_time=0.0)


def release(job: Job, now: float) -> Job:
    """A held job released.

    Args:
        job: a held PENDING job.
        now: the release time (the job becomes eligible).

    Returns:
        The job, eligible again.
    """
    return replace(job, hold=HOLD_NONE, reason=REASON_NONE, eligible_time=now)


def hold_action(job: Job, action: int, operator: bool, now: float) -> Job:
    """The job after ``scontrol hold``, ``uhold`` or ``release``.

    Args:
        job: the job.
        action: a ``HoldJobsRequest.Action``.
        operator: the requester is root or an operator (``hold`` is then an
            admin hold, and admin holds may be released).
        now: the time.

    Returns:
        The changed job.

    Raises:
        InvalidTransition: the job is not pending.
        PermissionDenied: a user releasing an admin hold.
    """
    if job.state in TERMINAL_JOB_STATES:
        raise InvalidTransition(FINISHED)
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_PENDING)
    if action == pb.HoldJobsRequest.RELEASE:
        if job.hold == HOLD_ADMIN and not operator:
            raise PermissionDenied(DENIED)
        return release(job, now) if job.held else job
    kind = HOLD_ADMIN if action == pb.HoldJobsRequest.HOLD and operator else HOLD_USER
    return hold(job, kind)
