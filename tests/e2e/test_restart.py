"""Acknowledged means durable: SIGKILL the controller, restart it, lose nothing."""

from __future__ import annotations

from conftest import TestCluster
from helpers import wait_until


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
