"""The controller's scheduling loop: snapshot, plan, apply.

Scheduling is event-driven: anything that may let a job start (a
submission, a job's end, a node registering, a release) calls ``kick()``,
and the loop runs a pass as soon as the event loop is free; kicks that
arrive while one is running coalesce into one more pass. A pass that took
long is followed by an equal pause, which bounds the scheduler's share of
the controller under a burst of submissions. A periodic tick covers
time-based changes (job age).

Imports ctld.sched, ctld.state and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights, job_priority
from ctld.state import ClusterState, NodeUsage
from minislurm.model import NodeView, PartitionView, PendingJob, Plan, Snapshot
from minislurm.states import NodeFlag, NodeState

log = logging.getLogger("minislurm.sched")

TICK_SECONDS = 30.0
MIN_PAUSE_AFTER = 0.002  # seconds; shorter passes run again as soon as kicked


def node_usable(state: NodeState, flags: frozenset[NodeFlag]) -> bool:
    """Whether new work may be placed on a node.

    Args:
        state: its stored base state.
        flags: its flags.

    Returns:
        True when it is in service, responding and not drained.
    """
    return state is NodeState.IDLE and not flags


def build_snapshot(state: ClusterState, now: float, weights: PriorityWeights) -> Snapshot:
    """Everything a pass reads, from the in-memory state.

    Args:
        state: the cluster.
        now: the time of the pass.
        weights: priority weights.

    Returns:
        The snapshot.
    """
    usage = state.usage()
    empty = NodeUsage()
    nodes = []
    for node in state.nodes.values():
        used = usage.get(node.name, empty)
        nodes.append(
            NodeView(
                name=node.name,
                cpus=node.cpus,
                mem=node.real_memory,
                gpus=node.gpus,
                free_cpus=node.cpus - used.cpus,
                free_mem=node.real_memory - used.mem,
                free_gpus=tuple(g for g in node.gpus if g not in used.gpus),
                usable=node_usable(node.state, node.flags),
                weight=node.weight,
            )
        )
    cluster_cpus = sum(n.cpus for n in state.nodes.values())
    partitions = tuple(
        PartitionView(
            name=p.name,
            nodes=p.nodes,
            priority_tier=p.priority_tier,
            max_time=p.max_time,
            max_nodes=p.max_nodes,
            min_nodes=p.min_nodes,
            state=p.state,
        )
        for p in state.partitions.values()
    )
    pending = tuple(
        PendingJob(
            job_id=j.job_id,
            partition=j.partition,
            priority=job_priority(j, now, weights, cluster_cpus, 0.0),
            submit_time=j.submit_time,
            request=j.request,
            time_limit=j.time_limit,
            held=j.held,
        )
        for j in state.queued_jobs()
    )
    return Snapshot(nodes=tuple(nodes), partitions=partitions, pending=pending)


class SchedulerLoop:
    """Runs a scheduling pass whenever kicked, and at least every TICK_SECONDS."""

    def __init__(
        self,
        state: ClusterState,
        weights: PriorityWeights,
        apply: Callable[[Plan, float], None],
    ) -> None:
        self._state = state
        self._weights = weights
        self._apply = apply
        self._kicked = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.passes = 0

    def kick(self) -> None:
        """Ask for a pass as soon as possible."""
        self._kicked.set()

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="scheduler")
        self.kick()

    async def stop(self) -> None:
        """Stop the loop (a pass in progress completes first)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def run_pass(self) -> Plan:
        """One pass now: snapshot, plan, apply.

        Returns:
            What the pass decided.
        """
        now = time.time()
        snapshot = build_snapshot(self._state, now, self._weights)
        decided = plan(snapshot, now)
        self._apply(decided, now)
        self.passes += 1
        if decided.starts:
            log.debug("pass %d started %d job(s)", self.passes, len(decided.starts))
        return decided

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._kicked.wait(), TICK_SECONDS)
            except TimeoutError:
                pass
            self._kicked.clear()
            began = time.monotonic()
            try:
                self.run_pass()
            except Exception:
                log.exception("scheduling pass failed")
            # A long pass (a deep queue) is followed by as long a pause, so that a
            # burst of submissions gets at least half of the controller's time.
            took = time.monotonic() - began
            if took > MIN_PAUSE_AFTER:
                await asyncio.sleep(took)
