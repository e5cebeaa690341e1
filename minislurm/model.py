"""The plain values the controller and scheduler pass around.

Frozen dataclasses: a job's resource request, its allocation, the job record
itself, and the scheduler's views of nodes and partitions; the records of
steps, nodes, advance reservations and a requeued job's earlier runs; and
when a job's time limit passes. No I/O here.

Imports only minislurm.gpulinks, minislurm.hostlist, minislurm.states, minislurm.units and
the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from minislurm import hostlist
from minislurm.gpulinks import GpuLinks
from minislurm.states import JobEvent, JobState, NodeFlag, NodeState
from minislurm.units import INFINITE


@dataclass(frozen=True)
class ResourceRequest:
    """What a job asks for, with every default already resolved.

    ``ntasks`` tasks of ``cpus_per_task`` CPUs each, spread over between
    ``min_nodes`` and ``max_nodes`` nodes; memory per node (or per CPU);
    GPUs per node, per task, or in total.
    """

    min_nodes: int = 1
    max_nodes: int = 1
    ntasks: int = 1
    ntasks_per_node: int = 0  # 0: not fixed
    cpus_per_task: int = 1
    mem_per_node: int = 0  # MiB; 0: none requested
    mem_per_cpu: int = 0  # MiB; 0: none requested
    gpus_per_node: int = 0
    gpus_per_task: int = 0
    gpus: int = 0  # total for the job (--gpus)
    req_nodes: tuple[str, ...] = ()
    exc_nodes: tuple[str, ...] = ()
    nodes_set: bool = False  # -N was given (scontrol shows NumNodes=min-max)
    ntasks_set: bool = False  # -n or --ntasks-per-node was given (SLURM_NTASKS is set)
    cpus_per_task_set: bool = False  # -c was given (SLURM_CPUS_PER_TASK is set)
    exclusive: bool = False  # --exclusive: whole nodes, shared with no other job
    gpu_type: str = ""  # the GPU type asked for ("a100"); "": any
    untyped_nodes: frozenset[str] = frozenset()  # nodes whose GPUs are not all of gpu_type
    part_mem: int = 0  # MiB: its partition's first node's RealMemory (see tres_mem)
    switches: int = 0  # --switches: the most leaf switches it may span (0: any)
    switch_wait: int = 0  # seconds it waits for them, at most max_switch_wait
    segment: int = 0  # --segment: nodes of it in each base block (topology/block; 0: none)
    exclusive_topo: bool = False  # --exclusive=topo: its base blocks are its alone

    @property
    def excluded(self) -> frozenset[str]:
        """Nodes the job may not use: those excluded (-x) and those without its GPU type."""
        return self.untyped_nodes.union(self.exc_nodes)

    @property
    def min_cpus(self) -> int:
        """CPUs the job needs at least (all its tasks)."""
        return self.ntasks * self.cpus_per_task

    @property
    def min_gpus(self) -> int:
        """GPUs the job needs at least, whichever way they were asked for."""
        return max(self.gpus, self.gpus_per_task * self.ntasks, self.gpus_per_node * self.min_nodes)

    @property
    def tres_mem(self) -> int:
        """The memory the job asks in all, MiB, as its TRES count it.

        Without ``--mem`` or ``--mem-per-cpu`` that is, as Slurm reckons it,
        the RealMemory of its partition's first node on each node.
        """
        if self.mem_per_cpu:
            return self.mem_per_cpu * self.min_cpus
        return (self.mem_per_node or self.part_mem) * self.min_nodes


@dataclass(frozen=True)
class NodeAlloc:
    """The part of an allocation on one node."""

    node: str
    cpus: int
    mem: int  # MiB
    gpus: tuple[int, ...] = ()
    ntasks: int = 1


@dataclass(frozen=True)
class Allocation:
    """The nodes, CPUs, memory and GPU indices a job holds, in node order."""

    nodes: tuple[NodeAlloc, ...]

    @cached_property
    def node_names(self) -> tuple[str, ...]:
        """The allocated nodes' names, first node first (made once: read for each task)."""
        return tuple(n.node for n in self.nodes)

    @cached_property
    def nodelist(self) -> str:
        """The allocated nodes as one hostlist (``n[1-4,7]``), made once."""
        return hostlist.compress(self.node_names)

    @property
    def cpus(self) -> int:
        """Total CPUs allocated."""
        return sum(n.cpus for n in self.nodes)

    @property
    def gpus(self) -> int:
        """Total GPUs allocated."""
        return sum(len(n.gpus) for n in self.nodes)

    @property
    def mem(self) -> int:
        """Total memory allocated, MiB."""
        return sum(n.mem for n in self.nodes)

    def on(self, node: str) -> NodeAlloc | None:
        """The part of the allocation on ``node``, if any."""
        for part in self.nodes:
            if part.node == node:
                return part
        return None


HOLD_NONE = ""
HOLD_USER = "user"
HOLD_ADMIN = "admin"


@dataclass(frozen=True)
class Job:
    """The controller's record of one job (what is persisted, minus the script)."""

    job_id: int
    name: str
    uid: int
    gid: int
    user: str
    group: str
    partition: str
    state: JobState
    request: ResourceRequest
    submit_time: float
    account: str = ""
    qos: str = "normal"
    reason: str = "None"
    nice: int = 0
    hold: str = HOLD_NONE
    time_limit: int = INFINITE  # minutes
    partition_time_limit: bool = False  # no limit of its own: its partition's MaxTime, as it moves
    eligible_time: float = 0.0
    start_time: float = 0.0
    end_time: float = 0.0
    allocation: Allocation | None = None
    exit_code: int = 0
    exit_signal: int = 0
    kill_event: JobEvent | None = None  # the event that began a COMPLETING job's kill
    work_dir: str = ""
    submit_dir: str = ""
    stdout: str = ""  # pattern as submitted
    stderr: str = ""
    stdin: str = ""
    submit_host: str = ""
    command: str = ""
    gres: str = ""  # as submitted, for TresPerNode
    batch: bool = True
    requeue: bool = True
    restarts: int = 0
    prio_process: int = 0
    last_sched_eval: float = 0.0
    launched: bool = False  # a node agent acknowledged the batch launch
    array_job_id: int = 0  # 0 unless part of an array
    array_task_id: int | None = None  # None: the record of the array's pending tasks
    array_tasks: str = ""  # that record's pending task ids, compressed ("4-15")
    array_throttle: int = 0  # %N: at most N tasks running at once
    array_spec: str = ""  # the array as submitted ("0-15:2%4")
    dependency: str = ""  # --dependency as given (normalised)
    kill_on_invalid_dep: bool = False
    begin_time: float = 0.0  # --begin (0: none)
    deadline: float = 0.0  # --deadline (0: none)
    cancelled_by: int = -1  # uid that cancelled it (-1: nobody)
    max_rss: int = 0  # KiB, the batch step's largest resident set (sampled)
    total_cpu: float = 0.0  # seconds of CPU the batch step used
    comment: str = ""
    mail_type: str = ""  # as scontrol shows it ("END,FAIL"); "": none
    mail_user: str = ""
    open_mode: str = ""  # --open-mode: "append" or "truncate" ("": truncate)
    warn_signal: int = 0  # --signal: sent warn_time seconds before the time limit (0: none)
    warn_time: int = 0
    warn_batch: bool = False  # B: the batch shell gets it, not the steps
    warn_sent: bool = False  # it went out (once per run)
    reservation: str = ""  # --reservation: the advance reservation it runs in
    priority_set: int = 0  # scontrol update Priority= by an administrator (0: computed)
    options: dict[str, str] = field(default_factory=dict)  # accepted without effect (optcheck)

    @property
    def held(self) -> bool:
        """Whether the job is held (user or admin)."""
        return self.hold != HOLD_NONE


def time_limit_end(job: Job) -> float:
    """When a running job's time limit passes, or infinity.

    Args:
        job: a started job.

    Returns:
        Epoch seconds.
    """
    if job.time_limit == INFINITE:
        return float("inf")
    return job.start_time + job.time_limit * 60


@dataclass(frozen=True)
class JobScript:
    """What a batch job runs, kept apart from the job record."""

    script: bytes
    argv: list[str]
    environment: dict[str, str]
    umask: int


@dataclass(frozen=True)
class NodeView:
    """What the scheduler knows of one node: capacity and what is free."""

    name: str
    cpus: int
    mem: int  # MiB
    gpus: tuple[int, ...]  # all device indices
    free_cpus: int
    free_mem: int
    free_gpus: tuple[int, ...]  # free device indices, ascending
    usable: bool  # up, responding and not drained
    weight: int = 1
    gpu_links: GpuLinks | None = None  # how its GPUs are linked (None: all alike)


@dataclass(frozen=True)
class PartitionView:
    """What the scheduler knows of one partition."""

    name: str
    nodes: tuple[str, ...]
    priority_tier: int = 1
    max_time: int = INFINITE
    max_nodes: int = INFINITE
    min_nodes: int = 0
    state: str = "UP"  # UP, DOWN, DRAIN, INACTIVE


@dataclass(frozen=True)
class PendingJob:
    """A job waiting to start, as the scheduler sees it."""

    job_id: int
    partition: str
    priority: int
    submit_time: float
    request: ResourceRequest
    time_limit: int = INFINITE
    held: bool = False
    array_task_id: int | None = None  # one pending task of an array (the job is its record)
    blocked: str = ""  # why it may not start whatever the resources (Dependency, BeginTime...)
    switch_until: float = 0.0  # its wait for request.switches leaf switches ends then

    @property
    def key(self) -> tuple[int, int]:
        """What identifies it in a pass: the job, and the array task (-1: none)."""
        return (self.job_id, -1 if self.array_task_id is None else self.array_task_id)

    @property
    def duration(self) -> float:
        """How long the job may run once started, in seconds; infinity when unlimited."""
        return float("inf") if self.time_limit == INFINITE else self.time_limit * 60.0


@dataclass(frozen=True)
class RunningJob:
    """A job holding resources, as the scheduler sees it."""

    job_id: int
    allocation: Allocation
    end_time: float  # start + time limit; inf when unlimited
    kept: tuple[str, ...] = ()  # idle nodes no other job may use meanwhile (--exclusive=topo)


@dataclass(frozen=True)
class Snapshot:
    """Everything one scheduling pass reads, taken at one instant.

    ``held`` names the nodes the last full pass reserved for each job that
    waits (by :attr:`PendingJob.key`): a backfill pass gives a job those
    nodes again when they still fit at its start, so that a plan holds from
    pass to pass unless something changed.
    """

    nodes: tuple[NodeView, ...]
    partitions: tuple[PartitionView, ...]
    pending: tuple[PendingJob, ...]
    running: tuple[RunningJob, ...] = ()
    held: Mapping[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class StartJob:
    """A decision: start ``job_id`` (or one task of its array) now on ``allocation``."""

    job_id: int
    allocation: Allocation
    array_task_id: int | None = None

    @property
    def key(self) -> tuple[int, int]:
        """The job and the array task (-1: none), as :attr:`PendingJob.key`."""
        return (self.job_id, -1 if self.array_task_id is None else self.array_task_id)


@dataclass(frozen=True)
class Reservation:
    """Resources a pass set aside for one job (or array task) from ``start`` until ``end``.

    A job started now is reserved from now; a job that must wait is reserved
    from its expected start, so that no job of lower priority takes it.
    """

    job_id: int
    array_task_id: int | None
    start: float
    end: float  # inf: no time limit
    allocation: Allocation


@dataclass(frozen=True)
class Plan:
    """What a scheduling pass decided: jobs to start and why the rest wait.

    A reason is per job: for an array, why its (next) pending task waits. A
    job the pass did not examine (below ``bf_max_job_test``) has none: it
    keeps the one it had. ``start_times`` holds the expected start of the
    waiting jobs that got a reservation (for an array, of its earliest task),
    as ``squeue --start`` shows it; ``reservations`` is the resource-time map
    the pass built on top of the running jobs.
    """

    starts: tuple[StartJob, ...]
    reasons: dict[int, str]
    start_times: dict[int, float] = field(default_factory=dict)
    reservations: tuple[Reservation, ...] = ()

    def held(self, now: float) -> dict[tuple[int, int], tuple[str, ...]]:
        """The nodes reserved for each job that waits: the next pass's :attr:`Snapshot.held`.

        Args:
            now: the time of the pass.

        Returns:
            Node names by job key (:attr:`PendingJob.key`).
        """
        return {
            (r.job_id, -1 if r.array_task_id is None else r.array_task_id): tuple(
                n.node for n in r.allocation.nodes
            )
            for r in self.reservations
            if r.start > now
        }


@dataclass(frozen=True)
class Node:
    """The controller's record of one node: configuration, state and last report."""

    name: str
    cpus: int
    real_memory: int  # MiB
    gpus: tuple[int, ...]  # configured GPU device indices
    partitions: tuple[str, ...]
    state: NodeState = NodeState.UNKNOWN
    flags: frozenset[NodeFlag] = frozenset()
    reason: str = ""
    reason_time: float = 0.0
    reason_uid: int = 0
    addr: str = ""
    hostname: str = ""
    port: int = 0
    sockets: int = 1
    cores_per_socket: int = 1
    threads_per_core: int = 1
    weight: int = 1
    features: str = ""
    gpu_types: tuple[str, ...] = ()  # the types its GPUs are configured with (Gres=gpu:a100:8)
    arch: str = ""
    os: str = ""
    version: str = ""
    boot_time: float = 0.0
    slurmd_start_time: float = 0.0
    last_seen: float = 0.0
    last_busy: float = 0.0
    cpu_load: float = 0.0
    free_memory: int = 0
    gpu_links: GpuLinks | None = None  # as its agent registered them (None: unknown)
    gpu_util: float | None = None  # percent, mean of its GPUs as last reported (None: unmeasured)
    gpu_memory_used: int = 0  # MiB in use on its GPUs, as last reported
    reboot_next: str = ""  # scontrol reboot's nextstate: RESUME, DOWN, UNDRAIN ("": as it was)
    reboot_issued: float = 0.0  # when its reboot was issued (ResumeTimeout counts from there)


@dataclass(frozen=True)
class StepNodeAlloc:
    """The part of a job step on one node: its CPUs, memory, GPUs and tasks."""

    node: str
    cpus: int
    mem: int  # MiB
    gpus: tuple[int, ...]
    task_ids: tuple[int, ...]  # global ranks, ascending


@dataclass(frozen=True)
class Step:
    """One job step (an srun inside an allocation)."""

    job_id: int
    step_id: int
    name: str
    state: JobState
    nodes: tuple[StepNodeAlloc, ...]
    ntasks: int
    start_time: float
    cpus_per_task: int = 1
    gpus_per_task: int = 0
    distribution: str = "block"
    overlap: bool = False
    argv: str = ""
    uid: int = 0
    gid: int = 0
    end_time: float = 0.0
    exit_code: int = 0
    signal: int = 0
    reported: frozenset[str] = frozenset()  # nodes that reported their tasks' end
    max_rss: int = 0  # KiB
    total_cpu: float = 0.0
    srun_host: str = ""  # where its srun runs, and srun's pid
    srun_pid: int = 0
    tres_per_node: str = ""  # the GPUs it asked per node (gres:gpu:1), "" for none
    cancelled_by: int = -1  # uid whose scancel killed it (-1: nobody)

    @property
    def node_names(self) -> tuple[str, ...]:
        """The step's nodes, in order."""
        return tuple(n.node for n in self.nodes)


@dataclass(frozen=True)
class Resv:
    """One reservation; ``end`` is infinity for an unlimited one."""

    name: str
    start: float
    end: float
    nodes: tuple[str, ...]
    users: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    partition: str = ""

    def overlaps(self, start: float, end: float) -> bool:
        """Whether ``[start, end)`` meets the window."""
        return start < self.end and end > self.start

    def admits(self, user: str, account: str) -> bool:
        """Whether a job of this user and account may run in the reservation."""
        return user in self.users or account in self.accounts

    def active(self, now: float) -> bool:
        """Whether the window is open."""
        return self.start <= now < self.end


@dataclass(frozen=True)
class EarlierRun:
    """One run of a job that ended by requeue.

    Attributes:
        job: the job's record as the requeue found it (RUNNING, COMPLETING,
            or finished), its run number in ``restarts``.
        state: how accounting shows the run ended: ``NODE_FAIL``, ``REQUEUED`` or ``PREEMPTED``.
        ended: when the run was requeued.
        steps: the run's srun steps.
    """

    job: Job
    state: str
    ended: float
    steps: tuple[Step, ...]
