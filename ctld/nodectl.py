"""Node control: agents' registrations and heartbeats, liveness, and admins' node changes.

A registration reconciles what the agent runs with what the controller
believes; a node silent for SlurmdTimeout goes DOWN and its jobs are lost.

Imports ctld's pure node modules, ctld.ledger, ctld.runner, ctld.jobctl and minislurm.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ctld import jobs as jobops
from ctld import nodes as nodeops
from ctld.accounting.manager import Accounting
from ctld.intents import Intent, Launch, Reboot, Terminate
from ctld.jobctl import JobControl
from ctld.ledger import Ledger
from ctld.runner import IntentRunner
from ctld.scheduling import SchedulerLoop
from ctld.state import NodeUsage
from ctld.store import repo
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest, PermissionDenied
from minislurm.model import Job, Node
from minislurm.requests import Heartbeat, JobStatus, NodeScriptFailure, NodeUpdate, Registration
from minislurm.states import (
    ACTIVE_JOB_STATES,
    JobState,
    NodeFlag,
    NodeState,
    kill_name,
    node_base_shown,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HeartbeatAnswer:
    """What a node's heartbeat is answered."""

    reregister: bool
    state: str = ""  # its base state as shown: IDLE, MIXED, ALLOCATED, DOWN...
    drained: bool = False


class NodeControl:
    """The nodes and their agents.

    Args:
        conf: the configuration.
        ledger: the commits.
        runner: knows which agents registered; carries out kills and launches.
        jobs: the jobs a node's news changes.
        scheduler: the scheduling loop (kicked when nodes change).
        accounting: privileges (only administrators change nodes).
    """

    def __init__(
        self,
        conf: SlurmConfig,
        ledger: Ledger,
        runner: IntentRunner,
        jobs: JobControl,
        scheduler: SchedulerLoop,
        accounting: Accounting,
    ) -> None:
        self._conf = conf
        self._ledger = ledger
        self._state = ledger.state
        self._runner = runner
        self._jobs = jobs
        self._scheduler = scheduler
        self._accounting = accounting
        self._fencing: dict[str, set[int]] = {}  # node -> stale jobs it must kill before use

    def reconfigure(self, conf: SlurmConfig) -> None:
        """Run with a re-read slurm.conf (its live part, see ctld.reconfig)."""
        self._conf = conf

    def register(self, requests: Sequence[Registration]) -> tuple[list[list[int]], int]:
        """Node agents (re)start: record their resources and reconcile their jobs.

        One slurmd registers all its nodes at once; their records are saved
        in one transaction, and the jobs are looked over once for them all.

        Args:
            requests: per node, what its agent found and the jobs it knows.

        Returns:
            Per node (in order), the jobs it must kill; and the heartbeat interval (seconds).

        Raises:
            InvalidRequest: a node is not in slurm.conf, or its GPU links are not
                a matrix over its GPUs (no node is registered then).
        """
        nodes = []
        for request in requests:
            node = self._state.nodes.get(request.name)
            if node is None:
                raise InvalidRequest(f"Node {request.name} is not in the configuration")
            nodeops.gpu_links(request)  # refused before any node is registered
            nodes.append(node)
        now = time.time()
        updates = [
            nodeops.registered(node, request, now, self._conf)
            for node, request in zip(nodes, requests, strict=True)
        ]
        changed = [
            updated
            for node, updated in zip(nodes, updates, strict=True)
            if nodeops.persisted_fields(updated) != nodeops.persisted_fields(node)
        ]
        if changed:
            with self._ledger.transaction() as s:
                for updated in changed:
                    repo.save_node(s, *nodeops.persisted_fields(updated), updated.reason_time)
        names = {request.name for request in requests}
        batch_jobs: dict[str, list[Job]] = {}
        for job in self._state.active_jobs():
            if job.batch and job.allocation is not None and job.allocation.node_names[0] in names:
                batch_jobs.setdefault(job.allocation.node_names[0], []).append(job)
        kills = []
        for request, updated in zip(requests, updates, strict=True):
            self._state.put_node(updated)
            self._runner.registered.add(request.name)
            kill = self._reconcile(request, batch_jobs.get(request.name, []))
            if kill:
                # Not used again until its agent reports those jobs gone.
                self._fencing[request.name] = set(kill)
                self._state.put_node(nodeops.fenced(updated))
            else:  # what an earlier registration found stale is gone; ids may run here again
                self._fencing.pop(request.name, None)
            kills.append(kill)
        self._scheduler.kick()
        return kills, nodeops.heartbeat_interval(self._conf)

    def _reconcile(self, request: Registration, batch_jobs: list[Job]) -> list[int]:
        """Match the jobs an agent reports with what the controller believes.

        Ended jobs are recorded; running jobs the controller does not run
        there are to be killed (returned); kills decided earlier are sent
        again; batch jobs the node never heard of (of ``batch_jobs``, the
        active ones whose batch host it is) are launched again when their
        launch was never acknowledged, else they were lost with the node.
        """
        node = request.name
        reported = {j.job_id: j for j in request.jobs}
        for agent_job in request.jobs:
            if not agent_job.running:
                self._jobs.job_ended(node, agent_job.status)
        kill: list[int] = []
        intents: list[Intent] = []
        for job_id, agent_job in reported.items():
            job = self._state.jobs.get(job_id)
            if not agent_job.running:
                continue
            if (
                job is None
                or job.state not in ACTIVE_JOB_STATES
                or job.allocation is None
                or (node not in job.allocation.node_names)
            ):
                kill.append(job_id)
            elif job.state is JobState.COMPLETING:
                intents.append(Terminate(job_id, (node,), kill_name(job.kill_event)))
        for listed in batch_jobs:
            job = self._state.jobs.get(listed.job_id)
            if job is None or job.job_id in reported or job.state not in ACTIVE_JOB_STATES:
                continue
            if job.state is JobState.COMPLETING:
                status = JobStatus(job_id=job.job_id, signal=9, restarts=job.restarts)
                self._jobs.job_ended(node, status)
            elif not job.launched:
                intents.append(Launch(job.job_id))
            else:
                log.warning("job=%d lost by node %s", job.job_id, node)
                self._jobs.lose([job], node, time.time())
        self._runner.run(intents)
        return kill

    def heartbeat(self, requests: Sequence[Heartbeat]) -> list[HeartbeatAnswer]:
        """Node agents are alive (one slurmd's nodes, in one call).

        Args:
            requests: per node, its load, free memory and running jobs.

        Returns:
            Per node, whether it must register again (this controller has not
            seen it), and its state (for its HealthCheckNodeState).
        """
        now = time.time()
        answers = []
        usage = self._state.usage()
        for request in requests:
            node = self._state.nodes.get(request.name)
            if node is None or request.name not in self._runner.registered:
                answers.append(HeartbeatAnswer(reregister=True))
                continue
            updated = nodeops.heartbeat(node, request, now)
            stale = self._fencing.get(request.name, set()) & set(request.running_job_ids)
            if stale:
                updated = nodeops.fenced(updated)
            elif self._fencing.pop(request.name, None) is not None:
                self._scheduler.kick()
            self._state.put_node(updated)
            held = usage.get(node.name)
            shown = node_base_shown(updated.state, held.cpus if held else 0, updated.cpus)
            answers.append(HeartbeatAnswer(False, shown.value, NodeFlag.DRAIN in updated.flags))
        return answers

    def update_node(self, request: NodeUpdate) -> None:
        """scontrol update NodeName=... State=DRAIN|RESUME|DOWN Reason=...

        Args:
            request: node names (a hostlist), the new state and reason.

        Raises:
            PermissionDenied: not an administrator (as in Slurm, an Operator may not).
            InvalidRequest: unknown node or state, or a missing reason.
        """
        if not self._accounting.privileges.is_admin(request.requester_uid):
            raise PermissionDenied(jobops.USER_ID_MISSING)
        now = time.time()
        self._save_nodes(nodeops.admin_update(self._state, request, now))
        self._scheduler.kick()

    def script_failed(self, failure: NodeScriptFailure, uid: int) -> None:
        """A node's Prolog or Epilog failed: the node is drained; a Prolog's job requeued held.

        Args:
            failure: the node, the job's run and the program's end.
            uid: the user the node's slurmd runs as.

        Raises:
            InvalidRequest: an unknown node or script.
        """
        node = self._state.nodes.get(failure.node)
        if node is None or failure.script not in nodeops.SCRIPT_ERRORS:
            raise InvalidRequest(f"no node {failure.node!r} or script {failure.script!r}")
        log.warning(
            "node=%s job=%d %s failed: exit=%d signal=%d%s",
            failure.node,
            failure.job_id,
            failure.script,
            failure.exit_code,
            failure.signal,
            " (timed out)" if failure.timed_out else "",
        )
        drained = nodeops.script_failed(node, failure.script, uid, time.time())
        if drained is not node:
            self._save_nodes([drained])
        if failure.script == "prolog":
            hold = "nohold_on_prolog_fail" not in self._conf.scheduler_parameters
            why = f"prolog failed on {failure.node}"
            self._jobs.run_failed(failure.job_id, failure.restarts, hold, why)
        self._scheduler.kick()

    def reboot_when_idle(self, now: float) -> None:
        """Issue the reboots requested of nodes no job holds; time out those that never came back.

        Args:
            now: the time.
        """
        usage = self._state.usage()
        changed, reboots = [], []
        for node in self._state.nodes.values():
            if NodeFlag.REBOOT_ISSUED in node.flags:
                timed_out = nodeops.reboot_timed_out(node, now, self._conf.resume_timeout)
                if timed_out is not node:
                    log.warning("node=%s reboot timed out", node.name)
                    changed.append(timed_out)
            elif (
                NodeFlag.REBOOT_REQUESTED in node.flags
                and node.state is NodeState.IDLE
                and NodeFlag.NOT_RESPONDING not in node.flags
                and node.name not in usage
            ):
                log.info("node=%s reboot issued", node.name)
                changed.append(nodeops.reboot_issued(node, now))
                reboots.append(Reboot(node.name))
        if changed:
            self._save_nodes(changed)
            self._runner.run(reboots)

    def _save_nodes(self, nodes: list[Node]) -> None:
        """Save nodes' operator-visible state in one transaction, then mirror them in memory."""
        with self._ledger.transaction() as s:
            for node in nodes:
                repo.save_node(s, *nodeops.persisted_fields(node), node.reason_time)
        for node in nodes:
            self._state.put_node(node)

    def node_usage(self) -> dict[str, NodeUsage]:
        """What jobs hold on each node (for ``scontrol show node`` and ``sinfo``).

        Returns:
            Usage per node name.
        """
        return self._state.usage()

    def check_liveness(self, now: float, lag: float = 0.0) -> None:
        """Mark silent nodes NOT_RESPONDING, and those silent for SlurmdTimeout DOWN.

        Args:
            now: the time.
            lag: how late the controller itself handles what arrives (seconds): a
                heartbeat that waits that long to be heard is no silence of its node.
        """
        timeout = nodeops.not_responding_after(self._conf) + lag
        for node in list(self._state.nodes.values()):
            updated = nodeops.check_responding(node, now, timeout)
            if updated is not node:
                self._state.put_node(updated)
        if self._conf.slurmd_timeout:
            self._fail_silent_nodes(now, self._conf.slurmd_timeout + lag)

    def _fail_silent_nodes(self, now: float, timeout: float) -> None:
        """Nodes silent for ``timeout`` go DOWN; their jobs are requeued or end NODE_FAIL."""
        for node in list(self._state.nodes.values()):
            down = nodeops.check_down(node, now, timeout)
            if down is node:
                continue
            self._save_nodes([down])
            # Should it answer again, it must register: its stale jobs are killed first.
            self._runner.registered.discard(node.name)
            self._jobs.jobs_lost(node.name, now)
