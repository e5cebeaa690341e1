"""``scontrol update`` of a job: the job's next record, with Slurm's checks and words.

Imports ctld.jobs, ctld.state and minislurm; no database, no gRPC server.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.jobs import ALREADY_DONE, DENIED, NOT_PENDING, check_satisfiable
from ctld.state import ClusterState
from minislurm.depend import parse_dependency
from minislurm.errors import InvalidRequest, InvalidTransition, PermissionDenied
from minislurm.model import Job
from minislurm.rpc import minislurm_pb2 as pb
from minislurm.states import TERMINAL_JOB_STATES, JobState
from minislurm.units import INFINITE


def updated(job: Job, request: pb.UpdateJobRequest, operator: bool, state: ClusterState) -> Job:
    """The job with the fields ``scontrol update`` names changed.

    Args:
        job: the job.
        request: the fields present are the ones to change.
        operator: the requester is root or an operator.
        state: the cluster (partitions are checked against it).

    Returns:
        The changed job.

    Raises:
        InvalidRequest: an invalid value.
        InvalidTransition: the job ended, or the change needs a pending job.
        PermissionDenied: a change only operators may make (a longer time
            limit, a negative nice).
    """
    if job.state in TERMINAL_JOB_STATES:
        raise InvalidTransition(ALREADY_DONE)
    new = job
    if request.HasField("name"):
        if not request.name or "\0" in request.name:
            raise InvalidRequest("Invalid job name")
        new = replace(new, name=request.name)
    if request.HasField("nice"):
        if request.nice < 0 and not operator:
            raise PermissionDenied(DENIED)
        new = replace(new, nice=request.nice)
    if request.HasField("partition"):
        if job.state is not JobState.PENDING:
            raise InvalidTransition(NOT_PENDING)
        part = state.partitions.get(request.partition)
        if part is None:
            raise InvalidRequest("Invalid partition name specified")
        check_satisfiable(job.request, part, state)
        new = replace(new, partition=part.name)
    if request.HasField("time_limit"):
        limit = request.time_limit or INFINITE
        if limit > job.time_limit and not operator:
            raise PermissionDenied(DENIED)
        new = replace(new, time_limit=limit)
    if request.HasField("dependency"):
        new = _new_dependency(new, request.dependency)
    if request.HasField("array_throttle"):
        if not job.array_job_id or not request.array_throttle.isdigit():
            raise InvalidRequest("Invalid ArrayTaskThrottle value")
        new = replace(new, array_throttle=int(request.array_throttle))
    return new


def _new_dependency(job: Job, text: str) -> Job:
    """``scontrol update Dependency=...``: a pending job waits on something else ("" clears)."""
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_PENDING)
    try:
        dep = parse_dependency(text)
    except ValueError as err:
        raise InvalidRequest(str(err)) from None
    eligible = 0.0 if dep.items or job.held else max(job.submit_time, job.begin_time)
    return replace(job, dependency=str(dep), eligible_time=eligible)
