"""The controller: owns the cluster state and puts its rooms together.

The work is done in rooms, each a module of its own: :mod:`ctld.jobctl`
(jobs' requests and ends), :mod:`ctld.nodectl` (agents and node changes),
:mod:`ctld.stepctl` (steps), :mod:`ctld.starts` (what scheduling passes
decide), :mod:`ctld.timelimits` (time limits), :mod:`ctld.ranking`
(priorities). All of them commit through one :class:`~ctld.ledger.Ledger`
and hand what must be done on the nodes to one
:class:`~ctld.runner.IntentRunner`. This module builds them, loads the
database on start, and runs the periodic chores.

Imports ctld's modules and minislurm; the gRPC layer is in ctld/servicer.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from sqlalchemy import Connection, Engine

from ctld import jobs as jobops
from ctld import nodes as nodeops
from ctld import reconfig
from ctld.accounting.manager import Accounting
from ctld.diag import JobTally
from ctld.jobctl import JobControl
from ctld.ledger import Ledger
from ctld.looplag import LoopLag
from ctld.nodectl import NodeControl
from ctld.ranking import Ranking, weights_of
from ctld.resv.manager import Reservations
from ctld.runner import IntentRunner
from ctld.scheduling import PassStats, SchedulerLoop
from ctld.settings import CtldSettings
from ctld.starts import Starts
from ctld.state import ClusterState
from ctld.stepctl import StepControl
from ctld.store import repo
from ctld.timelimits import TimeLimits
from ctld.tokens import MetricsAccess
from minislurm.config import load_slurm_conf
from minislurm.states import JobState

log = logging.getLogger(__name__)

HOUSEKEEPING_SECONDS = 1.0
USAGE_CHARGE_SECONDS = 30.0  # how often running jobs' usage is charged (Slurm: PriorityCalcPeriod)


class Controller:
    """slurmctld's brain: state, persistence, scheduling, timers and dispatch."""

    def __init__(
        self,
        settings: CtldSettings,
        engine: Engine,
        fence: Callable[[Connection], None] | None = None,
    ) -> None:
        self.settings = settings
        self.conf = conf = settings.conf
        self._engine = engine
        self.start_time = time.time()
        self.metrics_port = 0  # where the OpenMetrics endpoints listen, once they do
        self.metrics_access = MetricsAccess(conf, settings.cluster_key)
        self.stats_since = self.start_time  # sdiag's "Data since": the start or the last reset
        self.state = ClusterState(
            nodeops.configured_nodes(conf),
            conf.partitions,
            conf.memory_consumable,
            conf.gres_types,
            settings.sched.max_switch_wait,
            conf.topology,
        )
        self.ledger = Ledger(self.state, engine, fence)
        self.weights = weights_of(conf)
        self.accounting = Accounting(conf, self.ledger.transaction, settings.operators)
        self.ranking = Ranking(self.state, self.weights, self.accounting)
        self.runner = IntentRunner(settings, self.ledger)
        self.ledger.listen(self.runner.site_scripts.run_ended)
        self.limits = TimeLimits(self.ledger, self.runner)
        self._starts = starts = Starts(
            conf, self.ledger, self.runner, self.limits, self.ranking, self.accounting
        )
        self.lag = LoopLag()
        self.scheduler = SchedulerLoop(
            self.state,
            self.weights,
            starts,
            settings.sched,
            self.accounting,
            self.lag,
            self.runner.launching,
        )
        self.jobs = JobControl(
            conf,
            self.ledger,
            self.runner,
            self.limits,
            self.ranking,
            self.scheduler,
            self.accounting,
        )
        self.runner.report_to(self.jobs)
        self.nodes = NodeControl(
            conf, self.ledger, self.runner, self.jobs, self.scheduler, self.accounting
        )
        self.steps = StepControl(self.ledger, self.runner, self.jobs)
        self.resvs = Reservations(
            self.state,
            self.ledger.transaction,
            self.accounting.privileges,
            self.jobs.default_partition or "",
        )
        self._housekeeping: asyncio.Task[None] | None = None
        self._measuring: asyncio.Task[None] | None = None

    def load(self) -> None:
        """Read the database into memory (on start and restart)."""
        now = time.time()
        with self.ledger.transaction() as s:
            for job in repo.load_jobs(s, now - self.conf.min_job_age):
                self.state.put_job(job)
            for step in repo.load_steps(s, list(self.state.jobs)):
                self.state.put_step(step)
            self.state.last_job_id = repo.max_job_id(s)
            for saved in repo.load_nodes(s):
                name = saved[0]
                if name in self.state.nodes:
                    self.state.put_node(nodeops.restored(self.state.nodes[name], saved[1:], now))
        self.accounting.load(now)
        self.resvs.load()
        # No node is used before its agent has registered with this controller.
        for node in list(self.state.nodes.values()):
            self.state.put_node(nodeops.unheard(node, now))
        log.info("loaded %d job(s), last job id %d", len(self.state.jobs), self.state.last_job_id)

    async def start(self) -> None:
        """Start the scheduler, timers and housekeeping on the running loop.

        Kills decided before a restart are sent again (the agents ignore
        repeats); limits that passed while the controller was down fire now.
        """
        for job in self.state.active_jobs():
            if job.state is JobState.RUNNING:
                self.limits.arm(job)
            elif job.state is JobState.COMPLETING and job.allocation is not None:
                self.runner.run(jobops.kill_intents(job))
        loop = asyncio.get_running_loop()
        self._measuring = loop.create_task(self.lag.run(), name="loop lag")
        self.scheduler.start()
        self._housekeeping = loop.create_task(self._housekeep())

    async def stop(self) -> None:
        """Stop background work and close channels to agents."""
        await self.scheduler.stop()
        self.limits.clear()
        chores = [task for task in (self._housekeeping, self._measuring) if task is not None]
        for task in chores:
            task.cancel()
        await asyncio.gather(*chores, return_exceptions=True)
        await self.runner.close()

    def reconfigure(self) -> list[str]:
        """``scontrol reconfigure``: re-read slurm.conf, apply what can change live.

        The slurmds are asked to re-read it too. A file that does not read
        changes nothing.

        Returns:
            What changed that only a restart applies (logged as well).

        Raises:
            ConfigError: the file is malformed (nothing is changed).
        """
        read = load_slurm_conf(self.settings.conf_path)
        new, waiting = reconfig.live_part(self.conf, read, self.settings.port)
        self.conf = new
        self.settings = replace(self.settings, conf=new)
        self.weights = weights_of(new)
        self.state.partitions.update((p.name, p) for p in new.partitions)
        self.accounting.reconfigure(new)
        self.ranking.weights = self.weights
        self.scheduler.reconfigure(self.weights, self.settings.sched)
        self._starts.reconfigure(new)
        self.jobs.reconfigure(new)
        self.nodes.reconfigure(new)
        self.runner.reconfigure(self.settings)
        self.metrics_access = MetricsAccess(new, self.settings.cluster_key)
        for warning in new.warnings:
            log.warning("%s", warning)
        log.info("reconfigured from %s", self.settings.conf_path)
        for what in waiting:
            log.warning("reconfigure: %s changed; it applies once slurmctld restarts", what)
        self.scheduler.kick()
        return waiting

    def reset_statistics(self) -> None:
        """sdiag -r: the job counts and the scheduler's cycles start again from now."""
        self.ledger.tally = JobTally()
        self.scheduler.full_stats = PassStats()
        self.scheduler.event_stats = PassStats()
        self.stats_since = time.time()

    def close(self) -> None:
        """Close the database."""
        self._engine.dispose()

    async def _housekeep(self) -> None:
        """Periodic chores: node liveness, forgetting old jobs, re-sending kills."""
        while True:
            await asyncio.sleep(HOUSEKEEPING_SECONDS)
            try:
                now = time.time()
                self.nodes.check_liveness(now, self.lag.seconds)
                self.nodes.reboot_when_idle(now)
                if now - self.accounting.usage_time >= USAGE_CHARGE_SECONDS:
                    self.ranking.charge_usage(now)
                if self.resvs.expire(now):
                    self.scheduler.kick()
                self.state.forget_finished(now - self.conf.min_job_age)
            except Exception:
                log.exception("housekeeping failed")
