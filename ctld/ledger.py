"""The controller's commits: one transaction, then the same records in memory.

Every change of a job or step goes through :class:`Ledger`, so the
database and :class:`~ctld.state.ClusterState` never disagree, and
whoever waits for a job to change hears of it after the commit.

Imports ctld.store, ctld.state, ctld.steps, ctld.acctruns, ctld.diag, ctld.events and
minislurm; no gRPC.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress

from sqlalchemy import Connection, Engine, event
from sqlalchemy.orm import Session, sessionmaker

from ctld import events
from ctld import steps as stepops
from ctld.accounting import runs as acctruns
from ctld.diag import JobTally
from ctld.state import ClusterState
from ctld.store import repo, runrepo
from minislurm.model import Job, Step
from minislurm.requests import NodeStepStat
from minislurm.states import TERMINAL_JOB_STATES, JobState


class Ledger:
    """Commits jobs and steps, mirrors them in memory, and wakes who waits for them.

    Args:
        state: the in-memory view the commits keep up to date.
        engine: the database.
        fence: run first in each transaction (with its connection); raises when this
            controller no longer holds the role (ctld.leadership), so that it writes nothing.
    """

    def __init__(
        self,
        state: ClusterState,
        engine: Engine,
        fence: Callable[[Connection], None] | None = None,
    ) -> None:
        self.state = state
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        if fence is not None:
            event.listen(self._sessions, "after_begin", lambda _session, _trans, conn: fence(conn))
        self._job_waiters: dict[int, list[asyncio.Future[None]]] = {}
        self._listeners: list[Callable[[Job | None, Job], None]] = []
        self.tally = JobTally()  # sdiag's job counts: what the commits did

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One database transaction, committed on leaving the block."""
        with self._sessions() as session, session.begin():
            yield session

    def listen(self, listener: Callable[[Job | None, Job], None]) -> None:
        """Call ``listener`` with each job record (and the one it replaced, if any) once it
        is committed and in memory."""
        self._listeners.append(listener)

    def commit(self, changed: Iterable[Job], new: Iterable[Job] = ()) -> list[Job]:
        """Save changed jobs, and insert new records (array tasks split off), in one
        transaction, then mirror them in memory.

        A job that ended (or was requeued) takes its running steps with it
        (CANCELLED, as in Slurm); a requeued job's run goes to accounting's
        history with its steps.

        Args:
            changed: records that exist already, as they now are.
            new: records to insert.

        Returns:
            Every record committed, the new ones last.
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
        with self.transaction() as s:
            if new:
                repo.insert_records(s, new)
            repo.save_jobs(s, [job for job in changed if job.job_id not in inserted])
            for step in ended_steps:
                repo.save_step(s, step)
            for run in runs:
                runrepo.archive_run(s, run)
        for job in changed:
            before = self.state.jobs.get(job.job_id)
            self.tally.see(before, job)
            self.state.put_job(job)
            for listener in self._listeners:
                listener(before, job)
            self.notify(job.job_id)
        for step in ended_steps:
            self.state.put_step(step)
        for run in runs:  # the next run numbers its steps from 0 again
            events.log.info("%s", events.requeue_event(run))
            self.state.steps.pop(run.job.job_id, None)
        return changed

    def save_steps(self, steps: Iterable[Step], new: bool = False) -> None:
        """Save steps in one transaction, then mirror them in memory.

        Args:
            steps: the steps as they now are.
            new: they are new records.
        """
        steps = list(steps)
        with self.transaction() as s:
            for step in steps:
                repo.save_step(s, step, new=new)
        for step in steps:
            self.state.put_step(step)

    def save_step_reports(
        self, steps: list[Step], usage: Sequence[tuple[repo.UsageKey, NodeStepStat]] = ()
    ) -> None:
        """Save what nodes' reports changed of running steps, in one transaction, then
        mirror the steps in memory.

        Args:
            steps: the steps as they now are (their layout unchanged).
            usage: what the reports said the steps' tasks used on their nodes.
        """
        with self.transaction() as s:
            repo.save_step_reports(s, steps)
            repo.save_usage(s, list(usage))
        for step in steps:
            self.state.put_step(step)

    def notify(self, job_id: int) -> None:
        """Wake whoever waits for this job to change (:meth:`job_change`)."""
        for waiter in self._job_waiters.pop(job_id, []):
            if not waiter.done():
                waiter.set_result(None)

    async def job_change(self, job_id: int, timeout: float) -> None:
        """Wait until a job changes or one of its steps ends, or the timeout passes.

        Args:
            job_id: the job.
            timeout: seconds.
        """
        waiter = asyncio.get_running_loop().create_future()
        self._job_waiters.setdefault(job_id, []).append(waiter)
        with suppress(TimeoutError):
            await asyncio.wait_for(waiter, timeout)
