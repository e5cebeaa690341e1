"""What a change of state asks to be done on the nodes, after it is committed.

Intents are carried out by :class:`ctld.runner.IntentRunner` once the
change that produced them is durable; each is idempotent (agents ignore
repeats), so resending one after a restart is safe.

Imports nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Launch:
    """Start a job's batch script on its first node."""

    job_id: int


@dataclass(frozen=True)
class Terminate:
    """Kill everything of a job on the given nodes."""

    job_id: int
    nodes: tuple[str, ...]
    outcome: str


@dataclass(frozen=True)
class Signal:
    """Send a signal to a job's processes on its nodes."""

    job_id: int
    nodes: tuple[str, ...]
    signal: int
    batch_only: bool
    full: bool


@dataclass(frozen=True)
class SignalStep:
    """Send a signal to the tasks of one step on its nodes (``scancel 123.0``)."""

    job_id: int
    step_id: int
    nodes: tuple[str, ...]
    signal: int


@dataclass(frozen=True)
class AllocProlog:
    """Run the Prolog of a job just allocated on its nodes (``PrologFlags=Alloc``)."""

    job_id: int
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class CtldProlog:
    """Run PrologSlurmctld for an allocation without a batch script (a batch job's runs
    before its launch)."""

    job_id: int


@dataclass(frozen=True)
class Reboot:
    """Ask a node's agent to reboot it (``scontrol reboot``, once no job holds it)."""

    node: str


Intent = Launch | Terminate | Signal | SignalStep | Reboot | AllocProlog | CtldProlog
