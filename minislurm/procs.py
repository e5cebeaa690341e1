"""Knowing a process again: pid files that record the process's start time.

A pid alone can be reused by an unrelated process; a pid with its start
time (``/proc/PID/stat`` field 22, in clock ticks since boot) names one
process for good. stepd writes its ``stepd.pid`` this way, and whoever
signals or adopts a stepd checks both.

Imports only the standard library (stepd imports it).
"""

from __future__ import annotations

import os


def start_time(pid: int) -> int | None:
    """When a process started (clock ticks since boot), or None if it is gone or a zombie.

    Args:
        pid: the process.

    Returns:
        Its start time.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == b"Z":
        return None
    return int(fields[19])


def write_pid_file(path: str) -> None:
    """Record this process's pid and start time.

    Args:
        path: the pid file.
    """
    pid = os.getpid()
    with open(path, "w") as f:
        f.write(f"{pid} {start_time(pid)}\n")


def recorded_pid(path: str) -> int:
    """The number a plain pid file holds (``task.pid``: a task's process group), 0 if none.

    Args:
        path: the file.

    Returns:
        The pid (the first, of several), or 0 when the file is missing, empty or malformed.
    """
    return next(iter(recorded_pids(path)), 0)


def recorded_pids(path: str) -> list[int]:
    """The numbers a plain pid file holds, one a line (a step's ``task.pid``: its groups).

    Args:
        path: the file.

    Returns:
        The positive pids, none when the file is missing or malformed.
    """
    try:
        with open(path) as f:
            pids = [int(line) for line in f.read().split()]
    except (OSError, ValueError):
        return []
    return [pid for pid in pids if pid > 0]


def live_pid(path: str) -> int | None:
    """The process a pid file names, if it is still that very process.

    Args:
        path: a pid file written by :func:`write_pid_file`.

    Returns:
        The pid, or None when the file is missing, malformed or stale.
    """
    try:
        with open(path) as f:
            pid_text, _, start_text = f.read().strip().partition(" ")
        pid, start = int(pid_text), int(start_text)
    except (OSError, ValueError):
        return None
    return pid if start_time(pid) == start else None
