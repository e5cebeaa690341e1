"""Starting a step's stepd after a launch that failed: slurmd's event loop must be left clean.

A launch whose srun goes away while its stepd starts is cancelled, and one
whose stepd exits without connecting fails; either way the next launch, whose
listening socket may reuse the same descriptor number, must accept its stepd.
Real stepd processes from slurmd's fork server, no gRPC, no cluster.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from test_stepio import collect, sh_task, step_spec, stream, until

from nodeagent.spool import SOCKET_NAME, StepJob
from nodeagent.stepdpool import Stepd, StepdPool
from nodeagent.stepio import StepdError, start_step

pytestmark = pytest.mark.timeout(60)


def started(argv: list[str]) -> Stepd:
    proc = subprocess.Popen(argv, start_new_session=True)
    return Stepd(proc.pid, os.pidfd_open(proc.pid), proc)


def never_connects(step_dir: str) -> Stepd:
    """A "stepd" that stays silent until killed."""
    return started(["sleep", "60"])


def exits_at_once(step_dir: str) -> Stepd:
    """A "stepd" that exits before it connects."""
    return started(["true"])


async def cancel_while_waiting(step_dir: Path, spec: StepJob) -> None:
    """A launch cancelled while it waits for its stepd, as when srun goes away."""
    launch = asyncio.create_task(start_step(str(step_dir), spec, spawn=never_connects))
    await until(lambda: (step_dir / SOCKET_NAME).exists(), what="the launch to listen")
    launch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await launch


@pytest.mark.parametrize("failure", ["cancelled", "stepd exited"])
def test_the_launch_after_a_failed_one_accepts_its_stepd(tmp_path: Path, failure: str) -> None:
    spec = step_spec([sh_task(0, "echo hi")], tmp_path)

    async def body() -> bytes:
        pool = StepdPool()
        try:
            if failure == "cancelled":
                await cancel_while_waiting(tmp_path / "failed", spec)
            else:
                with pytest.raises(StepdError, match="exited"):
                    await start_step(str(tmp_path / "failed"), spec, spawn=exits_at_once)
            session = await start_step(str(tmp_path / "step"), spec, 10, pool.spawn)
            return stream(await collect(session), 0)
        finally:
            pool.close()

    assert asyncio.run(body()) == b"hi\n"
