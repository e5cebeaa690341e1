"""A cancelled batch job on one node: what its processes get, and when.

Real stepd processes run real scripts in a temporary spool; no daemons.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import time
from pathlib import Path

import pytest
from helpers import until

from nodeagent.launcher import Launcher, StepLaunch, StepOutcome
from nodeagent.stepdpool import StepdPool

pytestmark = pytest.mark.timeout(60)


def job(job_id: int, script: str, workdir: Path, kill_wait: int) -> StepLaunch:
    user = pwd.getpwuid(os.getuid()).pw_name
    out = str(workdir / "job.out")
    return StepLaunch(
        job_id, os.getuid(), os.getgid(), user, 0o022, script.encode(), [], dict(os.environ),
        str(workdir), out, out, "/dev/null", "n1", kill_wait=kill_wait,
    )  # fmt: skip


def text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_a_killed_scripts_processes_get_the_rest_of_kill_wait(tmp_path: Path) -> None:
    # As Slurm's stepd: the script dies of SIGTERM at once, but what it started (an
    # srun saying its last) has until KillWait before SIGKILL, and the job ends as
    # soon as they have.
    out, late = tmp_path / "job.out", tmp_path / "late"
    script = f"""#!/bin/bash
(trap '' TERM; echo ready; until grep -q CANCELLED {out}; do sleep 0.05; done; sleep 1
 echo done > {late}) &
exec sleep 300
"""

    async def body() -> tuple[list[StepOutcome], float]:
        ended: list[StepOutcome] = []
        pool = StepdPool(spare=False)
        launcher = Launcher(str(tmp_path / "spool"), ended.append, pool)
        launcher.launch(job(7, script, tmp_path, kill_wait=20))
        await until(lambda: "ready" in text(out), what="the job to start")
        start = time.monotonic()
        launcher.terminate(7, "CANCELLED", 20, time.time())
        await until(lambda: ended, timeout=30, what="the job to end")
        launcher.close()
        pool.close()
        return ended, time.monotonic() - start

    ended, took = asyncio.run(body())
    assert text(late) == "done\n"  # it lived on after the script died
    assert (ended[0].signal, ended[0].outcome) == (15, "CANCELLED")
    assert took < 20  # it ended once its processes had, not at KillWait
    assert "*** JOB 7 ON n1 CANCELLED AT " in text(out)
