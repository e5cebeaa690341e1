"""What the commands and the node agents ask of the controller, as records.

One frozen dataclass per request message the controller acts on (and per
answer of an agent to the controller's questions, the steps it lists, and
what it answers sacct, sacctmgr, sshare, sprio and scontrol about
accounting and reservations). Each field has the name and meaning of the
message's field of the same name (see
``proto/minislurm/v1/minislurm.proto``): the servicers convert the
messages with :func:`minislurm.wire.convert.record`, which derives the
conversion from these field lists, and a unit test checks that they and
the messages agree. Proto3 ``optional`` fields are None when unset;
repeated fields are tuples.

Imports nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class HoldAction(IntEnum):
    """What ``HoldJobs`` does (the message's ``Action``, same numbers)."""

    HOLD = 0  # JobHeldAdmin when root or an operator asks, else JobHeldUser
    USER_HOLD = 1  # JobHeldUser
    RELEASE = 2
    REQUEUE = 3  # scontrol requeue
    REQUEUE_HOLD = 4  # scontrol requeuehold: requeued, then held (JobHeldUser)


@dataclass(frozen=True)
class Submission:
    """A submission: sbatch, salloc or srun asking for a job (``SubmitJob``)."""

    name: str = ""
    script: bytes = b""
    argv: tuple[str, ...] = ()
    work_dir: str = ""
    stdout: str = ""
    stderr: str = ""
    stdin: str = ""
    environment: dict[str, str] = field(default_factory=dict)
    partition: str = ""
    account: str = ""
    qos: str = ""
    time_limit: int | None = None
    min_nodes: int = 0
    max_nodes: int = 0
    ntasks: int = 0
    ntasks_per_node: int = 0
    cpus_per_task: int = 0
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    gres: str = ""
    gpus: int = 0
    gpus_per_node: int = 0
    gpus_per_task: int = 0
    hold: bool = False
    nice: int = 0
    nodelist: str = ""
    exclude: str = ""
    requeue: bool | None = None
    submit_host: str = ""
    uid: int = 0
    gid: int = 0
    user: str = ""
    group: str = ""
    batch: bool = False
    command: str = ""
    prio_process: int = 0
    umask: int = 0
    submit_dir: str = ""
    array: str = ""
    dependency: str = ""
    kill_on_invalid_dep: bool = False
    begin_time: int = 0
    deadline: int = 0
    test_only: bool = False
    comment: str = ""
    mail_type: str = ""
    mail_user: str = ""
    open_mode: str = ""
    warn_signal: int = 0
    warn_time: int = 0
    warn_batch: bool = False
    exclusive: bool = False
    reservation: str = ""
    options: dict[str, str] = field(default_factory=dict)
    gpu_type: str = ""


@dataclass(frozen=True)
class JobQuery:
    """Which jobs squeue or scontrol show job asks for (``GetJobs``)."""

    job_ids: tuple[int, ...] = ()
    users: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    all_states: bool = False
    array_tasks: tuple[str, ...] = ()


@dataclass(frozen=True)
class CancelRequest:
    """scancel: ids or task references, or filters (AND-ed), and a signal (``CancelJobs``)."""

    job_ids: tuple[int, ...] = ()
    signal: int = 0
    batch_only: bool = False
    full: bool = False
    user: str = ""
    partition: str = ""
    states: tuple[str, ...] = ()
    name: str = ""
    requester_uid: int = 0
    array_tasks: tuple[str, ...] = ()
    step_id: int = 0
    has_step: bool = False


@dataclass(frozen=True)
class HoldRequest:
    """scontrol hold, uhold, release, requeue or requeuehold (``HoldJobs``)."""

    job_ids: tuple[int, ...] = ()
    action: HoldAction = HoldAction.HOLD
    requester_uid: int = 0
    array_tasks: tuple[str, ...] = ()


@dataclass(frozen=True)
class JobUpdate:
    """scontrol update JobId=...: only the fields that are not None change (``UpdateJob``)."""

    job_id: int = 0
    time_limit: int | None = None
    name: str | None = None
    partition: str | None = None
    nice: int | None = None
    requester_uid: int = 0
    dependency: str | None = None
    array_task_id: int | None = None
    array_throttle: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    begin_time: int | None = None
    priority: int | None = None
    account: str | None = None
    qos: str | None = None
    comment: str | None = None
    reservation: str | None = None
    requeue: bool | None = None
    deadline: int | None = None
    work_dir: str | None = None
    num_tasks: int | None = None
    mail_user: str | None = None
    mail_type: str | None = None
    exc_nodes: str | None = None
    req_nodes: str | None = None
    gres: str | None = None


@dataclass(frozen=True)
class NodeUpdate:
    """scontrol update NodeName=... State=... Reason=... (``UpdateNode``)."""

    names: str = ""
    state: str = ""
    reason: str = ""
    requester_uid: int = 0
    asap: bool = False  # scontrol reboot ASAP
    next_state: str = ""  # scontrol reboot nextstate=


@dataclass(frozen=True)
class JobStatus:
    """How a job's batch script ended on its batch host."""

    job_id: int = 0
    exit_code: int = 0
    signal: int = 0
    start_time: int = 0
    end_time: int = 0
    outcome: str = ""  # "" (ran to its end), CANCELLED, TIMEOUT, LAUNCH_FAILED, OUT_OF_MEMORY...
    message: str = ""
    max_rss: int = 0
    total_cpu: float = 0.0
    restarts: int = 0
    usage: tuple[TaskUsage, ...] = ()  # the script's (task 0), for sacct


@dataclass(frozen=True)
class NodeScriptFailure:
    """A node's Prolog or Epilog failed for a run of a job."""

    node: str = ""
    job_id: int = 0
    restarts: int = 0
    script: str = ""  # "prolog" or "epilog"
    exit_code: int = 0
    signal: int = 0
    timed_out: bool = False


@dataclass(frozen=True)
class AgentJob:
    """A job an agent knows on its node when it registers; ``status`` when it has ended."""

    job_id: int = 0
    running: bool = False
    status: JobStatus = field(default_factory=JobStatus)


@dataclass(frozen=True)
class Registration:
    """What an agent found on its node, and the jobs it knows (``RegisterNode``)."""

    name: str = ""
    addr: str = ""
    port: int = 0
    hostname: str = ""
    cpus: int = 0
    real_memory: int = 0
    gpus: tuple[int, ...] = ()
    arch: str = ""
    os: str = ""
    boot_time: int = 0
    slurmd_start_time: int = 0
    version: str = ""
    jobs: tuple[AgentJob, ...] = ()
    sockets: int = 0
    cores_per_socket: int = 0
    threads_per_core: int = 0
    gpu_links: tuple[int, ...] = ()  # one row per GPU of ``gpus``, laid end to end; (): unknown


@dataclass(frozen=True)
class Heartbeat:
    """An agent's periodic news: load, free memory, the jobs it runs (``Heartbeat``)."""

    name: str = ""
    cpu_load: float = 0.0
    free_memory: int = 0
    running_job_ids: tuple[int, ...] = ()
    gpus_measured: bool = False
    gpu_util: float = 0.0  # percent, the mean of its GPUs
    gpu_memory_used: int = 0  # MiB


@dataclass(frozen=True)
class StepRequest:
    """What srun asks for inside an allocation (``CreateStep``); 0 or empty is unset."""

    job_id: int = 0
    name: str = ""
    argv: tuple[str, ...] = ()
    min_nodes: int = 0
    max_nodes: int = 0
    ntasks: int = 0
    ntasks_per_node: int = 0
    cpus_per_task: int = 0
    gpus: int = 0
    gpus_per_node: int = 0
    gpus_per_task: int = 0
    gres: str = ""
    nodelist: str = ""
    exclude: str = ""
    distribution: str = ""
    exclusive: bool = False
    overlap: bool = False
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    requester_uid: int = 0
    cwd: str = ""
    exact: bool = False
    interactive: bool = False
    srun_host: str = ""
    srun_pid: int = 0
    gpu_type: str = ""


@dataclass(frozen=True)
class TaskExit:
    """How one task of a step ended."""

    task_id: int = 0
    exit_code: int = 0
    signal: int = 0


@dataclass(frozen=True)
class StepEnd:
    """A node's report of how a step's tasks ended there (``StepComplete``)."""

    node: str = ""
    job_id: int = 0
    step_id: int = 0
    tasks: tuple[TaskExit, ...] = ()
    start_time: int = 0
    end_time: int = 0
    max_rss: int = 0
    total_cpu: float = 0.0
    out_of_memory: bool = False
    usage: tuple[TaskUsage, ...] = ()  # each task's on the node, for sacct


@dataclass(frozen=True)
class StepAbort:
    """srun cancels a step it will not launch (``EndStep``): no node will report it."""

    job_id: int = 0
    step_id: int = 0
    requester_uid: int = 0


@dataclass(frozen=True)
class StepStatQuery:
    """sstat: a running step's usage, and who asks (``GetStepStats``)."""

    job_id: int = 0
    step_id: int = 0
    requester_uid: int = 0


@dataclass(frozen=True)
class JobRelease:
    """srun or salloc releasing the allocation it created, with its status (``CompleteJob``)."""

    job_id: int = 0
    exit_code: int = 0
    signal: int = 0
    requester_uid: int = 0


@dataclass(frozen=True)
class TaskUsage:
    """One task's usage so far: the largest sizes seen, the counters now."""

    task_id: int = 0
    max_rss: int = 0
    max_vmem: int = 0
    max_pages: int = 0
    cpu: float = 0.0
    disk_read: int = 0
    disk_write: int = 0
    gpus: int = 0
    max_gpu_util: int = 0  # percent
    max_gpu_mem: int = 0  # MiB


@dataclass(frozen=True)
class NodeStepStat:
    """A node's answer to sstat's question: its tasks' usage and the step's processes."""

    node: str = ""
    tasks: tuple[TaskUsage, ...] = ()
    pids: tuple[int, ...] = ()


@dataclass(frozen=True)
class StepNode:
    """One node of a step: where its tasks run and what they may use."""

    node: str = ""
    addr: str = ""
    port: int = 0
    cpus: int = 0
    gpus: tuple[int, ...] = ()
    task_ids: tuple[int, ...] = ()
    mem: int = 0


@dataclass(frozen=True)
class StepInfo:
    """A step as the commands see it (squeue -s, scontrol show step, sstat)."""

    job_id: int = 0
    step_id: int = 0
    name: str = ""
    state: str = ""
    nodes: tuple[StepNode, ...] = ()
    ntasks: int = 0
    cpus_per_task: int = 0
    gpus_per_task: int = 0
    nodelist: str = ""
    start_time: int = 0
    end_time: int = 0
    exit_code: int = 0
    signal: int = 0
    distribution: str = ""
    argv: str = ""
    max_rss: int = 0
    total_cpu: float = 0.0
    uid: int = 0
    gid: int = 0
    partition: str = ""
    array_job_id: int = 0
    array_task_id: int | None = None
    time_limit: int = 0
    srun_host: str = ""
    srun_pid: int = 0
    tres: str = ""
    num_cpus: int = 0
    tres_per_node: str = ""


@dataclass(frozen=True)
class AcctQuery:
    """Which records sacct asks for (``GetAccounting``); the filters are AND-ed."""

    jobs: tuple[str, ...] = ()  # 123, 123_4, 123.batch, 123.0 (empty: all)
    users: tuple[str, ...] = ()  # names or uids (empty: every user)
    states: tuple[str, ...] = ()
    start_after: int = 0  # records active after this time (0: no bound)
    end_before: int = 0  # records active before this time (0: no bound)
    jobs_only: bool = False
    partitions: tuple[str, ...] = ()
    duplicates: bool = False  # also the earlier runs of requeued jobs


@dataclass(frozen=True)
class AcctRecord:
    """One line of sacct: a job, its batch step or one of its steps."""

    job_id: str = ""  # as sacct prints JobID: 123, 123_4, 123.batch, 123_4.0
    job_id_raw: int = 0
    step: str = ""  # "" for the job, "batch", or the step id
    name: str = ""
    partition: str = ""
    account: str = ""
    user: str = ""
    uid: int = 0
    group: str = ""
    gid: int = 0
    state: str = ""
    cancelled_by: int = 0
    exit_code: int = 0
    exit_signal: int = 0
    derived_exit_code: int = 0
    derived_exit_signal: int = 0
    submit_time: int = 0
    eligible_time: int = 0
    start_time: int = 0
    end_time: int = 0
    elapsed: int = 0
    nodes: str = ""
    nnodes: int = 0
    alloc_cpus: int = 0
    req_cpus: int = 0
    alloc_tres: str = ""
    req_tres: str = ""
    time_limit: int = 0
    max_rss: int = 0
    total_cpu: float = 0.0
    reason: str = ""
    restarts: int = 0
    work_dir: str = ""
    ntasks: int = 0
    array_job_id: int = 0
    array_task_id: int | None = None
    qos: str = ""
    cluster: str = ""
    usage: tuple[NodeStepStat, ...] = ()  # a step's: each node's tasks' usage


@dataclass(frozen=True)
class AssocChange:
    """sacctmgr add, modify or delete of an account, user or QOS (``ManageAssoc``)."""

    verb: str = ""  # add, modify, delete
    entity: str = ""  # account, user, qos
    names: tuple[str, ...] = ()
    where: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    requester_uid: int = 0


@dataclass(frozen=True)
class AssocInfo:
    """An association with its fair-share figures, as sshare and sacctmgr show it."""

    account: str = ""
    user: str = ""  # "": the account's own association
    parent: str = ""
    shares: int = 0
    max_jobs: int = 0  # -1: not set
    max_submit: int = 0  # -1: not set
    grp_tres: str = ""
    depth: int = 0
    raw_usage: float = 0.0
    norm_shares: float = 0.0
    norm_usage: float = 0.0
    effective_usage: float = 0.0
    level_fs: float = 0.0
    fairshare: float = 0.0


@dataclass(frozen=True)
class AccountInfo:
    """An account as sacctmgr shows it."""

    name: str = ""
    description: str = ""
    organization: str = ""


@dataclass(frozen=True)
class AcctUserInfo:
    """A user as sacctmgr shows it."""

    name: str = ""
    default_account: str = ""
    admin: str = ""


@dataclass(frozen=True)
class QosInfo:
    """A QOS as sacctmgr shows it."""

    name: str = ""
    description: str = ""
    priority: int = 0
    max_jobs_pu: int = 0  # -1: not set
    max_submit_pu: int = 0  # -1: not set
    preempt: str = ""  # comma-separated
    preempt_mode: str = ""  # "": the cluster's


@dataclass(frozen=True)
class AssocListing:
    """Every association, account, user and QOS (``GetAssocs``' answer)."""

    assocs: tuple[AssocInfo, ...] = ()  # depth first, as sshare lists them
    accounts: tuple[AccountInfo, ...] = ()
    users: tuple[AcctUserInfo, ...] = ()
    cluster: str = ""
    qos: tuple[QosInfo, ...] = ()


@dataclass(frozen=True)
class JobPriorityInfo:
    """A pending job's priority and its normalised factors, as sprio lists them."""

    job_id: int = 0
    partition: str = ""
    user: str = ""
    account: str = ""
    priority: int = 0
    age: float = 0.0
    fairshare: float = 0.0
    job_size: float = 0.0
    partition_factor: float = 0.0
    qos: float = 0.0
    nice: int = 0


@dataclass(frozen=True)
class ResvChange:
    """scontrol create, update or delete reservation (``ManageReservation``); None: not given."""

    verb: str = ""  # create, update, delete
    name: str = ""  # "": a name is made (create)
    start_time: int | None = None
    end_time: int | None = None
    duration: int | None = None  # minutes; -1: UNLIMITED
    nodes: str | None = None  # a hostlist, or ALL
    node_count: int | None = None
    users: str | None = None
    accounts: str | None = None
    flags: str | None = None
    partition: str | None = None
    requester_uid: int = 0


@dataclass(frozen=True)
class ReservationInfo:
    """A reservation as scontrol shows it."""

    name: str = ""
    start_time: int = 0
    end_time: int = 0  # 0: never
    nodes: tuple[str, ...] = ()
    core_count: int = 0
    partition: str = ""
    flags: str = ""
    users: str = ""
    accounts: str = ""
