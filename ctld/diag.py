"""sdiag's counters: jobs submitted, started and ended since the start, and RPCs by type and user.

:class:`JobTally` counts what the ledger commits (each record against the one
it replaces); :class:`RpcStats` holds the calls that ctld.servicer.CallTimer,
a gRPC interceptor, times. Both start at zero when the controller starts (or
sdiag -r resets them), as Slurm's do.

Imports only minislurm.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.model import Job
from minislurm.states import TERMINAL_JOB_STATES, JobState


@dataclass
class JobTally:
    """Jobs submitted, started, completed, cancelled and failed since the controller started."""

    submitted: int = 0
    started: int = 0
    completed: int = 0
    canceled: int = 0
    failed: int = 0

    def see(self, old: Job | None, new: Job) -> None:
        """Count one committed record.

        Args:
            old: the record it replaces, None for a new one.
            new: the record.
        """
        if old is None:
            if new.array_task_id is None or new.array_job_id == new.job_id:
                self.submitted += 1  # not a task split off an array already counted
            old_state = JobState.PENDING
        else:
            old_state = old.state
        if new.state is old_state:
            return
        if new.state is JobState.RUNNING and old_state is JobState.PENDING:
            self.started += 1
        elif new.state in TERMINAL_JOB_STATES and old_state not in TERMINAL_JOB_STATES:
            if new.state is JobState.COMPLETED:
                self.completed += 1
            elif new.state is JobState.CANCELLED:
                self.canceled += 1
            else:
                self.failed += 1


@dataclass
class CallCount:
    """How many calls and how long they took in all (seconds)."""

    count: int = 0
    seconds: float = 0.0


class RpcStats:
    """Calls counted and timed by method name and by caller uid (see ctld.servicer.CallTimer)."""

    def __init__(self) -> None:
        self.by_method: dict[str, CallCount] = {}
        self.by_uid: dict[int, CallCount] = {}

    def reset(self) -> None:
        """Forget every call counted (sdiag -r)."""
        self.by_method.clear()
        self.by_uid.clear()

    def record(self, method: str, uid: int, seconds: float) -> None:
        """Count one call.

        Args:
            method: its method name.
            uid: the caller (-1 when unauthenticated).
            seconds: how long it took.
        """
        for entry in (
            self.by_method.setdefault(method, CallCount()),
            self.by_uid.setdefault(uid, CallCount()),
        ):
            entry.count += 1
            entry.seconds += seconds
