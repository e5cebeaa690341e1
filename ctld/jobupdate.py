"""``scontrol update`` of a job: the job's next record, with Slurm's checks and words.

What may change, and when, is Slurm 22.05's: the name, comment, nice,
time limit, requeue flag, mail and (by an administrator) priority of any
job that has not finished; the partition, account, reservation, node
counts and lists, task count, working directory, dependency and begin
time of a pending job only (a running job is told ``Job is no longer
pending execution``; setting a value it already has is no change). A user
may lower a time limit, and raise a pending job's up to its partition's
MaxTime; may raise nice but not below 0. A job without a time limit of its
own has its partition's MaxTime, and takes the new one's when it moves. An
update is applied whole or not at all. Accounts and QOS are checked by the
caller (the associations).

Imports ctld.jobs, ctld.holds, ctld.resv.rules, ctld.state and
minislurm; no database, no gRPC server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ctld.holds import hold_action
from ctld.jobs import (
    DENIED,
    FINISHED,
    NOT_PENDING,
    check_satisfiable,
    gres_gpus,
    partition_memory,
    untyped_nodes,
)
from ctld.resv.rules import check_job as check_reservation
from ctld.state import ClusterState
from minislurm import hostlist, jobopts
from minislurm.depend import parse_dependency
from minislurm.errors import InvalidRequest, InvalidTransition, PermissionDenied
from minislurm.model import Job
from minislurm.requests import HoldAction, JobUpdate
from minislurm.states import TERMINAL_JOB_STATES, JobState
from minislurm.units import INFINITE

NOT_SUPPORTED = "Requested operation not supported on this system"
PRIORITY_NOT_KEPT = "Changes to job priority are not persistent, change nice instead"
HELD = "Job is in held state, pending scheduler release"
BAD_NODE_NAME = "Invalid node name specified"
BAD_TASK_COUNT = "Task count specification invalid"
BAD_NODE_COUNT = "Node count specification invalid"
ALL_NODES = 0xFFFFFFFF  # NumNodes=ALL
BAD_TIME = "Invalid time specified"
DEPENDENCY_PROBLEM = "Job dependency problem"
PRIORITY_INFINITE = 0xFFFFFFFF  # Slurm's INFINITE: a release
MAX_TIME = 0xFFFFFFFF  # epoch seconds: what a time field may hold (year 2106)
_TEXTS = (
    "name", "partition", "dependency", "array_throttle", "account", "qos", "comment",
    "reservation", "work_dir", "mail_user", "mail_type", "exc_nodes", "req_nodes", "gres",
)  # fmt: skip
YEAR_MINUTES = 365 * 24 * 60  # what Slurm counts an unlimited limit as when it compares


class Change:
    """One update request as the field functions see it."""

    def __init__(
        self,
        request: JobUpdate,
        operator: bool,
        state: ClusterState,
        now: float,
        priority: int,
    ) -> None:
        self.request = request
        self.operator = operator
        self.state = state
        self.now = now
        self.priority = priority  # the job's priority as shown now

    def has(self, name: str) -> bool:
        """Whether the request changes ``name``."""
        return getattr(self.request, name) is not None


def updated(
    job: Job,
    request: JobUpdate,
    operator: bool,
    state: ClusterState,
    now: float,
    priority: int = 0,
) -> Job:
    """The job with the fields ``scontrol update`` names changed.

    Args:
        job: the job.
        request: the fields present are the ones to change.
        operator: the requester is root or an operator.
        state: the cluster (partitions, nodes and reservations are checked against it).
        now: the time.
        priority: the job's priority as shown now (a user may not raise it).

    Returns:
        The changed job.

    Raises:
        InvalidRequest: an invalid value.
        InvalidTransition: the job finished, or the change needs a pending job.
        PermissionDenied: a change only operators may make (a longer time
            limit, a negative nice, a priority).
    """
    if job.state in TERMINAL_JOB_STATES or job.state is JobState.COMPLETING:
        raise InvalidTransition(FINISHED)
    if any("\0" in (getattr(request, name) or "") for name in _TEXTS):
        raise InvalidRequest("Invalid NUL character in job description")
    for name in ("begin_time", "deadline"):
        value = getattr(request, name)
        if value is not None and not 0 <= value <= MAX_TIME:
            raise InvalidRequest(BAD_TIME)
    change = Change(request, operator, state, now, priority)
    new = job
    for apply in _STEPS:
        new = apply(new, change)
    return new


def _pending(job: Job, current: object, wanted: object) -> bool:
    """Whether a pending-only field changes: raises for a job that no longer pends."""
    if current == wanted:
        return False
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_PENDING)
    return True


def _partition(job: Job, change: Change) -> Job:
    name = change.request.partition
    if name is None or not _pending(job, job.partition, name):
        return job
    part = change.state.partitions.get(name)
    if part is None:
        raise InvalidRequest("Invalid partition name specified")
    check_satisfiable(job.request, part, change.state)
    request = replace(job.request, part_mem=partition_memory(part, change.state))
    limit = part.max_time if job.partition_time_limit else job.time_limit
    return replace(job, partition=part.name, request=request, time_limit=limit)


def _gres(job: Job, change: Change) -> Job:
    """``Gres=``: a pending job's GPUs per node, read as a submission's ``--gres``.

    As Slurm's update, no node is tried: a count no node has is taken, and
    the job waits.
    """
    text = change.request.gres
    if text is None or not _pending(job, job.gres, text):
        return job
    gpus, gpu_type = gres_gpus(text, change.state.gres_types)
    if gpu_type and not any(gpu_type in n.gpu_types for n in change.state.nodes.values()):
        raise InvalidRequest("Invalid GRES specification (with and without type identification)")
    request = replace(
        job.request,
        gpus_per_node=gpus,
        gpu_type=gpu_type,
        untyped_nodes=untyped_nodes(gpu_type, change.state),
    )
    return replace(job, gres=text, request=request)


def _association(job: Job, change: Change) -> Job:
    """``Account=`` and ``QOS=`` of a pending job (the caller checks the association)."""
    new = job
    if change.request.account is not None:
        if job.state is not JobState.PENDING:
            raise InvalidTransition(NOT_PENDING)  # even the same account, as Slurm says
        new = replace(new, account=change.request.account)
    if change.request.qos is not None and _pending(job, job.qos, change.request.qos):
        new = replace(new, qos=change.request.qos)
    return new


def _reservation(job: Job, change: Change) -> Job:
    name = change.request.reservation
    if name is None or not _pending(job, job.reservation, name):
        return job
    check_reservation(name, job.user, job.account, change.state.reservations)
    return replace(job, reservation=name)


def _node_list(job: Job, change: Change, field: str) -> tuple[str, ...] | None:
    """The node names of ReqNodeList/ExcNodeList, or None when they do not change."""
    if not change.has(field):
        return None
    try:
        names = tuple(dict.fromkeys(hostlist.expand(getattr(change.request, field))))
    except ValueError:
        raise InvalidRequest(BAD_NODE_NAME) from None
    if any(name not in change.state.nodes for name in names):
        raise InvalidRequest(BAD_NODE_NAME)
    return names if _pending(job, getattr(job.request, field), names) else None


def _nodes(job: Job, change: Change) -> Job:
    exc, req = _node_list(job, change, "exc_nodes"), _node_list(job, change, "req_nodes")
    request = job.request
    if exc is not None:
        request = replace(request, exc_nodes=exc)
    if req is not None:
        wanted = max(request.min_nodes, len(req))
        request = replace(
            request, req_nodes=req, min_nodes=wanted, max_nodes=max(request.max_nodes, wanted)
        )
    if set(request.req_nodes) & set(request.exc_nodes):
        raise InvalidRequest(BAD_NODE_NAME)
    return job if request == job.request else replace(job, request=request)


def _node_count(job: Job, change: Change) -> Job:
    """``NumNodes=N[-M]`` (``ALL``: every node of the partition)."""
    if change.request.min_nodes is None:
        return job
    low = change.request.min_nodes
    if low == ALL_NODES:
        low = len(change.state.partitions[job.partition].nodes)
    high = change.request.max_nodes if change.request.max_nodes is not None else low
    if (low, high) == (job.request.min_nodes, job.request.max_nodes):
        return job
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_SUPPORTED)
    if low < 1 or high < low:
        raise InvalidRequest(BAD_NODE_COUNT)
    old = job.request
    ntasks = max(old.ntasks, low) if old.ntasks_set else low
    # As Slurm shows it: NumNodes=2 after NumNodes=2, NumNodes=1-2 after NumNodes=1-2.
    shown = change.request.max_nodes is not None
    request = replace(old, min_nodes=low, max_nodes=high, ntasks=ntasks, nodes_set=shown)
    check_satisfiable(request, change.state.partitions[job.partition], change.state)
    return replace(job, request=request)


def _task_count(job: Job, change: Change) -> Job:
    wanted = change.request.num_tasks
    if wanted is None or not _pending(job, job.request.ntasks, wanted):
        return job
    if wanted < 1 or wanted < job.request.min_nodes:
        raise InvalidRequest(BAD_TASK_COUNT)
    request = replace(job.request, ntasks=wanted, ntasks_set=True)
    check_satisfiable(request, change.state.partitions[job.partition], change.state)
    return replace(job, request=request)


def _time_limit(job: Job, change: Change) -> Job:
    if change.request.time_limit is None:
        return job
    limit = change.request.time_limit or INFINITE
    if limit == job.time_limit:
        return job
    shorter = _minutes(limit) < _minutes(job.time_limit)
    part = change.state.partitions.get(job.partition)
    within = part is not None and _minutes(part.max_time) >= _minutes(limit)
    if not (change.operator or shorter or (job.state is JobState.PENDING and within)):
        raise PermissionDenied(DENIED)
    return replace(job, time_limit=limit, partition_time_limit=False)


def _minutes(limit: int) -> int:
    return YEAR_MINUTES if limit == INFINITE else limit


def _deadline(job: Job, change: Change) -> Job:
    if change.request.deadline is None or job.state is JobState.RUNNING:
        return job  # Slurm leaves a running job's deadline as it is
    if change.request.deadline < change.now:
        raise InvalidRequest(BAD_TIME)
    if not change.operator:
        raise PermissionDenied(DENIED)
    return replace(job, deadline=float(change.request.deadline))


def _priority(job: Job, change: Change) -> Job:
    """``Priority=``: an administrator's; 0 holds the job, Slurm's INFINITE releases it."""
    if change.request.priority is None:
        return job
    wanted = change.request.priority
    if wanted == 0:
        return hold_action(job, HoldAction.HOLD, change.operator, change.now)
    if job.held:
        if wanted != PRIORITY_INFINITE:
            raise InvalidRequest(HELD)
        return hold_action(job, HoldAction.RELEASE, change.operator, change.now)
    if wanted == PRIORITY_INFINITE:
        return replace(job, priority_set=0) if change.operator else job
    if not change.operator:
        if wanted < change.priority:
            raise InvalidRequest(PRIORITY_NOT_KEPT)
        raise PermissionDenied(DENIED)
    return replace(job, priority_set=wanted, nice=0)


def _nice(job: Job, change: Change) -> Job:
    if change.request.nice is None:
        return job
    if change.request.nice < 0 and not change.operator:
        raise PermissionDenied(DENIED)
    if abs(change.request.nice) > jobopts.NICE_LIMIT:
        raise InvalidRequest("Invalid nice value")
    return replace(job, nice=change.request.nice)


def _name(job: Job, change: Change) -> Job:
    if change.request.name is None:
        return job
    if not change.request.name or "\0" in change.request.name:
        raise InvalidRequest("Invalid job name")
    return replace(job, name=change.request.name)


def _work_dir(job: Job, change: Change) -> Job:
    path = change.request.work_dir
    if path is None or not _pending(job, job.work_dir, path):
        return job
    if not path.startswith("/") or "\0" in path:
        raise InvalidRequest(f"Working directory must be an absolute path: {path!r}")
    return replace(job, work_dir=path)


def _dependency(job: Job, change: Change) -> Job:
    """``Dependency=...``: a pending job waits on something else ("" clears)."""
    if change.request.dependency is None:
        return job
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_PENDING)
    try:
        dep = parse_dependency(change.request.dependency)
    except ValueError:
        raise InvalidRequest(DEPENDENCY_PROBLEM) from None
    eligible = 0.0 if dep.items or job.held else max(change.now, job.begin_time)
    return replace(job, dependency=str(dep), eligible_time=eligible)


def _begin_time(job: Job, change: Change) -> Job:
    """``StartTime=``/``EligibleTime=``: not before then (a past time is now)."""
    if change.request.begin_time is None:
        return job
    if job.state is not JobState.PENDING:
        raise InvalidTransition(NOT_PENDING)
    begin = max(float(change.request.begin_time), change.now)
    # Slurm's EligibleTime is this begin time, held or not; StartTime a future one only.
    return replace(job, begin_time=begin if begin > change.now else 0.0, eligible_time=begin)


def _notices(job: Job, change: Change) -> Job:
    """Comment, requeue flag and mail: any job that has not finished."""
    request, new = change.request, job
    if request.comment is not None:
        new = replace(new, comment=request.comment)
    if request.requeue is not None:
        new = replace(new, requeue=request.requeue)
    if request.mail_type is not None:
        try:
            normal = jobopts.parse_mail_type(request.mail_type) if request.mail_type else ""
        except ValueError:
            raise InvalidRequest("Invalid mail type specification") from None
        mail_user = new.mail_user or (new.user if normal else "")
        new = replace(new, mail_type=normal, mail_user=mail_user)
    if request.mail_user is not None:
        new = replace(new, mail_user=request.mail_user)
    return new


def _array_throttle(job: Job, change: Change) -> Job:
    """``ArrayTaskThrottle=N``: an array's; a job that is no array ignores it, as in Slurm."""
    text = change.request.array_throttle
    if text is None or not job.array_job_id:
        return job
    if not text.isdigit():
        raise InvalidRequest(BAD_TASK_COUNT)
    return replace(job, array_throttle=int(text))


# Slurm's order of checks: the first that fails is the one reported.
_STEPS: tuple[Callable[[Job, Change], Job], ...] = (
    _array_throttle,
    _partition,
    _association,
    _reservation,
    _nodes,
    _notices,
    _node_count,
    _task_count,
    _gres,
    _time_limit,
    _deadline,
    _priority,
    _nice,
    _name,
    _work_dir,
    _dependency,
    _begin_time,
)
