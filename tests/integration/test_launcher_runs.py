"""A requeued job's runs on one node: the launcher never takes an earlier run for the current one.

Real stepd processes run real scripts in a temporary spool; no daemons.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
from pathlib import Path

import pytest
from helpers import until

from nodeagent import spool
from nodeagent.launcher import EarlierRunRunning, Launcher, StepOutcome
from nodeagent.stepdpool import StepdPool

pytestmark = pytest.mark.timeout(60)


def run_of(job_id: int, restarts: int, workdir: Path) -> tuple[spool.BatchJob, bytes]:
    """Run ``restarts`` of a batch job that says which run it is, then waits.

    Returns:
        Its ``job.json`` and its script, for :meth:`Launcher.launch`.
    """
    user = pwd.getpwuid(os.getuid()).pw_name
    script = f"#!/bin/bash\necho run={restarts}\nsleep 300\n".encode()
    out = str(workdir / f"run{restarts}.out")
    return spool.BatchJob(
        job_id, os.getuid(), os.getgid(), user, 0o022, (), dict(os.environ),
        str(workdir), out, out, "/dev/null", "n1", kill_wait=1, restarts=restarts,
    ), script  # fmt: skip


def text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_a_stale_run_is_killed_before_the_next_run_starts(tmp_path: Path) -> None:
    async def body() -> None:
        ended: list[StepOutcome] = []
        pool = StepdPool()
        launcher = Launcher(str(tmp_path / "spool"), ended.append, pool)
        launcher.launch(*run_of(7, 0, tmp_path))
        await until(lambda: "run=0" in text(tmp_path / "run0.out"), what="the first run")
        assert launcher.knows(7, 0)
        assert not launcher.knows(7, 1)  # the live stepd is of run 0, not run 1
        assert launcher.running == [7]  # and it was left alone
        with pytest.raises(EarlierRunRunning):
            launcher.launch(*run_of(7, 1, tmp_path))  # run 0 is killed meanwhile
        await until(lambda: ended, what="the first run to end")
        assert (ended[0].restarts, ended[0].signal) == (0, 15)
        assert not launcher.knows(7, 1)  # the ended run's spool is removed
        launcher.launch(*run_of(7, 1, tmp_path))  # the controller tries again
        assert launcher.knows(7, 1)
        await until(lambda: "run=1" in text(tmp_path / "run1.out"), what="the second run")
        launcher.terminate(7, "CANCELLED", 1, 0.0)
        await until(lambda: len(ended) == 2, what="the second run to end")
        assert ended[1].restarts == 1
        await launcher.close()
        pool.close()

    asyncio.run(body())


def test_a_restarted_launcher_settles_launches_its_predecessor_left_half_done(
    tmp_path: Path,
) -> None:
    # slurmd died while it launched two jobs: it had written job 8's directory
    # but not yet handed it to a stepd; job 9's stepd had its directory and was
    # still starting. The next slurmd waits for job 9's stepd and adopts it; job
    # 8 never ran, so its directory goes without a report (the controller
    # launches it again), not as a stepd that died.
    spool = tmp_path / "spool"

    async def body() -> tuple[list[StepOutcome], list[int]]:
        ended: list[StepOutcome] = []
        pool = StepdPool()
        crashed = Launcher(str(spool), ended.append, pool)
        crashed.launch(*run_of(9, 0, tmp_path))
        await crashed.close()  # as if slurmd died: its stepds run on
        (spool / "job00008").mkdir(mode=0o711)
        shutil.copy(spool / "job00009" / "job.json", spool / "job00008" / "job.json")
        late = spool / "job00009" / "stepd.pid"
        await until(late.exists, what="job 9's stepd")
        written = late.read_text()
        late.unlink()  # not written yet when the next slurmd looks
        restarted = Launcher(str(spool), ended.append, pool)
        adoption = asyncio.ensure_future(restarted.adopt())
        await until(lambda: "run=0" in text(tmp_path / "run0.out"), what="job 9 to run")
        assert not adoption.done()
        late.write_text(written)
        outcomes = await adoption
        running = restarted.running
        restarted.terminate(9, "CANCELLED", 1, 0.0)
        await until(lambda: ended, what="job 9 to end")
        await restarted.close()
        pool.close()
        return outcomes, running

    outcomes, running = asyncio.run(body())
    assert outcomes == []  # nothing ended: job 9 runs, job 8 never did
    assert running == [9]
    assert not (spool / "job00008").exists()
