"""A running job's clocks: its time limit, and its ``--signal`` warning.

Each running job has two timers; they are disarmed once a commit shows the
job no longer running, and on expiry they commit the change and hand the
kill or the signal to the intent runner.

Imports ctld.timers, ctld.ledger, ctld.runner, ctld.jobs and minislurm.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from ctld import jobs as jobops
from ctld.intents import Signal
from ctld.ledger import Ledger
from ctld.runner import IntentRunner
from ctld.timers import JobTimers
from minislurm.model import Job, time_limit_end
from minislurm.states import JobEvent, JobState

log = logging.getLogger(__name__)


class TimeLimits:
    """Arms running jobs' timers and acts when they expire.

    Args:
        ledger: the commits (the timers follow them).
        runner: carries out the kills and signals.
    """

    def __init__(self, ledger: Ledger, runner: IntentRunner) -> None:
        self._ledger = ledger
        self._state = ledger.state
        self._runner = runner
        self._limits = JobTimers(self._time_limit_reached)
        self._warnings = JobTimers(self._warning_due)  # --signal=SIG@TIME
        ledger.listen(self._committed)

    def arm(self, job: Job) -> None:
        """Set a running job's timers: its time limit, and its warning signal."""
        self._limits.arm(job.job_id, time_limit_end(job))
        self._warnings.arm(job.job_id, jobops.warning_time(job))

    def clear(self) -> None:
        """Disarm every timer (the controller stops)."""
        self._limits.clear()
        self._warnings.clear()

    def _committed(self, _before: Job | None, job: Job) -> None:
        if job.state not in (JobState.RUNNING, JobState.SUSPENDED):
            self._limits.disarm(job.job_id)
            self._warnings.disarm(job.job_id)

    def _warning_due(self, job_id: int) -> None:
        """``--signal``: warn the steps (or with ``B:`` the batch shell) once, as Slurm."""
        job = self._state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        if job.warn_sent:
            return
        self._ledger.commit([replace(job, warn_sent=True)])
        log.info("job=%d warning signal %d sent", job_id, job.warn_signal)
        signal = Signal(job_id, job.allocation.node_names, job.warn_signal, job.warn_batch, False)
        self._runner.run([signal])

    def _time_limit_reached(self, job_id: int) -> None:
        job = self._state.jobs.get(job_id)
        if job is None or job.state is not JobState.RUNNING or job.allocation is None:
            return
        killing, kill = jobops.begin_kill(job, JobEvent.TIME_LIMIT, time.time())
        self._ledger.commit([killing])
        self._runner.run(kill)
