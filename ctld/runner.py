"""The intent runner: carries out on the nodes what committed changes asked for.

Intents (:mod:`ctld.intents`) run as tasks of their own once the change
that produced them is durable. What comes of a launch, and the end of a
kill, is reported to an :class:`Outcomes` (the job control), which
commits it; the runner itself writes nothing.

Imports ctld.dispatch (the only edge to the agents), ctld.ledger,
ctld.intents, ctld.nodes, ctld.store (scripts) and minislurm; no protobuf.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import Protocol

import grpc

from ctld import nodes as nodeops
from ctld.dispatch import AgentDispatcher, AgentUnreachable, BatchSite, StepSigned
from ctld.intents import (
    AllocProlog,
    CtldProlog,
    Intent,
    Launch,
    Reboot,
    Signal,
    SignalStep,
    Terminate,
)
from ctld.ledger import Ledger
from ctld.settings import CtldSettings
from ctld.sitescripts import ControllerScripts
from ctld.store import repo
from minislurm import jobenv
from minislurm.jobenv import ScriptJob
from minislurm.model import Job, JobScript
from minislurm.requests import NodeStepStat
from minislurm.security.authgrpc import daemon_signer
from minislurm.states import JobState

log = logging.getLogger(__name__)

SCRIPTS_KEPT = 64  # scripts kept after their launch: an array's tasks share theirs


class Outcomes(Protocol):
    """Who hears what came of the intents (commits it and decides what follows)."""

    async def launched(self, job: Job) -> None:
        """The batch host acknowledged the launch of this run of the job (once committed)."""

    def launch_lost(self, job: Job, node: str) -> None:
        """The batch host never answered while the run was current: lost with its node."""

    def launch_failed(self, job: Job, node: str) -> None:
        """The batch host refused the launch."""

    def terminated(self, job_id: int) -> None:
        """The kill of a job was delivered to (or given up on) its nodes."""

    def run_failed(self, job_id: int, restarts: int, hold: bool, why: str) -> None:
        """A run's PrologSlurmctld (or a node's Prolog) failed: the run ends."""


def current_run(jobs: dict[int, Job], job: Job) -> Job | None:
    """The job, while the run ``job`` describes is still its current one.

    Args:
        jobs: the jobs as they now are.
        job: the job as it was when its run began.

    Returns:
        The job as it now is, or None when it ended or was requeued since.
    """
    current = jobs.get(job.job_id)
    if current is None or (current.state, current.restarts) != (job.state, job.restarts):
        return None
    return current


class IntentRunner:
    """Sends launches, kills and signals to the agents, each in a task of its own.

    Args:
        settings: the controller's settings.
        ledger: the commits (the runner reads the state and scripts, and writes nothing).
    """

    def __init__(self, settings: CtldSettings, ledger: Ledger) -> None:
        self._settings = settings
        self._conf = settings.conf
        self._ledger = ledger
        self._state = ledger.state
        self.agents = AgentDispatcher(
            daemon_signer(settings.conf.auth_type, settings.cluster_key),
            tls_files=settings.conf.tls_files(),
        )
        self.registered: set[str] = set()  # agents seen since this controller started
        self._tasks: set[asyncio.Task[None]] = set()
        self._launches: dict[int, asyncio.Task[None]] = {}  # launches under way, by job id
        self._outcomes: Outcomes | None = None
        self.site_scripts = ControllerScripts(settings.conf)  # PrologSlurmctld, EpilogSlurmctld
        self._scripts: dict[int, JobScript] = {}  # the last scripts launched, by id
        self._site = BatchSite(
            settings.conf.cluster_name,
            settings.controller_address,
            settings.conf_path,
            settings.conf.kill_wait,
        )

    def report_to(self, outcomes: Outcomes) -> None:
        """Name who hears what came of the intents (set once, before any runs)."""
        self._outcomes = outcomes

    def run(self, intents: Iterable[Intent]) -> None:
        """Carry out intents, each in a task of its own on the running loop.

        A kill or signal of a job whose launch is under way waits for the
        launch's answer first: sent beside it, it could reach the batch host
        before the launch does, find no such job there, and be lost.
        """
        for intent in intents:
            task = asyncio.get_running_loop().create_task(self._carry_out(intent))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if isinstance(intent, Launch):
                self._launches[intent.job_id] = task
                task.add_done_callback(partial(self._launch_done, intent.job_id))

    def launching(self) -> int:
        """How many launch calls are sent or waiting their turn to be.

        A launch that waits to try an unreachable agent again does not count:
        a failed slurmd must not hold back the starts on the other nodes.
        """
        return self.agents.launches_sending

    def _launch_done(self, job_id: int, task: asyncio.Task[None]) -> None:
        if self._launches.get(job_id) is task:
            del self._launches[job_id]

    async def _after_launch(self, job_id: int) -> None:
        launch = self._launches.get(job_id)
        if launch is not None:
            await asyncio.wait([launch])

    async def close(self) -> None:
        """Cancel the intents under way and close the channels to the agents."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.site_scripts.close()
        await self.agents.close()

    def address_of(self, node: str) -> str | None:
        """A registered node's agent address, or None while it cannot be called."""
        record = self._state.nodes.get(node)
        if record is None or not record.port or node not in self.registered:
            return None
        return f"{record.addr}:{record.port}"

    def reconfigure(self, settings: CtldSettings) -> None:
        """Run with a re-read slurm.conf (its live part), and have every slurmd re-read it.

        Args:
            settings: the settings with the new configuration.
        """
        self._settings = settings
        self._conf = settings.conf
        self.site_scripts.conf = settings.conf
        first_of: dict[tuple[str, int], str] = {}
        for name, address in self.addresses().items():
            if name in self.registered:
                first_of.setdefault(address, name)  # one call per slurmd process
        for node in first_of.values():
            task = asyncio.get_running_loop().create_task(self._reconfigure_agent(node))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _reconfigure_agent(self, node: str) -> None:
        try:
            await self.agents.reconfigure(node, lambda: self.address_of(node))
        except (AgentUnreachable, grpc.aio.AioRpcError) as err:
            log.warning("node=%s did not reconfigure: %s", node, err)

    def addresses(self) -> dict[str, tuple[str, int]]:
        """Every node's agent address and port."""
        return {n.name: (n.addr or n.name, n.port) for n in self._state.nodes.values()}

    async def step_stat(self, node: str, job_id: int, step_id: int) -> list[NodeStepStat]:
        """One node's figures for a running step; none when its agent does not answer.

        Args:
            node: the node.
            job_id: the step's job.
            step_id: the step.

        Returns:
            The node's figures (empty when it did not answer in time).
        """
        try:
            return await self.agents.step_stat(node, lambda: self.address_of(node), job_id, step_id)
        except (AgentUnreachable, grpc.aio.AioRpcError) as err:
            log.warning("step=%d.%d node=%s no usage: %s", job_id, step_id, node, err)
            return []

    async def _carry_out(self, intent: Intent) -> None:
        assert self._outcomes is not None, "report_to() comes before run()"
        try:
            if isinstance(intent, Launch):
                await self._launch(intent.job_id, self._outcomes)
            elif isinstance(intent, Terminate):
                await self._after_launch(intent.job_id)
                scripts = self._script_jobs(intent.job_id) if self._conf.epilog else {}
                await asyncio.gather(
                    *(self._terminate_on(intent, node, scripts.get(node)) for node in intent.nodes)
                )
                self._outcomes.terminated(intent.job_id)
            elif isinstance(intent, SignalStep):
                await self._signal_step(intent)
            elif isinstance(intent, Reboot):
                await self.agents.reboot(intent.node, lambda: self.address_of(intent.node))
            elif isinstance(intent, CtldProlog):
                job = self._state.jobs.get(intent.job_id)
                if job is not None:
                    await self._prolog_slurmctld(job, self._outcomes)
            elif isinstance(intent, AllocProlog):
                scripts = self._script_jobs(intent.job_id)
                await asyncio.gather(
                    *(self._prolog_on(intent.job_id, node, scripts[node]) for node in intent.nodes)
                )
            else:
                await self._after_launch(intent.job_id)
                await asyncio.gather(*(self._signal_on(intent, node) for node in intent.nodes))
        except Exception:
            log.exception("intent %s failed", intent)

    def _script_jobs(self, job_id: int) -> dict[str, ScriptJob]:
        """What each node's Prolog or Epilog sees of the job."""
        job = self._state.jobs.get(job_id)
        if job is None or job.allocation is None:
            return {}
        brief = jobenv.script_job(job, "")
        return {n.node: replace(brief, gpus=tuple(n.gpus)) for n in job.allocation.nodes}

    async def _prolog_slurmctld(self, job: Job, outcomes: Outcomes) -> bool:
        """Run PrologSlurmctld for the job's run; when it fails, the run ends (not held)."""
        if await self.site_scripts.prolog(job):
            return True
        outcomes.run_failed(job.job_id, job.restarts, False, "prolog_slurmctld failed")
        return False

    async def _prolog_on(self, job_id: int, node: str, script_job: ScriptJob) -> None:
        try:
            await self.agents.prolog(node, lambda: self.address_of(node), script_job)
        except AgentUnreachable:
            log.warning("job=%d node=%s unreachable for its prolog", job_id, node)

    async def _terminate_on(
        self, intent: Terminate, node: str, script_job: ScriptJob | None
    ) -> None:
        try:
            await self.agents.terminate(
                node,
                lambda: self.address_of(node),
                intent.job_id,
                intent.outcome,
                self._conf.kill_wait,
                script_job,
            )
        except AgentUnreachable:
            log.warning("job=%d node=%s unreachable for terminate", intent.job_id, node)

    async def _signal_on(self, intent: Signal, node: str) -> None:
        await self.agents.signal(node, lambda: self.address_of(node), intent)

    async def _signal_step(self, intent: SignalStep) -> None:
        job = self._state.jobs.get(intent.job_id)
        step = self._state.steps.get(intent.job_id, {}).get(intent.step_id)
        if job is None or step is None:
            return
        signed = StepSigned(step, job, self.addresses(), self._settings.cluster_key, time.time())
        addresses_of = {node: self._address_getter(node) for node in intent.nodes}
        await self.agents.signal_tasks(addresses_of, intent, signed)

    def _address_getter(self, node: str) -> Callable[[], str | None]:
        return lambda: self.address_of(node)

    def _batch_host(self, job: Job) -> str | None:
        """The batch host's address, while the run being launched is current.

        A launch retried while its agent was away must not start a run that
        has since been requeued or ended.
        """
        if current_run(self._state.jobs, job) is None:
            raise AgentUnreachable(f"job={job.job_id} run {job.restarts} is over")
        assert job.allocation is not None
        return self.address_of(job.allocation.node_names[0])

    def _script(self, script_id: int) -> JobScript:
        """A job's script (an array's tasks share one): read once for a burst of launches."""
        script = self._scripts.get(script_id)
        if script is None:
            with self._ledger.transaction() as s:
                script = repo.load_script(s, script_id)
            self._scripts[script_id] = script
            while len(self._scripts) > SCRIPTS_KEPT:
                del self._scripts[next(iter(self._scripts))]
        return script

    async def _launch(self, job_id: int, outcomes: Outcomes) -> None:
        job = self._state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        if not await self._prolog_slurmctld(job, outcomes):
            return
        script = self._script(job.array_job_id or job.job_id)
        batch_host = job.allocation.node_names[0]
        patience = nodeops.launch_patience(self._conf)
        try:
            await self.agents.launch_batch(
                batch_host, lambda: self._batch_host(job), job, script, self._site, patience
            )
        except AgentUnreachable as err:
            current = current_run(self._state.jobs, job)
            if current is None:
                return  # its node was declared DOWN meanwhile: the job was requeued or ended
            # Its node still looks alive (SlurmdTimeout=0, or only slurmd's port is cut off):
            # the job is lost with it all the same.
            log.warning("job=%d launch on %s failed: %s", job_id, batch_host, err)
            outcomes.launch_lost(current, batch_host)
            return
        except Exception as err:
            log.warning("job=%d launch on %s failed: %s", job_id, batch_host, err)
            outcomes.launch_failed(job, batch_host)
            return
        await outcomes.launched(job)
