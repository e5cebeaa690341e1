"""PrologSlurmctld and EpilogSlurmctld: the site's programs slurmctld runs around each job.

As Slurm's slurmctld, as its own user (SlurmUser): PrologSlurmctld when a
job is allocated, before its batch script is launched (an interactive
allocation's steps do not wait for it); EpilogSlurmctld when a run of a
job ends (to a final state, or requeued). A PrologSlurmctld that fails
requeues a batch job that may be requeued and ends any other (its caller
decides, :meth:`ctld.jobctl.JobControl.run_failed`); an EpilogSlurmctld's
failure is only logged. Both are killed after PrologTimeout/EpilogTimeout
(else PrologEpilogTimeout).

Imports minislurm and minislurm.site.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from minislurm import jobenv
from minislurm.config import SlurmConfig
from minislurm.model import Job
from minislurm.site.programs import ScriptFailure, run_programs
from minislurm.states import ACTIVE_JOB_STATES

log = logging.getLogger(__name__)


class ControllerScripts:
    """Runs PrologSlurmctld and EpilogSlurmctld.

    Args:
        conf: the configuration (the programs and their timeouts).
    """

    def __init__(self, conf: SlurmConfig) -> None:
        self.conf = conf
        self._epilogs: set[asyncio.Task[ScriptFailure | None]] = set()

    async def prolog(self, job: Job) -> bool:
        """Run PrologSlurmctld for a job just allocated.

        Args:
            job: the job, with its allocation.

        Returns:
            Whether the job may go on (none configured, or it succeeded).
        """
        if not self.conf.prolog_slurmctld:
            return True
        env = jobenv.controller_script_environment(
            job, self.conf.cluster_name, jobenv.PROLOG_SLURMCTLD
        )
        what = f"job={job.job_id} prolog_slurmctld"
        failure = await run_programs(self.conf.prolog_slurmctld, env, self.conf.prolog_wait, what)
        return failure is None

    def run_ended(self, before: Job | None, job: Job) -> None:
        """A committed record: EpilogSlurmctld runs, in the background, when a run ended.

        Args:
            before: the record it replaced (None for a new one).
            job: the record.
        """
        if (
            not self.conf.epilog_slurmctld
            or before is None
            or before.state not in ACTIVE_JOB_STATES
            or job.state in ACTIVE_JOB_STATES
        ):
            return
        ended = job
        if job.allocation is None:  # a requeued run forgets its nodes: the run's record has them
            ended = replace(before, exit_code=job.exit_code, exit_signal=job.exit_signal)
        env = jobenv.controller_script_environment(
            ended, self.conf.cluster_name, jobenv.EPILOG_SLURMCTLD
        )
        what = f"job={job.job_id} epilog_slurmctld"
        task = asyncio.get_running_loop().create_task(
            run_programs(self.conf.epilog_slurmctld, env, self.conf.epilog_wait, what)
        )
        self._epilogs.add(task)
        task.add_done_callback(self._epilogs.discard)

    async def close(self) -> None:
        """Stop following the EpilogSlurmctlds under way (their programs run on)."""
        for task in self._epilogs:
            task.cancel()
        await asyncio.gather(*self._epilogs, return_exceptions=True)
