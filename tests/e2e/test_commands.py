"""The commands against a live cluster: what users watch and change."""

from __future__ import annotations

from conftest import TestCluster
from helpers import wait_until


def _gate_script(gate: str) -> str:
    return f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"


def test_squeue_shows_running_and_pending_jobs_with_reasons(cluster: TestCluster) -> None:
    gate = cluster.workdir / "squeue-gate"
    running = cluster.sbatch("-J", "running", "-w", "n1", "--gres=gpu:8", script=_gate_script(gate))
    cluster.wait_state(running, "RUNNING")
    big = cluster.sbatch("-J", "big", "-w", "n1", "--gres=gpu:8", "--wrap=true")
    prio = cluster.sbatch("-J", "prio", "-w", "n1", "--gres=gpu:8", "--wrap=true")
    held = cluster.sbatch("-J", "held", "--hold", "--wrap=true")
    wait_until(lambda: cluster.job(prio)["Reason"] == "Priority", 10, "reason Priority")
    out = cluster.run("squeue", "-o", "%i %j %t %r").out.splitlines()
    assert out[0] == "JOBID NAME ST REASON"
    rows = {line.split()[0]: line.split()[1:] for line in out[1:]}
    assert rows[str(running)] == ["running", "R", "None"]
    assert rows[str(big)] == ["big", "PD", "Resources"]
    assert rows[str(prio)] == ["prio", "PD", "Priority"]
    assert rows[str(held)] == ["held", "PD", "JobHeldUser"]
    default = cluster.run("squeue").out.splitlines()
    assert default[0] == (
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
    )
    assert any(line.split()[-1] == "n1" and line.split()[0] == str(running) for line in default)
    assert cluster.run("scancel", str(big), str(prio), str(held)).rc == 0
    gate.touch()
    cluster.wait_state(running, "COMPLETED")
    finished = cluster.run("squeue", "-t", "all", "-j", str(running), "-o", "%i %t %T %r").out
    assert finished.splitlines()[1] == f"{running} CD COMPLETED None"
    assert cluster.run("squeue", "-h", "-j", str(running)).out == ""


def test_drained_node_gets_no_new_jobs_until_resumed(cluster: TestCluster) -> None:
    result = cluster.run("scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=disk check")
    assert result.rc == 0, result.err
    node = cluster.run("sinfo", "-h", "-N", "-n", "n2", "-o", "%N %t").out.split()
    assert node[:2] == ["n2", "drain"]
    job_id = cluster.sbatch("-w", "n2", "--wrap=true")
    reason = "ReqNodeNotAvail,_UnavailableNodes:n2"  # as scontrol shows Slurm's
    wait_until(lambda: cluster.job(job_id)["Reason"] == reason, 10, reason)
    info = cluster.run("scontrol", "-o", "show", "node", "n2").out
    assert "State=IDLE+DRAIN" in info and "Reason=disk check" in info
    assert cluster.run("scontrol", "update", "NodeName=n2", "State=RESUME").rc == 0
    cluster.wait_state(job_id, "COMPLETED")
    assert cluster.run("sinfo", "-h", "-N", "-n", "n2", "-o", "%t").out.split()[0] == "idle"


def test_scontrol_update_changes_a_pending_job(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--hold", "-J", "before", "-t", "30", "--wrap=true")
    result = cluster.run(
        "scontrol", "update", f"JobId={job_id}", "TimeLimit=10", "Name=after", "Partition=debug"
    )
    assert result.rc == 0, result.err
    info = cluster.job(job_id)
    assert (info["JobName"], info["TimeLimit"], info["Partition"]) == ("after", "00:10:00", "debug")
    assert cluster.run("scancel", str(job_id)).rc == 0
    assert cluster.state(job_id) == "CANCELLED"


def test_sinfo_and_scontrol_show_the_cluster(cluster: TestCluster) -> None:
    lines = cluster.run("sinfo").out.splitlines()
    assert lines[0] == "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"
    assert any(line.startswith("gpu*") and "infinite" in line for line in lines)
    assert any(line.startswith("debug") and "1:00:00" in line for line in lines)
    parts = cluster.run("scontrol", "show", "partition", "debug").out
    assert "PartitionName=debug" in parts and "MaxTime=01:00:00" in parts
    node = cluster.run("scontrol", "show", "node", "n1").out
    assert "NodeName=n1" in node and "Gres=gpu:8" in node and "CPUTot=8" in node
    config = cluster.run("scontrol", "show", "config").out
    assert "KillWait                = 2 sec" in config
    assert cluster.run("scontrol", "ping").rc == 0
