"""The node's Prolog and Epilog runner: order, failures, timeouts, once per run."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import wait_until

from minislurm import jobenv
from minislurm.jobenv import ScriptJob
from minislurm.site.programs import ScriptFailure, programs, run_programs
from nodeagent.prologs import NodeScripts

CTX = jobenv.NodeContext("n1", "host1", "c", "/etc/slurm/slurm.conf", "ctl", 6817)
JOB = ScriptJob(7, 1000, 1000, "u", "gpu", "", "/w", 0, "n[1-2]", 2, "8(x2)", (0, 1))


def program(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_programs_run_in_reverse_alphabetical_order_from_globs_and_directories(
    tmp_path: Path,
) -> None:
    d = tmp_path / "prolog.d"
    d.mkdir()
    for name in ("10-a", "90-z", "Z", "a"):
        program(d / name, "")
    (d / "sub").mkdir()
    one = program(tmp_path / "one", "")
    assert programs([str(d)]) == [str(d / n) for n in ("a", "Z", "90-z", "10-a")]
    assert programs([str(d / "1*"), str(one)]) == [str(d / "10-a"), str(one)]  # by whole path
    assert programs([str(tmp_path / "none")]) == [str(tmp_path / "none")]  # fails when run


@pytest.mark.timeout(20)
def test_the_first_failure_ends_the_run(tmp_path: Path) -> None:
    log = tmp_path / "ran"
    program(tmp_path / "b", f"echo b >> {log}; exit 4\n")
    program(tmp_path / "a", f"echo a >> {log}\n")
    failure = asyncio.run(run_programs([str(tmp_path / "?")], {}, 0, "prolog"))
    assert failure == ScriptFailure(str(tmp_path / "b"), exit_code=4)
    assert log.read_text() == "b\n"
    assert asyncio.run(run_programs([str(tmp_path / "a")], {}, 0, "prolog")) is None
    missing = asyncio.run(run_programs([str(tmp_path / "none")], {}, 0, "prolog"))
    assert missing is not None and missing.exit_code == 127


def gone(pid: int) -> bool:
    """Whether a process has ended (a zombie counts: it runs no more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.timeout(20)
def test_a_program_over_its_time_is_killed_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    slow = program(tmp_path / "slow", f"sleep 60 & echo $! > {pids}; wait\n")
    failure = asyncio.run(run_programs([str(slow)], {}, 1, "epilog"))
    assert failure == ScriptFailure(str(slow), timed_out=True)
    child = int(pids.read_text())
    wait_until(lambda: gone(child), 5, "the program's child to be killed")


@pytest.mark.timeout(20)
def test_a_prolog_runs_once_per_run_and_the_next_waits_for_the_epilogs(tmp_path: Path) -> None:
    log = tmp_path / "log"
    gate = tmp_path / "gate"
    prolog = program(tmp_path / "prolog", f'echo "prolog $SLURM_JOB_ID" >> {log}\n')
    epilog = program(
        tmp_path / "epilog",
        f"while [ ! -e {gate} ]; do sleep 0.01; done\n"
        f'echo "epilog $SLURM_JOB_ID $SLURM_JOB_EXIT_CODE2 $SLURM_SCRIPT_CONTEXT" >> {log}\n',
    )
    failures: list[tuple[int, str]] = []

    async def scenario() -> None:
        scripts = NodeScripts(
            [str(prolog)], [str(epilog)], 0, 0, CTX, lambda j, s, f: failures.append((j.job_id, s))
        )
        assert await asyncio.gather(scripts.prolog(JOB), scripts.prolog(JOB)) == [True, True]
        processes_gone = asyncio.get_running_loop().create_future()
        ended = scripts.epilog(replace(JOB, exit_code=2), processes_gone)
        assert scripts.epilog(JOB, processes_gone) is ended  # once per run
        processes_gone.set_result(None)
        following = asyncio.create_task(scripts.prolog(replace(JOB, job_id=8)))
        with pytest.raises(TimeoutError):  # the next job's Prolog waits for the Epilog
            await asyncio.wait_for(asyncio.shield(following), 0.5)
        gate.touch()
        assert await following is True
        await ended

    asyncio.run(scenario())
    assert log.read_text().splitlines() == ["prolog 7", "epilog 7 2:0 epilog_slurmd", "prolog 8"]
    assert failures == []


@pytest.mark.timeout(20)
def test_failures_are_told_and_a_failed_prolog_stops_the_job(tmp_path: Path) -> None:
    bad = program(tmp_path / "bad", "exit 1\n")
    failures: list[tuple[int, str, ScriptFailure]] = []

    async def scenario() -> tuple[bool, bool]:
        scripts = NodeScripts(
            [str(bad)], [str(bad)], 0, 0, CTX, lambda j, s, f: failures.append((j.job_id, s, f))
        )
        first = await scripts.prolog(JOB)
        again = await scripts.prolog(JOB)  # the same run: the same answer, told once
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        await scripts.epilog(JOB, done)
        return first, again

    assert asyncio.run(scenario()) == (False, False)
    assert failures == [
        (7, "prolog", ScriptFailure(str(bad), exit_code=1)),
        (7, "epilog", ScriptFailure(str(bad), exit_code=1)),
    ]


def test_without_programs_nothing_runs_and_every_job_may_start() -> None:
    async def scenario() -> bool:
        scripts = NodeScripts([], [], 0, 0, CTX, lambda j, s, f: None)
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        await scripts.epilog(JOB, done)
        return await scripts.prolog(JOB)

    assert asyncio.run(scenario())
