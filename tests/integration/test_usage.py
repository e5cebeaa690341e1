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
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_until

from minislurm.wire.rpc import minislurm_pb2 as pb
from nodeagent.spool import SCRIPT_FILE, StepJob, TaskJob, read_status
from nodeagent.stepio import StepSession, start_step
from nodeagent.stepstat import node_stat
from nodeagent.usage import FIRST_SAMPLE_SECONDS, UsageSampler, read_record, usage_by_child

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


def rss_by_child() -> dict[int, int]:
    return {pid: usage.rss for pid, usage in usage_by_child(os.getpid()).items()}


def test_rss_is_summed_per_child_over_its_whole_tree() -> None:
    alone = subprocess.Popen(["sh", "-c", hold(30, 5)])
    pair = subprocess.Popen(["sh", "-c", two_side_by_side(30, 5)])
    try:
        totals = wait_until(
            lambda: (
                (t := rss_by_child()).get(pair.pid, 0) > 60 * MIB
                and t.get(alone.pid, 0) > 30 * MIB
                and t
            ),
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


def test_a_memory_limit_samples_every_second_and_sees_the_whole_step_over_it() -> None:
    assert UsageSampler(30, per_task=True, mem_limit=40 * MIB).interval == 1.0
    assert UsageSampler(0, per_task=True, mem_limit=40 * MIB).interval == 1.0
    assert UsageSampler(0.5, per_task=True, mem_limit=40 * MIB).interval == 0.5
    sampler = UsageSampler(30, per_task=False, mem_limit=40 * MIB)
    pair = subprocess.Popen(["sh", "-c", two_side_by_side(25, 5)], start_new_session=True)
    try:  # 50 MiB together

        def both_held() -> bool:  # the first sample over 40 MiB may come before both hold 25
            sampler.sample_if_due(sampler.next_at)
            return sampler.rss_now > 50 * MIB

        wait_until(both_held, 20, "the two processes holding 50 MiB together")
        assert sampler.over_limit
    finally:
        os.killpg(pair.pid, signal.SIGKILL)
        pair.wait()
    assert not UsageSampler(30, per_task=False).over_limit  # no limit, never over


def test_sampling_off_reports_ru_maxrss_alone() -> None:
    sampler = UsageSampler(0, per_task=False)
    assert sampler.seconds_left(0.0) == float("inf")
    assert sampler.max_rss_with(4096) == 4096


def test_batch_step_reports_the_sampled_tree_and_its_cpu(tmp_path: Path) -> None:
    """A script running two 40 MiB processes at once: MaxRSS counts both."""
    script = tmp_path / SCRIPT_FILE  # where stepd finds a batch job's script
    script.write_text(f'#!/bin/sh\n{two_side_by_side(40, 2.5)}\n"{PY}" -c "sum(range(3*10**7))"\n')
    script.chmod(0o755)
    user = pwd.getpwuid(os.getuid()).pw_name
    job = {
        "job_id": 1, "uid": os.getuid(), "gid": os.getgid(), "user": user, "umask": 0o022,
        "argv": [], "env": {"PATH": "/usr/bin:/bin"}, "work_dir": str(tmp_path),
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
    tasks = (
        TaskJob(0, 0, ("sh", "-c", two_side_by_side(40, 2.5)), env, stdin="/dev/null"),
        TaskJob(1, 1, ("sh", "-c", hold(10, 2.5)), env, stdin="/dev/null"),
    )
    user = pwd.getpwuid(os.getuid()).pw_name
    spec = StepJob(
        7, 0, os.getuid(), os.getgid(), user, 0o022, str(tmp_path), "n1", 5, tasks, "0", acct_freq=1
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


def test_the_stepd_fork_server_loads_psutil_once_and_exits_when_slurmd_goes() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with theirs:
        server = subprocess.Popen([PY, "-m", "nodeagent.stepd", "--fork-server"], stdin=theirs)
    try:
        maps = f"/proc/{server.pid}/maps"
        wait_until(lambda: "_psutil_linux" in Path(maps).read_text(), 20, "psutil to be loaded")
    finally:
        ours.close()  # slurmd went away: the server exits
        assert server.wait(10) == 0


def test_a_running_steps_usage_is_there_for_sstat(tmp_path: Path) -> None:
    """slurmd's answer to sstat: stepd's record of each task plus a sample of its own."""
    env = {"PATH": "/usr/bin:/bin"}
    tasks = (
        TaskJob(0, 0, ("sh", "-c", hold(40, 30)), env, stdin="/dev/null"),
        TaskJob(1, 1, ("sh", "-c", hold(10, 30)), env, stdin="/dev/null"),
    )
    user = pwd.getpwuid(os.getuid()).pw_name
    spec = StepJob(
        8,
        0,
        os.getuid(),
        os.getgid(),
        user,
        0o022,
        str(tmp_path),
        "n1",
        5,
        tasks,
        "0",
        acct_freq=30,
    )
    step_dir = str(tmp_path / "step")

    def both_hold_their_memory() -> pb.NodeStepStat | None:
        stat = node_stat(step_dir, "n1")
        rss = {t.task_id: t.max_rss for t in stat.tasks} if stat else {}
        return stat if rss.get(0, 0) > 40 * MIB and rss.get(1, 0) > 10 * MIB else None

    async def body() -> pb.NodeStepStat:
        session = await start_step(step_dir, spec)
        events = asyncio.create_task(_drain(session))
        try:
            return await asyncio.to_thread(wait_until, both_hold_their_memory, 20, "the memory")
        finally:
            session.terminate(0, "CANCELLED", 0.0)
            await asyncio.wait_for(events, 20)

    stat = asyncio.run(body())
    assert stat.node == "n1" and [t.task_id for t in stat.tasks] == [0, 1]
    assert 40 * MIB < stat.tasks[0].max_rss < 60 * MIB  # its own tree, not the other task's
    assert stat.tasks[0].max_vmem >= stat.tasks[0].max_rss and stat.tasks[0].cpu > 0
    assert stat.tasks[0].disk_read > 0  # the interpreter read its modules
    assert len(stat.pids) >= 2  # each task's shell and its python, at least
    record = read_record(os.path.join(step_dir, "usage.json"))
    assert record is not None and record.per_task and sorted(record.tasks.values()) == [0, 1]
    assert node_stat(step_dir, "n1") is None  # stepd is gone: nothing runs here any more


async def _drain(session: StepSession) -> None:
    async for _ in session.events():
        pass
