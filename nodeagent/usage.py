"""Usage sampling of a step's processes (Slurm's ``jobacct_gather/linux``).

stepd samples the resident memory of the process trees below it with
psutil: once soon after the start (so that short steps get a figure too),
then every ``JobAcctGatherFrequency`` seconds (0: never). A task's RSS is
the sum over its whole process tree, as Slurm counts it; MaxRSS is the
largest sample of the largest task. What stepd reports is the larger of
that and ``ru_maxrss`` of the reaped children (exact for a single process,
blind to trees running side by side). TotalCPU needs no sampling: it is
the children's ``getrusage`` user and system time.

psutil is not imported when stepd starts: a spare stepd must be ready
within tens of milliseconds of the previous launch and psutil costs 20-50
ms to import. A spare left idle imports it while it waits
(:func:`preload_psutil`); otherwise the first sample does. If it cannot be
imported then (stepd already runs as the job's user and the interpreter's
files are unreadable), sampling stops and ``ru_maxrss`` alone is reported.

Imports only the standard library, and psutil lazily.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

FIRST_SAMPLE_SECONDS = 0.3  # after the start: long enough for a task to exist, short for a step


def preload_psutil() -> None:
    """Import psutil ahead of the first sample, if it is there (a spare stepd's idle work)."""
    try:
        importlib.import_module("psutil")
    except ImportError:
        pass


def rss_by_child(root: int) -> dict[int, int]:
    """The resident memory of each child of ``root`` with all its descendants.

    Args:
        root: the parent (stepd itself).

    Returns:
        KiB per child pid; processes that vanish while being read count 0.

    Raises:
        ImportError: psutil is not available.
    """
    import psutil

    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for proc in psutil.Process(root).children(recursive=True):
        try:
            with proc.oneshot():
                parents[proc.pid] = proc.ppid()
                rss[proc.pid] = proc.memory_info().rss
        except psutil.Error:
            pass  # gone, a zombie, or not ours to read
    totals: dict[int, int] = {}
    for pid, size in rss.items():
        top = pid
        for _ in parents:  # climb to the child of root it descends from (bounded: pid reuse)
            parent = parents.get(top, root)
            if parent == root:
                break
            top = parent
        totals[top] = totals.get(top, 0) + size
    return {pid: size // 1024 for pid, size in totals.items()}


class UsageSampler:
    """When to sample, and the largest resident set seen so far.

    Args:
        interval: seconds between samples after the first (0: never sample).
        per_task: each child of stepd is a task of its own (a step's tasks);
            otherwise all of them make one task (a batch script and its orphans).
    """

    def __init__(self, interval: float, per_task: bool) -> None:
        self.interval = interval
        self.per_task = per_task
        self.max_rss = 0  # KiB
        self.samples = 0
        self.next_at = time.monotonic() + FIRST_SAMPLE_SECONDS if interval > 0 else float("inf")

    def seconds_left(self, now: float) -> float:
        """Seconds until the next sample is due.

        Args:
            now: ``time.monotonic()``.

        Returns:
            0 when due, ``inf`` when sampling is off.
        """
        return max(0.0, self.next_at - now)

    def sample_if_due(self, now: float) -> None:
        """Sample the processes below this one when a sample is due.

        Args:
            now: ``time.monotonic()``.
        """
        if now < self.next_at:
            return
        self.next_at = now + self.interval
        try:
            totals = rss_by_child(os.getpid())
        except ImportError as error:
            sys.stderr.write(f"slurmstepd: usage sampling off: {error}\n")
            self.next_at = float("inf")
            return
        self.samples += 1
        rss = max(totals.values(), default=0) if self.per_task else sum(totals.values())
        self.max_rss = max(self.max_rss, rss)

    def max_rss_with(self, ru_maxrss: int) -> int:
        """MaxRSS to report: the largest sample, or the largest reaped process if larger.

        Args:
            ru_maxrss: ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (KiB on Linux).

        Returns:
            KiB.
        """
        return max(self.max_rss, ru_maxrss)
