"""Acknowledged means durable: SIGKILL the controller, restart it, lose nothing."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from conftest import STATE_DBS, TestCluster
from helpers import pid_alive, wait_until

from minislurm import procs

# Acknowledged means durable on either database.
pytestmark = pytest.mark.parametrize("fresh_cluster", STATE_DBS, indirect=True)


def test_controller_sigkill_keeps_every_job(fresh_cluster: TestCluster) -> None:
    cluster = fresh_cluster
    gate = cluster.workdir / "gate"
    running_script = f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\necho done\n"
    running = [
        cluster.sbatch("-w", node, "--gres=gpu:8", "-J", f"run-{node}", script=running_script)
        for node in ("n1", "n2")
    ]
    for job_id in running:
        cluster.wait_state(job_id, "RUNNING")
    pending = [cluster.sbatch("--gres=gpu:8", "-J", f"pend{i}", "--wrap=echo ok") for i in range(3)]
    held = cluster.sbatch("--hold", "-J", "held", "--wrap=true")
    for job_id in pending:
        assert cluster.state(job_id) == "PENDING"

    cluster.kill_controller()
    gate.touch()  # the running jobs end while the controller is down
    for job_id in running:
        out = cluster.workdir / f"slurm-{job_id}.out"
        wait_until(lambda out=out: out.exists() and "done" in out.read_text(), 20, "job output")
    cluster.start()

    for job_id in running:
        info = cluster.wait_state(job_id)
        assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    for job_id in pending:
        assert cluster.wait_state(job_id, timeout=60)["JobState"] == "COMPLETED"
    info = cluster.job(held)
    assert (info["JobState"], info["Reason"]) == ("PENDING", "JobHeldUser")
    next_id = cluster.sbatch("--wrap=true")
    assert next_id == held + 1


def test_running_job_survives_a_controller_restart(fresh_cluster: TestCluster) -> None:
    cluster = fresh_cluster
    gate = cluster.workdir / "gate2"
    job_id = cluster.sbatch(script=f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n")
    cluster.wait_state(job_id, "RUNNING")
    cluster.kill_controller()
    cluster.start()
    assert cluster.state(job_id) == "RUNNING"
    gate.touch()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"


def test_running_job_survives_a_sigkill_of_its_agent(fresh_cluster: TestCluster) -> None:
    cluster = fresh_cluster
    gate = cluster.workdir / "gate3"
    job_id = cluster.sbatch(
        "-w", "n1", script=f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\necho ok\n"
    )
    cluster.wait_state(job_id, "RUNNING")
    # RUNNING comes before the launch: the stepd may not have written its pid yet.
    stepds = wait_until(cluster.local.stepd_pids, 10, "the job's stepd")
    assert len(stepds) == 1
    cluster.kill_agent("n1")
    assert cluster.local.stepd_pids() == stepds  # the supervisor and its task live on
    cluster.start()  # the new agent adopts the supervisor
    assert cluster.state(job_id) == "RUNNING"
    gate.touch()
    info = cluster.wait_state(job_id)
    assert (info["JobState"], info["ExitCode"], info["Restarts"]) == ("COMPLETED", "0:0", "0")
    assert (cluster.workdir / f"slurm-{job_id}.out").read_text() == "ok\n"


def test_a_killed_supervisor_is_a_job_failure(fresh_cluster: TestCluster) -> None:
    cluster = fresh_cluster
    job_id = cluster.sbatch("-w", "n1", "--wrap=sleep 300")
    cluster.wait_state(job_id, "RUNNING")
    (stepd,) = wait_until(cluster.local.stepd_pids, 10, "the job's stepd")
    spool = Path(cluster.local.path("spool", "n1", f"job{job_id:05d}"))
    # stepd writes task.pid once the task runs, after its own stepd.pid: it may not exist yet.
    task = wait_until(lambda: procs.recorded_pid(str(spool / "task.pid")), 10, "task pid")
    os.kill(stepd, signal.SIGKILL)
    info = cluster.wait_state(job_id, timeout=30)
    assert (info["JobState"], info["ExitCode"]) == ("FAILED", "0:9")
    wait_until(lambda: not pid_alive(task), 10, "the task to be killed with its supervisor")


def test_srun_streams_through_a_controller_restart(fresh_cluster: TestCluster) -> None:
    cluster = fresh_cluster
    gate = cluster.workdir / "gate4"
    script = f"echo before; while [ ! -e {gate} ]; do sleep 0.1; done; echo after; exit 3"
    proc = cluster.spawn("srun", "-N2", "-n2", "-l", "bash", "-c", script)
    try:
        assert proc.stdout is not None
        lines = {proc.stdout.readline(), proc.stdout.readline()}
        assert lines == {"0: before\n", "1: before\n"}
        cluster.kill_controller()  # the step's I/O flows between srun and the agents
        cluster.start()
        gate.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert sorted(out.splitlines()) == ["0: after", "1: after"]
    assert proc.returncode == 3, err
    (job_id,) = [int(j) for j in cluster.run("squeue", "-h", "-t", "all", "-o", "%i").out.split()]
    assert cluster.wait_state(job_id, timeout=10)["JobState"] == "FAILED"


@pytest.mark.timeout(90)
@pytest.mark.parametrize("ends", ["after the restart", "while the agent is gone"])
def test_srun_step_survives_a_sigkill_of_its_agent(fresh_cluster: TestCluster, ends: str) -> None:
    cluster = fresh_cluster
    gate = cluster.workdir / "gate5"
    script = f"echo before; while [ ! -e {gate} ]; do sleep 0.1; done; echo after; exit 3"
    proc = cluster.spawn("srun", "-w", "n1", "-n2", "-l", "bash", "-c", script)
    try:
        assert proc.stdout is not None
        lines = {proc.stdout.readline(), proc.stdout.readline()}
        assert lines == {"0: before\n", "1: before\n"}
        (job_id,) = [int(j) for j in cluster.run("squeue", "-h", "-o", "%i").out.split()]
        (stepd,) = cluster.local.stepd_pids()
        cluster.kill_agent("n1")
        assert cluster.local.stepd_pids() == [stepd]  # the step's supervisor and tasks live on
        if ends == "while the agent is gone":
            gate.touch()
            wait_until(lambda: not pid_alive(stepd), 10, "the step to end")
        log = cluster.home / "log" / "slurmd-n1.log"
        adopted = f"job={job_id} step=0 stepd pid={stepd if pid_alive(stepd) else 0} adopted"
        cluster.start()  # the new agent adopts the step; srun finds it again
        wait_until(lambda: adopted in log.read_text(), 20, "the new agent to adopt the step")
        gate.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert sorted(out.splitlines()) == ["0: after", "1: after"], err
    assert proc.returncode == 3, err
    cluster.wait_state(job_id, timeout=10)
    step = f"{job_id}.0"
    fields = ("sacct", "-n", "-P", "-j", step, "-o", "JobID,State,ExitCode,NodeList")
    wait_until(lambda: cluster.run(*fields).out.split() == [f"{step}|FAILED|3:0|n1"], 10, "sacct")


@pytest.mark.timeout(90)
def test_srun_step_whose_supervisor_died_with_its_agent_fails_clearly(
    fresh_cluster: TestCluster,
) -> None:
    cluster = fresh_cluster
    proc = cluster.spawn("srun", "-w", "n1", "-n1", "bash", "-c", "echo before; sleep 300")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "before\n"
        (job_id,) = [int(j) for j in cluster.run("squeue", "-h", "-o", "%i").out.split()]
        (stepd,) = cluster.local.stepd_pids()
        (step_dir,) = Path(cluster.local.path("spool", "n1")).glob("step*")
        task = int((step_dir / "task.pid").read_text())
        cluster.kill_agent("n1")  # the node's agent and the step's supervisor die
        os.kill(stepd, signal.SIGKILL)
        wait_until(lambda: not pid_alive(stepd), 10, "stepd to die")
        assert pid_alive(task)  # its task is left without a supervisor
        cluster.start()  # the new agent finds the step dead: its tasks go too
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (137, ""), err
    assert err.splitlines()[-3:] == [
        "srun: error: n1: task 0: slurmstepd died",
        "srun: error: n1: task 0: Killed",
        f"srun: Force Terminated StepId={job_id}.0",  # Slurm's rule: killed, and not told why
    ]
    wait_until(lambda: not pid_alive(task), 10, "the task to be killed")
    cluster.wait_state(job_id, timeout=10)
    fields = ("sacct", "-n", "-P", "-j", f"{job_id}.0", "-o", "State,ExitCode")
    wait_until(lambda: cluster.run(*fields).out.split() == ["FAILED|0:9"], 10, "sacct")
