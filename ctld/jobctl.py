"""Job control: submissions, queries, cancels, holds, updates and jobs' ends.

Each public method is one request's work: validate, commit through the
ledger, then hand the intents the change produced to the runner and kick
the scheduler. It is also the runner's :class:`~ctld.runner.Outcomes`:
what came of a launch or a kill is committed here.

Imports ctld's pure job modules, ctld.ledger, ctld.runner, ctld.timelimits,
ctld.ranking, ctld.scheduling and minislurm.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import replace
from itertools import chain

from ctld import jobrequests as jobreq
from ctld import jobs as jobops
from ctld import requeue as requeueops
from ctld.accounting.manager import Accounting
from ctld.groupcommit import GroupCommit
from ctld.intents import Terminate
from ctld.ledger import Ledger
from ctld.partaccess import check_access, user_groups
from ctld.ranking import Ranking
from ctld.resv.rules import check_job as check_reservation
from ctld.runner import IntentRunner
from ctld.sched.snapshot import build_snapshot, scheduled_request
from ctld.sched.willrun import expected_start
from ctld.scheduling import SchedulerLoop
from ctld.store import repo
from ctld.timelimits import TimeLimits
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest, InvalidTransition, JobNotFound
from minislurm.model import Allocation, Job, JobScript, PendingJob, RunningJob, time_limit_end
from minislurm.requests import (
    CancelRequest,
    HoldAction,
    HoldRequest,
    JobQuery,
    JobRelease,
    JobStatus,
    JobUpdate,
    NodeStepStat,
    Submission,
)
from minislurm.states import ACTIVE_JOB_STATES, JobState
from minislurm.stepids import BATCH_STEP

log = logging.getLogger(__name__)

STEP_REPORT_GRACE = 1.0  # seconds a job's end waits for its running steps' ends to be reported
_UNTIL_ENDED = (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED)  # WaitJob until_ended


class JobControl:
    """The jobs' requests and ends.

    Args:
        conf: the configuration.
        ledger: the commits.
        runner: carries out launches, kills and signals.
        limits: running jobs' timers.
        ranking: priorities.
        scheduler: the scheduling loop (kicked after changes).
        accounting: limits, associations and privileges.
    """

    def __init__(
        self,
        conf: SlurmConfig,
        ledger: Ledger,
        runner: IntentRunner,
        limits: TimeLimits,
        ranking: Ranking,
        scheduler: SchedulerLoop,
        accounting: Accounting,
    ) -> None:
        self._conf = conf
        self._ledger = ledger
        self._state = ledger.state
        self._runner = runner
        self._limits = limits
        self._ranking = ranking
        self._scheduler = scheduler
        self._accounting = accounting
        self.default_partition: str | None = None
        self.reconfigure(conf)
        self._submits = GroupCommit(self._insert_new)
        self._launches = GroupCommit(self._mark_launched)

    def reconfigure(self, conf: SlurmConfig) -> None:
        """Run with a re-read slurm.conf (its live part, see ctld.reconfig)."""
        self._conf = conf
        default = conf.default_partition()
        self.default_partition = default.name if default else None

    # ------------------------------------------------------------ submissions and queries

    def expected_start(self, job: Job) -> float:
        """When the last full scheduling pass planned to start a pending job; 0 when it did not.

        Args:
            job: the job.

        Returns:
            The planned start (an array's, its earliest pending task's).
        """
        if job.state is not JobState.PENDING or job.held:
            return 0.0
        return self._scheduler.start_times.get(job.job_id, 0.0)

    async def submit(self, spec: Submission) -> int:
        """Validate and store a new job; it may start before this returns to the client.

        Submissions that arrive together are committed in one transaction
        (:mod:`ctld.groupcommit`); each is answered after that commit.

        Args:
            spec: the submission.

        Returns:
            The new job id, once the job is committed.

        Raises:
            InvalidRequest: rejected; no job id is used up.
        """
        job_id = self._state.last_job_id + 1
        job, script = self._build(spec, job_id, time.time(), self._submits.waiting())
        self._state.last_job_id = job_id  # taken: the next submission or array task gets the next
        await self._submits.commit((job, script))
        log.debug("job=%d submitted by %s to %s", job_id, job.user, job.partition)
        return job_id

    def _insert_new(self, new: list[tuple[Job, JobScript]]) -> None:
        """Commit a batch of new jobs, mirror them in memory, and ask for one pass."""
        with self._ledger.transaction() as s:
            repo.insert_jobs(s, new)
        for job, _ in new:
            self._ledger.tally.see(None, job)
            self._state.put_job(job)
        self._scheduler.kick()
        # Slurm gives an array no reason when it is submitted, only in its next cycle.
        arrays = [job.job_id for job, _ in new if job.array_job_id]
        if arrays:
            self._scheduler.keep_reasons(arrays, time.time())

    def _build(
        self,
        spec: Submission,
        job_id: int,
        now: float,
        uncommitted: Iterable[tuple[Job, JobScript]] = (),
    ) -> tuple[Job, JobScript]:
        conf = self._conf
        job, script = jobops.build_job(
            spec,
            job_id,
            now,
            self._state,
            self.default_partition,
            conf.gres_types,
            conf.max_array_size,
            conf.job_requeue,
            int(conf.scheduler_parameters.get("max_script_size") or jobops.MAX_SCRIPT_BYTES),
        )
        # Submissions accepted but not yet committed count against limits too.
        known = chain(self._state.jobs.values(), (j for j, _ in uncommitted))
        job = replace(self._accounting.admit(job, known), reservation=spec.reservation)
        check_reservation(job.reservation, job.user, job.account, self._state.reservations)
        part = self._state.partitions[job.partition]
        if part.allow_groups is not None:
            check_access(job, part, user_groups(job.user, job.gid))
        else:
            check_access(job, part, ())
        return job, script

    def test_submit(self, spec: Submission) -> tuple[Job, float, Allocation | None]:
        """sbatch --test-only: validate a job and say when it would start; store nothing.

        Args:
            spec: the submission.

        Returns:
            The job as it would be, its expected start (0 when never) and allocation.

        Raises:
            InvalidRequest: the job would be rejected.
        """
        now = time.time()
        job, _ = self._build(spec, self._state.last_job_id + 1, now)
        snapshot = build_snapshot(self._state, now, self._ranking.weights, self._accounting)
        running = tuple(
            RunningJob(j.job_id, j.allocation, time_limit_end(j))
            for j in self._state.active_jobs()
            if j.allocation is not None
        )
        request = scheduled_request(job.request, self._state)
        entry = PendingJob(job.job_id, job.partition, 0, now, request, job.time_limit)
        found = expected_start(entry, replace(snapshot, running=running), now)
        if found is None:
            return job, 0.0, None
        return job, max(found[0], job.begin_time), found[1]

    def find_jobs(self, request: JobQuery) -> list[Job]:
        """The jobs a query selects (see :func:`ctld.jobrequests.find`).

        Args:
            request: ids, array tasks, users, partitions, states and names to match.

        Returns:
            The matching jobs, by job id.

        Raises:
            JobNotFound: ids were given and none of them is known.
        """
        return jobreq.find(self._state, request)

    async def wait_job(self, job_id: int, timeout: float, until_ended: bool = False) -> Job:
        """Wait until a job is no longer PENDING (or has ended), or the timeout passes.

        Args:
            job_id: the job.
            timeout: seconds.
            until_ended: wait while it runs too (salloc, to hear that its job ended).

        Returns:
            The job as it then is (it may have changed otherwise: ask again).

        Raises:
            JobNotFound: no such job.
        """
        job = self._state.jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        waiting = _UNTIL_ENDED if until_ended else (JobState.PENDING,)
        if job.state in waiting:
            await self._ledger.job_change(job_id, timeout)
        return self._state.jobs[job_id]

    # ------------------------------------------------------------ changes users ask for

    def authorize(self, job: Job, uid: int) -> None:
        """Raise PermissionDenied unless ``uid`` may act on ``job``."""
        jobreq.authorize(job, uid, self._accounting.privileges)

    def owned_job(self, job_id: int, uid: int) -> Job:
        """The job ``uid`` asks to act on.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: ``uid`` may not act on it.
        """
        job = self._state.jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        self.authorize(job, uid)
        return job

    def _carry(self, out: jobreq.Outcome) -> list[tuple[int, str, str]]:
        """Commit a request's outcome, run its intents, and kick the scheduler."""
        saved, inserted = out.records()
        self._ledger.commit(saved, inserted)
        if out.steps:
            self._ledger.save_steps(out.steps)
        self._runner.run(out.intents)
        if out.changed:
            self._scheduler.kick()
        return out.results

    def cancel(self, request: CancelRequest) -> list[tuple[int, str, str]]:
        """scancel: cancel or signal jobs, array tasks or a step.

        Args:
            request: explicit ids or task references, or filters; an optional signal.

        Returns:
            ``(job_id, reference, error)`` per record considered; error "" on success.
        """
        return self._carry(
            jobreq.cancel(self._state, request, self._accounting.privileges, time.time())
        )

    def hold(self, request: HoldRequest) -> list[tuple[int, str, str]]:
        """scontrol hold, uhold, release, requeue and requeuehold.

        Args:
            request: job ids or task references, and the action.

        Returns:
            ``(job_id, reference, error)`` per record; error "" on success.
        """
        now = time.time()
        operators = self._accounting.privileges
        if request.action in (HoldAction.REQUEUE, HoldAction.REQUEUE_HOLD):
            delay = float(self._conf.requeue_delay)
            return self._carry(requeueops.request(self._state, request, operators, now, delay))
        out = jobreq.hold(self._state, request, operators, now)
        results = self._carry(out)
        if request.action == HoldAction.RELEASE:
            self._scheduler.keep_reasons(out.changed, now)
        return results

    def update_job(self, request: JobUpdate) -> None:
        """scontrol update JobId=...: change what the request names.

        Args:
            request: the job (or array task) and the fields to change.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the owner or an operator, or a change only operators may make.
            InvalidRequest: an invalid value.
            InvalidTransition: the change needs a pending job.
        """
        now = time.time()
        out = jobreq.update(
            self._state,
            request,
            self._accounting.privileges,
            now,
            lambda j: self._ranking.priority(j, now),
        )
        before = {i: self._state.jobs.get(i) for i in out.changed}
        for job_id, new in out.changed.items():
            old = before[job_id]
            if old is not None and (new.account, new.qos) != (old.account, old.qos):
                out.changed[job_id] = self._accounting.reassign(new)
        self._carry(out)
        for job_id, old in before.items():
            job = self._state.jobs[job_id]
            if old and job.state is JobState.RUNNING and job.time_limit != old.time_limit:
                self._limits.arm(job)

    async def release_job(self, request: JobRelease) -> None:
        """:meth:`complete_job`, once the job's running steps have reported their ends.

        srun releases its allocation as soon as its tasks have exited; the
        nodes' reports of the step's end follow a moment later (later still
        from a slurmd that restarted and adopted the step).

        Args:
            request: the job and the status it ends with.

        Raises:
            As :meth:`complete_job`.
        """
        job = self.owned_job(request.job_id, request.requester_uid)
        if not job.batch:
            await self._step_reports(job.job_id, "released")
        self.complete_job(request)

    def complete_job(self, request: JobRelease) -> None:
        """srun or salloc releases the allocation it created: the job ends.

        Args:
            request: the job and the status it ends with.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the job's owner.
            InvalidTransition: a batch job (it ends when its script does).
            InvalidRequest: an exit code or signal no process can end with.
        """
        job = self.owned_job(request.job_id, request.requester_uid)
        if not (0 <= request.exit_code <= 255 and 0 <= request.signal < 128):
            raise InvalidRequest(f"Invalid exit status {request.exit_code}:{request.signal}")
        if job.batch:
            raise InvalidTransition("Only an allocation without a batch script can be completed")
        if job.state is JobState.PENDING:
            self._ledger.commit([jobops.cancel_pending(job, time.time())])
        elif job.state is JobState.RUNNING and job.allocation is not None:
            done = jobops.ended(job, request.exit_code, request.signal, time.time())
            self._ledger.commit([done])
            self._runner.run([Terminate(job.job_id, job.allocation.node_names, "COMPLETED")])
        self._scheduler.kick()

    # ------------------------------------------------------------ ends the nodes report

    async def batch_ended(self, node: str, status: JobStatus) -> None:
        """:meth:`job_ended`, once the job's running steps have reported their ends.

        The batch script's last srun returns once its tasks have exited; each
        node of that step reports its end on its own, and another node's
        report may come after the batch host's report of the script's end.

        Args:
            node: the reporting node.
            status: exit code, signal and times.
        """
        job = self._state.jobs.get(status.job_id)
        if job is not None and job.state is JobState.RUNNING and job.restarts == status.restarts:
            await self._step_reports(job.job_id, "ended")
        self.job_ended(node, status)

    async def _step_reports(self, job_id: int, event: str) -> None:
        """Wait until a job's running steps have reported their ends, up to STEP_REPORT_GRACE.

        Ending the job first would cancel those steps and drop their exit
        codes; a lost node never reports, hence the limit.
        """
        steps = self._state.running_steps(job_id)
        if not steps:
            return
        ids = ",".join(str(step.step_id) for step in steps)
        log.info("job=%d %s: waiting for the end of step(s) %s", job_id, event, ids)
        deadline = time.monotonic() + STEP_REPORT_GRACE
        while self._state.running_steps(job_id):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await self._ledger.job_change(job_id, left)

    def job_ended(self, node: str, status: JobStatus) -> None:
        """A node reports how a job's batch script ended.

        Duplicate reports (the agent retries until acknowledged) are ignored.

        Args:
            node: the reporting node.
            status: exit code, signal and times.
        """
        job = self._state.jobs.get(status.job_id)
        if job is None or job.state not in ACTIVE_JOB_STATES:
            return
        if job.allocation is None or job.allocation.node_names[0] != node:
            log.warning("job=%d end reported by %s, not its batch host", job.job_id, node)
            return
        if status.restarts != job.restarts:
            log.warning("job=%d end of an earlier run reported by %s", job.job_id, node)
            return
        if status.usage:
            stat = NodeStepStat(node=node, tasks=status.usage)
            with self._ledger.transaction() as s:
                repo.save_usage(s, [((job.job_id, job.restarts, BATCH_STEP), stat)])
        if status.outcome == "NODE_FAIL":  # its stepd killed it: slurmd was gone too long
            self.lose([job], node, time.time())
            return
        if requeueops.requeueing(job):
            delay = float(self._conf.requeue_delay)
            self._ledger.commit([requeueops.requeued(job, time.time(), delay)])
            self._scheduler.kick()
            return
        done = jobops.ended(
            job,
            status.exit_code,
            status.signal,
            time.time(),
            launch_failed=status.outcome == "LAUNCH_FAILED",
            out_of_memory=status.outcome == "OUT_OF_MEMORY",
        )
        done = replace(done, max_rss=status.max_rss, total_cpu=status.total_cpu)
        self._ledger.commit([done])
        others = job.allocation.node_names[1:]
        if others:
            self._runner.run([Terminate(job.job_id, others, "COMPLETED")])
        self._scheduler.kick()

    def jobs_lost(self, node: str, now: float) -> None:
        """Every active job using ``node`` is lost: requeue or NODE_FAIL, kill the rest of it."""
        lost = [
            j
            for j in self._state.active_jobs()
            if j.allocation is not None and node in j.allocation.node_names
        ]
        self.lose(lost, node, now)

    def lose(self, lost: list[Job], node: str, now: float) -> None:
        """These jobs are lost with ``node``: requeue or NODE_FAIL, kill them on their others."""
        if not lost:
            return
        delay = float(self._conf.requeue_delay)
        changed = self._ledger.commit([requeueops.lost(job, now, delay) for job in lost])
        for job, new in zip(lost, changed, strict=True):
            log.warning("job=%d lost with node %s: %s", job.job_id, node, new.state.value)
            assert job.allocation is not None
            others = tuple(n for n in job.allocation.node_names if n != node)
            if others:
                self._runner.run([Terminate(job.job_id, others, "NODE_FAIL")])
        self._scheduler.kick()

    def run_failed(self, job_id: int, restarts: int, hold: bool, why: str) -> None:
        """A run's Prolog on a node, or its PrologSlurmctld, failed: the run ends as Slurm's.

        A batch job is requeued (held when ``hold``: a Prolog's failure unless
        ``nohold_on_prolog_fail``; a PrologSlurmctld's never); see
        :func:`ctld.requeue.failed_run` for the rest.

        Args:
            job_id: the job.
            restarts: the run that failed (an earlier run's news is stale).
            hold: requeue it held.
            why: for the log.
        """
        job = self._state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.restarts != restarts:
            return
        forced = "ForceRequeueOnFail" in self._conf.prolog_flags
        delay = float(self._conf.requeue_delay)
        new, intents = requeueops.failed_run(job, hold, forced, time.time(), delay)
        log.warning("job=%d %s: %s", job.job_id, why, new.state.value)
        self._ledger.commit([new])
        self._runner.run(intents)
        self._scheduler.kick()

    def end_idle_allocation(self, job_id: int, exit_code: int = 0, signal: int = 0) -> None:
        """An allocation without a batch script being killed ends once no step of it runs.

        No script reports its end: the kill is over when its steps are (at
        once for ``salloc --no-shell``), and srun or salloc may be gone.

        Args:
            job_id: the job.
            exit_code: the exit code of its last step.
            signal: the signal that ended its last step.
        """
        job = self._state.jobs.get(job_id)
        if job is None or job.batch or job.state is not JobState.COMPLETING:
            return
        if self._state.running_steps(job_id):
            return
        self._ledger.commit([jobops.ended(job, exit_code, signal, time.time())])
        self._ledger.notify(job_id)
        self._scheduler.kick()

    # ------------------------------------------------------------ what came of the intents

    async def launched(self, job: Job) -> None:
        """The batch host took the script: the run is launched (once).

        Launches acknowledged together (a pass starts many jobs) share one commit.
        """
        await self._launches.commit(job)

    def _mark_launched(self, jobs: list[Job]) -> None:
        marked = {}
        for job in jobs:
            current = self._state.jobs.get(job.job_id)
            if (
                current is not None
                and current.state in ACTIVE_JOB_STATES
                and current.restarts == job.restarts
                and not current.launched
            ):
                marked[job.job_id] = replace(current, launched=True)
        self._ledger.commit(marked.values())

    def launch_lost(self, job: Job, node: str) -> None:
        """The batch host never answered: the job is lost with it."""
        self.lose([job], node, time.time())

    def launch_failed(self, job: Job, node: str) -> None:
        """The batch host could not launch the script: the job ends LAUNCH_FAILED."""
        failed = JobStatus(
            job_id=job.job_id, exit_code=1, outcome="LAUNCH_FAILED", restarts=job.restarts
        )
        self.job_ended(node, failed)

    def terminated(self, job_id: int) -> None:
        """A kill was delivered: an allocation without a script may end now."""
        self.end_idle_allocation(job_id)
