"""Job and node states, their legal transitions, and how Slurm prints them.

Only :func:`next_job_state` and :func:`next_node_state` decide a new state;
an event that is not legal in the current state raises
:class:`~minislurm.errors.InvalidTransition` (a bug, never a silent overwrite).
The printed forms are computed here and sent in replies, so the commands
never import this module (``enum`` and ``logging`` cost them start-up time).

Imports nothing from ctld, nodeagent or cli.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from minislurm.errors import InvalidTransition

log = logging.getLogger(__name__)


class JobState(StrEnum):
    """Slurm's job states (base states; COMPLETING is a state of ours).

    Every state is reached through the transition table but SUSPENDED and
    BOOT_FAIL: there is no ``scontrol suspend`` and no node boots for a job
    here. Their names stay because Slurm's commands accept them where they
    filter by state (``squeue -t``, ``sacct -s``, ``scancel -t``) and show them.
    OUT_OF_MEMORY is reached when a node reports a job killed for its memory,
    which no node does until memory is enforced.
    """

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"

    @property
    def short(self) -> str:
        """The compact code squeue prints in its ST column (``PD``, ``R``...)."""
        return _JOB_SHORT[self]


_JOB_SHORT = {
    JobState.PENDING: "PD",
    JobState.RUNNING: "R",
    JobState.SUSPENDED: "S",
    JobState.COMPLETING: "CG",
    JobState.COMPLETED: "CD",
    JobState.CANCELLED: "CA",
    JobState.FAILED: "F",
    JobState.TIMEOUT: "TO",
    JobState.NODE_FAIL: "NF",
    JobState.PREEMPTED: "PR",
    JobState.BOOT_FAIL: "BF",
    JobState.DEADLINE: "DL",
    JobState.OUT_OF_MEMORY: "OOM",
}

TERMINAL_JOB_STATES = frozenset(
    {
        JobState.COMPLETED,
        JobState.CANCELLED,
        JobState.FAILED,
        JobState.TIMEOUT,
        JobState.NODE_FAIL,
        JobState.PREEMPTED,
        JobState.BOOT_FAIL,
        JobState.DEADLINE,
        JobState.OUT_OF_MEMORY,
    }
)
# States in which a job holds resources on its nodes.
ACTIVE_JOB_STATES = frozenset({JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING})


def parse_job_state(text: str) -> JobState:
    """Map a user's state name or squeue code (``PD``, ``running``) to a state.

    Args:
        text: a full state name or its compact code, any case.

    Returns:
        The state.

    Raises:
        ValueError: not a job state.
    """
    upper = text.strip().upper()
    for state, short in _JOB_SHORT.items():
        if upper in (state.value, short):
            return state
    raise ValueError(f"Invalid job state specified: {text}")


class JobEvent(StrEnum):
    """What can happen to a job."""

    START = "START"  # the scheduler allocated nodes
    EXIT_OK = "EXIT_OK"  # the batch script exited 0
    EXIT_FAIL = "EXIT_FAIL"  # non-zero exit, killed by a signal, or launch failure
    OUT_OF_MEMORY = "OUT_OF_MEMORY"  # its node killed it for going over its memory
    CANCEL = "CANCEL"  # scancel of a pending job; of a running one: kill begins
    TIME_LIMIT = "TIME_LIMIT"  # the time limit passed: kill begins
    KILLED = "KILLED"  # the node confirmed a kill begun by CANCEL
    TIMED_OUT = "TIMED_OUT"  # the node confirmed a kill begun by TIME_LIMIT
    NODE_FAIL = "NODE_FAIL"
    DEADLINE = "DEADLINE"  # a pending job can no longer end before its --deadline
    REQUEUE = "REQUEUE"  # scontrol requeue: a running job's kill begins; a finished job returns
    REQUEUED = "REQUEUED"  # its node confirmed that kill, or failed under a requeueable job
    PREEMPT = "PREEMPT"  # a job of higher standing takes its resources: kill begins
    PREEMPTED = "PREEMPTED"  # the node confirmed a kill begun by PREEMPT (not to be requeued)
    PREEMPT_REQUEUE = "PREEMPT_REQUEUE"  # as PREEMPT, for a job that then goes back to the queue


_JOB_TRANSITIONS: dict[tuple[JobState, JobEvent], JobState] = {
    (JobState.PENDING, JobEvent.START): JobState.RUNNING,
    (JobState.PENDING, JobEvent.CANCEL): JobState.CANCELLED,
    (JobState.PENDING, JobEvent.DEADLINE): JobState.DEADLINE,
    (JobState.RUNNING, JobEvent.EXIT_OK): JobState.COMPLETED,
    (JobState.RUNNING, JobEvent.EXIT_FAIL): JobState.FAILED,
    (JobState.RUNNING, JobEvent.OUT_OF_MEMORY): JobState.OUT_OF_MEMORY,
    (JobState.RUNNING, JobEvent.CANCEL): JobState.COMPLETING,
    (JobState.RUNNING, JobEvent.TIME_LIMIT): JobState.COMPLETING,
    (JobState.RUNNING, JobEvent.NODE_FAIL): JobState.NODE_FAIL,
    (JobState.COMPLETING, JobEvent.KILLED): JobState.CANCELLED,
    (JobState.COMPLETING, JobEvent.TIMED_OUT): JobState.TIMEOUT,
    (JobState.COMPLETING, JobEvent.NODE_FAIL): JobState.NODE_FAIL,
    (JobState.RUNNING, JobEvent.REQUEUE): JobState.COMPLETING,
    (JobState.RUNNING, JobEvent.PREEMPT): JobState.COMPLETING,
    (JobState.RUNNING, JobEvent.PREEMPT_REQUEUE): JobState.COMPLETING,
    (JobState.COMPLETING, JobEvent.PREEMPTED): JobState.PREEMPTED,
    (JobState.RUNNING, JobEvent.REQUEUED): JobState.PENDING,
    (JobState.COMPLETING, JobEvent.REQUEUED): JobState.PENDING,
    **{
        (state, JobEvent.REQUEUE): JobState.PENDING
        for state in (
            JobState.COMPLETED,
            JobState.CANCELLED,
            JobState.FAILED,
            JobState.TIMEOUT,
            JobState.NODE_FAIL,
            JobState.PREEMPTED,
            JobState.OUT_OF_MEMORY,
        )
    },
}


# A COMPLETING job's kill: the event that began it decides the event its node's
# confirmation is, so the job's end is the table's (COMPLETING, end event) entry.
_KILL_ENDS: dict[JobEvent, JobEvent] = {
    JobEvent.CANCEL: JobEvent.KILLED,
    JobEvent.TIME_LIMIT: JobEvent.TIMED_OUT,
    JobEvent.PREEMPT: JobEvent.PREEMPTED,
    JobEvent.PREEMPT_REQUEUE: JobEvent.REQUEUED,
    JobEvent.REQUEUE: JobEvent.REQUEUED,
}
# The name a kill goes by in the database and to the nodes (stepd's "CANCELLED ... DUE TO").
KILL_NAMES: dict[JobEvent, str] = {
    JobEvent.CANCEL: "CANCELLED",
    JobEvent.TIME_LIMIT: "TIMEOUT",
    JobEvent.PREEMPT: "PREEMPTED",
    JobEvent.PREEMPT_REQUEUE: "PREEMPT_REQUEUE",
    JobEvent.REQUEUE: "REQUEUE",
}
KILL_EVENTS = {name: event for event, name in KILL_NAMES.items()}


def kill_name(begun: JobEvent | None) -> str:
    """The name of the kill ``begun`` began, as the database and the nodes know it.

    Args:
        begun: the event that began a job's kill, None when no kill began.

    Returns:
        CANCELLED, TIMEOUT, PREEMPTED, PREEMPT_REQUEUE or REQUEUE; "" for None.
    """
    return KILL_NAMES[begun] if begun is not None else ""


def kill_end(begun: JobEvent) -> JobEvent:
    """The event a COMPLETING job takes when its nodes confirm the kill ``begun`` began.

    Args:
        begun: the event that began the kill (CANCEL, TIME_LIMIT, PREEMPT...).

    Returns:
        KILLED, TIMED_OUT, PREEMPTED or REQUEUED.

    Raises:
        InvalidTransition: ``begun`` does not begin a kill.
    """
    try:
        return _KILL_ENDS[begun]
    except KeyError:
        raise InvalidTransition(f"{begun.value} does not begin a kill") from None


def kill_ends_in(begun: JobEvent) -> JobState:
    """The state a COMPLETING job reaches when the kill ``begun`` began is confirmed.

    Args:
        begun: the event that began the kill.

    Returns:
        CANCELLED, TIMEOUT, PREEMPTED, or PENDING for a kill that requeues.
    """
    return _JOB_TRANSITIONS[(JobState.COMPLETING, kill_end(begun))]


def next_job_state(job_id: int, state: JobState, event: JobEvent, reason: str = "") -> JobState:
    """The state a job moves to on ``event``.

    Args:
        job_id: for the log line.
        state: the job's current state.
        event: what happened.
        reason: why, for the log line.

    Returns:
        The new state.

    Raises:
        InvalidTransition: the event is not legal in ``state``.
    """
    try:
        new = _JOB_TRANSITIONS[(state, event)]
    except KeyError:
        raise InvalidTransition(f"job={job_id} {state.value} cannot take {event.value}") from None
    log.info("job=%d %s -> %s reason=%s", job_id, state.value, new.value, reason or event.value)
    return new


OOM_SIGNAL = 125  # what Slurm shows an OOM-killed job or step ended by (ExitCode 0:125)

_STEP_TRANSITIONS: dict[tuple[JobState, JobEvent], JobState] = {
    (JobState.RUNNING, JobEvent.EXIT_OK): JobState.COMPLETED,
    (JobState.RUNNING, JobEvent.EXIT_FAIL): JobState.FAILED,
    (JobState.RUNNING, JobEvent.KILLED): JobState.CANCELLED,
    (JobState.RUNNING, JobEvent.NODE_FAIL): JobState.NODE_FAIL,
    (JobState.RUNNING, JobEvent.OUT_OF_MEMORY): JobState.OUT_OF_MEMORY,
}


def next_step_state(job_id: int, step_id: int, state: JobState, event: JobEvent) -> JobState:
    """The state a job step moves to on ``event`` (steps use job states).

    Args:
        job_id: for the log line.
        step_id: for the log line.
        state: the step's current state.
        event: what happened.

    Returns:
        The new state.

    Raises:
        InvalidTransition: the event is not legal in ``state``.
    """
    try:
        new = _STEP_TRANSITIONS[(state, event)]
    except KeyError:
        raise InvalidTransition(
            f"step={job_id}.{step_id} {state.value} cannot take {event.value}"
        ) from None
    log.info("step=%d.%d %s -> %s", job_id, step_id, state.value, new.value)
    return new


class NodeState(StrEnum):
    """A node's base state.

    Stored: UNKNOWN (never registered), IDLE (in service), DOWN. MIXED and
    ALLOCATED are derived for display from what is allocated on an IDLE node.
    """

    UNKNOWN = "UNKNOWN"
    IDLE = "IDLE"
    MIXED = "MIXED"
    ALLOCATED = "ALLOCATED"
    DOWN = "DOWN"


class NodeFlag(StrEnum):
    """Flags shown beside a node's base state."""

    DRAIN = "DRAIN"
    NOT_RESPONDING = "NOT_RESPONDING"
    REBOOT_REQUESTED = "REBOOT_REQUESTED"  # scontrol reboot: once no job holds it
    REBOOT_ISSUED = "REBOOT_ISSUED"  # its agent was asked to reboot; DOWN until it registers


class NodeEvent(StrEnum):
    """What can happen to a node's base state."""

    REGISTER = "REGISTER"
    FAIL = "FAIL"  # stopped answering for SlurmdTimeout
    ADMIN_DOWN = "ADMIN_DOWN"
    ADMIN_RESUME = "ADMIN_RESUME"
    REBOOT = "REBOOT"  # its reboot was issued (it registers again once rebooted)


_NODE_TRANSITIONS: dict[tuple[NodeState, NodeEvent], NodeState] = {
    (NodeState.UNKNOWN, NodeEvent.REGISTER): NodeState.IDLE,
    (NodeState.IDLE, NodeEvent.REGISTER): NodeState.IDLE,
    (NodeState.DOWN, NodeEvent.REGISTER): NodeState.IDLE,
    (NodeState.UNKNOWN, NodeEvent.FAIL): NodeState.DOWN,
    (NodeState.IDLE, NodeEvent.FAIL): NodeState.DOWN,
    (NodeState.UNKNOWN, NodeEvent.ADMIN_DOWN): NodeState.DOWN,
    (NodeState.IDLE, NodeEvent.ADMIN_DOWN): NodeState.DOWN,
    (NodeState.DOWN, NodeEvent.ADMIN_DOWN): NodeState.DOWN,
    (NodeState.DOWN, NodeEvent.ADMIN_RESUME): NodeState.IDLE,
    (NodeState.IDLE, NodeEvent.REBOOT): NodeState.DOWN,
}


def next_node_state(node: str, state: NodeState, event: NodeEvent, reason: str = "") -> NodeState:
    """The base state a node moves to on ``event``.

    Args:
        node: node name, for the log line.
        state: its current stored base state.
        event: what happened.
        reason: why, for the log line.

    Returns:
        The new base state.

    Raises:
        InvalidTransition: the event is not legal in ``state``.
    """
    try:
        new = _NODE_TRANSITIONS[(state, event)]
    except KeyError:
        raise InvalidTransition(f"node={node} {state.value} cannot take {event.value}") from None
    if new is not state:
        log.info("node=%s %s -> %s reason=%s", node, state.value, new.value, reason or event.value)
    return new


_NODE_COMPACT = {
    NodeState.UNKNOWN: "unk",
    NodeState.IDLE: "idle",
    NodeState.MIXED: "mix",
    NodeState.ALLOCATED: "alloc",
    NodeState.DOWN: "down",
}


def node_base_shown(base: NodeState, alloc_cpus: int, total_cpus: int) -> NodeState:
    """IDLE refined to MIXED or ALLOCATED by what is allocated.

    Args:
        base: the stored base state.
        alloc_cpus: CPUs allocated to jobs on the node.
        total_cpus: the node's CPUs.

    Returns:
        The base state Slurm shows.
    """
    if base is not NodeState.IDLE or alloc_cpus == 0:
        return base
    return NodeState.ALLOCATED if alloc_cpus >= total_cpus else NodeState.MIXED


def _draining(shown: NodeState) -> bool:
    return shown in (NodeState.MIXED, NodeState.ALLOCATED)


def node_state_compact(
    base: NodeState, flags: frozenset[NodeFlag], alloc_cpus: int, total_cpus: int
) -> str:
    """sinfo's compact state (``idle``, ``mix``, ``drain``, ``drng@``, ``boot^``, ``down*``).

    Args:
        base: the stored base state.
        flags: DRAIN, NOT_RESPONDING...
        alloc_cpus: CPUs allocated to jobs on the node.
        total_cpus: the node's CPUs.

    Returns:
        The word sinfo prints, with ``*`` when the node is not responding.
    """
    shown = node_base_shown(base, alloc_cpus, total_cpus)
    if NodeFlag.REBOOT_ISSUED in flags:
        word = "boot^"
    elif NodeFlag.REBOOT_REQUESTED in flags and not _draining(shown):
        word = "boot"  # as Slurm 22.05 shows an idle node waiting for its reboot
    elif NodeFlag.DRAIN in flags:  # Slurm checks the drain flag before DOWN
        word = "drng" if _draining(shown) else "drain"
    else:
        word = _NODE_COMPACT[shown]
    if NodeFlag.REBOOT_REQUESTED in flags and _draining(shown):
        word += "@"
    return word + ("*" if NodeFlag.NOT_RESPONDING in flags else "")


def node_state_long(
    base: NodeState, flags: frozenset[NodeFlag], alloc_cpus: int, total_cpus: int
) -> str:
    """``sinfo -l``'s state (``mixed``, ``drained``, ``draining``, ``down*``).

    Args:
        base: the stored base state.
        flags: DRAIN, NOT_RESPONDING...
        alloc_cpus: CPUs allocated to jobs on the node.
        total_cpus: the node's CPUs.

    Returns:
        The lower-case word, with ``*`` when the node is not responding.
    """
    shown = node_base_shown(base, alloc_cpus, total_cpus)
    if NodeFlag.DRAIN in flags:  # Slurm checks the drain flag before DOWN
        word = "draining" if _draining(shown) else "drained"
    else:
        word = shown.value.lower()
    return word + ("*" if NodeFlag.NOT_RESPONDING in flags else "")


def node_state_scontrol(
    base: NodeState, flags: frozenset[NodeFlag], alloc_cpus: int, total_cpus: int
) -> str:
    """``scontrol show node``'s ``State=`` value (``MIXED``, ``IDLE+DRAIN``, ``DOWN*``).

    Args:
        base: the stored base state.
        flags: DRAIN, NOT_RESPONDING...
        alloc_cpus: CPUs allocated to jobs on the node.
        total_cpus: the node's CPUs.

    Returns:
        The base state, ``*`` when not responding, then ``+DRAIN`` and the reboot's flag.
    """
    text = node_base_shown(base, alloc_cpus, total_cpus).value
    if NodeFlag.NOT_RESPONDING in flags:
        text += "*"
    for flag in (NodeFlag.DRAIN, NodeFlag.REBOOT_REQUESTED, NodeFlag.REBOOT_ISSUED):
        if flag in flags:
            text += f"+{flag.value}"
    return text
