"""Usage sampling (nodeagent.usage) and what stepd reports: MaxRSS and TotalCPU.

Real processes: trees that hold memory side by side, which ``ru_maxrss``
(the largest single process) cannot see but sampling does; stepd run in
batch mode on a job.json of our own, and in step mode through stepio.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_until

from nodeagent.stepio import StepSpec, TaskSpec, read_status, start_step
from nodeagent.usage import FIRST_SAMPLE_SECONDS, UsageSampler, rss_by_child

pytestmark = pytest.mark.timeout(60)

MIB = 1024  # KiB
HOLD = "import sys,time; b=bytearray({mib}<<20); b[::4096]=b'x'*len(b[::4096]); time.sleep({s})"
PY = sys.executable


def hold(mib: int, seconds: float) -> str:
    """A shell command: a Python process touching ``mib`` MiB, then sleeping."""
    return f'"{PY}" -c "{HOLD.format(mib=mib, s=seconds)}"'


def two_side_by_side(mib: int, seconds: float) -> str:
    """A shell script running two such processes at once."""
    return f"{hold(mib, seconds)} & {hold(mib, seconds)}; wait"


def test_rss_is_summed_per_child_over_its_whole_tree() -> None:
    alone = subprocess.Popen(["sh", "-c", hold(30, 5)])
    pair = subprocess.Popen(["sh", "-c", two_side_by_side(30, 5)])
    try:
        totals = wait_until(
            lambda: (t := rss_by_child(os.getpid())).get(pair.pid, 0) > 60 * MIB and t,
            20,
            "both trees to hold their memory",
        )
        assert 30 * MIB < totals[alone.pid] < 60 * MIB
        assert totals[pair.pid] > 60 * MIB
    finally:
        for proc in (alone, pair):
            proc.kill()
            proc.wait()


def test_sampler_waits_for_its_first_sample_then_keeps_the_largest() -> None:
    sampler = UsageSampler(30, per_task=True)
    start = sampler.next_at - FIRST_SAMPLE_SECONDS
    assert sampler.seconds_left(start) == pytest.approx(FIRST_SAMPLE_SECONDS)
    sampler.sample_if_due(start)  # not due yet
    assert sampler.samples == 0
    sampler.sample_if_due(start + FIRST_SAMPLE_SECONDS)
    assert sampler.samples == 1
    assert sampler.seconds_left(start + FIRST_SAMPLE_SECONDS) == pytest.approx(30)
    assert sampler.max_rss_with(123) == max(sampler.max_rss, 123)


def test_sampling_off_reports_ru_maxrss_alone() -> None:
    sampler = UsageSampler(0, per_task=False)
    assert sampler.seconds_left(0.0) == float("inf")
    assert sampler.max_rss_with(4096) == 4096


def test_batch_step_reports_the_sampled_tree_and_its_cpu(tmp_path: Path) -> None:
    """A script running two 40 MiB processes at once: MaxRSS counts both."""
    script = tmp_path / "script.sh"
    script.write_text(f'#!/bin/sh\n{two_side_by_side(40, 2.5)}\n"{PY}" -c "sum(range(3*10**7))"\n')
    script.chmod(0o755)
    user = pwd.getpwuid(os.getuid()).pw_name
    job = {
        "job_id": 1, "uid": os.getuid(), "gid": os.getgid(), "user": user, "umask": 0o022,
        "argv": [str(script)], "env": {"PATH": "/usr/bin:/bin"}, "work_dir": str(tmp_path),
        "stdout": str(tmp_path / "out"), "stderr": str(tmp_path / "out"), "stdin": os.devnull,
        "node": "n1", "kill_wait": 5, "acct_freq": 1,
    }  # fmt: skip
    (tmp_path / "job.json").write_text(json.dumps(job))
    subprocess.run([PY, "-m", "nodeagent.stepd", str(tmp_path)], check=True, timeout=50)
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["exit_code"] == 0, (tmp_path / "out").read_text()
    assert status["max_rss"] > 80 * MIB  # both at once: more than any one process
    assert status["total_cpu"] >= 0.3


def test_step_reports_the_largest_task_tree(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    tasks = [
        TaskSpec(0, 0, ["sh", "-c", two_side_by_side(40, 2.5)], env),
        TaskSpec(1, 1, ["sh", "-c", hold(10, 2.5)], env),
    ]
    user = pwd.getpwuid(os.getuid()).pw_name
    spec = StepSpec(
        7, 0, os.getuid(), os.getgid(), user, 0o022, str(tmp_path), "n1", 5, tasks, acct_freq=1
    )
    step_dir = str(tmp_path / "step")

    async def body() -> None:
        session = await start_step(step_dir, spec)
        async with asyncio.timeout(40):
            async for _ in session.events():
                pass

    asyncio.run(body())
    result = read_status(step_dir)
    assert result is not None and result.exit_code == 0
    assert 80 * MIB < result.max_rss < 140 * MIB  # task 0's two processes, not the sum of all


def test_an_idle_spare_stepd_loads_psutil_and_still_starts_on_demand() -> None:
    spare = subprocess.Popen([PY, "-m", "nodeagent.stepd", "--spare"], stdin=subprocess.PIPE)
    assert spare.stdin is not None
    try:
        maps = f"/proc/{spare.pid}/maps"
        wait_until(lambda: "_psutil_linux" in Path(maps).read_text(), 20, "psutil to be loaded")
    finally:
        spare.stdin.close()  # slurmd went away: the spare exits unused
        assert spare.wait(10) == 0
