"""The controller: owns the cluster state and every change to it.

Each public method is one RPC's work: validate, commit to the database,
update the in-memory state, then run the intents the change produced
(launch a script, kill a job on its nodes) and kick the scheduler. A change
is committed before the method returns, so an acknowledged request
survives a crash of the process.

Imports ctld's modules and minislurm; the gRPC layer is in ctld/servicer.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from itertools import chain

import grpc
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from ctld import arrays as arrayops
from ctld import depend as depops
from ctld import jobrequests as jobreq
from ctld import jobs as jobops
from ctld import nodes as nodeops
from ctld import preemption, steplist
from ctld import requeue as requeueops
from ctld import steps as stepops
from ctld.accounting import runs as acctruns
from ctld.accounting.manager import Accounting
from ctld.dispatch import AgentDispatcher, AgentUnreachable
from ctld.groupcommit import GroupCommit
from ctld.intents import Intent, Launch, Signal, SignalStep, Terminate
from ctld.partaccess import check_access, user_groups
from ctld.resv.manager import Reservations
from ctld.resv.rules import check_job as check_reservation
from ctld.sched.priority import Factors, PriorityWeights, job_factors
from ctld.sched.snapshot import build_snapshot, cluster_size, scheduled_request
from ctld.sched.willrun import expected_start
from ctld.scheduling import SchedulerLoop, latest_start
from ctld.settings import CtldSettings
from ctld.state import ClusterState, NodeUsage
from ctld.store import repo, runrepo
from ctld.timers import JobTimers
from minislurm.depend import parse_dependency
from minislurm.errors import InvalidRequest, InvalidTransition, JobNotFound, PermissionDenied
from minislurm.model import (
    Allocation,
    Job,
    JobScript,
    PendingJob,
    Plan,
    RunningJob,
    Snapshot,
    Step,
)
from minislurm.security.authgrpc import daemon_signer
from minislurm.states import ACTIVE_JOB_STATES, TERMINAL_JOB_STATES, JobState
from minislurm.stepids import INTERACTIVE_STEP
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb

log = logging.getLogger(__name__)

HOUSEKEEPING_SECONDS = 1.0
USAGE_CHARGE_SECONDS = 30.0  # how often running jobs' usage is charged (Slurm: PriorityCalcPeriod)
STEP_PATIENCE = 0.5  # seconds a step request waits for other steps to free resources
STEP_REPORT_GRACE = 1.0  # seconds a job's end waits for its running steps' ends to be reported
_UNTIL_ENDED = (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED)  # WaitJob until_ended


class Controller:
    """slurmctld's brain: state, persistence, scheduling, timers and dispatch."""

    def __init__(self, settings: CtldSettings, engine: Engine) -> None:
        self.settings = settings
        self.conf = settings.conf
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.state = ClusterState(
            nodeops.configured_nodes(self.conf),
            self.conf.partitions,
            self.conf.memory_consumable,
            self.conf.gres_types,
        )
        self.weights = PriorityWeights(
            age=self.conf.priority_weight_age,
            job_size=self.conf.priority_weight_job_size,
            partition=self.conf.priority_weight_partition,
            fairshare=self.conf.priority_weight_fairshare,
            qos=self.conf.priority_weight_qos,
            max_age=float(self.conf.priority_max_age * 60),
            favor_small=self.conf.priority_favor_small,
        )
        self.accounting = Accounting(self.conf, self._transaction, settings.operators)
        self.scheduler = SchedulerLoop(
            self.state,
            self.weights,
            self._apply_plan,
            self._settle_pending,
            settings.sched,
            self.accounting,
            self._preempt if preemption.enabled(self.conf) else None,
        )
        self.timers = JobTimers(self._time_limit_reached)
        self.warnings = JobTimers(self._warning_due)  # --signal=SIG@TIME
        self.agents = AgentDispatcher(
            daemon_signer(settings.conf.auth_type, settings.cluster_key),
            tls_files=settings.conf.tls_files(),
        )
        default = self.conf.default_partition()
        self._default_partition = default.name if default else None
        self.resvs = Reservations(
            self.state, self._transaction, self.accounting.privileges, self._default_partition or ""
        )
        self.registered: set[str] = set()  # agents seen since this controller started
        self._fencing: dict[str, set[int]] = {}  # node -> stale jobs it must kill before use
        self._tasks: set[asyncio.Task[None]] = set()
        self._job_waiters: dict[int, list[asyncio.Future[None]]] = {}
        self._housekeeping: asyncio.Task[None] | None = None
        self._submits = GroupCommit(self._insert_new)

    # ------------------------------------------------------------ lifecycle

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    def load(self) -> None:
        """Read the database into memory (on start and restart)."""
        now = time.time()
        with self._transaction() as s:
            for job in repo.load_jobs(s, now - self.conf.min_job_age):
                self.state.put_job(job)
            for step in repo.load_steps(s, list(self.state.jobs)):
                self.state.put_step(step)
            self.state.last_job_id = repo.max_job_id(s)
            for saved in repo.load_nodes(s):
                name = saved[0]
                if name in self.state.nodes:
                    self.state.put_node(nodeops.restored(self.state.nodes[name], *saved[1:]))
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
                self._arm(job)
            elif job.state is JobState.COMPLETING and job.allocation is not None:
                self._run([Terminate(job.job_id, job.allocation.node_names, job.kill_outcome)])
        self.scheduler.start()
        self._housekeeping = asyncio.get_running_loop().create_task(self._housekeep())

    async def stop(self) -> None:
        """Stop background work and close channels to agents."""
        await self.scheduler.stop()
        self.timers.clear()
        self.warnings.clear()
        tasks = [*self._tasks, *([self._housekeeping] if self._housekeeping else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.agents.close()

    def close(self) -> None:
        """Close the database."""
        self._engine.dispose()

    # ------------------------------------------------------------ commits and intents

    def _commit(self, changed: Iterable[Job], new: Iterable[Job] = ()) -> list[Job]:
        """Save changed jobs, and insert new records (array tasks split off), in one
        transaction, then mirror them in memory.

        A job that ended (or was requeued) takes its running steps with it
        (CANCELLED, as in Slurm); a requeued job's run goes to accounting's
        history with its steps.
        """
        new = list(new)
        changed = [*changed, *new]
        if not changed:
            return changed
        now = time.time()
        ended_steps = [
            stepops.cancelled(step, now)
            for job in changed
            if job.state in TERMINAL_JOB_STATES or job.state is JobState.PENDING
            for step in self.state.running_steps(job.job_id)
        ]
        runs = acctruns.ended_runs(self.state.jobs, self.state.steps, ended_steps, changed, now)
        inserted = {job.job_id for job in new}
        with self._transaction() as s:
            if new:
                repo.insert_records(s, new)
            for job in changed:
                if job.job_id not in inserted:
                    repo.save_job(s, job)
            for step in ended_steps:
                repo.save_step(s, step)
            for run in runs:
                runrepo.archive_run(s, run)
        for job in changed:
            self.state.put_job(job)
            if job.state not in (JobState.RUNNING, JobState.SUSPENDED):
                self.timers.disarm(job.job_id)
                self.warnings.disarm(job.job_id)
            self._notify(job.job_id)
        for step in ended_steps:
            self.state.put_step(step)
        for run in runs:  # the next run numbers its steps from 0 again
            self.state.steps.pop(run.job.job_id, None)
        return changed

    def _notify(self, job_id: int) -> None:
        for waiter in self._job_waiters.pop(job_id, []):
            if not waiter.done():
                waiter.set_result(None)

    def _run(self, intents: Iterable[Intent]) -> None:
        for intent in intents:
            task = asyncio.get_running_loop().create_task(self._carry_out(intent))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _address_of(self, node: str) -> str | None:
        record = self.state.nodes.get(node)
        if record is None or not record.port or node not in self.registered:
            return None
        return f"{record.addr}:{record.port}"

    async def _carry_out(self, intent: Intent) -> None:
        try:
            if isinstance(intent, Launch):
                await self._launch(intent.job_id)
            elif isinstance(intent, Terminate):
                await asyncio.gather(*(self._terminate_on(intent, node) for node in intent.nodes))
                self._end_idle_allocation(intent.job_id)
            elif isinstance(intent, SignalStep):
                await self._signal_step(intent)
            else:
                await asyncio.gather(*(self._signal_on(intent, node) for node in intent.nodes))
        except Exception:
            log.exception("intent %s failed", intent)

    async def _terminate_on(self, intent: Terminate, node: str) -> None:
        request = pb.TerminateJobRequest(
            job_id=intent.job_id,
            outcome=intent.outcome,
            kill_wait=self.conf.kill_wait,
            time=int(time.time()),
        )
        try:
            await self.agents.terminate(lambda: self._address_of(node), request)
        except AgentUnreachable:
            log.warning("job=%d node=%s unreachable for terminate", intent.job_id, node)

    async def _signal_on(self, intent: Signal, node: str) -> None:
        request = pb.SignalJobRequest(
            job_id=intent.job_id,
            signal=intent.signal,
            batch_only=intent.batch_only,
            full=intent.full,
        )
        await self.agents.signal(lambda: self._address_of(node), request)

    async def _signal_step(self, intent: SignalStep) -> None:
        job = self.state.jobs.get(intent.job_id)
        step = self.state.steps.get(intent.job_id, {}).get(intent.step_id)
        if job is None or step is None:
            return
        now = time.time()
        signed = stepops.credential(
            stepops.step_info(step, self.addresses()), job, self.settings.cluster_key, now
        )
        request = pb.SignalTasksRequest(
            job_id=intent.job_id, step_id=intent.step_id, signal=intent.signal, credential=signed
        )
        await asyncio.gather(*(self._signal_tasks_on(request, node) for node in intent.nodes))

    async def _signal_tasks_on(self, request: pb.SignalTasksRequest, node: str) -> None:
        await self.agents.signal_tasks(lambda: self._address_of(node), request)

    async def _launch(self, job_id: int) -> None:
        job = self.state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        with self._transaction() as s:
            script = repo.load_script(s, job.array_job_id or job_id)
        request = jobops.launch_request(
            job,
            script,
            self.conf.cluster_name,
            self.settings.controller_address,
            self.settings.conf_path,
            self.conf.kill_wait,
        )
        batch_host = job.allocation.node_names[0]

        def this_run() -> Job | None:
            """The job, while the run being launched is still its current one."""
            current = self.state.jobs.get(job_id)
            if current is None or (current.state, current.restarts) != (job.state, job.restarts):
                return None
            return current

        def address() -> str | None:
            # A launch retried while its agent was away must not start a run
            # that has since been requeued or ended.
            if this_run() is None:
                raise AgentUnreachable(f"job={job_id} run {job.restarts} is over")
            return self._address_of(batch_host)

        try:
            await self.agents.launch_batch(address, request, nodeops.launch_patience(self.conf))
        except AgentUnreachable as err:
            current = this_run()
            if current is None:
                return  # its node was declared DOWN meanwhile: the job was requeued or ended
            # Its node still looks alive (SlurmdTimeout=0, or only slurmd's port is cut off):
            # the job is lost with it all the same.
            log.warning("job=%d launch on %s failed: %s", job_id, batch_host, err)
            self._lose([current], batch_host, time.time())
            return
        except Exception as err:
            log.warning("job=%d launch on %s failed: %s", job_id, batch_host, err)
            failed = pb.JobStatus(
                job_id=job_id, exit_code=1, outcome="LAUNCH_FAILED", restarts=job.restarts
            )
            self.job_ended(batch_host, failed)
            return
        current = self.state.jobs.get(job_id)
        if (
            current is not None
            and current.state in ACTIVE_JOB_STATES
            and current.restarts == job.restarts
            and not current.launched
        ):
            self._commit([replace(current, launched=True)])

    # ------------------------------------------------------------ scheduling

    def _apply_plan(self, decided: Plan, now: float) -> None:
        """Start the planned jobs (and array tasks) in one transaction, then launch them."""
        records: dict[int, Job] = {}  # what changed, by job id; array records as split
        new: list[Job] = []
        last_id = self.state.last_job_id
        for start in decided.starts:
            job = records.get(start.job_id) or self.state.jobs.get(start.job_id)
            if job is None or job.state is not JobState.PENDING or job.held:
                continue
            if start.array_task_id is not None and arrayops.is_pending_record(job):
                if start.array_task_id not in arrayops.pending_tasks(job):
                    continue
                task, rest = arrayops.split_task(job, start.array_task_id, last_id + 1)
                if rest is not None:
                    records[job.job_id] = rest
                    last_id = task.job_id
                    new.append(jobops.start(task, start.allocation, now))
                    continue
                job = task
            records[job.job_id] = jobops.start(job, start.allocation, now)
        started = [j for j in (*records.values(), *new) if j.state is JobState.RUNNING]
        self._commit(records.values(), new)
        for job in started:
            self._arm(job)
            log.info(
                "job=%d started on %s",
                job.job_id,
                ",".join(job.allocation.node_names if job.allocation else ()),
            )
        for job_id, reason in decided.reasons.items():
            job = self.state.jobs[job_id]
            # Reasons are recomputed each pass, never persisted alone.
            if job.state is JobState.PENDING and not job.held and job.reason != reason:
                self.state.put_job(replace(job, reason=reason, last_sched_eval=now))
        self._run(Launch(j.job_id) for j in started if j.batch)

    def _preempt(self, snapshot: Snapshot, decided: Plan, now: float) -> None:
        """After a pass: begin the kills of the jobs that waiting jobs preempt."""
        qos = self.accounting.book.qos
        victims = preemption.victims(
            self.state, self.conf, qos, snapshot, decided, now, self.priority
        )
        self._commit(victims)
        for job in victims:
            log.info("job=%d preempted (%s)", job.job_id, job.kill_outcome)
        nodes = [(j.job_id, j.allocation.node_names) for j in victims if j.allocation]
        self._run(Terminate(job_id, names, jobops.KILL_PREEMPTED) for job_id, names in nodes)

    def _settle_pending(self, now: float) -> None:
        """Before a pass: settle dependencies, end jobs whose deadline passed (one commit)."""
        changed = []
        for job in self.state.settling_jobs():
            new = job
            if job.dependency:
                dep = depops.resolve(parse_dependency(job.dependency), job, self.state, now)
                new = jobops.settled_dependency(job, dep, now)
            if new.state is JobState.PENDING and new.deadline and now > latest_start(new):
                new = jobops.missed_deadline(new, now)
            if new != job:
                changed.append(new)
        self._commit(changed)

    def _arm(self, job: Job) -> None:
        """Set a running job's timers: its time limit, and its warning signal."""
        self.timers.arm(job.job_id, jobops.time_limit_end(job))
        self.warnings.arm(job.job_id, jobops.warning_time(job))

    def _warning_due(self, job_id: int) -> None:
        """``--signal``: warn the steps (or with ``B:`` the batch shell) once, as Slurm."""
        job = self.state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        if job.warn_sent:
            return
        self._commit([replace(job, warn_sent=True)])
        log.info("job=%d warning signal %d sent", job_id, job.warn_signal)
        signal = Signal(job_id, job.allocation.node_names, job.warn_signal, job.warn_batch, False)
        self._run([signal])

    def _time_limit_reached(self, job_id: int) -> None:
        job = self.state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        self._commit([jobops.begin_kill(job, "TIMEOUT", time.time())])
        self._run([Terminate(job_id, job.allocation.node_names, "TIMEOUT")])

    async def _housekeep(self) -> None:
        """Periodic chores: node liveness, forgetting old jobs, re-sending kills."""
        while True:
            await asyncio.sleep(HOUSEKEEPING_SECONDS)
            try:
                now = time.time()
                self._mark_unresponsive(now)
                self._fail_silent_nodes(now)
                if now - self.accounting.usage_time >= USAGE_CHARGE_SECONDS:
                    self.charge_usage(now)
                if self.resvs.expire(now):
                    self.scheduler.kick()
                self.state.forget_finished(now - self.conf.min_job_age)
            except Exception:
                log.exception("housekeeping failed")

    def _mark_unresponsive(self, now: float) -> None:
        timeout = nodeops.not_responding_after(self.conf)
        for node in list(self.state.nodes.values()):
            updated = nodeops.check_responding(node, now, timeout)
            if updated is not node:
                self.state.put_node(updated)

    def _fail_silent_nodes(self, now: float) -> None:
        """Nodes silent for SlurmdTimeout go DOWN; their jobs are requeued or end NODE_FAIL."""
        for node in list(self.state.nodes.values()):
            down = nodeops.check_down(node, now, self.conf.slurmd_timeout)
            if down is node:
                continue
            with self._transaction() as s:
                repo.save_node(s, *nodeops.persisted_fields(down), down.reason_time)
            self.state.put_node(down)
            # Should it answer again, it must register: its stale jobs are killed first.
            self.registered.discard(node.name)
            self._jobs_lost(node.name, now)

    def _jobs_lost(self, node: str, now: float) -> None:
        """Every active job using ``node`` is lost: requeue or NODE_FAIL, kill the rest of it."""
        lost = [
            j
            for j in self.state.active_jobs()
            if j.allocation is not None and node in j.allocation.node_names
        ]
        self._lose(lost, node, now)

    def _lose(self, lost: list[Job], node: str, now: float) -> None:
        if not lost:
            return
        delay = float(self.conf.requeue_delay)
        changed = self._commit([requeueops.lost(job, now, delay) for job in lost])
        for job, new in zip(lost, changed, strict=True):
            log.warning("job=%d lost with node %s: %s", job.job_id, node, new.state.value)
            assert job.allocation is not None
            others = tuple(n for n in job.allocation.node_names if n != node)
            if others:
                self._run([Terminate(job.job_id, others, "NODE_FAIL")])
        self.scheduler.kick()

    # ------------------------------------------------------------ job requests

    def expected_start(self, job: Job) -> float:
        """When the last full scheduling pass planned to start a pending job; 0 when it did not.

        Args:
            job: the job.

        Returns:
            The planned start (an array's, its earliest pending task's).
        """
        if job.state is not JobState.PENDING or job.held:
            return 0.0
        return self.scheduler.start_times.get(job.job_id, 0.0)

    def priority(self, job: Job, now: float) -> int:
        """A job's priority as shown (0 when held, as in Slurm).

        Args:
            job: the job.
            now: the time.

        Returns:
            The priority.
        """
        if job.held:
            return 0
        if job.priority_set:
            return job.priority_set
        when = now if job.state is JobState.PENDING else job.submit_time
        return self.factors(job, when).priority(self.weights)

    def factors(self, job: Job, now: float) -> Factors:
        """A job's priority factors now (what sprio shows).

        Args:
            job: the job.
            now: the time.

        Returns:
            Its factors.
        """
        part = self.state.partitions.get(job.partition)
        job_factor = part.priority_job_factor if part else 1
        size = cluster_size(self.state)
        fairshare = self.accounting.fairshare(job)
        qos = self.accounting.qos_factor(job)
        return job_factors(job, now, self.weights, size, job_factor, fairshare, qos)

    def charge_usage(self, now: float) -> None:
        """Charge the allocated TRES-seconds of jobs to their associations (fair share).

        Args:
            now: the time.
        """
        since = self.accounting.usage_time
        jobs = [
            j
            for j in self.state.jobs.values()
            if j.allocation and (not j.end_time or j.end_time > since)
        ]
        self.accounting.charge(now, jobs)

    async def submit(self, spec: pb.JobSpec) -> int:
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
        job_id = self.state.last_job_id + 1
        job, script = self._build(spec, job_id, time.time(), self._submits.waiting())
        self.state.last_job_id = job_id  # taken: the next submission or array task gets the next
        await self._submits.commit((job, script))
        log.debug("job=%d submitted by %s to %s", job_id, job.user, job.partition)
        return job_id

    def _insert_new(self, new: list[tuple[Job, JobScript]]) -> None:
        """Commit a batch of new jobs, mirror them in memory, and ask for one pass."""
        with self._transaction() as s:
            repo.insert_jobs(s, new)
        for job, _ in new:
            self.state.put_job(job)
        self.scheduler.kick()
        # Slurm gives an array no reason when it is submitted, only in its next cycle.
        arrays = [job.job_id for job, _ in new if job.array_job_id]
        if arrays:
            self.scheduler.keep_reasons(arrays, time.time())

    def _build(
        self,
        spec: pb.JobSpec,
        job_id: int,
        now: float,
        uncommitted: Iterable[tuple[Job, JobScript]] = (),
    ) -> tuple[Job, JobScript]:
        job, script = jobops.build_job(
            spec,
            job_id,
            now,
            self.state,
            self._default_partition,
            self.conf.gres_types,
            self.conf.max_array_size,
            self.conf.job_requeue,
            int(self.conf.scheduler_parameters.get("max_script_size") or jobops.MAX_SCRIPT_BYTES),
        )
        # Submissions accepted but not yet committed count against limits too.
        known = chain(self.state.jobs.values(), (j for j, _ in uncommitted))
        job = replace(self.accounting.admit(job, known), reservation=spec.reservation)
        check_reservation(job.reservation, job.user, job.account, self.state.reservations)
        part = self.state.partitions[job.partition]
        if part.allow_groups is not None:
            check_access(job, part, user_groups(job.user, job.gid))
        else:
            check_access(job, part, ())
        return job, script

    def test_submit(self, spec: pb.JobSpec) -> tuple[Job, float, Allocation | None]:
        """sbatch --test-only: validate a job and say when it would start; store nothing.

        Args:
            spec: the submission.

        Returns:
            The job as it would be, its expected start (0 when never) and allocation.

        Raises:
            InvalidRequest: the job would be rejected.
        """
        now = time.time()
        job, _ = self._build(spec, self.state.last_job_id + 1, now)
        snapshot = build_snapshot(self.state, now, self.weights, self.accounting)
        running = tuple(
            RunningJob(j.job_id, j.allocation, jobops.time_limit_end(j))
            for j in self.state.active_jobs()
            if j.allocation is not None
        )
        request = scheduled_request(job.request, self.state)
        entry = PendingJob(job.job_id, job.partition, 0, now, request, job.time_limit)
        found = expected_start(entry, replace(snapshot, running=running), now)
        if found is None:
            return job, 0.0, None
        return job, max(found[0], job.begin_time), found[1]

    def find_jobs(self, request: pb.GetJobsRequest) -> list[Job]:
        """The jobs a query selects (see :func:`ctld.jobrequests.find`).

        Args:
            request: ids, array tasks, users, partitions, states and names to match.

        Returns:
            The matching jobs, by job id.

        Raises:
            JobNotFound: ids were given and none of them is known.
        """
        return jobreq.find(self.state, request)

    def _authorize(self, job: Job, uid: int) -> None:
        jobreq.authorize(job, uid, self.accounting.privileges)

    def _carry(self, out: jobreq.Outcome) -> list[tuple[int, str, str]]:
        """Commit a request's outcome, run its intents, and kick the scheduler."""
        saved, inserted = out.records()
        self._commit(saved, inserted)
        if out.steps:
            with self._transaction() as s:
                for step in out.steps:
                    repo.save_step(s, step)
            for step in out.steps:
                self.state.put_step(step)
        self._run(out.intents)
        if out.changed:
            self.scheduler.kick()
        return out.results

    def cancel(self, request: pb.CancelJobsRequest) -> list[tuple[int, str, str]]:
        """scancel: cancel or signal jobs, array tasks or a step.

        Args:
            request: explicit ids or task references, or filters; an optional signal.

        Returns:
            ``(job_id, reference, error)`` per record considered; error "" on success.
        """
        return self._carry(
            jobreq.cancel(self.state, request, self.accounting.privileges, time.time())
        )

    def hold(self, request: pb.HoldJobsRequest) -> list[tuple[int, str, str]]:
        """scontrol hold, uhold, release, requeue and requeuehold.

        Args:
            request: job ids or task references, and the action.

        Returns:
            ``(job_id, reference, error)`` per record; error "" on success.
        """
        now = time.time()
        operators = self.accounting.privileges
        if request.action in (pb.HoldJobsRequest.REQUEUE, pb.HoldJobsRequest.REQUEUE_HOLD):
            delay = float(self.conf.requeue_delay)
            return self._carry(requeueops.request(self.state, request, operators, now, delay))
        out = jobreq.hold(self.state, request, operators, now)
        results = self._carry(out)
        if request.action == pb.HoldJobsRequest.RELEASE:
            self.scheduler.keep_reasons(out.changed, now)
        return results

    def update_job(self, request: pb.UpdateJobRequest) -> None:
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
            self.state, request, self.accounting.privileges, now, lambda j: self.priority(j, now)
        )
        before = {i: self.state.jobs.get(i) for i in out.changed}
        for job_id, new in out.changed.items():
            old = before[job_id]
            if old is not None and (new.account, new.qos) != (old.account, old.qos):
                out.changed[job_id] = self.accounting.reassign(new)
        self._carry(out)
        for job_id, old in before.items():
            job = self.state.jobs[job_id]
            if old and job.state is JobState.RUNNING and job.time_limit != old.time_limit:
                self._arm(job)

    # ------------------------------------------------------------ node agents

    def job_ended(self, node: str, status: pb.JobStatus) -> None:
        """A node reports how a job's batch script ended.

        Duplicate reports (the agent retries until acknowledged) are ignored.

        Args:
            node: the reporting node.
            status: exit code, signal and times.
        """
        job = self.state.jobs.get(status.job_id)
        if job is None or job.state not in ACTIVE_JOB_STATES:
            return
        if job.allocation is None or job.allocation.node_names[0] != node:
            log.warning("job=%d end reported by %s, not its batch host", job.job_id, node)
            return
        if status.restarts != job.restarts:
            log.warning("job=%d end of an earlier run reported by %s", job.job_id, node)
            return
        if status.outcome == "NODE_FAIL":  # its stepd killed it: slurmd was gone too long
            self._lose([job], node, time.time())
            return
        if requeueops.requeueing(job):
            self._commit([requeueops.requeued(job, time.time(), float(self.conf.requeue_delay))])
            self.scheduler.kick()
            return
        done = jobops.ended(
            job,
            status.exit_code,
            status.signal,
            time.time(),
            launch_failed=status.outcome == "LAUNCH_FAILED",
        )
        done = replace(done, max_rss=status.max_rss, total_cpu=status.total_cpu)
        self._commit([done])
        others = job.allocation.node_names[1:]
        if others:
            self._run([Terminate(job.job_id, others, "COMPLETED")])
        self.scheduler.kick()

    def register(self, request: pb.RegisterNodeRequest) -> pb.RegisterNodeReply:
        """A node agent (re)starts: record its resources and reconcile its jobs.

        Args:
            request: what the agent found on its node, and the jobs it knows.

        Returns:
            Jobs it must kill, and the heartbeat interval.

        Raises:
            InvalidRequest: the node is not in slurm.conf.
        """
        node = self.state.nodes.get(request.name)
        if node is None:
            raise InvalidRequest(f"Node {request.name} is not in the configuration")
        now = time.time()
        updated = nodeops.registered(node, request, now, self.conf)
        if nodeops.persisted_fields(updated) != nodeops.persisted_fields(node):
            with self._transaction() as s:
                repo.save_node(s, *nodeops.persisted_fields(updated), updated.reason_time)
        self.state.put_node(updated)
        self.registered.add(request.name)
        kill = self._reconcile(request)
        if kill:
            # Not used again until its agent reports those jobs gone.
            self._fencing[request.name] = set(kill)
            self.state.put_node(nodeops.fenced(updated))
        else:  # what an earlier registration found stale is gone; ids may run here again
            self._fencing.pop(request.name, None)
        self.scheduler.kick()
        return pb.RegisterNodeReply(
            kill_job_ids=kill, heartbeat_interval=nodeops.heartbeat_interval(self.conf)
        )

    def _reconcile(self, request: pb.RegisterNodeRequest) -> list[int]:
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
                self.job_ended(node, agent_job.status)
        kill: list[int] = []
        intents: list[Intent] = []
        for job_id, agent_job in reported.items():
            job = self.state.jobs.get(job_id)
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
                intents.append(Terminate(job_id, (node,), job.kill_outcome))
        for job in list(self.state.active_jobs()):
            if job.allocation is None or job.allocation.node_names[0] != node:
                continue
            if job.job_id in reported or not job.batch:
                continue
            if job.state is JobState.COMPLETING:
                status = pb.JobStatus(job_id=job.job_id, signal=9, restarts=job.restarts)
                self.job_ended(node, status)
            elif not job.launched:
                intents.append(Launch(job.job_id))
            else:
                log.warning("job=%d lost by node %s", job.job_id, node)
                self._lose([job], node, time.time())
        self._run(intents)
        return kill

    def heartbeat(self, request: pb.HeartbeatRequest) -> pb.HeartbeatReply:
        """A node agent is alive.

        Args:
            request: its load, free memory and running jobs.

        Returns:
            Whether it must register again (this controller has not seen it).
        """
        node = self.state.nodes.get(request.name)
        if node is None or request.name not in self.registered:
            return pb.HeartbeatReply(reregister=True)
        updated = nodeops.heartbeat(node, request, time.time())
        stale = self._fencing.get(request.name, set()) & set(request.running_job_ids)
        if stale:
            updated = nodeops.fenced(updated)
        elif self._fencing.pop(request.name, None) is not None:
            self.scheduler.kick()
        self.state.put_node(updated)
        return pb.HeartbeatReply()

    def update_node(self, request: pb.UpdateNodeRequest) -> None:
        """scontrol update NodeName=... State=DRAIN|RESUME|DOWN Reason=...

        Args:
            request: node names (a hostlist), the new state and reason.

        Raises:
            PermissionDenied: not an administrator (as in Slurm, an Operator may not).
            InvalidRequest: unknown node or state, or a missing reason.
        """
        if not self.accounting.privileges.is_admin(request.requester_uid):
            raise PermissionDenied(jobops.USER_ID_MISSING)
        now = time.time()
        updated = nodeops.admin_update(self.state, request, now)
        with self._transaction() as s:
            for node in updated:
                repo.save_node(s, *nodeops.persisted_fields(node), node.reason_time)
        for node in updated:
            self.state.put_node(node)
        self.scheduler.kick()

    def node_usage(self) -> dict[str, NodeUsage]:
        """What jobs hold on each node (for ``scontrol show node`` and ``sinfo``).

        Returns:
            Usage per node name.
        """
        return self.state.usage()

    # ------------------------------------------------------------ steps and allocations

    def _owned_job(self, job_id: int, uid: int) -> Job:
        job = self.state.jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        self._authorize(job, uid)
        return job

    def create_step(self, spec: pb.StepSpec) -> pb.CreateStepReply:
        """srun inside an allocation: place a step and sign its credential.

        Args:
            spec: the step's request.

        Returns:
            The step with its layout and node addresses, the credential, the job.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the job's owner.
            InvalidTransition: the job is not running.
            InvalidRequest: the step can never fit in the allocation, or the
                job has its interactive step already.
            StepBusy: it must wait for other steps to end.
        """
        job = self._owned_job(spec.job_id, spec.requester_uid)
        if job.state is JobState.PENDING:
            raise InvalidTransition(jobops.NOT_NOW)
        if job.state is not JobState.RUNNING or job.allocation is None:
            raise InvalidTransition(jobops.ALREADY_DONE)
        now = time.time()
        step_id = self.state.next_step_id(job.job_id)
        if spec.interactive:
            step_id = INTERACTIVE_STEP
            if step_id in self.state.steps.get(job.job_id, {}):
                raise InvalidRequest(stepops.DUPLICATE)
            spec = stepops.interactive_spec(spec, job)
        stepops.check_gpu_type(spec, [self.state.nodes[n] for n in job.allocation.node_names])
        step = stepops.place_step(spec, job, self.state.running_steps(job.job_id), step_id, now)
        with self._transaction() as s:
            repo.save_step(s, step, new=True)
        self.state.put_step(step)
        info = stepops.step_info(step, self.addresses())
        return pb.CreateStepReply(
            step=info,
            credential=stepops.credential(info, job, self.settings.cluster_key, now),
            job=convert.job_info(job, 0, now),
        )

    def addresses(self) -> dict[str, tuple[str, int]]:
        """Every node's agent address and port."""
        return {n.name: (n.addr or n.name, n.port) for n in self.state.nodes.values()}

    def step_complete(self, request: pb.StepCompleteRequest) -> None:
        """A node reports how a step's tasks ended there (repeats are ignored).

        Args:
            request: the node, the step and each task's exit.
        """
        step = self.state.steps.get(request.job_id, {}).get(request.step_id)
        if step is None or step.state is not JobState.RUNNING or request.node in step.reported:
            return
        exits = [(t.exit_code, t.signal) for t in request.tasks]
        updated = stepops.node_reported(step, request.node, exits, time.time())
        updated = replace(
            updated,
            max_rss=max(updated.max_rss, request.max_rss),
            total_cpu=updated.total_cpu + request.total_cpu,
        )
        with self._transaction() as s:
            repo.save_step(s, updated)
        self.state.put_step(updated)
        if updated.state is not JobState.RUNNING:
            self._notify(updated.job_id)  # a step waiting for its resources may now fit
            self._end_idle_allocation(updated.job_id, updated.exit_code, updated.signal)

    def _end_idle_allocation(self, job_id: int, exit_code: int = 0, signal: int = 0) -> None:
        """An allocation without a batch script being killed ends once no step of it runs.

        No script reports its end: the kill is over when its steps are (at
        once for ``salloc --no-shell``), and srun or salloc may be gone.

        Args:
            job_id: the job.
            exit_code: the exit code of its last step.
            signal: the signal that ended its last step.
        """
        job = self.state.jobs.get(job_id)
        if job is None or job.batch or job.state is not JobState.COMPLETING:
            return
        if self.state.running_steps(job_id):
            return
        self._commit([jobops.ended(job, exit_code, signal, time.time())])
        self._notify(job_id)
        self.scheduler.kick()

    async def create_step_patiently(self, spec: pb.StepSpec) -> pb.CreateStepReply:
        """:meth:`create_step`, waiting up to STEP_PATIENCE for busy resources to free.

        The steps of ``for i in 1 2 3; do srun ...; done`` follow each other
        closer than a node's report of the previous step's end: waiting a
        moment here spares srun a "step creation temporarily disabled" round.

        Args:
            spec: the step's request.

        Returns:
            As :meth:`create_step`.

        Raises:
            StepBusy: still busy after the wait; the rest as :meth:`create_step`.
        """
        deadline = time.monotonic() + STEP_PATIENCE
        while True:
            try:
                return self.create_step(spec)
            except stepops.StepBusy:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
            await self._job_change(spec.job_id, left)

    def steps_of(self, job_id: int) -> list[Step]:
        """The steps the controller remembers, of one job or of all.

        Args:
            job_id: a job, or 0 for every job.

        Returns:
            The steps, by job and step id.
        """
        jobs = [job_id] if job_id else sorted(self.state.steps)
        return [step for j in jobs for _, step in sorted(self.state.steps.get(j, {}).items())]

    def step_list(self, job_id: int) -> list[pb.StepInfo]:
        """Slurm's list of running steps (squeue -s, scontrol show step, sstat).

        Args:
            job_id: one job (an array's id: all its tasks), or 0 for every job.

        Returns:
            The running steps, batch steps included, per job in Slurm's order.

        Raises:
            JobNotFound: ``job_id`` names no job the controller knows.
        """
        return steplist.running_steps(self.state, job_id)

    async def step_stats(self, request: pb.StepStatRequest) -> pb.StepStatReply:
        """sstat: a running step's live usage, from the agents of its nodes.

        A node whose agent does not answer in time is left out, as Slurm's
        sstat reports the nodes that answered.

        Args:
            request: the step and who asks.

        Returns:
            Each answering node's figures, in the step's node order.

        Raises:
            JobNotFound: no such job, or the step is not running.
            PermissionDenied: not the job's owner, root or an operator (``Invalid user id``).
        """
        job, nodes = steplist.stat_nodes(self.state, request.job_id, request.step_id)
        try:
            self._authorize(job, request.requester_uid)
        except PermissionDenied:
            raise PermissionDenied(jobreq.INVALID_USER) from None
        asked = pb.StepStatRequest(job_id=request.job_id, step_id=request.step_id)
        replies = await asyncio.gather(*(self._stat_on(node, asked) for node in nodes))
        return pb.StepStatReply(nodes=[n for reply in replies for n in reply])

    async def _stat_on(self, node: str, request: pb.StepStatRequest) -> list[pb.NodeStepStat]:
        try:
            reply = await self.agents.step_stat(lambda: self._address_of(node), request)
        except (AgentUnreachable, grpc.aio.AioRpcError) as err:
            job, step = request.job_id, request.step_id
            log.warning("step=%d.%d node=%s no usage: %s", job, step, node, err)
            return []
        return list(reply.nodes)

    async def release_job(self, request: pb.CompleteJobRequest) -> None:
        """:meth:`complete_job`, once the job's running steps have reported their ends.

        srun releases its allocation as soon as its tasks have exited; the
        nodes' reports of the step's end follow a moment later (later still
        from a slurmd that restarted and adopted the step).

        Args:
            request: the job and the status it ends with.

        Raises:
            As :meth:`complete_job`.
        """
        job = self._owned_job(request.job_id, request.requester_uid)
        if not job.batch:
            await self._step_reports(job.job_id, "released")
        self.complete_job(request)

    async def batch_ended(self, node: str, status: pb.JobStatus) -> None:
        """:meth:`job_ended`, once the job's running steps have reported their ends.

        The batch script's last srun returns once its tasks have exited; each
        node of that step reports its end on its own, and another node's
        report may come after the batch host's report of the script's end.

        Args:
            node: the reporting node.
            status: exit code, signal and times.
        """
        job = self.state.jobs.get(status.job_id)
        if job is not None and job.state is JobState.RUNNING and job.restarts == status.restarts:
            await self._step_reports(job.job_id, "ended")
        self.job_ended(node, status)

    async def _step_reports(self, job_id: int, event: str) -> None:
        """Wait until a job's running steps have reported their ends, up to STEP_REPORT_GRACE.

        Ending the job first would cancel those steps and drop their exit
        codes; a lost node never reports, hence the limit.
        """
        steps = self.state.running_steps(job_id)
        if not steps:
            return
        ids = ",".join(str(step.step_id) for step in steps)
        log.info("job=%d %s: waiting for the end of step(s) %s", job_id, event, ids)
        deadline = time.monotonic() + STEP_REPORT_GRACE
        while self.state.running_steps(job_id):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await self._job_change(job_id, left)

    def complete_job(self, request: pb.CompleteJobRequest) -> None:
        """srun or salloc releases the allocation it created: the job ends.

        Args:
            request: the job and the status it ends with.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the job's owner.
            InvalidTransition: a batch job (it ends when its script does).
            InvalidRequest: an exit code or signal no process can end with.
        """
        job = self._owned_job(request.job_id, request.requester_uid)
        if not (0 <= request.exit_code <= 255 and 0 <= request.signal < 128):
            raise InvalidRequest(f"Invalid exit status {request.exit_code}:{request.signal}")
        if job.batch:
            raise InvalidTransition("Only an allocation without a batch script can be completed")
        if job.state is JobState.PENDING:
            self._commit([jobops.cancel_pending(job, time.time())])
        elif job.state is JobState.RUNNING and job.allocation is not None:
            done = jobops.ended(job, request.exit_code, request.signal, time.time())
            self._commit([done])
            self._run([Terminate(job.job_id, job.allocation.node_names, "COMPLETED")])
        self.scheduler.kick()

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
        job = self.state.jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        waiting = _UNTIL_ENDED if until_ended else (JobState.PENDING,)
        if job.state in waiting:
            await self._job_change(job_id, timeout)
        return self.state.jobs[job_id]

    async def _job_change(self, job_id: int, timeout: float) -> None:
        """Wait until a job changes or one of its steps ends, or the timeout passes.

        Args:
            job_id: the job.
            timeout: seconds.
        """
        waiter = asyncio.get_running_loop().create_future()
        self._job_waiters.setdefault(job_id, []).append(waiter)
        with suppress(TimeoutError):
            await asyncio.wait_for(waiter, timeout)
