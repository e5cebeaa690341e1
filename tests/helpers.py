"""Helpers shared by the tests: waiting on conditions, running our commands.

Tests wait with :func:`wait_until`, never a bare sleep.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

BIN = Path(sys.executable).parent


def wait_until(predicate: Callable[[], T], timeout: float = 20.0, what: str = "condition") -> T:
    """Poll ``predicate`` until it returns something truthy, and return that.

    Args:
        predicate: the condition.
        timeout: seconds.
        what: for the failure message.

    Returns:
        The predicate's first truthy value.

    Raises:
        AssertionError: it never held.
    """
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


async def until(
    predicate: Callable[[], object], timeout: float = 20.0, what: str = "condition"
) -> None:
    """:func:`wait_until` inside an event loop: poll ``predicate`` without blocking the loop.

    Args:
        predicate: the condition.
        timeout: seconds.
        what: for the failure message.

    Raises:
        AssertionError: it never held.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)


@dataclass
class Result:
    """What a command did."""

    out: str
    err: str
    rc: int


def run_command(
    argv: list[str],
    env: dict[str, str],
    cwd: str | Path | None = None,
    stdin: str | None = None,
    timeout: float = 60.0,
) -> Result:
    """Run one of our commands (from this interpreter's bin directory).

    Args:
        argv: command and arguments; the command is looked up in BIN.
        env: the environment.
        cwd: working directory.
        stdin: text for standard input (None: /dev/null).
        timeout: seconds.

    Returns:
        Its output and exit status.
    """
    proc = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        env=env,
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.stdout, proc.stderr, proc.returncode)


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def base_env(conf: str | Path) -> dict[str, str]:
    """An environment pointing the commands at a cluster's slurm.conf.

    Args:
        conf: the slurm.conf path.

    Returns:
        The environment.
    """
    settings = (
        *("SLURM_", "SBATCH_", "SRUN_", "SALLOC_"),
        *("SQUEUE_", "SINFO_", "SACCT_", "SCANCEL_", "SPRIO_"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(settings)}
    env["SLURM_CONF"] = str(conf)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def cgroup2_mount() -> Path | None:
    """Where this machine mounts cgroup v2 (a hybrid host: beside its v1 hierarchies)."""
    with open("/proc/mounts") as f:
        for line in f:
            _, mount, kind, *_ = line.split()
            if kind == "cgroup2":
                return Path(mount)
    return None
