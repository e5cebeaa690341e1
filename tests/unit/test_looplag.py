"""The event loop's lag: measured as a timer's lateness, again and again."""

from __future__ import annotations

import asyncio
import time

import pytest

from ctld.looplag import LoopLag

pytestmark = pytest.mark.timeout(10)


def hog(seconds: float) -> None:
    """Keep the event loop from turning, as a burst of handlers does."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def test_a_loop_kept_busy_is_measured_late_then_caught_up() -> None:
    lag = LoopLag()

    async def scenario() -> None:
        measuring = asyncio.create_task(lag.run())
        await asyncio.sleep(0)  # its first timer is set
        hog(0.4)

        async def measured_late() -> None:
            while lag.seconds < 0.3:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(measured_late(), 2)
        await lag.measured()  # the next one finds it caught up
        assert lag.seconds <= 0.1
        measuring.cancel()

    asyncio.run(scenario())
