"""The scheduling loop: a full pass per kick, or an event pass while the last full one rests."""

from __future__ import annotations

import asyncio
import time

import pytest
from helpers import until

from ctld.sched.priority import PriorityWeights
from ctld.scheduling import SchedulerLoop
from ctld.state import ClusterState
from minislurm.model import Plan

pytestmark = pytest.mark.timeout(30)


class TimedLoop(SchedulerLoop):
    """A loop over an empty cluster whose passes take the times given, and say their kind."""

    def __init__(self, costs: list[float]) -> None:
        super().__init__(ClusterState([], []), PriorityWeights(), self._applied, self._prepared)
        self.costs = costs  # seconds each pass takes, in turn (then none)
        self.kinds: list[str] = []

    def run_pass(self, full: bool = True) -> Plan:
        self.kinds.append("full" if full else "event")
        if self.costs:
            time.sleep(self.costs.pop(0))  # the pass's own work: the event loop waits for it
        return super().run_pass(full)

    def _applied(self, decided: Plan, now: float) -> None:
        pass

    def _prepared(self, now: float) -> None:
        pass


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
