"""Jobs: validating a submission into a record, and every change of a job's state.

``build_job`` checks each field of a :class:`~minislurm.requests.Submission` against the
configuration and the nodes (clients can be bypassed) and raises
:class:`~minislurm.errors.InvalidRequest` with Slurm's words. :func:`apply_event`
is the one writer of a job's state: it moves the job through the transition
table (:func:`minislurm.states.next_job_state`) and returns the intents the
move asks of the nodes; the other functions here are the events Slurm knows,
each a call of it.

Imports minislurm, ctld.state and ctld.intents; no database, no gRPC server.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from ctld.intents import Intent, Launch, Terminate
from ctld.joboptions import check_against_nodes, checked_options
from ctld.state import ClusterState
from minislurm import hostlist, jobopts, units
from minislurm.arrays import MAX_ARRAY_SIZE, parse_array
from minislurm.config import PartitionConfig
from minislurm.depend import Dependency, parse_dependency
from minislurm.errors import InvalidRequest, InvalidTransition
from minislurm.model import (
    HOLD_NONE,
    HOLD_USER,
    Allocation,
    Job,
    JobScript,
    ResourceRequest,
    time_limit_end,
)
from minislurm.requests import Submission
from minislurm.states import (
    OOM_SIGNAL,
    JobEvent,
    JobState,
    kill_end,
    kill_name,
    next_job_state,
)
from minislurm.units import INFINITE

NOT_AVAILABLE = "Requested node configuration is not available"
ALREADY_DONE = "Job/step already completing or completed"
NOT_PENDING = "Job is no longer pending execution"
FINISHED = "Job has already finished"
NOT_NOW = "Job can not be altered now, try again later"
DENIED = "Access/permission denied"
USER_ID_MISSING = "Invalid user id"  # Slurm's answer to a user acting as an administrator
MAX_SCRIPT_BYTES = 4 * 1024 * 1024  # Slurm's default max_script_size
REASON_NONE = "None"
REASON_HELD_USER = "JobHeldUser"
REASON_HELD_ADMIN = "JobHeldAdmin"
REASON_NONZERO_EXIT = "NonZeroExitCode"
REASON_TIME_LIMIT = "TimeLimit"
REASON_LAUNCH_FAILED = "JobLaunchFailure"
REASON_OUT_OF_MEMORY = "OutOfMemory"  # Slurm's FAIL_OOM
REASON_DEADLINE = "DeadLine"
REASON_DEP_NEVER = "DependencyNeverSatisfied"


def rejected(*lines: str) -> InvalidRequest:
    """An InvalidRequest whose message is Slurm's error, after any detail lines.

    Args:
        lines: detail lines (printed as ``error:`` lines), then the error.

    Returns:
        The exception to raise.
    """
    return InvalidRequest("\n".join(lines))


def _partition(spec: Submission, state: ClusterState, default: str | None) -> PartitionConfig:
    name = spec.partition or default
    part = state.partitions.get(name) if name else None
    if part is None:
        raise rejected(
            f"invalid partition specified: {spec.partition}", "Invalid partition name specified"
        )
    if part.state in ("DRAIN", "INACTIVE"):
        raise rejected("Required partition not available (inactive or drain)")
    return part


def _hostnames(expr: str, state: ClusterState) -> tuple[str, ...]:
    try:
        names = hostlist.expand(expr)
    except ValueError:
        raise rejected("Invalid node name specified") from None
    if any(name not in state.nodes for name in names):
        raise rejected("Invalid node name specified")
    return tuple(dict.fromkeys(names))


def _gpus_per_node(spec: Submission, gres_types: tuple[str, ...]) -> tuple[int, str]:
    """The GPUs per node ``--gres`` and ``--gpus-per-node`` ask for, and the GPU type named."""
    gpus, gpu_type = gres_gpus(spec.gres, gres_types, spec.gpu_type)
    return max(gpus, spec.gpus_per_node), gpu_type


def gres_gpus(text: str, gres_types: tuple[str, ...], gpu_type: str = "") -> tuple[int, str]:
    """The GPUs per node a ``--gres`` (or ``scontrol update Gres=``) value asks for, and their type.

    Args:
        text: e.g. ``gpu:2``, ``gpu:a100:2``; "" asks for none.
        gres_types: configured generic resource names (``GresTypes``).
        gpu_type: a type named otherwise (``--gpus-per-node=a100:2``), which must agree.

    Returns:
        ``(count, type)``; type "" when none is named.

    Raises:
        InvalidRequest: Slurm's message for a malformed or unknown value.
    """
    try:
        items = units.parse_gres(text, signed=True)
    except units.GresCountError:
        raise rejected("Invalid Trackable RESource (TRES) specification") from None
    except ValueError:
        raise rejected("Invalid generic resource (gres) specification") from None
    gpus = 0
    types = {gpu_type} - {""}
    for name, kind, count in items:
        if name not in gres_types:
            raise rejected("Invalid generic resource (gres) specification")
        if count < 0:
            raise rejected(NOT_AVAILABLE)
        gpus += count
        types |= {kind} - {""}
    if len(types) > 1:
        raise rejected("Invalid generic resource (gres) specification")
    return gpus, next(iter(types), "")


def untyped_nodes(gpu_type: str, state: ClusterState) -> frozenset[str]:
    """The nodes a job asking for GPUs of ``gpu_type`` cannot use: those with others (or none)."""
    if not gpu_type:
        return frozenset()
    return frozenset(n.name for n in state.nodes.values() if set(n.gpu_types) != {gpu_type})


def resolve_request(
    spec: Submission, state: ClusterState, gres_types: tuple[str, ...]
) -> ResourceRequest:
    """Turn the counts a user gave into a complete, consistent request.

    Args:
        spec: the submission.
        state: the cluster (node names are checked against it).
        gres_types: configured generic resource names (``GresTypes``).

    Returns:
        The request with defaults filled in as Slurm fills them.

    Raises:
        InvalidRequest: inconsistent or unknown values.
    """
    if spec.mem_per_node is not None and spec.mem_per_cpu is not None:
        raise rejected("--mem and --mem-per-cpu are mutually exclusive")
    req_nodes = _hostnames(spec.nodelist, state) if spec.nodelist else ()
    exc_nodes = _hostnames(spec.exclude, state) if spec.exclude else ()
    if set(req_nodes) & set(exc_nodes):
        raise rejected("Invalid node name specified")
    cpt = spec.cpus_per_task or 1
    tpn = spec.ntasks_per_node
    min_nodes = max(spec.min_nodes, len(req_nodes), 1)
    if tpn and not spec.min_nodes and spec.ntasks:
        min_nodes = max(-(-spec.ntasks // tpn), len(req_nodes), 1)
    ntasks = spec.ntasks or (tpn * min_nodes if tpn else min_nodes)
    if spec.max_nodes:
        max_nodes = spec.max_nodes
    elif spec.min_nodes or tpn:
        max_nodes = min_nodes
    else:
        max_nodes = max(ntasks, min_nodes)
    if max_nodes < min_nodes or ntasks < min_nodes:
        raise rejected(f"can't run {ntasks} processes on {min_nodes} nodes", NOT_AVAILABLE)
    gpus_per_node, gpu_type = _gpus_per_node(spec, gres_types)
    switches, switch_wait = jobopts.parse_switches(
        spec.options.get("switches", ""), state.max_switch_wait
    )
    segment = int(spec.options.get("segment", "0"))
    if segment and min_nodes > segment and min_nodes % segment:
        # Slurm: a node count above the segment size must be a multiple of it.
        raise rejected(NOT_AVAILABLE)
    return ResourceRequest(
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        ntasks=ntasks,
        ntasks_per_node=tpn,
        cpus_per_task=cpt,
        mem_per_node=spec.mem_per_node or 0,
        mem_per_cpu=spec.mem_per_cpu or 0,
        gpus_per_node=gpus_per_node,
        gpus_per_task=spec.gpus_per_task,
        gpus=spec.gpus,
        req_nodes=req_nodes,
        exc_nodes=exc_nodes,
        nodes_set=bool(spec.min_nodes or spec.max_nodes),
        ntasks_set=bool(spec.ntasks or tpn),
        cpus_per_task_set=bool(spec.cpus_per_task),
        exclusive=spec.exclusive,
        gpu_type=gpu_type,
        untyped_nodes=untyped_nodes(gpu_type, state),
        switches=switches,
        switch_wait=switch_wait,
        segment=segment if segment < min_nodes else 0,  # one segment: no effect, as in Slurm
        exclusive_topo=spec.options.get("exclusive") == "topo",
    )


def partition_memory(part: PartitionConfig, state: ClusterState) -> int:
    """The RealMemory of a partition's first node: what a job reckons per node without ``--mem``.

    Args:
        part: the partition.
        state: the cluster.

    Returns:
        MiB (0 for a partition without nodes).
    """
    first = next((state.nodes[n] for n in part.nodes if n in state.nodes), None)
    return first.real_memory if first else 0


def exceeds_partition(
    req: ResourceRequest, time_limit: int, part: PartitionConfig, state: ClusterState
) -> bool:
    """Whether a partition's size or limits rule a job out as it is configured.

    Such a job is accepted and waits (PartitionConfig, PartitionNodeLimit,
    PartitionTimeLimit), as in Slurm, which does not try its nodes at submit.

    Args:
        req: the resolved request.
        time_limit: its time limit, minutes (INFINITE: none).
        part: its partition.
        state: the cluster.

    Returns:
        True when more CPUs or nodes than the partition has or allows, a
        longer time limit than its MaxTime, or a node outside it is asked for.
    """
    members = [state.nodes[n] for n in part.nodes if n in state.nodes]
    max_nodes = min(len(members), part.max_nodes)
    return (
        req.min_cpus > sum(n.cpus for n in members)
        or not part.min_nodes <= req.min_nodes <= max_nodes
        or time_limit > part.max_time
        or not set(req.req_nodes).issubset(part.nodes)
    )


def check_satisfiable(req: ResourceRequest, part: PartitionConfig, state: ClusterState) -> None:
    """Reject what no node of the partition could ever give (Slurm does, at submit).

    Requests that only exceed a partition's size or limits are accepted and
    wait with reason PartitionConfig, as in Slurm.

    Args:
        req: the resolved request.
        part: the job's partition.
        state: the cluster.

    Raises:
        InvalidRequest: Slurm's "Requested node configuration is not available".
    """
    members = [state.nodes[n] for n in part.nodes if n not in req.excluded and n in state.nodes]
    if not members:
        raise rejected(NOT_AVAILABLE)
    max_cpus = max(n.cpus for n in members)
    max_mem = max(n.real_memory for n in members)
    max_gpus = max(len(n.gpus) for n in members)
    per_node_tasks = max(req.ntasks_per_node, 1)
    per_node_mem = req.mem_per_node or req.mem_per_cpu * req.cpus_per_task * per_node_tasks
    if per_node_mem > max_mem:
        raise rejected("Memory specification can not be satisfied", NOT_AVAILABLE)
    per_node_cpus = req.cpus_per_task * per_node_tasks
    if per_node_cpus > max_cpus:
        raise rejected("CPU count per node can not be satisfied", NOT_AVAILABLE)
    per_node_gpus = max(req.gpus_per_node, req.gpus_per_task * per_node_tasks)
    total_gpus = sum(len(n.gpus) for n in members)
    if per_node_gpus > max_gpus or req.min_gpus > total_gpus:
        raise rejected(NOT_AVAILABLE)


def _check_text(spec: Submission, max_script_size: int) -> None:
    texts = [spec.name, spec.work_dir, spec.stdout, spec.stderr, spec.stdin, spec.command]
    texts += [spec.comment, spec.mail_user, spec.gpu_type, *spec.options, *spec.options.values()]
    texts += list(spec.argv) + list(spec.environment) + list(spec.environment.values())
    if any("\0" in t for t in texts):
        raise rejected("Invalid NUL character in job description")
    if any(not k or "=" in k for k in spec.environment):
        raise rejected("Invalid environment variable name")
    if not os.path.isabs(spec.work_dir):
        raise rejected(f"Working directory must be an absolute path: {spec.work_dir!r}")
    if spec.batch and not spec.script.startswith(b"#!"):
        raise rejected(
            "This does not look like a batch script.  The first",
            "line must start with #! followed by the path to an interpreter.",
        )
    if len(spec.script) > max_script_size:
        raise rejected("Batch job script is too large")
    if not spec.user:
        raise rejected("Invalid user id")


def build_job(
    spec: Submission,
    job_id: int,
    now: float,
    state: ClusterState,
    default_partition: str | None,
    gres_types: tuple[str, ...],
    max_array_size: int = MAX_ARRAY_SIZE,
    default_requeue: bool = True,
    max_script_size: int = MAX_SCRIPT_BYTES,
) -> tuple[Job, JobScript]:
    """Validate a submission and make the new job's record.

    Args:
        spec: the submission as received.
        job_id: the id the job gets.
        now: submit time.
        state: the cluster.
        default_partition: the configured default partition, if any.
        gres_types: configured generic resource names.
        max_array_size: MaxArraySize (array task ids must be below it).
        default_requeue: JobRequeue (whether a job may be requeued unless it says).
        max_script_size: SchedulerParameters=max_script_size (bytes of a batch script).

    Returns:
        The PENDING job and its script.

    Raises:
        InvalidRequest: with Slurm's message; nothing was changed.
    """
    _check_text(spec, max_script_size)
    part = _partition(spec, state, default_partition)
    options = checked_options(dict(spec.options))  # before the request reads them
    req = replace(resolve_request(spec, state, gres_types), part_mem=partition_memory(part, state))
    if spec.time_limit is not None:
        limit = spec.time_limit or INFINITE
    else:
        limit = part.default_time if part.default_time is not None else part.max_time
    # Slurm tries to place a job at submit, and so rejects what no node could give, unless
    # the job is held or its partition's limits rule it out: then it only waits.
    placed = not spec.hold and not exceeds_partition(req, limit, part, state)
    if placed:
        check_satisfiable(req, part, state)
    if spec.nice < 0 and spec.uid != 0:
        raise rejected("Access/permission denied: only root may set a negative nice value")
    if abs(spec.nice) > jobopts.NICE_LIMIT:
        raise rejected("Invalid nice value")
    check_against_nodes(options, part, state, limit, placed)
    # One Job built once: each dataclasses.replace of a record this wide costs ~50 us.
    job = Job(
        job_id=job_id,
        name=spec.name or "sbatch",
        uid=spec.uid,
        gid=spec.gid,
        user=spec.user,
        group=spec.group or str(spec.gid),
        partition=part.name,
        state=JobState.PENDING,
        request=req,
        submit_time=now,
        account=spec.account,
        qos=spec.qos or "normal",
        reason=REASON_HELD_USER if spec.hold else REASON_NONE,
        nice=spec.nice,
        hold=HOLD_USER if spec.hold else HOLD_NONE,
        time_limit=limit,
        partition_time_limit=spec.time_limit is None and part.default_time is None,
        eligible_time=_eligible_time(spec, now),
        last_sched_eval=now,  # Slurm's first evaluation is the submission's
        work_dir=spec.work_dir,
        submit_dir=spec.submit_dir or spec.work_dir,
        stdout=spec.stdout,
        stderr=spec.stderr,
        stdin=spec.stdin,
        submit_host=spec.submit_host,
        command=spec.command,
        gres=spec.gres,
        batch=spec.batch,
        requeue=default_requeue if spec.requeue is None else spec.requeue,
        prio_process=spec.prio_process,
        **_workflow(job_id, spec, now, max_array_size),
        **_notices(spec),
        options=options,
    )
    script = JobScript(spec.script, list(spec.argv), dict(spec.environment), spec.umask)
    return job, script


def _workflow(job_id: int, spec: Submission, now: float, max_array_size: int) -> dict[str, Any]:
    """The new job's array, dependency and times, validated."""
    fields: dict[str, Any] = {}
    if spec.array:
        try:
            tasks, throttle = parse_array(spec.array, max_array_size)
        except ValueError as err:
            raise rejected(str(err)) from None
        fields.update(
            array_job_id=job_id,
            array_tasks=str(tasks),
            array_throttle=throttle,
            array_spec=spec.array,
        )
    try:
        dependency = str(parse_dependency(spec.dependency))
    except ValueError as err:
        raise rejected(str(err)) from None
    if spec.begin_time < 0 or spec.deadline < 0:
        raise rejected("Invalid time specification")
    if spec.deadline and spec.deadline < max(spec.begin_time, now):
        raise rejected("Requested time limit is invalid (missing or exceeds some limit)")
    return fields | {
        "dependency": dependency,
        "kill_on_invalid_dep": spec.kill_on_invalid_dep,
        "begin_time": float(spec.begin_time) if spec.begin_time > now else 0.0,
        "deadline": float(spec.deadline),
    }


def _notices(spec: Submission) -> dict[str, Any]:
    """The new job's comment, mail, open mode and warning signal, validated."""
    try:
        normal = jobopts.parse_mail_type(spec.mail_type) if spec.mail_type else ""
    except ValueError:
        normal = ""
    if normal != spec.mail_type:
        raise rejected("Invalid mail type specification")
    if spec.open_mode not in ("", "append", "truncate"):
        raise rejected("Invalid open mode specification")
    if spec.warn_signal:
        try:
            units.parse_signal(str(spec.warn_signal))
        except ValueError:
            raise rejected("Invalid signal specification") from None
    if spec.warn_time > jobopts.MAX_WARN_TIME:
        raise rejected("Invalid signal specification")
    return dict(
        comment=spec.comment,
        mail_type=spec.mail_type,
        # Slurm mails the submitting user unless told otherwise.
        mail_user=spec.mail_user or (spec.user if spec.mail_type else ""),
        open_mode=spec.open_mode,
        warn_signal=spec.warn_signal,
        warn_time=spec.warn_time if spec.warn_signal else 0,
        warn_batch=spec.warn_batch and bool(spec.warn_signal),
    )


# ---------------------------------------------------------------- transitions


def apply_event(
    job: Job, event: JobEvent, why: str = "", **changes: Any
) -> tuple[Job, list[Intent]]:
    """The job after ``event``: the one place a job's state changes.

    An event that moves a running job to COMPLETING begins its kill: the job
    keeps that event as ``kill_event``, which decides the state it ends in
    once its nodes confirm, and the nodes are asked to kill it. The start of
    a batch job asks its batch host to launch the script. No other event asks
    anything of the nodes.

    Args:
        job: the job.
        event: what happened.
        why: for the log line (the event's name when empty).
        changes: the other fields the event changes (``reason`` is Slurm's, shown).

    Returns:
        The job in its new state, and the intents to carry out once it is committed.

    Raises:
        InvalidTransition: the event is not legal in the job's state.
    """
    new = next_job_state(job.job_id, job.state, event, why)
    if new is JobState.COMPLETING:
        killing = replace(job, state=new, kill_event=event, **changes)
        return killing, kill_intents(killing)
    moved = replace(job, state=new, **changes)
    launch: list[Intent] = [Launch(job.job_id)] if event is JobEvent.START and job.batch else []
    return moved, launch


def kill_intents(job: Job) -> list[Intent]:
    """What asks the nodes of a COMPLETING job to kill it (again, after a restart).

    Args:
        job: the job.

    Returns:
        A Terminate of the job on its nodes, named after its kill; none for a
        job that is not being killed.
    """
    if job.state is not JobState.COMPLETING or job.allocation is None:
        return []
    return [Terminate(job.job_id, job.allocation.node_names, kill_name(job.kill_event))]


def start(job: Job, alloc: Allocation, now: float) -> tuple[Job, list[Intent]]:
    """The job after the scheduler gave it ``alloc``.

    Args:
        job: a PENDING job.
        alloc: its allocation.
        now: start time.

    Returns:
        The RUNNING job, and its launch (a batch job's) to carry out once committed.
    """
    return apply_event(
        job,
        JobEvent.START,
        "scheduled",
        allocation=alloc,
        start_time=now,
        reason=REASON_NONE,
        last_sched_eval=now,
        warn_sent=False,
    )


def ended(
    job: Job,
    exit_code: int,
    signal: int,
    now: float,
    launch_failed: bool = False,
    out_of_memory: bool = False,
) -> Job:
    """The job after its batch script ended on its node.

    Args:
        job: a RUNNING or COMPLETING job.
        exit_code: the script's exit status.
        signal: the signal that killed it, 0 if none.
        now: end time.
        launch_failed: the node could not start the script at all.
        out_of_memory: its node killed it for holding more than its memory
            (it ends OUT_OF_MEMORY, ExitCode 0:125 as Slurm shows it).

    Returns:
        The job in its final state, with Slurm's reason and exit code.
    """
    if job.state is JobState.COMPLETING:
        event = kill_end(job.kill_event or JobEvent.CANCEL)
        reason = REASON_TIME_LIMIT if event is JobEvent.TIMED_OUT else REASON_NONE
    elif launch_failed:
        event, reason = JobEvent.EXIT_FAIL, REASON_LAUNCH_FAILED
    elif out_of_memory:
        event, reason = JobEvent.OUT_OF_MEMORY, REASON_OUT_OF_MEMORY
        exit_code, signal = 0, OOM_SIGNAL
    elif exit_code == 0 and signal == 0:
        event, reason = JobEvent.EXIT_OK, job.reason if job.held else REASON_NONE
    else:
        event, reason = JobEvent.EXIT_FAIL, REASON_NONZERO_EXIT
    done, _ = apply_event(
        job, event, reason, reason=reason, exit_code=exit_code, exit_signal=signal, end_time=now
    )
    return done


def cancel_pending(job: Job, now: float) -> Job:
    """A PENDING job cancelled: it ends at once, and keeps the reason it waited for.

    Args:
        job: a PENDING job.
        now: the time of the cancel.

    Returns:
        The CANCELLED job.

    Raises:
        InvalidTransition: the job is not pending.
    """
    if job.state is not JobState.PENDING:
        raise InvalidTransition(f"job={job.job_id} {job.state.value} is not pending")
    cancelled, _ = apply_event(job, JobEvent.CANCEL, "scancel", end_time=now, start_time=now)
    return cancelled


def missed_deadline(job: Job, now: float) -> Job:
    """A pending job that can no longer end before its ``--deadline``.

    Args:
        job: a PENDING job.
        now: the time.

    Returns:
        The job in state DEADLINE (reason ``DeadLine``, as Slurm shows it).
    """
    missed, _ = apply_event(
        job,
        JobEvent.DEADLINE,
        REASON_DEADLINE,
        reason=REASON_DEADLINE,
        end_time=now,
        start_time=now,
    )
    return missed


def _eligible_time(spec: Submission, now: float) -> float:
    """When a new job may start: its begin time, else now unless held or dependent (0)."""
    if spec.begin_time > now:
        return float(spec.begin_time)
    return 0.0 if spec.hold or spec.dependency else now


def settled_dependency(job: Job, dep: Dependency, now: float) -> Job:
    """A pending job after what could be settled of its dependency was.

    Args:
        job: a PENDING job.
        dep: its dependency, resolved.
        now: the time.

    Returns:
        The job with the remaining dependency; eligible from now when none
        remains; CANCELLED when it can never be satisfied and the user asked
        for that (``--kill-on-invalid-dep=yes``).
    """
    new = replace(job, dependency=str(dep))
    if not dep.items and job.dependency and not job.held:
        new = replace(new, eligible_time=max(now, job.begin_time))
    if job.kill_on_invalid_dep and dep.never_satisfied():
        cancelled = cancel_pending(new, now)
        return replace(cancelled, reason=REASON_DEP_NEVER)
    return new


def begin_kill(job: Job, event: JobEvent, now: float) -> tuple[Job, list[Intent]]:
    """A running job that must be killed: it holds its nodes until they confirm.

    Args:
        job: a RUNNING job.
        event: what began the kill (CANCEL, TIME_LIMIT, PREEMPT, PREEMPT_REQUEUE,
            REQUEUE); it decides the state the job ends in when its nodes confirm.
        now: the time of the decision.

    Returns:
        The COMPLETING job, and the kill to ask of its nodes.

    Raises:
        InvalidTransition: the job is not running.
    """
    if job.state is not JobState.RUNNING:
        raise InvalidTransition(f"job={job.job_id} {job.state.value} is not running")
    reason = REASON_TIME_LIMIT if event is JobEvent.TIME_LIMIT else REASON_NONE
    return apply_event(job, event, kill_name(event), reason=reason, end_time=now)


def warning_time(job: Job) -> float:
    """When a running job's ``--signal`` is due: its time limit less the warning time.

    Args:
        job: a started job.

    Returns:
        Epoch seconds; infinity when it has no warning signal, no limit, or was warned.
    """
    if not job.warn_signal or job.warn_sent:
        return float("inf")
    return time_limit_end(job) - job.warn_time


def node_failed(job: Job, now: float) -> Job:
    """A running job whose node lost it.

    Args:
        job: a RUNNING or COMPLETING job.
        now: the time it was found lost.

    Returns:
        The NODE_FAIL job.
    """
    lost, _ = apply_event(job, JobEvent.NODE_FAIL, "NodeFail", reason="NodeFail", end_time=now)
    return lost
