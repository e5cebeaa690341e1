"""A node's Prolog and Epilog: the site's programs slurmd runs around each job.

As Slurm's slurmd: the Prolog runs as slurmd's user before the first task
of a job starts on the node (its batch script or the first srun step
there), once per run of the job; the Epilog when the job ends on the node,
once its processes there are gone; both are run as minislurm.site.programs
runs the site's programs, killed after ``PrologTimeout``/``EpilogTimeout``. The next
job's Prolog on the node waits for the Epilogs still running, so a job
never starts on a node whose last job is still being cleaned up.

What a failure means (the node drained, the job requeued held) is the
controller's to decide: the failure goes to ``report``.

Imports the standard library, minislurm and minislurm.site.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from minislurm import jobenv
from minislurm.jobenv import EPILOG_SLURMD, PROLOG_SLURMD, ScriptJob
from minislurm.site.programs import ScriptFailure, run_programs

log = logging.getLogger(__name__)

RUNS_KEPT = 4096  # job runs whose Prolog result a node remembers


class NodeScripts:
    """The Prologs and Epilogs of one node's jobs.

    Args:
        prolog: the configured Prolog paths (none: nothing runs).
        epilog: the configured Epilog paths.
        prolog_wait: seconds a Prolog may run (0: no limit).
        epilog_wait: seconds an Epilog may run (0: no limit).
        ctx: the node, for the programs' environment.
        failed: told of each failure: the job, "prolog" or "epilog", and how.
    """

    def __init__(
        self,
        prolog: Sequence[str],
        epilog: Sequence[str],
        prolog_wait: int,
        epilog_wait: int,
        ctx: jobenv.NodeContext,
        failed: Callable[[ScriptJob, str, ScriptFailure], None],
    ) -> None:
        self.reconfigure(prolog, epilog, prolog_wait, epilog_wait)
        self._ctx = ctx
        self._failed = failed
        self._prologs: dict[tuple[int, int], asyncio.Future[bool]] = {}  # by (job, run)
        self._ended: dict[tuple[int, int], asyncio.Task[None]] = {}  # Epilogs by run (ordered)

    def reconfigure(
        self, prolog: Sequence[str], epilog: Sequence[str], prolog_wait: int, epilog_wait: int
    ) -> None:
        """Run these programs from now on (slurm.conf re-read); those under way finish."""
        self._prolog = tuple(prolog)
        self._epilog = tuple(epilog)
        self._prolog_wait = prolog_wait
        self._epilog_wait = epilog_wait

    async def prolog(self, job: ScriptJob) -> bool:
        """Run the Prolog for this run of the job, once; later callers share its result.

        It waits for the Epilogs still running on the node first.

        Args:
            job: the job, as this node sees it.

        Returns:
            Whether the job may start here (no Prolog, or it succeeded).
        """
        if not self._prolog:
            return True
        key = (job.job_id, job.restarts)
        result = self._prologs.get(key)
        if result is None:
            result = self._prologs[key] = asyncio.get_running_loop().create_future()
            while len(self._prologs) > RUNS_KEPT:
                del self._prologs[next(iter(self._prologs))]
            try:
                ok = await self._run_prolog(job)
            except BaseException:
                del self._prologs[key]
                result.cancel()
                raise
            result.set_result(ok)
        return await asyncio.shield(result)

    async def _run_prolog(self, job: ScriptJob) -> bool:
        await self.epilogs_done()
        env = jobenv.node_script_environment(job, self._ctx, PROLOG_SLURMD)
        failure = await run_programs(
            self._prolog, env, self._prolog_wait, f"job={job.job_id} prolog"
        )
        if failure is not None:
            self._failed(job, "prolog", failure)
        return failure is None

    @property
    def has_epilog(self) -> bool:
        """Whether an Epilog is configured."""
        return bool(self._epilog)

    def epilog(self, job: ScriptJob, after: Awaitable[object]) -> asyncio.Future[None]:
        """Run the Epilog of a job's run on this node once ``after`` is done (once per run).

        Args:
            job: the job as it ended.
            after: what must be over first (the job's processes here).

        Returns:
            What is done when the Epilog is (at once without one).
        """
        key = (job.job_id, job.restarts)
        task = self._ended.get(key)
        if task is None and self._epilog:
            task = asyncio.get_running_loop().create_task(
                self._run_epilog(job, after), name=f"epilog {job.job_id}"
            )
            self._ended[key] = task
            while len(self._ended) > RUNS_KEPT:
                del self._ended[next(iter(self._ended))]
        if task is None:
            if asyncio.iscoroutine(after):
                after.close()  # never awaited: nothing waits for it
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        return task

    async def _run_epilog(self, job: ScriptJob, after: Awaitable[object]) -> None:
        with contextlib.suppress(Exception):
            await after
        env = jobenv.node_script_environment(job, self._ctx, EPILOG_SLURMD)
        failure = await run_programs(
            self._epilog, env, self._epilog_wait, f"job={job.job_id} epilog"
        )
        self._prologs.pop((job.job_id, job.restarts), None)
        if failure is not None:
            self._failed(job, "epilog", failure)

    def _running(self) -> list[asyncio.Task[None]]:
        return [task for task in self._ended.values() if not task.done()]

    async def epilogs_done(self) -> None:
        """Wait until no Epilog runs on the node."""
        while running := self._running():
            await asyncio.gather(*running, return_exceptions=True)

    async def close(self) -> None:
        """Stop following the Epilogs under way (their programs run on)."""
        running = self._running()
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
