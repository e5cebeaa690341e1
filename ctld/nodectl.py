"""Node control: agents' registrations and heartbeats, liveness, and admins' node changes.

A registration reconciles what the agent runs with what the controller
believes; a node silent for SlurmdTimeout goes DOWN and its jobs are lost.

Imports ctld's pure node modules, ctld.ledger, ctld.runner, ctld.jobctl and minislurm.
"""

from __future__ import annotations

import logging
import time

from ctld import jobs as jobops
from ctld import nodes as nodeops
from ctld.accounting.manager import Accounting
from ctld.intents import Intent, Launch, Terminate
from ctld.jobctl import JobControl
from ctld.ledger import Ledger
from ctld.runner import IntentRunner
from ctld.scheduling import SchedulerLoop
from ctld.state import NodeUsage
from ctld.store import repo
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest, PermissionDenied
from minislurm.requests import Heartbeat, JobStatus, NodeUpdate, Registration
from minislurm.states import ACTIVE_JOB_STATES, JobState, kill_name

log = logging.getLogger(__name__)


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

    def register(self, request: Registration) -> tuple[list[int], int]:
        """A node agent (re)starts: record its resources and reconcile its jobs.

        Args:
            request: what the agent found on its node, and the jobs it knows.

        Returns:
            Jobs it must kill, and the heartbeat interval (seconds).

        Raises:
            InvalidRequest: the node is not in slurm.conf.
        """
        node = self._state.nodes.get(request.name)
        if node is None:
            raise InvalidRequest(f"Node {request.name} is not in the configuration")
        now = time.time()
        updated = nodeops.registered(node, request, now, self._conf)
        if nodeops.persisted_fields(updated) != nodeops.persisted_fields(node):
            with self._ledger.transaction() as s:
                repo.save_node(s, *nodeops.persisted_fields(updated), updated.reason_time)
        self._state.put_node(updated)
        self._runner.registered.add(request.name)
        kill = self._reconcile(request)
        if kill:
            # Not used again until its agent reports those jobs gone.
            self._fencing[request.name] = set(kill)
            self._state.put_node(nodeops.fenced(updated))
        else:  # what an earlier registration found stale is gone; ids may run here again
            self._fencing.pop(request.name, None)
        self._scheduler.kick()
        return kill, nodeops.heartbeat_interval(self._conf)

    def _reconcile(self, request: Registration) -> list[int]:
        """Match the jobs an agent reports with what the controller believes.

        Ended jobs are recorded; running jobs the controller does not run
        there are to be killed (returned); kills decided earlier are sent
        again; batch jobs the node never heard of are launched again when
        their launch was never acknowledged, else they were lost with the node.
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
        for job in list(self._state.active_jobs()):
            if job.allocation is None or job.allocation.node_names[0] != node:
                continue
            if job.job_id in reported or not job.batch:
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

    def heartbeat(self, request: Heartbeat) -> bool:
        """A node agent is alive.

        Args:
            request: its load, free memory and running jobs.

        Returns:
            Whether it must register again (this controller has not seen it).
        """
        node = self._state.nodes.get(request.name)
        if node is None or request.name not in self._runner.registered:
            return True
        updated = nodeops.heartbeat(node, request, time.time())
        stale = self._fencing.get(request.name, set()) & set(request.running_job_ids)
        if stale:
            updated = nodeops.fenced(updated)
        elif self._fencing.pop(request.name, None) is not None:
            self._scheduler.kick()
        self._state.put_node(updated)
        return False

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
        updated = nodeops.admin_update(self._state, request, now)
        with self._ledger.transaction() as s:
            for node in updated:
                repo.save_node(s, *nodeops.persisted_fields(node), node.reason_time)
        for node in updated:
            self._state.put_node(node)
        self._scheduler.kick()

    def node_usage(self) -> dict[str, NodeUsage]:
        """What jobs hold on each node (for ``scontrol show node`` and ``sinfo``).

        Returns:
            Usage per node name.
        """
        return self._state.usage()

    def check_liveness(self, now: float) -> None:
        """Mark silent nodes NOT_RESPONDING, and those silent for SlurmdTimeout DOWN.

        Args:
            now: the time.
        """
        timeout = nodeops.not_responding_after(self._conf)
        for node in list(self._state.nodes.values()):
            updated = nodeops.check_responding(node, now, timeout)
            if updated is not node:
                self._state.put_node(updated)
        self._fail_silent_nodes(now)

    def _fail_silent_nodes(self, now: float) -> None:
        """Nodes silent for SlurmdTimeout go DOWN; their jobs are requeued or end NODE_FAIL."""
        for node in list(self._state.nodes.values()):
            down = nodeops.check_down(node, now, self._conf.slurmd_timeout)
            if down is node:
                continue
            with self._ledger.transaction() as s:
                repo.save_node(s, *nodeops.persisted_fields(down), down.reason_time)
            self._state.put_node(down)
            # Should it answer again, it must register: its stale jobs are killed first.
            self._runner.registered.discard(node.name)
            self._jobs.jobs_lost(node.name, now)
