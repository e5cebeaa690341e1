"""Time-limit timers: one event-loop timer per running job with a limit.

Exact rather than polled: a job is told to stop when its limit passes, not
at the next sweep. Timers live in memory; the controller re-arms them from
the database when it starts (a limit passed while it was down fires at once).

Imports nothing of ours.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class JobTimers:
    """Calls ``on_expire(job_id)`` when a job's deadline passes."""

    def __init__(self, on_expire: Callable[[int], None]) -> None:
        self._on_expire = on_expire
        self._handles: dict[int, asyncio.TimerHandle] = {}

    def arm(self, job_id: int, deadline: float) -> None:
        """Set (or move) a job's deadline.

        Args:
            job_id: the job.
            deadline: epoch seconds; infinity means no timer.
        """
        self.disarm(job_id)
        if deadline == float("inf"):
            return
        loop = asyncio.get_running_loop()
        delay = max(deadline - time.time(), 0.0)
        self._handles[job_id] = loop.call_later(delay, self._fire, job_id)

    def disarm(self, job_id: int) -> None:
        """Forget a job's deadline (it ended).

        Args:
            job_id: the job.
        """
        handle = self._handles.pop(job_id, None)
        if handle is not None:
            handle.cancel()

    def clear(self) -> None:
        """Forget every deadline."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()

    def _fire(self, job_id: int) -> None:
        self._handles.pop(job_id, None)
        self._on_expire(job_id)
