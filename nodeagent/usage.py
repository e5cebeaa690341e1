"""Usage sampling of a step's processes (Slurm's ``jobacct_gather/linux``).

stepd samples the process trees below it with psutil: once soon after the
start (so that short steps get a figure too), then every
``JobAcctGatherFrequency`` seconds (0: never). A task's figures (resident
and virtual memory, major page faults, CPU time, bytes read and written)
are sums over its whole process tree, as Slurm counts them; a batch
script and its orphans make one task. MaxRSS is the largest sample of the
largest task. What stepd reports at the end is the larger of that and
``ru_maxrss`` of the reaped children (exact for a single process, blind to
trees running side by side). TotalCPU needs no sampling: it is the
children's ``getrusage`` user and system time.

A step with a memory limit (its ``--mem`` on the node) is sampled at
least every ``MEM_CHECK_SECONDS``; when its processes together hold more
(:attr:`UsageSampler.over_limit`), stepd kills it: Slurm's
``JobAcctGatherParams=OverMemoryKill``.

While the step runs, each sample's per-task peaks go to ``usage.json`` in
its directory; slurmd reads them back (:func:`read_record`) and adds a
sample of its own when sstat asks (nodeagent.stepstat).

psutil is not imported when stepd starts: it costs 20-50 ms to import. The
fork server slurmd starts stepds from imports it once
(:func:`preload_psutil`), for all of them; a stepd started on its own
imports it at its first sample. If it cannot be
imported then (stepd already runs as the job's user and the interpreter's
files are unreadable), sampling stops and ``ru_maxrss`` alone is reported.

Imports the standard library, nodeagent.gpuusage, and psutil lazily.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any, NamedTuple

from nodeagent import gpuusage

FIRST_SAMPLE_SECONDS = 0.3  # after the start: long enough for a task to exist, short for a step
MEM_CHECK_SECONDS = 1.0  # the longest a step over its memory runs on before it is found


def preload_psutil() -> None:
    """Import psutil ahead of the first sample, if it is there (the fork server's start)."""
    try:
        importlib.import_module("psutil")
    except ImportError:
        pass


class Usage(NamedTuple):
    """What a task's process tree uses: sizes now (or the largest seen) and counters."""

    rss: int = 0  # KiB
    vmem: int = 0  # KiB
    pages: int = 0  # major page faults
    cpu: float = 0.0  # seconds of user and system time
    read: int = 0  # bytes read (rchar, as Slurm's jobacct_gather/linux)
    write: int = 0  # bytes written (wchar)
    gpuutil: int = 0  # percent, the task's GPUs together (gres/gpuutil)
    gpumem: int = 0  # MiB in use on the task's GPUs (gres/gpumem)
    gpus: int = 0  # how many GPUs the task has (their usage is sampled)

    def plus(self, other: Usage) -> Usage:
        """Two trees' usage together."""
        return Usage(*(a + b for a, b in zip(self, other, strict=True)))  # type: ignore[arg-type]

    def peak(self, other: Usage) -> Usage:
        """The larger of each figure (sizes peak; counters never go back)."""
        return Usage(*(max(a, b) for a, b in zip(self, other, strict=True)))  # type: ignore[arg-type]


def _major_faults(pid: int) -> int:
    """Field 12 of ``/proc/PID/stat`` (psutil does not give it); 0 when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return int(fields[9])
    except (OSError, IndexError, ValueError):
        return 0


def _process_usage(proc: Any) -> Usage:
    """One process's figures (psutil ``Process``, inside ``oneshot``)."""
    import psutil

    mem = proc.memory_info()
    times = proc.cpu_times()
    try:
        io = proc.io_counters()
        read, write = io.read_chars, io.write_chars
    except (psutil.Error, AttributeError):  # not ours to read, or no /proc/PID/io
        read, write = 0, 0
    cpu = times.user + times.system + times.children_user + times.children_system
    return Usage(mem.rss // 1024, mem.vms // 1024, _major_faults(proc.pid), cpu, read, write)


def usage_by_child(root: int) -> dict[int, Usage]:
    """The usage of each child of ``root`` with all its descendants.

    Args:
        root: the parent (stepd itself).

    Returns:
        Usage per child pid; processes that vanish while being read count nothing.

    Raises:
        ImportError: psutil is not available.
    """
    import psutil

    parents: dict[int, int] = {}
    each: dict[int, Usage] = {}
    for proc in psutil.Process(root).children(recursive=True):
        try:
            with proc.oneshot():
                parents[proc.pid] = proc.ppid()
                each[proc.pid] = _process_usage(proc)
        except psutil.Error:
            pass  # gone, a zombie, or not ours to read
    totals: dict[int, Usage] = {}
    for pid, usage in each.items():
        top = pid
        for _ in parents:  # climb to the child of root it descends from (bounded: pid reuse)
            parent = parents.get(top, root)
            if parent == root:
                break
            top = parent
        totals[top] = totals.get(top, Usage()).plus(usage)
    return totals


def by_task(children: dict[int, Usage], tasks: dict[int, int], per_task: bool) -> dict[int, Usage]:
    """Children's usage as tasks' usage.

    Args:
        children: usage per child pid of stepd.
        tasks: task id per child pid (a step's tasks).
        per_task: each task apart; otherwise every child makes task 0 (a batch
            script and its orphans).

    Returns:
        Usage per task id (a step's children that are no task are left out).
    """
    out: dict[int, Usage] = {}
    for pid, usage in children.items():
        task = tasks.get(pid) if per_task else 0
        if task is not None:
            out[task] = out.get(task, Usage()).plus(usage)
    return out


class UsageSampler:
    """When to sample, and the largest figures seen so far, per task.

    After each sample the figures go to ``record_fd`` (``usage.json``, see
    :func:`read_record`) for slurmd to answer sstat.

    Args:
        interval: seconds between samples after the first (0: never sample).
        per_task: each child of stepd is a task of its own (a step's tasks);
            otherwise all of them make one task (a batch script and its orphans).
        record_fd: where to write the figures (-1: nowhere).
    """

    def __init__(
        self,
        interval: float,
        per_task: bool,
        record_fd: int = -1,
        mem_limit: int = 0,
        gpu_source: str = "",
    ) -> None:
        if mem_limit:  # enforced between samples: they come at least every MEM_CHECK_SECONDS
            interval = min(interval, MEM_CHECK_SECONDS) if interval > 0 else MEM_CHECK_SECONDS
        self.interval = interval
        self.per_task = per_task
        self.record_fd = record_fd
        self.mem_limit = mem_limit  # KiB the step's processes together may hold; 0: no limit
        self.gpu_source = gpu_source  # nodeagent.gpuusage's source ("": GPUs not sampled)
        self.gpus: dict[int, tuple[int, ...]] = {}  # task id -> its GPUs
        self.tasks: dict[int, int] = {}  # child pid -> task id
        self.peaks: dict[int, Usage] = {}  # task id -> largest figures seen
        self.max_rss = 0  # KiB
        self.rss_now = 0  # KiB, every process of the step at the last sample
        self.samples = 0
        self.next_at = time.monotonic() + FIRST_SAMPLE_SECONDS if interval > 0 else float("inf")

    def track(self, pid: int, task_id: int, gpus: tuple[int, ...] = ()) -> None:
        """Count a child's tree as a task's (a step's task, or the batch script as task 0).

        Args:
            pid: the child.
            task_id: its task.
            gpus: the GPUs it is bound to (sampled with it).
        """
        self.tasks[pid] = task_id
        if gpus:
            self.gpus[task_id] = gpus
        self.peaks.setdefault(task_id, Usage())
        self._record()

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
            children = usage_by_child(os.getpid())
        except ImportError as error:
            sys.stderr.write(f"slurmstepd: usage sampling off: {error}\n")
            self.next_at = float("inf")
            return
        self.samples += 1
        tasks = by_task(children, self.tasks, self.per_task)
        if self.gpus and self.gpu_source:
            now_gpus = gpuusage.sample(
                self.gpu_source, (g for gs in self.gpus.values() for g in gs)
            )
            for task, gpus in self.gpus.items():
                util = sum(now_gpus[g][0] for g in gpus)
                mem = sum(now_gpus[g][1] for g in gpus)
                tasks[task] = tasks.get(task, Usage())._replace(
                    gpuutil=util, gpumem=mem, gpus=len(gpus)
                )
        for task, usage in tasks.items():
            self.peaks[task] = self.peaks.get(task, Usage()).peak(usage)
        self.max_rss = max((u.rss for u in self.peaks.values()), default=0)
        self.rss_now = sum(u.rss for u in children.values())
        self._record()

    @property
    def over_limit(self) -> bool:
        """Whether the step's processes held more than its memory at the last sample."""
        return 0 < self.mem_limit < self.rss_now

    def _record(self) -> None:
        if self.record_fd < 0:
            return
        tasks = {str(t): u._asdict() for t, u in self.peaks.items()}
        pids = {str(pid): task for pid, task in self.tasks.items()}
        data = json.dumps({"per_task": self.per_task, "tasks": tasks, "pids": pids}).encode()
        try:
            os.pwrite(self.record_fd, data, 0)
            os.ftruncate(self.record_fd, len(data))
        except OSError:
            self.record_fd = -1  # the disk is full or gone: sstat sees the live figures alone

    def max_rss_with(self, ru_maxrss: int) -> int:
        """MaxRSS to report: the largest sample, or the largest reaped process if larger.

        Args:
            ru_maxrss: ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (KiB on Linux).

        Returns:
            KiB.
        """
        return max(self.max_rss, ru_maxrss)


class Record(NamedTuple):
    """What stepd last wrote to ``usage.json``."""

    per_task: bool
    peaks: dict[int, Usage]  # task id -> largest figures seen
    tasks: dict[int, int]  # child pid -> task id


def read_record(path: str) -> Record | None:
    """Read ``usage.json`` (None when missing, or caught while being rewritten).

    Args:
        path: the file.

    Returns:
        The record.
    """
    try:
        with open(path) as f:
            raw = json.load(f)
        return Record(
            bool(raw["per_task"]),
            {int(t): Usage(**u) for t, u in raw["tasks"].items()},
            {int(p): int(t) for p, t in raw["pids"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
