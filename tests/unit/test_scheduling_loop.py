"""The scheduling loop: a full pass per kick, or an event pass while the last full one rests."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pytest
from helpers import until

from ctld.sched.priority import PriorityWeights
from ctld.scheduling import REASON_DELAY, SchedulerLoop
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import Job, Node, Plan, ResourceRequest, Snapshot
from minislurm.states import JobState, NodeState

pytestmark = pytest.mark.timeout(30)


class Hooks:
    """A pass's hooks that note the reasons each pass gives, and do nothing else."""

    def __init__(self) -> None:
        self.given: list[tuple[float, dict[int, str]]] = []

    def settle(self, now: float) -> None:
        pass

    def apply(self, decided: Plan, now: float) -> None:
        self.given.append((now, decided.reasons))

    def preempt(self, snapshot: Snapshot, decided: Plan, now: float) -> None:
        pass


class TimedLoop(SchedulerLoop):
    """A loop over an empty cluster whose passes take the times given, and say their kind."""

    def __init__(self, costs: list[float]) -> None:
        super().__init__(ClusterState([], []), PriorityWeights(), Hooks())
        self.costs = costs  # seconds each pass takes, in turn (then none)
        self.kinds: list[str] = []

    def run_pass(self, full: bool = True) -> Plan:
        self.kinds.append("full" if full else "event")
        if self.costs:
            time.sleep(self.costs.pop(0))  # the pass's own work: the event loop waits for it
        return super().run_pass(full)


def test_a_kick_soon_after_a_long_full_pass_gets_an_event_pass_then_a_full_one_follows() -> None:
    loop = TimedLoop([1.0])

    async def scenario() -> None:
        loop.start()
        await until(lambda: loop.passes == 1, timeout=10)
        loop.kick()  # within a second of the end of a full pass that took one
        await until(lambda: loop.passes == 3, timeout=10)
        await loop.stop()

    asyncio.run(scenario())
    assert loop.kinds == ["full", "event", "full"]


def test_every_kick_gets_a_full_pass_while_full_passes_are_quick() -> None:
    loop = TimedLoop([])

    async def scenario() -> None:
        loop.start()
        for count in range(1, 4):
            await until(lambda n=count: loop.passes == n, timeout=10)
            loop.kick()
        await until(lambda: loop.passes == 4, timeout=10)
        await loop.stop()

    asyncio.run(scenario())
    assert loop.kinds == ["full"] * 4


class ReasonLoop(SchedulerLoop):
    """A loop over one node and a job that waits for its begin time; it notes the reasons given."""

    def __init__(self) -> None:
        node = Node("n1", 4, 4000, (), ("p",), state=NodeState.IDLE)
        state = ClusterState([node], [PartitionConfig("p", ("n1",), default=True)])
        request = ResourceRequest()
        job = Job(7, "j", 0, 0, "u", "u", "p", JobState.PENDING, request, time.time())
        state.put_job(replace(job, begin_time=time.time() + 3600))
        hooks = Hooks()
        super().__init__(state, PriorityWeights(), hooks)
        self.given = hooks.given


def test_a_reason_a_request_reset_waits_a_second_as_slurms_scheduling_cycle() -> None:
    loop = ReasonLoop()

    async def scenario() -> None:
        loop.start()
        await until(lambda: loop.passes == 1, timeout=10)
        loop.keep_reasons([7], time.time())  # as a release does
        await until(lambda: loop.passes == 2, timeout=10)
        await until(lambda: any(7 in reasons for _, reasons in loop.given[1:]), timeout=10)
        await loop.stop()

    released = time.time()
    asyncio.run(scenario())
    first, kicked = loop.given[0][1], loop.given[1][1]
    assert first[7] == "BeginTime" and 7 not in kicked  # the pass the release brought on
    given_at = next(now for now, reasons in loop.given[1:] if 7 in reasons)
    assert given_at - released >= REASON_DELAY  # a later pass, which the loop woke for
