"""A cancelled batch job on one node: what its processes get, and when.

Real stepd processes run real scripts in a temporary spool; no daemons.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from helpers import until

from nodeagent import spool
from nodeagent.launcher import Launcher, StepOutcome
from nodeagent.stepdpool import StepdPool

pytestmark = pytest.mark.timeout(60)


def job(job_id: int, script: str, workdir: Path, kill_wait: int) -> tuple[spool.BatchJob, bytes]:
    """The job's ``job.json`` and its script, for :meth:`Launcher.launch`."""
    user = pwd.getpwuid(os.getuid()).pw_name
    out = str(workdir / "job.out")
    return spool.BatchJob(
        job_id, os.getuid(), os.getgid(), user, 0o022, (), dict(os.environ),
        str(workdir), out, out, "/dev/null", "n1", kill_wait=kill_wait,
    ), script.encode()  # fmt: skip


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
        pool = StepdPool(fork=False)
        launcher = Launcher(str(tmp_path / "spool"), ended.append, pool)
        launcher.launch(*job(7, script, tmp_path, kill_wait=20))
        await until(lambda: "ready" in text(out), what="the job to start")
        start = time.monotonic()
        launcher.terminate(7, "CANCELLED", 20, time.time())
        await until(lambda: ended, timeout=30, what="the job to end")
        await launcher.close()
        pool.close()
        return ended, time.monotonic() - start

    ended, took = asyncio.run(body())
    assert text(late) == "done\n"  # it lived on after the script died
    assert (ended[0].signal, ended[0].outcome) == (15, "CANCELLED")
    assert took < 20  # it ended once its processes had, not at KillWait
    assert "*** JOB 7 ON n1 CANCELLED AT " in text(out)


def test_jobs_cancelled_as_they_launch_through_spares_end_cancelled(tmp_path: Path) -> None:
    # A kill request may reach a stepd before it is ready for one: a spare still
    # starting (handed work right after the previous launch), or one handed its
    # job a moment ago. It must be taken once stepd is ready, not kill stepd
    # unheard: each job ends CANCELLED, with its line, never "slurmstepd died".
    script = "#!/bin/sh\nexec sleep 300\n"

    async def body() -> list[StepOutcome]:
        ended: list[StepOutcome] = []
        pool = StepdPool()
        launcher = Launcher(str(tmp_path / "spool"), ended.append, pool)
        try:
            for job_id in range(1, 6):
                launcher.launch(*job(job_id, script, tmp_path / str(job_id), kill_wait=2))
                launcher.terminate(job_id, "CANCELLED", 2, time.time())
            await until(lambda: len(ended) == 5, timeout=30, what="the jobs to end")
        finally:
            await launcher.close()
            pool.close()
        return ended

    for job_id in range(1, 6):
        (tmp_path / str(job_id)).mkdir()
    ended = asyncio.run(body())
    assert sorted((o.job_id, o.signal, o.outcome, o.message) for o in ended) == [
        (job_id, 15, "CANCELLED", "") for job_id in range(1, 6)
    ]
    for job_id in range(1, 6):
        assert f"*** JOB {job_id} ON n1 CANCELLED AT " in text(tmp_path / str(job_id) / "job.out")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a job as another user")
def test_a_cancelled_job_of_another_user_says_when_its_processes_had_sigterm() -> None:
    # slurmd kills a job's steps once its batch stepd says, in the job's directory,
    # that the script has had SIGTERM. That stepd runs as the job's user by then,
    # who may not create files in the root-owned directory.
    nobody = pwd.getpwnam("nobody")
    # Not under tmp_path, which only its owner may enter: nobody reads its script here.
    work = Path(tempfile.mkdtemp(prefix="minislurm-kill-", dir="/tmp"))
    os.chmod(work, 0o777)
    script = "#!/bin/sh\necho ready\nexec sleep 300\n"

    async def body() -> bool:
        ended: list[StepOutcome] = []
        pool = StepdPool(fork=False)
        launcher = Launcher(str(work / "spool"), ended.append, pool)
        batch, code = job(7, script, work, kill_wait=5)
        launcher.launch(batch._replace(uid=nobody.pw_uid, gid=nobody.pw_gid, user="nobody"), code)
        try:
            await until(lambda: "ready" in text(work / "job.out"), what="the job to start")
            launcher.terminate(7, "CANCELLED", 5, time.time())
            jobdir = launcher.jobdir(7)
            await until(lambda: spool.killed(jobdir) or ended, timeout=30, what="SIGTERM or end")
            return spool.killed(jobdir)
        finally:
            await until(lambda: ended, timeout=30, what="the job to end")
            await launcher.close()
            pool.close()

    try:
        assert asyncio.run(body())
    finally:
        shutil.rmtree(work, ignore_errors=True)
