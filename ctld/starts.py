"""What a scheduling pass decides, carried out: settling before it, starts and preemption after.

The pure scheduler (``ctld/sched/``) plans on a snapshot; this module
commits the plan (starting jobs and splitting array tasks off in one
transaction), gives pending jobs their reasons, and has the runner launch
the batch scripts and kill what waiting jobs preempt.

Imports ctld's pure job modules, ctld.ledger, ctld.runner, ctld.timelimits and minislurm.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ctld import arrays as arrayops
from ctld import depend as depops
from ctld import jobs as jobops
from ctld import preemption
from ctld.accounting.manager import Accounting
from ctld.intents import AllocProlog, CtldProlog, Intent
from ctld.ledger import Ledger
from ctld.ranking import Ranking
from ctld.runner import IntentRunner
from ctld.scheduling import latest_start
from ctld.timelimits import TimeLimits
from minislurm.config import SlurmConfig
from minislurm.depend import parse_dependency
from minislurm.model import Job, Plan, Snapshot
from minislurm.states import JobState, kill_name

log = logging.getLogger(__name__)


class Starts:
    """Carries out scheduling passes' decisions (the loop's :class:`~ctld.scheduling.PassHooks`).

    Args:
        conf: the configuration.
        ledger: the commits.
        runner: launches and kills.
        limits: the started jobs' timers.
        ranking: priorities (preemption compares them).
        accounting: QOS (preemption follows it).
    """

    def __init__(
        self,
        conf: SlurmConfig,
        ledger: Ledger,
        runner: IntentRunner,
        limits: TimeLimits,
        ranking: Ranking,
        accounting: Accounting,
    ) -> None:
        self._ledger = ledger
        self._state = ledger.state
        self._runner = runner
        self._limits = limits
        self._ranking = ranking
        self._accounting = accounting
        self.reconfigure(conf)

    def reconfigure(self, conf: SlurmConfig) -> None:
        """Run with a re-read slurm.conf (its live part, see ctld.reconfig)."""
        self._conf = conf
        self._preempting = preemption.enabled(conf)

    def apply(self, decided: Plan, now: float) -> None:
        """Start the planned jobs (and array tasks) in one transaction, then launch them."""
        records: dict[int, Job] = {}  # what changed, by job id; array records as split
        new: list[Job] = []
        launches: list[Intent] = []
        last_id = self._state.last_job_id
        for start in decided.starts:
            job = records.get(start.job_id) or self._state.jobs.get(start.job_id)
            if job is None or job.state is not JobState.PENDING or job.held:
                continue
            if start.array_task_id is not None and arrayops.is_pending_record(job):
                if start.array_task_id not in arrayops.pending_tasks(job):
                    continue
                task, rest = arrayops.split_task(job, start.array_task_id, last_id + 1)
                if rest is not None:
                    records[job.job_id] = rest
                    last_id = task.job_id
                    running, intents = jobops.start(task, start.allocation, now)
                    new.append(running)
                    launches += intents
                    continue
                job = task
            records[job.job_id], intents = jobops.start(job, start.allocation, now)
            launches += intents
        started = [j for j in (*records.values(), *new) if j.state is JobState.RUNNING]
        if self._conf.prolog_slurmctld:  # a batch job's runs before its launch
            launches += [CtldProlog(j.job_id) for j in started if not j.batch]
        if self._conf.prolog and self._conf.prolog_at_alloc:
            launches += [
                AllocProlog(j.job_id, j.allocation.node_names) for j in started if j.allocation
            ]
        self._ledger.commit(records.values(), new)
        for job in started:
            self._limits.arm(job)
            log.info(
                "job=%d started on %s",
                job.job_id,
                ",".join(job.allocation.node_names if job.allocation else ()),
            )
        for job_id, reason in decided.reasons.items():
            job = self._state.jobs[job_id]
            # Reasons are recomputed each pass, never persisted alone.
            if job.state is JobState.PENDING and not job.held and job.reason != reason:
                self._state.put_job(replace(job, reason=reason, last_sched_eval=now))
        self._runner.run(launches)

    def preempt(self, snapshot: Snapshot, decided: Plan, now: float) -> None:
        """After a pass: begin the kills of the jobs that waiting jobs preempt."""
        if not self._preempting:
            return
        qos = self._accounting.book.qos
        victims, kills = preemption.victims(
            self._state, self._conf, qos, snapshot, decided, now, self._ranking.priority
        )
        self._ledger.commit(victims)
        for job in victims:
            log.info("job=%d preempted (%s)", job.job_id, kill_name(job.kill_event))
        self._runner.run(kills)

    def settle(self, now: float) -> None:
        """Before a pass: settle dependencies, end jobs whose deadline passed (one commit)."""
        changed = []
        for job in self._state.settling_jobs():
            new = job
            if job.dependency:
                dep = depops.resolve(parse_dependency(job.dependency), job, self._state, now)
                new = jobops.settled_dependency(job, dep, now)
            if new.state is JobState.PENDING and new.deadline and now > latest_start(new):
                new = jobops.missed_deadline(new, now)
            if new != job:
                changed.append(new)
        self._ledger.commit(changed)
