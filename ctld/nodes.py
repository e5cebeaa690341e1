"""Nodes: their records from slurm.conf, registration, liveness and operator changes.

Pure functions returning a node's next record; base-state changes go
through :func:`minislurm.states.next_node_state`.

Imports ctld.state and minislurm; no database, no gRPC server.
"""

from __future__ import annotations

from dataclasses import replace

from ctld.state import ClusterState
from minislurm import hostlist
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest, NodeNotFound
from minislurm.gpulinks import GpuLinks
from minislurm.model import Node
from minislurm.requests import Heartbeat, NodeUpdate, Registration
from minislurm.states import NodeEvent, NodeFlag, NodeState, next_node_state

REASON_REQUIRED = "You must specify a reason when DOWNING or DRAINING a node. Request denied"
NOT_RESPONDING = "Not responding"  # Slurm's reason for a node set DOWN by SlurmdTimeout
INVALID_STATE = "Invalid node state specified"  # slurm_strerror(ESLURM_INVALID_NODE_STATE)
SCRIPT_ERRORS = {"prolog": "Prolog error", "epilog": "Epilog error"}  # Slurm's drain reasons


def configured_nodes(conf: SlurmConfig) -> list[Node]:
    """A record for every node slurm.conf defines, state UNKNOWN until it registers.

    Args:
        conf: the configuration.

    Returns:
        The records, in configuration order.
    """
    nodes = []
    for nc in conf.nodes:
        gpus = nc.gres_count("gpu")
        nodes.append(
            Node(
                name=nc.name,
                cpus=nc.cpus,
                real_memory=nc.real_memory_mb,
                gpus=tuple(range(gpus)),
                partitions=tuple(p.name for p in conf.partitions if nc.name in p.nodes),
                addr=nc.addr or "",
                hostname=nc.hostname or "",
                port=nc.port or 0,
                sockets=nc.sockets,
                cores_per_socket=nc.cores_per_socket,
                threads_per_core=nc.threads_per_core,
                weight=nc.weight,
                features=",".join(nc.features),
                gpu_types=tuple(sorted({kind for name, kind, _ in nc.gres if name == "gpu"})),
            )
        )
    return nodes


def restored(
    node: Node,
    saved: tuple[str, bool, str, int, float, str, str],
    now: float,
) -> Node:
    """A configured node with the state saved before a restart.

    Args:
        node: the record from slurm.conf.
        saved: its base state, whether drained, the reason, who set it and when,
            its pending or issued reboot and the reboot's next state.
        now: the controller's start (an issued reboot's ResumeTimeout counts from it).

    Returns:
        The node with that state (not responding until its agent registers).
    """
    state, drain, reason, uid, when, reboot, reboot_next = saved
    flags = {NodeFlag.DRAIN} if drain else set()
    if reboot:
        flags.add(NodeFlag(reboot))
    return replace(
        node,
        state=NodeState(state),
        flags=frozenset(flags),
        reason=reason,
        reason_uid=uid,
        reason_time=when,
        reboot_next=reboot_next,
        reboot_issued=now if reboot == NodeFlag.REBOOT_ISSUED else 0.0,
    )


def unheard(node: Node, now: float) -> Node:
    """A node whose agent this controller has not heard from yet (just started).

    Args:
        node: the record.
        now: the controller's start: SlurmdTimeout counts from here.

    Returns:
        The node flagged NOT_RESPONDING until its agent registers.
    """
    return replace(node, flags=node.flags | {NodeFlag.NOT_RESPONDING}, last_seen=now)


def persisted_fields(node: Node) -> tuple[str, str, bool, str, int, str, str]:
    """What the database keeps of a node (besides the reason's time).

    Args:
        node: the record.

    Returns:
        ``(name, state, drained, reason, reason_uid, reboot, reboot_next)``;
        ``reboot`` is REBOOT_REQUESTED, REBOOT_ISSUED or "".
    """
    reboot = next((flag.value for flag in _REBOOT_FLAGS if flag in node.flags), "")
    drained = NodeFlag.DRAIN in node.flags
    return (
        node.name,
        node.state.value,
        drained,
        node.reason,
        node.reason_uid,
        reboot,
        node.reboot_next,
    )


def heartbeat_interval(conf: SlurmConfig) -> int:
    """Seconds between an agent's heartbeats: a tenth of SlurmdTimeout, 1 to 30 (30 when 0).

    Args:
        conf: the configuration.

    Returns:
        The interval.
    """
    if not conf.slurmd_timeout:
        return 30
    return max(1, min(30, conf.slurmd_timeout // 10))


def launch_patience(conf: SlurmConfig) -> float:
    """Seconds a batch launch is retried while its node's agent does not answer.

    Until the node would be declared DOWN, which requeues the job (or ends it
    NODE_FAIL); an agent back before then gets the launch. At least 20 s
    (all there is with SlurmdTimeout=0).

    Args:
        conf: the configuration.

    Returns:
        The seconds.
    """
    return max(20.0, conf.slurmd_timeout + float(heartbeat_interval(conf)))


def not_responding_after(conf: SlurmConfig) -> float:
    """Seconds without a heartbeat after which a node is NOT_RESPONDING.

    Args:
        conf: the configuration.

    Returns:
        Three heartbeat intervals.
    """
    return 3.0 * heartbeat_interval(conf)


def _low_resources(node: Node, request: Registration) -> str:
    """Slurm's drain reason when a node has less than slurm.conf says, else ""."""
    if request.cpus < node.cpus:
        return "Low socket*core*thread count"
    if request.real_memory < node.real_memory:
        return "Low RealMemory"
    if len(request.gpus) < len(node.gpus):
        return "gres/gpu count reported lower than configured"
    return ""


def registered(node: Node, request: Registration, now: float, conf: SlurmConfig) -> Node:
    """A node after its agent registered.

    A node with fewer resources than configured is drained with Slurm's
    reason (unless ``SlurmdParameters=config_overrides``); a node an
    operator set DOWN stays DOWN, one set DOWN for not responding returns,
    one whose agent started after its reboot was issued is back as the
    reboot's next state says.

    Args:
        node: the current record.
        request: what the agent found.
        now: the time.
        conf: the configuration.

    Returns:
        The updated record.
    """
    if NodeFlag.REBOOT_ISSUED in node.flags and request.slurmd_start_time >= int(
        node.reboot_issued
    ):
        node = rebooted(node)
    reported = len(request.gpus) == len(node.gpus)
    gpus = tuple(request.gpus) if reported else node.gpus
    updated = replace(
        node,
        addr=request.addr or node.addr,
        port=request.port,
        hostname=request.hostname or node.hostname,
        gpus=gpus,
        gpu_links=gpu_links(request) if reported else None,
        arch=request.arch,
        os=request.os,
        version=request.version,
        boot_time=_epoch(request.boot_time),
        slurmd_start_time=_epoch(request.slurmd_start_time),
        last_seen=now,
        flags=node.flags - {NodeFlag.NOT_RESPONDING},
    )
    low = "" if "config_overrides" in conf.slurmd_parameters else _low_resources(node, request)
    if low and NodeFlag.DRAIN not in updated.flags:
        updated = replace(
            updated, flags=updated.flags | {NodeFlag.DRAIN}, reason=low, reason_time=now
        )
    if node.state is not NodeState.DOWN or node.reason == NOT_RESPONDING:
        updated = replace(updated, state=next_node_state(node.name, node.state, NodeEvent.REGISTER))
    if node.state is NodeState.DOWN and node.reason == NOT_RESPONDING:
        updated = replace(updated, reason="", reason_uid=0, reason_time=0.0)
    return updated


def gpu_links(request: Registration) -> GpuLinks | None:
    """The links between a registering node's GPUs.

    Args:
        request: what its agent found.

    Returns:
        The map, None when the agent sent none.

    Raises:
        InvalidRequest: the links are not a matrix of links over its GPUs.
    """
    if not request.gpu_links:
        return None
    try:
        return GpuLinks.of(request.gpus, request.gpu_links)
    except ValueError as err:
        raise InvalidRequest(f"Node {request.name}: invalid GPU links: {err}") from None


def _epoch(seconds: int) -> float:
    """A time an agent reported; 0 (unknown) when negative or too large to hold exactly."""
    return float(seconds) if 0 <= seconds < 2**53 else 0.0


def heartbeat(node: Node, request: Heartbeat, now: float) -> Node:
    """A node after a heartbeat from its agent.

    Args:
        node: the current record.
        request: load and free memory.
        now: the time.

    Returns:
        The updated record, responding.
    """
    return replace(
        node,
        last_seen=now,
        cpu_load=request.cpu_load,
        free_memory=request.free_memory,
        gpu_util=request.gpu_util if request.gpus_measured else None,
        gpu_memory_used=request.gpu_memory_used,
        flags=node.flags - {NodeFlag.NOT_RESPONDING},
    )


def check_responding(node: Node, now: float, timeout: float) -> Node:
    """The node flagged NOT_RESPONDING when its agent has been silent too long.

    Args:
        node: the current record.
        now: the time.
        timeout: allowed silence, seconds.

    Returns:
        ``node`` itself when nothing changes, else the flagged record.
    """
    if NodeFlag.NOT_RESPONDING in node.flags or now - node.last_seen <= timeout:
        return node
    return replace(node, flags=node.flags | {NodeFlag.NOT_RESPONDING})


def fenced(node: Node) -> Node:
    """A node that is back but still runs jobs it was told to kill: not used until they end.

    Args:
        node: the record.

    Returns:
        The node flagged NOT_RESPONDING.
    """
    return replace(node, flags=node.flags | {NodeFlag.NOT_RESPONDING})


def check_down(node: Node, now: float, timeout: float) -> Node:
    """The node DOWN (reason "Not responding") when its agent was silent for SlurmdTimeout.

    Args:
        node: the current record.
        now: the time.
        timeout: SlurmdTimeout, seconds; 0: never (as in Slurm, the node is not tested).

    Returns:
        ``node`` itself when nothing changes, else the DOWN record.
    """
    if timeout <= 0 or node.state is NodeState.DOWN or now - node.last_seen <= timeout:
        return node
    new = next_node_state(node.name, node.state, NodeEvent.FAIL, NOT_RESPONDING)
    return replace(
        node,
        state=new,
        flags=node.flags | {NodeFlag.NOT_RESPONDING},
        reason=NOT_RESPONDING,
        reason_uid=0,
        reason_time=now,
    )


def script_failed(node: Node, script: str, uid: int, now: float) -> Node:
    """A node whose Prolog or Epilog failed: drained with Slurm's reason.

    A node drained already keeps the reason it has.

    Args:
        node: the node.
        script: "prolog" or "epilog".
        uid: the user the node's slurmd runs as (who set the reason).
        now: the time.

    Returns:
        The drained node.
    """
    if NodeFlag.DRAIN in node.flags:
        return node
    return replace(
        node,
        flags=node.flags | {NodeFlag.DRAIN},
        reason=SCRIPT_ERRORS[script],
        reason_uid=uid,
        reason_time=now,
    )


REBOOT_REASON = "reboot requested"  # Slurm's, when the node has no reason
REBOOT_ASAP_REASON = "Reboot ASAP"
REBOOT_NEXT_STATES = ("RESUME", "DOWN")
_REBOOT_FLAGS = (NodeFlag.REBOOT_REQUESTED, NodeFlag.REBOOT_ISSUED)
_REBOOTING = frozenset(_REBOOT_FLAGS)


def reboot_requested(node: Node, request: NodeUpdate, now: float) -> Node:
    """``scontrol reboot [ASAP] [nextstate=...] [reason=...]``: rebooted once no job holds it.

    As Slurm's: ASAP drains the node (reason ``Reboot ASAP`` when none is
    given) and resumes it after the reboot; a node without a reason gets
    ``reboot requested``; a node whose reboot is pending already is left alone.

    Args:
        node: the node.
        request: the reboot's options (``asap``, ``next_state``, ``reason``).
        now: the time.

    Returns:
        The node flagged REBOOT_REQUESTED.

    Raises:
        InvalidRequest: a next state other than RESUME or DOWN.
    """
    next_state = request.next_state.upper()
    if next_state and next_state not in REBOOT_NEXT_STATES:
        raise InvalidRequest(INVALID_STATE)
    if node.flags & _REBOOTING:
        return node
    flags = node.flags | {NodeFlag.REBOOT_REQUESTED}
    reason = request.reason or node.reason
    if request.asap:
        flags |= {NodeFlag.DRAIN}
        reason = request.reason or REBOOT_ASAP_REASON
        next_state = next_state or "UNDRAIN"
    reason = reason or REBOOT_REASON
    changed = reason != node.reason
    return replace(
        node,
        flags=flags,
        reboot_next=next_state,
        reason=reason,
        reason_uid=request.requester_uid if changed else node.reason_uid,
        reason_time=now if changed else node.reason_time,
    )


def reboot_cancelled(node: Node) -> Node:
    """``scontrol cancel_reboot``: a pending reboot forgotten, with the drain it brought.

    Args:
        node: the node.

    Returns:
        The node without REBOOT_REQUESTED (nor the drain and reason of an ASAP reboot).

    Raises:
        InvalidRequest: no reboot of the node is pending (Slurm's ``Invalid node state``).
    """
    if NodeFlag.REBOOT_REQUESTED not in node.flags:
        raise InvalidRequest(INVALID_STATE)
    cancelled = replace(node, flags=node.flags - {NodeFlag.REBOOT_REQUESTED}, reboot_next="")
    return _undrained(cancelled) if node.reboot_next in ("UNDRAIN", "RESUME") else cancelled


def reboot_issued(node: Node, now: float) -> Node:
    """A node whose agent is being asked to reboot: DOWN until it registers again.

    Args:
        node: a node whose reboot is requested and which no job holds.
        now: the time.

    Returns:
        The node DOWN, REBOOT_ISSUED, its reason followed by ``: reboot issued``.
    """
    down = next_node_state(node.name, node.state, NodeEvent.REBOOT, node.reason)
    return replace(
        node,
        state=down,
        flags=node.flags - {NodeFlag.REBOOT_REQUESTED} | {NodeFlag.REBOOT_ISSUED},
        reason=f"{node.reason} : reboot issued",
        reboot_issued=now,
    )


def rebooted(node: Node) -> Node:
    """A node registering after its reboot: back as its ``nextstate`` says.

    Args:
        node: a REBOOT_ISSUED node whose agent started after the reboot was issued.

    Returns:
        IDLE, undrained with its reason cleared after an ASAP or ``nextstate=RESUME``
        reboot; DOWN (``: reboot complete``) after ``nextstate=DOWN``.
    """
    done = replace(node, flags=node.flags - {NodeFlag.REBOOT_ISSUED}, reboot_next="")
    if node.reboot_next == "DOWN":
        return replace(done, reason=f"{node.reason} : reboot complete")
    done = replace(done, state=next_node_state(node.name, node.state, NodeEvent.ADMIN_RESUME))
    if node.reboot_next in ("RESUME", "UNDRAIN"):
        return _undrained(done)
    return replace(done, reason=node.reason.removesuffix(" : reboot issued"))


def reboot_timed_out(node: Node, now: float, timeout: float) -> Node:
    """A node whose reboot was issued more than ``timeout`` seconds ago and that never came back.

    Args:
        node: the node.
        now: the time.
        timeout: ResumeTimeout, seconds.

    Returns:
        The node DOWN without REBOOT_ISSUED, ``: reboot timed out`` on its
        reason; the same node while there is time left or no reboot was issued.
    """
    if NodeFlag.REBOOT_ISSUED not in node.flags or now - node.reboot_issued <= timeout:
        return node
    return replace(
        node,
        flags=node.flags - {NodeFlag.REBOOT_ISSUED},
        reboot_next="",
        reason=f"{node.reason} : reboot timed out",
    )


def _admin_change(node: Node, state: str, reason: str, uid: int, now: float) -> Node:
    if state in ("DRAIN", "DOWN") and not reason:
        raise InvalidRequest(REASON_REQUIRED)
    if state == "DRAIN":
        return replace(
            node,
            flags=node.flags | {NodeFlag.DRAIN},
            reason=reason,
            reason_uid=uid,
            reason_time=now,
        )
    if state == "DOWN":
        new = next_node_state(node.name, node.state, NodeEvent.ADMIN_DOWN, reason)
        return replace(node, state=new, reason=reason, reason_uid=uid, reason_time=now)
    if state in ("RESUME", "IDLE", "UNDRAIN"):
        if not _may_become(node, state):
            raise InvalidRequest(INVALID_STATE)
        new = node.state
        if node.state is NodeState.DOWN and state != "UNDRAIN":
            new = next_node_state(node.name, node.state, NodeEvent.ADMIN_RESUME)
        return _undrained(replace(node, state=new))
    raise InvalidRequest(f"{INVALID_STATE}: {state}")


def _undrained(node: Node) -> Node:
    """The node without its DRAIN flag and reason (RESUME, UNDRAIN, a reboot's end)."""
    return replace(
        node, flags=node.flags - {NodeFlag.DRAIN}, reason="", reason_uid=0, reason_time=0.0
    )


def _may_become(node: Node, state: str) -> bool:
    """Slurm's check of an administrator's RESUME (of a down or drained node) and IDLE."""
    if state == "RESUME":
        return node.state is NodeState.DOWN or NodeFlag.DRAIN in node.flags
    if state == "IDLE":
        return node.state in (NodeState.DOWN, NodeState.IDLE)
    return True


def admin_update(state: ClusterState, request: NodeUpdate, now: float) -> list[Node]:
    """Apply ``scontrol update NodeName=... State=...`` to every named node.

    Args:
        state: the cluster.
        request: a hostlist of nodes, the new state (DRAIN, DOWN, RESUME,
            IDLE, UNDRAIN) and the reason.
        now: the time.

    Returns:
        The updated records (nothing is changed on error).

    Raises:
        NodeNotFound: a name is not a configured node.
        InvalidRequest: unknown state, one a node may not take (RESUME of a
            node neither down nor drained, as Slurm's ``Invalid node state
            specified``), or missing reason.
    """
    try:
        if request.names.upper() == "ALL" and request.state.upper() == "REBOOT":
            names = list(state.nodes)
        else:
            names = hostlist.expand(request.names)
    except ValueError as err:
        raise InvalidRequest(str(err)) from None
    if not names:
        raise InvalidRequest("No node name specified")
    updated = []
    for name in names:
        node = state.nodes.get(name)
        if node is None:
            raise NodeNotFound(name)
        word = request.state.upper()
        if word == "REBOOT":
            updated.append(reboot_requested(node, request, now))
        elif word == "CANCEL_REBOOT":
            updated.append(reboot_cancelled(node))
        else:
            updated.append(_admin_change(node, word, request.reason, request.requester_uid, now))
    return updated
