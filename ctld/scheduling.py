"""The controller's scheduling loop: snapshot, plan, apply.

Scheduling is event-driven: anything that may let a job start (a
submission, a job's end, a node registering, a release) calls ``kick()``,
and the loop runs a pass as soon as the event loop is free; kicks that
arrive while one is running coalesce into one more pass. That pass is a
full one (backfill over ``bf_max_job_test`` jobs, or ``sched/builtin``
over the whole queue) unless the last full pass ended less than its own
length ago: then it is the quick event pass over the top
``default_queue_depth`` jobs (:func:`~ctld.sched.plan.plan_event`, Slurm's
main scheduler), and a full pass follows once that time is up. So full
passes take at most half of the controller's time under a burst of
submissions, while the jobs at the top of the queue still start within
milliseconds of the event that lets them. An event pass takes most entries of
its snapshot from the pass before (:class:`~ctld.sched.snapshot.KeptEntries`) rather than
compute every queued job's priority again. An event pass that took long is
followed by an equal pause. A periodic full pass covers time-based changes
(job age), at least every ``bf_interval`` seconds.

Imports ctld.sched, ctld.state, ctld.jobs, ctld.accounting.manager, ctld.looplag and minislurm.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from ctld import jobs as jobops
from ctld.accounting.manager import Accounting
from ctld.looplag import LoopLag
from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan, plan_event
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import KeptEntries, build_snapshot
from ctld.state import ClusterState
from minislurm.model import Job, Plan, Snapshot
from minislurm.units import INFINITE

log = logging.getLogger("minislurm.sched")

TICK_SECONDS = 30.0
INF = float("inf")
MIN_PAUSE_AFTER = 0.002  # seconds; shorter passes run again as soon as kicked
# Slurm's main scheduler runs on events from a background loop that wakes once a second: a
# job whose reason a request left at None (a release, a new array) gets the one a pass finds
# up to a second later. Our passes run at once, for starts; that reason waits as long.
REASON_DELAY = 1.0
# Passes wait while the event loop runs later than this (seconds), or while more launches
# than this are under way: the calls and reports already queued go first, so the starts of
# one pass never put heartbeats behind the ends of the last one's jobs, and jobs are not
# started faster than they are launched (Slurm defers scheduling likewise, at max_rpc_cnt).
MAX_LAG = 0.5
MAX_LAUNCHING = 64


def next_wakeup(state: ClusterState, now: float) -> float:
    """When a queued job's begin time comes or its deadline can no longer be met, or infinity.

    Args:
        state: the cluster.
        now: the time.

    Returns:
        Epoch seconds.
    """
    times = []
    for job in state.queued_jobs():
        times.append(job.begin_time)
        if job.deadline:
            times.append(latest_start(job))
    return min((t for t in times if t > now), default=INF)


def latest_start(job: Job) -> float:
    """The last moment a job with a deadline may start and still end before it.

    Args:
        job: a job with a deadline.

    Returns:
        Epoch seconds.
    """
    limit = 0 if job.time_limit == INFINITE else job.time_limit * 60
    return job.deadline - limit


@dataclass
class PassStats:
    """How long one kind of pass took: the last, the longest, the sum and the count (seconds)."""

    last: float = 0.0
    longest: float = 0.0
    total: float = 0.0
    count: int = 0

    def add(self, took: float) -> None:
        """Count one more pass.

        Args:
            took: its length in seconds.
        """
        self.last = took
        self.longest = max(self.longest, took)
        self.total += took
        self.count += 1


class PassHooks(Protocol):
    """Who carries out a pass's decisions (the controller's :class:`ctld.starts.Starts`)."""

    def settle(self, now: float) -> None:
        """Before a pass: settle what time and other jobs decided (dependencies, deadlines)."""

    def apply(self, decided: Plan, now: float) -> None:
        """Start what the pass planned, and give the pending jobs their reasons."""

    def preempt(self, snapshot: Snapshot, decided: Plan, now: float) -> None:
        """After a full pass: preempt for the jobs that wait."""


class SchedulerLoop:
    """Runs scheduling passes when kicked, when a begin time comes, and every ``bf_interval``.

    Each pass first has its hooks settle what time and other jobs decided,
    then plans and hands the plan to its hooks to apply.

    Args:
        state: the cluster.
        weights: the multifactor priority weights.
        hooks: who carries out the passes' decisions.
        cfg: the scheduler's knobs.
        accounting: limits, fair share and QOS.
        lag: the event loop's lag, when measured: passes wait while it is over MAX_LAG.
        launching: how many launch calls are under way: passes wait while over MAX_LAUNCHING.
    """

    def __init__(
        self,
        state: ClusterState,
        weights: PriorityWeights,
        hooks: PassHooks,
        cfg: SchedConfig | None = None,
        accounting: Accounting | None = None,
        lag: LoopLag | None = None,
        launching: Callable[[], int] | None = None,
    ) -> None:
        self._state = state
        self._lag = lag
        self._launching = launching
        self._weights = weights
        self._accounting = accounting
        self.cfg = cfg or SchedConfig()
        self.start_times: dict[int, float] = {}  # the last full pass's expected starts
        self._held: dict[tuple[int, int], tuple[str, ...]] = {}  # and its reserved nodes
        self._hooks = hooks
        self._kicked = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._blocked: set[int] = set()  # jobs the last pass found blocked (Dependency, ...)
        self._kept = KeptEntries()  # plain jobs' entries, for event passes
        self._quiet: dict[int, float] = {}  # job id -> until when its reason stays None
        self.passes = 0
        self.full_stats = PassStats()  # sdiag's backfill cycles
        self.event_stats = PassStats()  # sdiag's main schedule cycles

    def reconfigure(self, weights: PriorityWeights, cfg: SchedConfig) -> None:
        """Plan with a re-read slurm.conf's priority weights and scheduler knobs."""
        self._weights = weights
        self.cfg = cfg

    def kick(self) -> None:
        """Ask for a pass as soon as possible."""
        self._kicked.set()

    def keep_reasons(self, job_ids: Iterable[int], now: float) -> None:
        """Leave these jobs' reason (None) as it is for :data:`REASON_DELAY`, as Slurm's does.

        Passes in the meantime may still start them.

        Args:
            job_ids: jobs whose reason a request has just reset.
            now: the time of the request.
        """
        for job_id in job_ids:
            self._quiet[job_id] = now + REASON_DELAY
        self.kick()

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="scheduler")
        self.kick()

    async def stop(self) -> None:
        """Stop the loop (a pass in progress completes first)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def run_pass(self, full: bool = True) -> Plan:
        """One pass now: snapshot, plan, apply; after a full pass, preempt for the jobs that wait.

        Args:
            full: a full pass (:func:`~ctld.sched.plan.plan`), else an event
                pass (:func:`~ctld.sched.plan.plan_event`), which leaves the
                expected starts of the last full pass as they are.

        Returns:
            What the pass decided.
        """
        now = time.time()
        self._hooks.settle(now)
        snapshot = build_snapshot(
            self._state,
            now,
            self._weights,
            self._accounting,
            self._kept,
            reuse=not full,
            held=self._held,
        )
        decided = self._unblock(snapshot, (plan if full else plan_event)(snapshot, now, self.cfg))
        decided = self._quieted(decided, now)
        if full:
            self.start_times = decided.start_times
            self._held = decided.held(now)
        self._hooks.apply(decided, now)
        if full:
            self._hooks.preempt(snapshot, decided, now)
        self.passes += 1
        if decided.starts:
            log.debug("pass %d started %d job(s)", self.passes, len(decided.starts))
        return decided

    def _unblock(self, snapshot: Snapshot, decided: Plan) -> Plan:
        """Clear the reason of a job out of its block that the pass did not examine.

        A pass gives reasons only to the jobs it examined and those still
        blocked; the others keep theirs, as in Slurm, except a reason that
        named a block now gone (a dependency met, a begin time passed), which
        becomes ``None`` as Slurm sets it then.
        """
        blocked = {job.job_id for job in snapshot.pending if job.blocked}
        freed = self._blocked - blocked - decided.reasons.keys()
        self._blocked = blocked
        if not freed:
            return decided
        cleared = dict.fromkeys(freed, jobops.REASON_NONE)
        return replace(decided, reasons={**decided.reasons, **cleared})

    def _quieted(self, decided: Plan, now: float) -> Plan:
        """The plan without the reasons of jobs whose reason must stay None a while yet."""
        if not self._quiet:
            return decided
        self._quiet = {i: until for i, until in self._quiet.items() if until > now}
        kept = {i: r for i, r in decided.reasons.items() if i not in self._quiet}
        return replace(decided, reasons=kept)

    async def _caught_up(self) -> None:
        """Return once the event loop keeps up and the launches under way are few."""
        if self._lag is None:
            return
        launching = self._launching or (lambda: 0)
        while self._lag.seconds > MAX_LAG or launching() > MAX_LAUNCHING:
            await self._lag.measured()

    async def _run(self) -> None:
        tick = min(TICK_SECONDS, self.cfg.bf_interval)
        last_full = -INF  # when the last full pass began (monotonic)
        full_ready = 0.0  # from when a kick may bring on a full pass again
        owed = False  # an event pass ran since the last full pass: one must follow
        while True:
            now = time.monotonic()
            wake = min(next_wakeup(self._state, time.time()), *self._quiet.values(), INF)
            wake += 0.01 - time.time()
            timeout = min(last_full + tick - now, wake, full_ready - now if owed else INF)
            try:
                await asyncio.wait_for(self._kicked.wait(), max(timeout, 0))
            except TimeoutError:
                pass
            await self._caught_up()
            self._kicked.clear()
            began = time.monotonic()
            full = began >= full_ready or began >= last_full + tick
            try:
                self.run_pass(full)
            except Exception:
                log.exception("scheduling pass failed")
            took = time.monotonic() - began
            (self.full_stats if full else self.event_stats).add(took)
            if full:
                # The next full pass waits as long again as this one took.
                last_full, full_ready, owed = began, began + 2 * took, False
            else:
                owed = True
                if took > MIN_PAUSE_AFTER:
                    await asyncio.sleep(took)
