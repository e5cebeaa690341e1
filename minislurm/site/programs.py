"""The site's programs: Prolog, Epilog, health checks, RebootProgram, PrologSlurmctld...

Slurm runs them the same way wherever they are configured: each configured
path may be a glob or a directory; the programs found run one after the
other in reverse alphabetical order, each in a session of its own, and the
first that fails (a non-zero exit, a signal, or its time passed: its whole
process group is then killed) ends the run as failed. slurmd runs some
(nodeagent.prologs, nodeagent.health), slurmctld others.

Imports the standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

OUTPUT_KEPT = 4096  # bytes of a failed program's output put in the log


@dataclass(frozen=True)
class ScriptFailure:
    """How a Prolog or Epilog failed."""

    program: str
    exit_code: int = 0
    signal: int = 0
    timed_out: bool = False

    def __str__(self) -> str:
        if self.timed_out:
            return f"{self.program}: timed out"
        if self.signal:
            return f"{self.program}: killed by signal {self.signal}"
        return f"{self.program}: exit code {self.exit_code}"


def programs(paths: Sequence[str]) -> list[str]:
    """The programs configured paths name, in the order Slurm runs them.

    Args:
        paths: files, globs or directories (a directory stands for its files).

    Returns:
        Every regular file they name, in reverse alphabetical order.
    """
    found: set[str] = set()
    for path in paths:
        pattern = os.path.join(path, "*") if os.path.isdir(path) else path
        matches = glob.glob(pattern) if glob.has_magic(pattern) or pattern != path else [path]
        found.update(m for m in matches if not os.path.isdir(m))
    return sorted(found, reverse=True)


async def run_programs(
    paths: Sequence[str], env: dict[str, str], timeout: int, what: str
) -> ScriptFailure | None:
    """Run the programs ``paths`` name, one after the other, until one fails.

    Args:
        paths: as configured (files, globs or directories).
        env: their environment.
        timeout: seconds each may run; 0: no limit.
        what: for the log ("job=12 prolog").

    Returns:
        The failure, or None when every program succeeded.
    """
    for program in programs(paths):
        failure = await _run_one(program, env, timeout or None)
        if failure is not None:
            log.error("%s failed: %s", what, failure)
            return failure
    return None


async def _run_one(program: str, env: dict[str, str], timeout: int | None) -> ScriptFailure | None:
    try:
        proc = await asyncio.create_subprocess_exec(
            program,
            env=env,
            cwd="/",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as err:
        log.error("cannot run %s: %s", program, err)
        return ScriptFailure(program, exit_code=127)
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        return ScriptFailure(program, timed_out=True)
    code = proc.returncode or 0
    if code == 0:
        return None
    if output:
        log.warning("%s said: %s", program, output[-OUTPUT_KEPT:].decode(errors="replace"))
    return ScriptFailure(program, exit_code=max(code, 0), signal=max(-code, 0))
