"""How far behind the controller's event loop runs.

Every call, timer and report the controller handles waits its turn on one
event loop. When more arrives than the loop gets through (a thousand jobs
ending at once, each reported by its node), everything queued waits,
heartbeats too. :class:`LoopLag` measures that wait as a short timer's
lateness, so that the scheduler can hold back new starts until the loop
catches up (as Slurm defers scheduling while ``max_rpc_cnt`` calls are
active) and the liveness check does not blame nodes for silence that was
the controller's own.

Imports only the standard library.
"""

from __future__ import annotations

import asyncio

PERIOD = 0.05  # seconds between measurements while the loop keeps up


class LoopLag:
    """The event loop's lag, measured every :data:`PERIOD` from :meth:`run`."""

    def __init__(self) -> None:
        self.seconds = 0.0  # the last measured lag
        self._measured = asyncio.Event()

    async def run(self) -> None:
        """Measure until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(PERIOD)
            self.seconds = max(0.0, loop.time() - asked - PERIOD)
            self._measured.set()
            self._measured.clear()

    async def measured(self) -> None:
        """Return after the next measurement."""
        await self._measured.wait()
