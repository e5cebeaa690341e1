"""Step control: srun's steps inside allocations, their ends and their usage.

Imports ctld's pure step modules, ctld.ledger, ctld.runner, ctld.jobctl and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace

from ctld import jobrequests as jobreq
from ctld import jobs as jobops
from ctld import steplist
from ctld import steps as stepops
from ctld.groupcommit import GroupCommit
from ctld.jobctl import JobControl
from ctld.ledger import Ledger
from ctld.runner import IntentRunner
from ctld.store.repo import UsageKey
from minislurm.errors import InvalidRequest, InvalidTransition, JobNotFound, PermissionDenied
from minislurm.model import Job, Step
from minislurm.requests import (
    NodeStepStat,
    StepAbort,
    StepEnd,
    StepInfo,
    StepRequest,
    StepStatQuery,
)
from minislurm.states import JobState
from minislurm.stepids import INTERACTIVE_STEP

STEP_PATIENCE = 0.5  # seconds a step request waits for other steps to free resources


log = logging.getLogger(__name__)


class StepControl:
    """The steps of running jobs.

    Args:
        ledger: the commits.
        runner: the agents' usage figures.
        jobs: the jobs the steps belong to.
    """

    def __init__(self, ledger: Ledger, runner: IntentRunner, jobs: JobControl) -> None:
        self._ledger = ledger
        self._state = ledger.state
        self._runner = runner
        self._jobs = jobs
        self._ends = GroupCommit(self._record_ends)

    def create_step(self, spec: StepRequest) -> tuple[Step, Job]:
        """srun inside an allocation: place a step and sign its credential.

        Args:
            spec: the step's request.

        Returns:
            The step with its layout (started now), and its job.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the job's owner.
            InvalidTransition: the job is not running.
            InvalidRequest: the step can never fit in the allocation, or the
                job has its interactive step already.
            StepBusy: it must wait for other steps to end.
        """
        job = self._jobs.owned_job(spec.job_id, spec.requester_uid)
        if job.state is JobState.PENDING:
            raise InvalidTransition(jobops.NOT_NOW)
        if job.state is not JobState.RUNNING or job.allocation is None:
            raise InvalidTransition(jobops.ALREADY_DONE)
        now = time.time()
        step_id = self._state.next_step_id(job.job_id)
        if spec.interactive:
            step_id = INTERACTIVE_STEP
            if step_id in self._state.steps.get(job.job_id, {}):
                raise InvalidRequest(stepops.DUPLICATE)
            spec = stepops.interactive_spec(spec, job)
        nodes = [self._state.nodes[n] for n in job.allocation.node_names]
        stepops.check_gpu_type(spec, nodes)
        links = {node.name: node.gpu_links for node in nodes}
        running = self._state.running_steps(job.job_id)
        step = stepops.place_step(spec, job, running, step_id, now, links)
        self._ledger.save_steps([step], new=True)
        return step, job

    async def create_step_patiently(self, spec: StepRequest) -> tuple[Step, Job]:
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
            await self._ledger.job_change(spec.job_id, left)

    async def step_complete(self, request: StepEnd) -> None:
        """A node reports how a step's tasks ended there (repeats are ignored).

        Returns once the report is committed. Reports that arrive together are
        committed together, each step once (a 1,024-node step's nodes report
        within a second, and a step's row holds all its nodes).

        Args:
            request: the node, the step and each task's exit.
        """
        await self._ends.commit(request)

    def end_unstarted(self, request: StepAbort) -> None:
        """srun cancels a step it will not launch (its SrunProlog failed): no node reports it.

        Args:
            request: the step and who asks.

        Raises:
            JobNotFound: no such job.
            PermissionDenied: not the job's owner, root or an operator.
        """
        job = self._state.jobs.get(request.job_id)
        if job is None:
            raise JobNotFound(request.job_id)
        self._jobs.authorize(job, request.requester_uid)
        step = self._state.steps.get(request.job_id, {}).get(request.step_id)
        if step is None or step.state is not JobState.RUNNING:
            return
        ended = stepops.cancelled(step, time.time())
        log.info("step=%d.%d ended by its srun: %s", step.job_id, step.step_id, ended.state.value)
        self._ledger.save_step_reports([ended])
        self._ledger.notify(step.job_id)
        self._jobs.end_idle_allocation(step.job_id, ended.exit_code, ended.signal)

    def _record_ends(self, requests: list[StepEnd]) -> None:
        changed: dict[tuple[int, int], Step] = {}
        usage: list[tuple[UsageKey, NodeStepStat]] = []
        now = time.time()
        for request in requests:
            key = (request.job_id, request.step_id)
            step = changed.get(key) or self._state.steps.get(request.job_id, {}).get(
                request.step_id
            )
            if step is None or step.state is not JobState.RUNNING or request.node in step.reported:
                continue
            exits = [(t.exit_code, t.signal) for t in request.tasks]
            updated = stepops.node_reported(step, request.node, exits, now, request.out_of_memory)
            changed[key] = replace(
                updated,
                max_rss=max(updated.max_rss, request.max_rss),
                total_cpu=updated.total_cpu + request.total_cpu,
            )
            job = self._state.jobs.get(request.job_id)
            if request.usage and job is not None:
                stat = NodeStepStat(node=request.node, tasks=request.usage)
                usage.append(((request.job_id, job.restarts, request.step_id), stat))
        if not changed:
            return
        self._ledger.save_step_reports(list(changed.values()), usage)
        for step in changed.values():
            if step.state is not JobState.RUNNING:
                self._ledger.notify(step.job_id)  # a step waiting for its resources may now fit
                self._jobs.end_idle_allocation(step.job_id, step.exit_code, step.signal)

    def steps_of(self, job_id: int) -> list[Step]:
        """The steps the controller remembers, of one job or of all.

        Args:
            job_id: a job, or 0 for every job.

        Returns:
            The steps, by job and step id.
        """
        jobs = [job_id] if job_id else sorted(self._state.steps)
        return [step for j in jobs for _, step in sorted(self._state.steps.get(j, {}).items())]

    def step_list(self, job_id: int) -> list[StepInfo]:
        """Slurm's list of running steps (squeue -s, scontrol show step, sstat).

        Args:
            job_id: one job (an array's id: all its tasks), or 0 for every job.

        Returns:
            The running steps, batch steps included, per job in Slurm's order.

        Raises:
            JobNotFound: ``job_id`` names no job the controller knows.
        """
        return steplist.running_steps(self._state, job_id)

    async def step_stats(self, request: StepStatQuery) -> list[NodeStepStat]:
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
        job, nodes = steplist.stat_nodes(self._state, request.job_id, request.step_id)
        try:
            self._jobs.authorize(job, request.requester_uid)
        except PermissionDenied:
            raise PermissionDenied(jobreq.INVALID_USER) from None
        replies = await asyncio.gather(
            *(self._runner.step_stat(node, request.job_id, request.step_id) for node in nodes)
        )
        return [n for reply in replies for n in reply]
