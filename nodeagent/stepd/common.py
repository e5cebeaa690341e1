"""What stepd does the same way for a batch script and for a step's tasks.

Its log, becoming a subreaper, dropping to the job's user, finding every
descendant, and the lines of its own it writes to a job's output.

Imports the standard library and nodeagent.spool.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from nodeagent import spool

PR_SET_CHILD_SUBREAPER = 36
WAITED = (signal.SIGCHLD, signal.SIGTERM)  # taken synchronously (blocked, then waited for)


def log(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%Y-%m-%dT%H:%M:%S')}] stepd: {message}\n")
    sys.stderr.flush()


def become_subreaper() -> None:
    """Make orphaned descendants reparent to this process (Linux only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("prctl(PR_SET_CHILD_SUBREAPER) failed; orphans may escape")


def drop_privileges(uid: int, gid: int, user: str) -> None:
    """Become the job's user, with its supplementary groups (when running as root).

    Args:
        uid: the job's uid.
        gid: its primary gid.
        user: its name, for the group list.
    """
    if os.getuid() != 0:
        return
    try:
        groups = os.getgrouplist(user, gid)
    except KeyError:
        groups = [gid]
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)


def descendants(root: int) -> list[tuple[int, int]]:
    """Every process below ``root`` (orphans included when it is their subreaper).

    Args:
        root: the ancestor's pid.

    Returns:
        ``(pid, process group)`` of each, zombies included.
    """
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append((int(entry), int(fields[2])))
    found, todo = [], list(children.get(root, []))
    while todo:
        proc = todo.pop()
        found.append(proc)
        todo.extend(children.get(proc[0], []))
    return found


_CANCEL_WHY = {
    "TIMEOUT": " DUE TO TIME LIMIT",
    "REQUEUE": " DUE TO JOB REQUEUE",
    "PREEMPTED": " DUE TO PREEMPTION",
    "PREEMPT_REQUEUE": " DUE TO PREEMPTION",
    "NODE_FAIL": " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS",
}


def error_line(node: str, text: str) -> bytes:
    """A line of stepd's own in a job's or a task's output: ``slurmstepd-n1: error: ...``.

    Args:
        node: the node's name.
        text: what went wrong.

    Returns:
        The line, encoded.
    """
    return f"slurmstepd-{node}: error: {text}\n".encode()


def cancel_line(what: str, node: str, request: spool.Terminate) -> bytes:
    """Slurm's ``*** JOB 12 ON n1 CANCELLED AT ... ***`` line (``what`` = "JOB 12", "STEP 12.0")."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(request.time))
    why = _CANCEL_WHY.get(request.outcome, "")
    return error_line(node, f"*** {what} ON {node} CANCELLED AT {stamp}{why} ***")


def chdir_failed(path: str, error: OSError) -> str:
    return f"couldn't chdir to `{path}': {error.strerror}: going to /tmp instead"


def exit_of(status: int | None) -> tuple[int, int]:
    """(exit code, signal) of a wait status (None: never ran)."""
    status = status or 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    return code, os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def try_call(fn: object, *args: object) -> None:
    try:
        fn(*args)  # type: ignore[operator]
    except OSError:
        pass
