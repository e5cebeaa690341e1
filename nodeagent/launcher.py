"""Batch steps on this node: spool directories, stepd processes, kills and outcomes.

Each job has ``SPOOL/job<ID>/`` holding its script and the files of
:mod:`nodeagent.spool`; its ``task.pid`` names the script, which leads its
process group. The spool is the truth about what runs here: slurmd follows
each batch stepd through its files (:class:`~nodeagent.stepadopt.AdoptedStep`,
as it follows an srun step after a restart), from its launch or, after a
restart of slurmd, from ``adopt()``, which finds live stepds again and ended
jobs not yet reported.

Imports nodeagent.spool, nodeagent.stepadopt, nodeagent.stepdpool and
minislurm.stepids; no gRPC.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from minislurm.stepids import BATCH_STEP
from nodeagent import spool
from nodeagent.stepadopt import AdoptedStep
from nodeagent.stepdpool import Stepd, StepdPool

log = logging.getLogger(__name__)

FORCE_KILL_MARGIN = 10.0  # seconds beyond KillWait before slurmd kills stepd itself
HANDOVER_GRACE = 10.0  # seconds a restarted slurmd waits for a stepd handed a job as it died
HANDOVER_POLL = 0.05
SIGNALLED_WAIT = 2.0  # seconds a job's steps wait for its script's SIGTERM before theirs
SIGNALLED_POLL = 0.01


@dataclass(frozen=True)
class StepOutcome:
    """How a batch step ended, as stepd recorded it (or as slurmd found it)."""

    job_id: int
    exit_code: int
    signal: int
    start_time: float
    end_time: float
    outcome: str = ""
    message: str = ""
    max_rss: int = 0  # KiB, the batch script with everything it started (sampled)
    total_cpu: float = 0.0  # seconds, user + system, every process of the job
    restarts: int = 0  # which run of the job this was (its Restarts when launched)


class EarlierRunRunning(Exception):
    """A job's run cannot start here yet: a stepd of an earlier run is still being killed."""


class Launcher:
    """Starts, watches, signals and cleans up batch steps."""

    def __init__(self, spool: str, on_end: Callable[[StepOutcome], None], pool: StepdPool) -> None:
        self.spool = spool
        self._pool = pool
        self._on_end = on_end
        self._running: dict[int, AdoptedStep] = {}  # job id -> its batch step, followed
        self._children: dict[int, Stepd] = {}
        self._followers: set[asyncio.Task[None]] = set()
        os.makedirs(spool, mode=0o755, exist_ok=True)

    def jobdir(self, job_id: int) -> str:
        """The spool directory of a job.

        Args:
            job_id: the job.

        Returns:
            Its path.
        """
        return spool.job_dir(self.spool, job_id)

    @property
    def running(self) -> list[int]:
        """Jobs whose stepd is alive."""
        return sorted(self._running)

    def knows(self, job_id: int, restarts: int) -> bool:
        """Whether this node has (or had, unreported) this run of the job.

        The spool directory of an earlier run that ended is removed: that
        run was requeued, and its report is of no use any more. A stepd of
        an earlier run that still runs is not this run (:meth:`launch` kills it).

        Args:
            job_id: the job.
            restarts: which run.

        Returns:
            True when that run's spool directory exists.
        """
        jobdir = self.jobdir(job_id)
        if not os.path.isdir(jobdir):
            return False
        if self._restarts(job_id) == restarts:
            return True
        if job_id not in self._running:
            log.info("job=%d spool of an earlier run removed", job_id)
            shutil.rmtree(jobdir, ignore_errors=True)
        return False

    def _restarts(self, job_id: int) -> int:
        try:
            job = spool.read_job(self.jobdir(job_id))
        except (OSError, ValueError):
            return 0
        return job.restarts if isinstance(job, spool.BatchJob) else 0

    @property
    def alive_file(self) -> str:
        """The file slurmd touches while it lives, which its batch stepds watch."""
        return os.path.join(self.spool, spool.ALIVE_FILE)

    def touch_alive(self) -> None:
        """Tell this node's stepds that slurmd lives.

        A batch stepd whose slurmd has been gone for SlurmdTimeout kills its
        job: by then the controller has declared the node DOWN and requeued
        the job elsewhere, and the run here must not go on beside the new one.
        """
        path = self.alive_file
        with open(path, "a"):
            os.utime(path)

    def launch(self, job: spool.BatchJob, script: bytes) -> None:
        """Write the job's spool directory and start its stepd.

        A launch of a job already here is ignored (the controller retries).

        Args:
            job: what stepd runs (its ``job.json``).
            script: the batch script, written beside it.

        Raises:
            EarlierRunRunning: a stepd of an earlier run of the job still runs
                here; it is being killed, and the launch may be tried again.
            OSError: the spool directory or stepd could not be created.
        """
        jobdir = self.jobdir(job.job_id)
        if os.path.isdir(jobdir):
            if job.job_id in self._running and self._restarts(job.job_id) != job.restarts:
                self.terminate(job.job_id, "CANCELLED", job.kill_wait, time.time())
                raise EarlierRunRunning(
                    f"job {job.job_id}: run {self._restarts(job.job_id)} still ends here"
                )
            return
        spool.create(jobdir, job, script)
        proc = self._pool.spawn(jobdir)
        self._children[job.job_id] = proc
        self._watch(job.job_id, proc.pid)
        log.info("job=%d stepd pid=%d started", job.job_id, proc.pid)

    def _watch(self, job_id: int, pid: int) -> None:
        """Follow the job's stepd to its end, then report the outcome."""
        step = AdoptedStep(self.jobdir(job_id), job_id, BATCH_STEP, pid)
        self._running[job_id] = step
        follower = asyncio.get_running_loop().create_task(
            self._follow(job_id, step), name=f"job {job_id}"
        )
        self._followers.add(follower)
        follower.add_done_callback(self._followers.discard)

    async def _follow(self, job_id: int, step: AdoptedStep) -> None:
        async for _ in step.events():
            pass
        self._running.pop(job_id, None)
        proc = self._children.pop(job_id, None)
        if proc is not None:
            proc.release()
        self._on_end(self._outcome(job_id, step.ended()))

    def _outcome(self, job_id: int, result: spool.StepResult) -> StepOutcome:
        """The outcome slurmd reports of a run whose stepd recorded ``result``."""
        return StepOutcome(
            job_id=job_id,
            exit_code=result.exit_code,
            signal=result.signal,
            start_time=result.start_time,
            end_time=result.end_time,
            outcome=result.outcome,
            message=result.message,
            max_rss=result.max_rss,
            total_cpu=result.total_cpu,
            restarts=self._restarts(job_id),
        )

    async def adopt(self) -> list[StepOutcome]:
        """After a restart: watch live stepds again; return ended, unreported jobs.

        A job whose directory has no stepd.pid yet was being launched when
        the previous slurmd died: its stepd may have been handed the job
        and still be starting, or never have been. It is waited for up to
        HANDOVER_GRACE; if none comes, the launch never happened, and the
        directory is removed without a report (the controller launches a
        job again whose launch this node never acknowledged).

        Returns:
            Outcomes of jobs that ended while slurmd was away.
        """
        ended: list[StepOutcome] = []

        def settled(job_id: int) -> bool:
            """Whether the job's stepd started: then it is watched, or its end is returned."""
            jobdir = self.jobdir(job_id)
            if not os.path.exists(os.path.join(jobdir, spool.STEPD_PID_FILE)):
                return False
            if not self._adopt(job_id):
                gone = AdoptedStep(jobdir, job_id, BATCH_STEP, 0)
                ended.append(self._outcome(job_id, gone.ended()))
            return True

        pending = [job_id for job_id in spool.find_jobs(self.spool) if not settled(job_id)]
        deadline = time.monotonic() + HANDOVER_GRACE
        while pending and time.monotonic() < deadline:
            await asyncio.sleep(HANDOVER_POLL)
            pending = [job_id for job_id in pending if not settled(job_id)]
        for job_id in pending:
            log.warning("job=%d its launch never reached a stepd: not run here", job_id)
            shutil.rmtree(self.jobdir(job_id), ignore_errors=True)
        return ended

    def _adopt(self, job_id: int) -> bool:
        """Watch the job's stepd again, if it lives; whether it does."""
        pid = spool.stepd_pid(self.jobdir(job_id))
        if pid is None:
            return False
        self._watch(job_id, pid)
        log.info("job=%d stepd pid=%d adopted", job_id, pid)
        return True

    def terminate(self, job_id: int, outcome: str, kill_wait: int, when: float) -> bool:
        """Ask a job's stepd to kill it; kill stepd too if it does not finish in time.

        Args:
            job_id: the job (unknown jobs are ignored).
            outcome: CANCELLED or TIMEOUT (decides the line stepd writes).
            kill_wait: seconds between SIGTERM and SIGKILL.
            when: the controller's decision time, for the line.

        Returns:
            Whether the job's stepd runs here and was asked.
        """
        step = self._running.get(job_id)
        if step is None:
            return False
        step.terminate(kill_wait, outcome, when)
        loop = asyncio.get_running_loop()
        loop.call_later(kill_wait + FORCE_KILL_MARGIN, self._force_kill, job_id, step)
        return True

    async def killing(self, job_id: int) -> None:
        """Wait until the job's stepd has sent its processes SIGTERM, or is gone.

        At most SIGNALLED_WAIT seconds: a stepd that cannot keep up holds
        nobody else's kill for longer.

        Args:
            job_id: a job :meth:`terminate` asked stepd to kill.
        """
        deadline = time.monotonic() + SIGNALLED_WAIT
        jobdir = self.jobdir(job_id)
        while job_id in self._running and not spool.killed(jobdir):
            if time.monotonic() >= deadline:
                log.warning("job=%d stepd has not signalled its processes yet", job_id)
                return
            await asyncio.sleep(SIGNALLED_POLL)

    def _force_kill(self, job_id: int, step: AdoptedStep) -> None:
        if self._running.get(job_id) is not step:
            return
        log.warning("job=%d stepd did not finish the kill; killing its session", job_id)
        step.signal(signal.SIGKILL)
        step.signal_stepd(signal.SIGKILL)

    def signal_job(self, job_id: int, sig: int, batch_only: bool, full: bool) -> None:
        """Send a signal to a job's batch script (``-b``) or its whole batch step (``-f``).

        Without either, Slurm signals only the job's srun steps, of which a
        batch step has none here.

        Args:
            job_id: the job.
            sig: the signal number.
            batch_only: signal the batch shell alone.
            full: signal every process of the batch step.
        """
        if job_id not in self._running:
            return
        task = _task(self.jobdir(job_id))
        if not task:
            return
        if full:
            _signal(-task, sig)
        elif batch_only:
            _signal(task, sig)

    def forget(self, job_id: int) -> None:
        """Remove an ended, reported job's spool directory.

        Args:
            job_id: the job.
        """
        if job_id not in self._running:
            shutil.rmtree(self.jobdir(job_id), ignore_errors=True)

    async def close(self) -> None:
        """Stop following (the stepds keep running)."""
        for follower in self._followers:
            follower.cancel()
        await asyncio.gather(*self._followers, return_exceptions=True)


def _task(jobdir: str) -> int:
    """The batch script's pid (it leads its process group), 0 before it runs."""
    return next(iter(spool.task_groups(jobdir)), 0)


def _signal(pid: int, sig: int) -> None:
    try:
        if pid < 0:
            os.killpg(-pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
