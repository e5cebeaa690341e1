"""The one mapping between protobuf messages and minislurm's dataclasses.

Requests become the records of :mod:`minislurm.requests` through
:func:`record`, derived from the records' field lists; replies are built
from the model's dataclasses.

Imports minislurm's core modules, protobuf and the generated stubs.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, TypeVar

from minislurm import hostlist, jobenv, requests, units
from minislurm.arrays import NO_TASK as NO_VAL
from minislurm.config import PartitionConfig
from minislurm.depend import parse_dependency
from minislurm.iopattern import DEFAULT_ARRAY_OUTPUT, DEFAULT_OUTPUT, output_path
from minislurm.model import Allocation, Job, JobScript, Node, NodeAlloc, ResourceRequest, Step
from minislurm.security import cred
from minislurm.states import (
    ACTIVE_JOB_STATES,
    JobState,
    node_state_compact,
    node_state_long,
    node_state_scontrol,
)
from minislurm.topology import Topology
from minislurm.units import INFINITE
from minislurm.wire.rpc import minislurm_pb2 as pb

R = TypeVar("R")

# Each request record and its message: the record's fields are the message's, by name.
RECORDS: dict[type[Any], Any] = {
    requests.Submission: pb.JobSpec,
    requests.JobQuery: pb.GetJobsRequest,
    requests.CancelRequest: pb.CancelJobsRequest,
    requests.HoldRequest: pb.HoldJobsRequest,
    requests.JobUpdate: pb.UpdateJobRequest,
    requests.NodeUpdate: pb.UpdateNodeRequest,
    requests.JobStatus: pb.JobStatus,
    requests.NodeScriptFailure: pb.NodeScriptFailedRequest,
    jobenv.ScriptJob: pb.ScriptJob,
    requests.AgentJob: pb.AgentJob,
    requests.Registration: pb.RegisterNodeRequest,
    requests.Heartbeat: pb.HeartbeatRequest,
    requests.StepRequest: pb.StepSpec,
    requests.TaskExit: pb.TaskExit,
    requests.StepEnd: pb.StepCompleteRequest,
    requests.StepAbort: pb.EndStepRequest,
    requests.StepStatQuery: pb.StepStatRequest,
    requests.JobRelease: pb.CompleteJobRequest,
    requests.TaskUsage: pb.TaskUsage,
    requests.NodeStepStat: pb.NodeStepStat,
    requests.StepNode: pb.StepNode,
    requests.StepInfo: pb.StepInfo,
    requests.AcctQuery: pb.GetAccountingRequest,
    requests.AcctRecord: pb.AcctRecord,
    requests.AssocChange: pb.ManageAssocRequest,
    requests.AssocInfo: pb.AssocInfo,
    requests.AccountInfo: pb.AccountInfo,
    requests.AcctUserInfo: pb.AcctUserInfo,
    requests.QosInfo: pb.QosInfo,
    requests.AssocListing: pb.GetAssocsReply,
    requests.JobPriorityInfo: pb.JobPriorityInfo,
    requests.ResvChange: pb.ManageReservationRequest,
    requests.ReservationInfo: pb.ReservationInfo,
}


_PLANS: dict[type[Any], tuple[tuple[str, str, Any], ...]] = {}


def _plan(cls: type[Any]) -> tuple[tuple[str, str, Any], ...]:
    """How to read each field of ``cls`` from its message: ``(name, kind, inner type)``."""
    known = _PLANS.get(cls)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    by_name = RECORDS[cls].DESCRIPTOR.fields_by_name
    plan = []
    for f in dataclasses.fields(cls):
        desc = by_name[f.name]
        hint = hints[f.name]
        message = desc.type == desc.TYPE_MESSAGE
        if message and desc.message_type.GetOptions().map_entry:
            plan.append((f.name, "map", None))
        elif desc.is_repeated:
            inner = typing.get_args(hint)[0]
            kind = "records" if message else "repeated"
            plan.append((f.name, kind, inner))
        elif message:
            plan.append((f.name, "record", hint))
        elif desc.type == desc.TYPE_ENUM:
            plan.append((f.name, "enum", hint))
        elif desc.has_presence:
            plan.append((f.name, "optional", None))
        else:
            plan.append((f.name, "plain", None))
    _PLANS[cls] = tuple(plan)
    return _PLANS[cls]


def record(cls: type[R], message: Any) -> R:
    """A request message as its record (see :mod:`minislurm.requests`).

    The conversion follows the record's field list: each field takes the
    message's field of the same name; an unset ``optional`` is None, a
    repeated field a tuple, a nested message its record.

    Args:
        cls: the record type (a key of :data:`RECORDS`).
        message: the message.

    Returns:
        The record.
    """
    values: dict[str, Any] = {}
    for name, kind, inner in _plan(cls):
        value = getattr(message, name)
        if kind == "plain":  # most fields: nothing more to do
            pass
        elif kind == "optional":
            value = value if message.HasField(name) else None
        elif kind == "map":
            value = dict(value)
        elif kind == "repeated":
            value = tuple(value)
        elif kind == "records":
            value = tuple(record(inner, v) for v in value)
        elif kind == "record":
            value = record(inner, value)
        elif kind == "enum":
            value = inner(value)
        values[name] = value
    return cls(**values)


def message(rec: Any) -> Any:
    """A record as its message: the inverse of :func:`record`.

    Args:
        rec: a record (its type a key of :data:`RECORDS`).

    Returns:
        The message.
    """
    msg = RECORDS[type(rec)]()
    for name, kind, _ in _plan(type(rec)):
        value = getattr(rec, name)
        if kind == "map":
            getattr(msg, name).update(value)
        elif kind == "repeated":
            getattr(msg, name).extend(value)
        elif kind == "records":
            getattr(msg, name).extend(message(v) for v in value)
        elif kind == "record":
            if value != type(value)():  # an empty one stays unset, as it came
                getattr(msg, name).CopyFrom(message(value))
        elif value is not None:
            setattr(msg, name, value)
    return msg


def pattern_values(job: Job, node: str = "") -> dict[str, str]:
    """The ``%`` codes of output patterns for a job (see minislurm.iopattern).

    Args:
        job: the job.
        node: the node the file is opened on ("" when not known).

    Returns:
        Code letter -> value.
    """
    values = {
        "j": str(job.job_id),
        "x": job.name,
        "u": job.user,
        "A": str(job.array_job_id or job.job_id),
        "a": NO_VAL if job.array_task_id is None else str(job.array_task_id),
        "J": str(job.job_id),
    }
    if node:
        values["N"] = node
    return values


def std_paths(job: Job, node: str = "") -> tuple[str, str, str]:
    """Absolute stdout, stderr and stdin paths of a job's batch script.

    Args:
        job: the job.
        node: the batch host, to expand ``%N``; "" leaves ``%N`` as it is
            (what ``scontrol show job`` prints).

    Returns:
        ``(stdout, stderr, stdin)``; stderr defaults to the stdout file.
    """
    values = pattern_values(job, node)
    keep = "" if node else "N"
    default = DEFAULT_ARRAY_OUTPUT if job.array_job_id else DEFAULT_OUTPUT
    out = output_path(job.stdout or default, job.work_dir, values, keep)
    err = output_path(job.stderr, job.work_dir, values, keep) if job.stderr else out
    stdin = output_path(job.stdin, job.work_dir, values, keep) if job.stdin else "/dev/null"
    return out, err, stdin


def tres_text(job: Job) -> str:
    """The job's TRES as Slurm prints them (``cpu=2,mem=16000M,node=2,billing=2,gres/gpu=16``).

    Args:
        job: the job; its allocation when it has one, else its request.

    Returns:
        The comma-separated list.
    """
    alloc = job.allocation
    req = job.request
    if alloc is not None:
        cpus, mem, nodes, gpus = alloc.cpus, alloc.mem, len(alloc.nodes), alloc.gpus
    else:
        cpus, mem, nodes, gpus = req.min_cpus, req.tres_mem, req.min_nodes, req.min_gpus
    parts = [f"cpu={cpus}"]
    if mem:
        parts.append(f"mem={units.format_memory_mb(mem)}")
    parts += [f"node={nodes}", f"billing={cpus}"]
    if gpus:
        parts.append(f"gres/gpu={gpus}")
    return ",".join(parts)


def _run_time(job: Job, now: float) -> int:
    if not job.start_time or job.state is JobState.PENDING:
        return 0
    end = now if job.state in ACTIVE_JOB_STATES else job.end_time
    return max(int(end - job.start_time), 0)


def _end_time(job: Job) -> float:
    if job.state is JobState.RUNNING and job.time_limit != INFINITE:
        return job.start_time + job.time_limit * 60
    return job.end_time


def job_info(job: Job, priority: int, now: float, expected_start: float = 0.0) -> pb.JobInfo:
    """A job as the commands see it.

    Args:
        job: the record.
        priority: its current priority (0 when held).
        now: the controller's clock, for the run time.
        expected_start: when the scheduler plans to start it, if pending and
            planned (Slurm's start_time of a pending job, ``squeue --start``).

    Returns:
        The message.
    """
    info = record_info(job)
    set_moment(info, job, priority, now, expected_start)
    return info


def set_moment(
    info: pb.JobInfo, job: Job, priority: int, now: float, expected_start: float
) -> None:
    """Set the fields of a job's :func:`record_info` that change with time alone.

    Args:
        info: the job's record_info (or a copy of it).
        job: the record.
        priority: its current priority (0 when held).
        now: the controller's clock, for the run time.
        expected_start: when the scheduler plans to start it, if pending and planned.
    """
    info.priority = priority
    info.run_time = _run_time(job, now)
    if job.state is JobState.PENDING and (job.begin_time or expected_start):
        info.start_time = int(max(job.begin_time, expected_start))


def record_info(job: Job) -> pb.JobInfo:
    """The part of a job's JobInfo that its record alone decides (see :func:`set_moment`).

    Args:
        job: the record.

    Returns:
        The message, without priority and run time, and with the record's start time.
    """
    req = job.request
    alloc = job.allocation
    stdout, stderr, stdin = std_paths(job)
    info = pb.JobInfo(
        job_id=job.job_id,
        name=job.name,
        uid=job.uid,
        gid=job.gid,
        user=job.user,
        group=job.group,
        account=job.account,
        qos=job.qos,
        partition=job.partition,
        state=job.state.value,
        state_compact=job.state.short,
        reason=job.reason,
        nice=job.nice,
        requeue=job.requeue,
        restarts=job.restarts,
        batch=job.batch,
        exit_code=job.exit_code,
        exit_signal=job.exit_signal,
        submit_time=int(job.submit_time),
        eligible_time=int(job.eligible_time),
        accrue_time=int(job.eligible_time),
        start_time=int(job.start_time),
        end_time=int(_end_time(job)),
        last_sched_eval=int(job.last_sched_eval),
        time_limit=job.time_limit,
        min_nodes=req.min_nodes,
        max_nodes=req.max_nodes if req.nodes_set else 0,
        num_cpus=alloc.cpus if alloc else req.min_cpus,
        num_tasks=req.ntasks,
        cpus_per_task=req.cpus_per_task,
        ntasks_per_node=req.ntasks_per_node,
        req_nodes=hostlist.compress(req.req_nodes),
        exc_nodes=hostlist.compress(req.exc_nodes),
        nodes=alloc.nodelist if alloc else "",
        batch_host=alloc.node_names[0] if alloc and job.batch else "",
        allocation=[
            pb.NodeAllocation(node=n.node, cpus=n.cpus, mem=n.mem, gpus=n.gpus, ntasks=n.ntasks)
            for n in (alloc.nodes if alloc else ())
        ],
        work_dir=job.work_dir,
        submit_dir=job.submit_dir,
        stdout=stdout,
        stderr=stderr,
        stdin=stdin,
        command=job.command,
        tres=tres_text(job),
        tres_per_node=f"gres:gpu:{_typed(req.gpu_type)}{req.gpus_per_node}"
        if req.gpus_per_node
        else "",
        submit_host=job.submit_host,
        mem_per_node=req.mem_per_node,
        mem_per_cpu=req.mem_per_cpu,
        gpus=req.gpus,
        gpus_per_node=req.gpus_per_node,
        gpus_per_task=req.gpus_per_task,
        gres=job.gres,
        array_job_id=job.array_job_id,
        array_tasks=job.array_tasks,
        array_throttle=job.array_throttle,
        array_spec=job.array_spec,
        dependency=parse_dependency(job.dependency).shown() if job.dependency else "",
        deadline=int(job.deadline),
        cancelled_by=max(job.cancelled_by, 0),
        comment=job.comment,
        reservation=job.reservation,
        mail_type=job.mail_type,
        mail_user=job.mail_user,
        exclusive=req.exclusive,
        options=job.options,
        gpu_type=req.gpu_type,
        kill_on_invalid_dep=job.kill_on_invalid_dep,
        req_switch=req.switches,
        wait4switch=req.switch_wait,
    )
    if job.array_task_id is not None:
        info.array_task_id = job.array_task_id
    return info


def _typed(gpu_type: str) -> str:
    return f"{gpu_type}:" if gpu_type else ""


def job_from_info(info: pb.JobInfo, spec: pb.JobSpec | None = None) -> Job:
    """The job record an agent rebuilds from the controller's JobInfo (for environments).

    Args:
        info: the job as allocated.
        spec: the submission's options, when known (a batch launch carries them):
            they say which counts the user gave (SLURM_NTASKS is set only then).

    Returns:
        The job with its allocation.
    """
    spec = spec or pb.JobSpec()
    request = ResourceRequest(
        min_nodes=info.min_nodes,
        max_nodes=info.max_nodes,
        ntasks=info.num_tasks,
        ntasks_per_node=info.ntasks_per_node,
        cpus_per_task=info.cpus_per_task,
        mem_per_node=info.mem_per_node,
        mem_per_cpu=info.mem_per_cpu,
        gpus_per_node=info.gpus_per_node,
        gpus_per_task=info.gpus_per_task,
        gpus=info.gpus,
        ntasks_set=bool(spec.ntasks or spec.ntasks_per_node),
        cpus_per_task_set=bool(spec.cpus_per_task),
    )
    allocation = Allocation(
        tuple(NodeAlloc(a.node, a.cpus, a.mem, tuple(a.gpus), a.ntasks) for a in info.allocation)
    )
    return Job(
        job_id=info.job_id,
        name=info.name,
        uid=info.uid,
        gid=info.gid,
        user=info.user,
        group=info.group,
        partition=info.partition,
        state=JobState(info.state),
        request=request,
        submit_time=float(info.submit_time),
        account=info.account,
        qos=info.qos,
        time_limit=info.time_limit,
        start_time=float(info.start_time),
        allocation=allocation,
        work_dir=info.work_dir,
        submit_dir=info.submit_dir,
        stdout=spec.stdout,
        stderr=spec.stderr,
        stdin=spec.stdin,
        submit_host=info.submit_host,
        gres=info.gres,
        restarts=info.restarts,
        prio_process=spec.prio_process,
        array_job_id=info.array_job_id,
        array_task_id=info.array_task_id if info.HasField("array_task_id") else None,
        array_spec=info.array_spec,
        options=dict(info.options),
    )


def node_info(node: Node, alloc_cpus: int, alloc_mem: int, alloc_gpus: int) -> pb.NodeInfo:
    """A node as the commands see it.

    Args:
        node: the record.
        alloc_cpus: CPUs allocated to jobs on it.
        alloc_mem: memory allocated (MiB).
        alloc_gpus: GPUs allocated.

    Returns:
        The message.
    """
    args = (node.state, node.flags, alloc_cpus, node.cpus)
    return pb.NodeInfo(
        name=node.name,
        addr=node.addr or node.name,
        hostname=node.hostname or node.name,
        port=node.port,
        state=node_state_scontrol(*args),
        state_compact=node_state_compact(*args),
        state_long=node_state_long(*args),
        flags=sorted(f.value for f in node.flags),
        reason=node.reason,
        reason_time=int(node.reason_time),
        reason_user=str(node.reason_uid),
        cpus=node.cpus,
        alloc_cpus=alloc_cpus,
        real_memory=node.real_memory,
        alloc_memory=alloc_mem,
        free_memory=node.free_memory,
        gpus=len(node.gpus),
        alloc_gpus=alloc_gpus,
        gres=f"gpu:{len(node.gpus)}" if node.gpus else "",
        cpu_load=node.cpu_load,
        arch=node.arch,
        os=node.os,
        boot_time=int(node.boot_time),
        slurmd_start_time=int(node.slurmd_start_time),
        last_busy_time=int(node.last_busy),
        partitions=list(node.partitions),
        version=node.version,
        sockets=node.sockets,
        cores_per_socket=node.cores_per_socket,
        threads_per_core=node.threads_per_core,
        weight=node.weight,
        features=node.features,
    )


def topology_units(topology: Topology | None) -> list[pb.TopologyUnit]:
    """The switches or blocks of a topology as ``scontrol show topology`` reads them.

    Args:
        topology: the controller's (None: flat, no units).

    Returns:
        Switches in file order; or base blocks, then each level of
        aggregated blocks (named after their base blocks).
    """
    if topology is None:
        return []
    if topology.tree:
        return [
            pb.TopologyUnit(
                name=s.name,
                level=s.level,
                link_speed=s.link_speed,
                nodes=hostlist.compress(s.nodes),
                switches=hostlist.compress(s.switches),
            )
            for s in topology.switches
        ]
    blocks = topology.blocks
    return [
        pb.TopologyUnit(
            name=hostlist.compress([blocks[i].name for i in group]),
            level=level,
            nodes=hostlist.compress([n for i in group for n in blocks[i].nodes]),
            index=index,
            size=topology.block_sizes[level],
        )
        for level, groups in enumerate(topology.block_groups())
        for index, group in enumerate(groups)
    ]


def launch_request(
    job: Job,
    script: JobScript,
    cluster: str,
    controller: str,
    conf_path: str,
    kill_wait: int,
) -> pb.BatchLaunchRequest:
    """What the batch host's agent needs to run the job's script.

    Args:
        job: the RUNNING job with its allocation.
        script: its script, arguments, environment and umask.
        cluster: ClusterName.
        controller: the controller's ``host:port`` (for SLURM_WORKING_CLUSTER).
        conf_path: the slurm.conf path jobs see as SLURM_CONF.
        kill_wait: seconds between SIGTERM and SIGKILL.

    Returns:
        The launch message.
    """
    spec = pb.JobSpec(
        name=job.name,
        script=script.script,
        argv=script.argv,
        environment=script.environment,
        umask=script.umask,
        work_dir=job.work_dir,
        submit_dir=job.submit_dir,
        stdout=job.stdout,
        stderr=job.stderr,
        stdin=job.stdin,
        open_mode=job.open_mode,
        ntasks=job.request.ntasks if job.request.ntasks_set else 0,
        cpus_per_task=job.request.cpus_per_task if job.request.cpus_per_task_set else 0,
        prio_process=job.prio_process,
        uid=job.uid,
        gid=job.gid,
        user=job.user,
        group=job.group,
        batch=job.batch,
    )
    return pb.BatchLaunchRequest(
        job=job_info(job, 0, job.start_time),
        spec=spec,
        cluster=cluster,
        controller=controller,
        conf_path=conf_path,
        kill_wait=kill_wait,
    )


CREDENTIAL_LIFETIME = 300  # seconds to launch a step after the controller created it


def step_info(step: Step, addresses: dict[str, tuple[str, int]]) -> pb.StepInfo:
    """A step as srun and the commands see it.

    Args:
        step: the record.
        addresses: node name -> the agent's (address, port).

    Returns:
        The message.
    """
    return pb.StepInfo(
        job_id=step.job_id,
        step_id=step.step_id,
        name=step.name,
        state=step.state.value,
        nodes=[
            pb.StepNode(
                node=n.node,
                addr=addresses.get(n.node, ("", 0))[0],
                port=addresses.get(n.node, ("", 0))[1],
                cpus=n.cpus,
                gpus=n.gpus,
                task_ids=n.task_ids,
                mem=n.mem,
            )
            for n in step.nodes
        ],
        ntasks=step.ntasks,
        cpus_per_task=step.cpus_per_task,
        gpus_per_task=step.gpus_per_task,
        nodelist=hostlist.compress(step.node_names),
        start_time=int(step.start_time),
        end_time=int(step.end_time),
        exit_code=step.exit_code,
        signal=step.signal,
        distribution=step.distribution,
        argv=step.argv,
        max_rss=step.max_rss,
        total_cpu=step.total_cpu,
        uid=step.uid,
        gid=step.gid,
    )


def credential(info: pb.StepInfo, job: Job, key: bytes, now: float) -> pb.SignedCredential:
    """The signed promise that lets the step's nodes launch its tasks.

    Args:
        info: the step, with its layout.
        job: its job.
        key: the cluster key.
        now: the time (the credential expires CREDENTIAL_LIFETIME later).

    Returns:
        The encoded StepCredential and its signature.
    """
    payload = pb.StepCredential(
        job_id=job.job_id,
        step_id=info.step_id,
        uid=job.uid,
        gid=job.gid,
        user=job.user,
        expires=int(now) + CREDENTIAL_LIFETIME,
        nodes=info.nodes,
        ntasks=info.ntasks,
    ).SerializeToString()
    return pb.SignedCredential(payload=payload, signature=cred.sign(key, payload))


def partition_info(
    part: PartitionConfig, known: dict[str, Node], preempt_mode: str
) -> pb.PartitionInfo:
    """A partition as scontrol show partition and sinfo see it.

    Args:
        part: the partition.
        known: the configured nodes by name.
        preempt_mode: the cluster's PreemptMode (a partition without its own takes it).

    Returns:
        The message.
    """
    nodes = [known[n] for n in part.nodes if n in known]
    cpus = sum(n.cpus for n in nodes)
    mem = sum(n.real_memory for n in nodes)
    gpus = sum(len(n.gpus) for n in nodes)
    tres = f"cpu={cpus},mem={units.format_memory_mb(mem)},node={len(nodes)},billing={cpus}"
    if gpus:
        tres += f",gres/gpu={gpus}"
    info = pb.PartitionInfo(
        name=part.name,
        nodes=hostlist.compress(part.nodes),
        default=part.default,
        max_time=part.max_time,
        max_nodes=part.max_nodes,
        min_nodes=part.min_nodes,
        priority_tier=part.priority_tier,
        priority_job_factor=part.priority_job_factor,
        allow_accounts=",".join(part.allow_accounts) if part.allow_accounts else "ALL",
        allow_groups=",".join(part.allow_groups) if part.allow_groups else "ALL",
        state=part.state,
        over_subscribe=part.over_subscribe,
        preempt_mode=part.preempt_mode or preempt_mode,
        total_cpus=cpus,
        total_nodes=len(nodes),
        tres=tres,
    )
    if part.default_time is not None:
        info.default_time = part.default_time
    return info
