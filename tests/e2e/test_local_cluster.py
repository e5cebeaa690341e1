"""`minislurm cluster up|status|down` as a user runs it, and commands finding the cluster."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from helpers import base_env, pid_alive, run_command, wait_until

from minislurm.local.cluster import LocalCluster


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _env(home: Path) -> dict[str, str]:
    env = base_env("unused")
    del env["SLURM_CONF"]  # the commands must find the running cluster by themselves
    env["MINISLURM_HOME"] = str(home)
    return env


def test_cluster_lifecycle_through_the_minislurm_command(home: Path) -> None:
    env = _env(home)
    local = LocalCluster(str(home))
    try:
        up = run_command(["minislurm", "cluster", "up", "--nodes", "2"], env, timeout=90)
        assert up.rc == 0, up.err
        pids = {d: local.pid(d) for d in ("slurmctld", "slurmd-n1", "slurmd-n2")}
        assert all(pids.values())

        job = run_command(["sbatch", "--parsable", "--wrap=true"], env, cwd=home)
        assert job.rc == 0, job.err
        sinfo = run_command(["sinfo", "-h", "-o", "%D %t"], env)
        assert sinfo.out.split() == ["2", "idle"] or "mix" in sinfo.out or "idle" in sinfo.out

        again = run_command(["minislurm", "cluster", "up"], env, timeout=90)
        assert again.rc == 0 and "already running" in again.out
        assert {d: local.pid(d) for d in pids} == pids

        victim = pids["slurmd-n2"]
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: local.pid("slurmd-n2") is None, 10, "slurmd-n2 to die")
        status = run_command(["minislurm", "cluster", "status"], env)
        assert status.rc == 1 and "slurmd-n2" in status.out and "down" in status.out
        revived = run_command(["minislurm", "cluster", "up"], env, timeout=90)
        assert revived.rc == 0 and "restarted slurmd-n2" in revived.out
        # Ready means the new agent has registered, not that n2 still looked alive.
        ran = run_command(["srun", "-w", "n2", "hostname"], env, cwd=home, timeout=60)
        assert ran.rc == 0, ran.err
        assert local.pid("slurmd-n1") == pids["slurmd-n1"]
        assert run_command(["minislurm", "cluster", "status"], env).rc == 0
    finally:
        down = run_command(["minislurm", "cluster", "down"], env, timeout=60)
    assert down.rc == 0
    assert all(not pid_alive(p) for p in pids.values() if p)
    assert run_command(["squeue"], env).rc == 1  # nothing running to find any more


@pytest.mark.parametrize("verb", ["status", "down"])
def test_status_and_down_of_a_home_without_a_cluster_say_so(home: Path, verb: str) -> None:
    result = run_command(["minislurm", "cluster", verb], _env(home))
    assert (result.rc, result.out) == (1, "")
    assert result.err == f"Error: no cluster in {home}\n"


def test_two_local_clusters_coexist(tmp_path: Path) -> None:
    homes = [tmp_path / "a", tmp_path / "b"]
    try:
        for h in homes:
            result = run_command(
                ["minislurm", "cluster", "up", "--nodes", "1"], _env(h), timeout=90
            )
            assert result.rc == 0, result.err
        ids = [
            run_command(["sbatch", "--parsable", "--wrap=true"], _env(h), cwd=h).out.strip()
            for h in homes
        ]
        assert ids == ["1", "1"]
    finally:
        for h in homes:
            run_command(["minislurm", "cluster", "down"], _env(h), timeout=60)
