"""No job lost: a node that dies, a job requeued and resumed, drain and resume, scontrol requeue."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from checkpointing import ENV, JOB, STEPS, undisturbed_result, wait_for_checkpoints
from conftest import TestCluster, parse_oneliner, run_cluster
from helpers import pid_alive, wait_until

from minislurm import procs
from minislurm.local.cluster import ClusterSpec


@pytest.fixture
def quick_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes; a silent node is DOWN after 4 s."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, slurmd_timeout=4)
    yield from run_cluster(tmp_path, request, spec)


@pytest.fixture
def patient_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes; a silent node is DOWN after 25 s, above the 20 s other agent calls retry."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, slurmd_timeout=25)
    yield from run_cluster(tmp_path, request, spec)


def kill_node(cluster: TestCluster, node: str) -> None:
    """SIGKILL a node's agent and every process of its jobs, as if it lost power."""
    cluster.kill_agent(node)
    spool = Path(cluster.local.path("spool", node))
    for jobdir in spool.glob("job*"):
        for name in ("task.pid", "stepd.pid"):
            pid = procs.live_pid(str(jobdir / name))
            if pid is None:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the task's session, with its children
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def node_info(cluster: TestCluster, node: str) -> dict[str, str]:
    """``scontrol -o show node`` as a dict."""
    result = cluster.run("scontrol", "-o", "show", "node", node)
    assert result.rc == 0, result.err
    return parse_oneliner(result.out.strip())


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_checkpointed_job_resumes_on_the_other_node(
    quick_cluster: TestCluster, tmp_path: Path
) -> None:
    cluster = quick_cluster
    expected = undisturbed_result(tmp_path / "reference")
    ckpt = cluster.workdir / "ckpt"
    cluster.env = {**cluster.env, **ENV}
    job_id = cluster.sbatch(str(JOB), str(ckpt), str(STEPS))
    first = cluster.wait_state(job_id, "RUNNING")
    node = first["NodeList"]
    out = cluster.workdir / f"ckpt-train-{job_id}.out"
    wait_for_checkpoints(out)

    kill_node(cluster, node)
    down = wait_until(
        lambda: (n := node_info(cluster, node))["State"].startswith("DOWN") and n, 20, "DOWN"
    )
    assert down["Reason"].startswith("Not responding")
    requeued = cluster.job(job_id)
    if requeued["JobState"] == "PENDING":
        assert requeued["Reason"] == "BeginTime"
    assert requeued["Restarts"] == "1"

    again = cluster.wait_state(job_id, "RUNNING", "COMPLETED", timeout=30)
    assert again["NodeList"] != node
    done = cluster.wait_state(job_id, timeout=60)
    assert (done["JobState"], done["ExitCode"], done["Restarts"]) == ("COMPLETED", "0:0", "1")
    text = out.read_text()
    assert "restart_count=0 resume_step=0" in text
    resumed = [line for line in text.splitlines() if line.startswith("restart_count=1")]
    assert len(resumed) == 1, text
    assert int(resumed[0].rpartition("=")[2]) >= 15, text  # from a checkpoint, not step 0
    assert text.strip().splitlines()[-1] == expected

    sacct = cluster.run("sacct", "-X", "-n", "-P", "-j", str(job_id), "-o", "JobID,State,Restarts")
    assert sacct.out.split() == [f"{job_id}|COMPLETED|1"], sacct.out
    # -D: the earlier run too, as it ended on the killed node, then the latest.
    fields = "JobID,State,NodeList,Restarts"
    history = cluster.run("sacct", "-D", "-n", "-P", "-j", str(job_id), "-o", fields)
    second = again["NodeList"]
    assert history.out.split() == [
        f"{job_id}|NODE_FAIL|{node}|0",
        f"{job_id}.batch|CANCELLED|{node}|",
        f"{job_id}|COMPLETED|{second}|1",
        f"{job_id}.batch|COMPLETED|{second}|",
    ], history.out
    times = cluster.run("sacct", "-D", "-X", "-n", "-P", "-j", str(job_id), "-o", "Start,End")
    (first_start, first_end), (second_start, _) = (t.split("|") for t in times.out.split())
    assert first_start <= first_end <= second_start, times.out

    cluster.start()  # the node's agent comes back: in service again
    wait_until(lambda: node_info(cluster, node)["State"] == "IDLE", 20, "node back IDLE")


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_a_job_whose_agent_is_gone_too_long_never_runs_twice(quick_cluster: TestCluster) -> None:
    cluster = quick_cluster
    lock, doubles = cluster.workdir / "lock", cluster.workdir / "doubles"
    script = (
        f"#!/bin/bash\nexec 9>{lock}\nflock -n 9 || echo twice >> {doubles}\n"
        "echo run=${SLURM_RESTART_COUNT:-0} $SLURMD_NODENAME\nsleep 300\n"
    )
    job_id = cluster.sbatch("-o", "out-%j", "--open-mode=append", script=script)
    node = cluster.wait_state(job_id, "RUNNING")["NodeList"]
    # RUNNING comes before the launch: the stepd may not have written its pid yet.
    (stepd,) = wait_until(cluster.local.stepd_pids, 10, "the job's stepd")
    # Only the agent dies: its stepd kills the job once SlurmdTimeout has passed,
    # as the controller declares the node DOWN and requeues the job elsewhere.
    cluster.kill_agent(node)
    wait_until(lambda: node_info(cluster, node)["State"].startswith("DOWN"), 20, "DOWN")
    wait_until(lambda: not pid_alive(stepd), 10, "the stale run to be killed")
    info = cluster.wait_state(job_id, "RUNNING", timeout=30)
    assert info["NodeList"] != node and info["Restarts"] == "1"
    out = cluster.workdir / f"out-{job_id}"
    wait_until(lambda: "run=1" in out.read_text(), 10, "the second run")
    assert "CANCELLED" in out.read_text() and "DUE TO NODE FAILURE" in out.read_text()
    cluster.start()  # the agent returns: the node is back in service
    wait_until(lambda: node_info(cluster, node)["State"] == "IDLE", 20, "node back IDLE")
    said = (cluster.home / "log" / "slurmctld.log").read_text()
    assert f'event=node_down node={node} reason="Not responding" uid=0' in said
    assert f"event=job_requeue job={job_id} run=0 ended=NODE_FAIL nodes={node}" in said
    assert f"event=node_resume node={node}" in said
    assert cluster.job(job_id)["JobState"] == "RUNNING"
    assert not doubles.exists()
    assert cluster.run("scancel", str(job_id)).rc == 0
    cluster.wait_state(job_id, "CANCELLED")


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_srun_whose_node_fails_ends_with_its_job(quick_cluster: TestCluster) -> None:
    cluster = quick_cluster
    proc = cluster.spawn("srun", "-w", "n1", "bash", "-c", "echo before; sleep 300")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "before\n"
        (job_id,) = [int(j) for j in cluster.run("squeue", "-h", "-o", "%i").out.split()]
        (stepd,) = cluster.local.stepd_pids()
        cluster.kill_agent("n1")  # srun loses the node; the controller declares it DOWN
        # srun stops looking for its step there once the job has ended, not a minute later.
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert cluster.job(job_id)["JobState"] == "NODE_FAIL"
    assert (proc.returncode, out) == (1, ""), err
    assert err.splitlines() == [
        "srun: error: Node failure on n1",
        "srun: error: n1: task 0: Exited with exit code 1",
    ]
    assert pid_alive(stepd)  # as in Slurm, the step runs on where nobody can reach it
    cluster.start()  # until the node's agent returns: the step of an ended job goes
    wait_until(lambda: not pid_alive(stepd), 20, "the stale step to be killed")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_job_sent_to_a_node_whose_slurmd_just_died_is_requeued(
    patient_cluster: TestCluster,
) -> None:
    cluster = patient_cluster
    cluster.kill_agent("n1")  # n1 looks alive for SlurmdTimeout yet
    job_id = cluster.sbatch("-w", "n1", "--wrap=echo ran $SLURM_RESTART_COUNT")
    cluster.wait_state(job_id, "RUNNING")  # its launch is retried on the dead agent
    wait_until(lambda: node_info(cluster, "n1")["State"].startswith("DOWN"), 60, "DOWN")
    info = cluster.job(job_id)
    assert (info["JobState"], info["Restarts"]) == ("PENDING", "1"), info
    cluster.start()  # n1 is back: the job runs there
    info = cluster.wait_state(job_id, timeout=30)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    assert (cluster.workdir / f"slurm-{job_id}.out").read_text() == "ran 1\n"


@pytest.mark.timeout(90)
def test_scontrol_requeue_and_requeuehold(quick_cluster: TestCluster) -> None:
    cluster = quick_cluster
    gate = cluster.workdir / "gate"
    script = (
        "#!/bin/bash\necho restart=${SLURM_RESTART_COUNT:-0}\n"
        f"while [ ! -e {gate} ]; do sleep 0.1; done\n"
    )
    job_id = cluster.sbatch("-o", "rq-%j", "--open-mode=append", script=script)
    cluster.wait_state(job_id, "RUNNING")
    assert cluster.run("scontrol", "requeue", str(job_id)).rc == 0
    again = cluster.run("scontrol", "requeue", str(job_id))  # while it is being requeued
    assert (again.rc, again.err) == (1, f"Job is pending execution for job {job_id}\n")
    info = cluster.wait_state(job_id, "PENDING")
    assert (info["Reason"], info["Restarts"]) == ("BeginTime", "1")
    cluster.wait_state(job_id, "RUNNING", timeout=30)
    out = cluster.workdir / f"rq-{job_id}"
    wait_until(lambda: "restart=1" in out.read_text(), 10, "second run")

    assert cluster.run("scontrol", "requeuehold", str(job_id)).rc == 0
    info = cluster.wait_state(job_id, "PENDING")
    # Slurm 22.05 shows a requeuehold so (a user's hold: the owner may release it).
    assert (info["Reason"], info["Restarts"], info["Priority"]) == (
        "job_requeued_in_held_state",
        "2",
        "0",
    )
    bad = cluster.run("scontrol", "requeue", str(job_id))
    assert bad.rc == 1 and "Job is pending execution" in bad.err
    assert cluster.run("scontrol", "release", str(job_id)).rc == 0
    gate.touch()
    done = cluster.wait_state(job_id, timeout=30)
    assert (done["JobState"], done["Restarts"]) == ("COMPLETED", "2")
    assert "restart=2" in out.read_text()
    runs = cluster.run("sacct", "-D", "-X", "-n", "-P", "-j", str(job_id), "-o", "State,Restarts")
    assert runs.out.split() == ["REQUEUED|0", "REQUEUED|1", "COMPLETED|2"], runs.out

    # A finished job may be requeued; a --no-requeue job or an unknown one may not.
    assert cluster.run("scontrol", "requeue", str(job_id)).rc == 0
    assert cluster.wait_state(job_id, "COMPLETED", timeout=30)["Restarts"] == "3"
    fixed = cluster.sbatch("--no-requeue", "--wrap=sleep 30")
    cluster.wait_state(fixed, "RUNNING")
    bad = cluster.run("scontrol", "requeue", str(fixed))
    assert (bad.rc, bad.err) == (1, f"Requested operation is presently disabled for job {fixed}\n")
    assert cluster.job(fixed)["JobState"] == "RUNNING"
    unknown = cluster.run("scontrol", "requeue", "999999")
    assert (unknown.rc, unknown.err) == (1, "Invalid job id specified for job 999999\n")
    assert cluster.run("scancel", str(fixed)).rc == 0


@pytest.mark.timeout(90)
def test_drained_node_finishes_its_jobs_and_takes_no_new_ones(
    quick_cluster: TestCluster,
) -> None:
    cluster = quick_cluster
    gate = cluster.workdir / "drain-gate"
    running = cluster.sbatch(
        "-w", "n1", script=f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"
    )
    cluster.wait_state(running, "RUNNING")
    update = ["scontrol", "update", "NodeName=n1"]
    assert cluster.run(*update, "State=DRAIN", "Reason=maintenance").rc == 0
    sinfo = ["sinfo", "-h", "-n", "n1", "-o", "%t"]
    assert cluster.run(*sinfo).out.strip() == "drng"
    pinned = cluster.sbatch("-w", "n1", "--wrap=true")
    other = cluster.sbatch("--gres=gpu:8", "--wrap=true")
    assert cluster.wait_state(other)["NodeList"] == "n2"
    assert cluster.state(pinned) == "PENDING"
    gate.touch()
    assert cluster.wait_state(running)["JobState"] == "COMPLETED"
    wait_until(lambda: cluster.run(*sinfo).out.strip() == "drain", 10, "drain")
    assert cluster.state(pinned) == "PENDING"
    assert cluster.run(*update, "State=RESUME").rc == 0
    assert cluster.wait_state(pinned)["JobState"] == "COMPLETED"
    assert cluster.run(*sinfo).out.strip() == "idle"
    said = (cluster.home / "log" / "slurmctld.log").read_text()
    assert "event=node_drain node=n1 reason=maintenance uid=0" in said
    assert "event=node_resume node=n1" in said


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_node_fenced_for_a_stale_run_returns_whatever_restarts_come_between(
    quick_cluster: TestCluster,
) -> None:
    """A node back with a stale run is out of service until that run is gone, no longer.

    The stale run's stepd is stopped (SIGSTOP) so that it outlives every
    step: the node goes DOWN, its agent registers with the run still there,
    the controller restarts, the agent restarts after the run is gone. The
    node must then serve, and run the requeued job itself.
    """
    cluster = quick_cluster
    gate = cluster.workdir / "fence-gate"
    agent_log = cluster.home / "log" / "slurmd-n2.log"
    script = f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"
    job_id = cluster.sbatch("-w", "n2", "-o", "/dev/null", script=script)
    cluster.wait_state(job_id, "RUNNING")
    # RUNNING comes before the launch: the stepd may not have written its pid yet.
    (stepd,) = wait_until(cluster.local.stepd_pids, 10, "the job's stepd")
    os.kill(stepd, signal.SIGSTOP)  # the stale run cannot end, nor fence itself
    cluster.kill_agent("n2")
    wait_until(lambda: node_info(cluster, "n2")["State"].startswith("DOWN"), 20, "DOWN")
    assert cluster.job(job_id)["Restarts"] == "1"

    def kills() -> int:
        return agent_log.read_text().count(f"job={job_id} unknown to the controller")

    cluster.local.up(cluster.spec)  # the agent returns with the stale run
    wait_until(lambda: kills() == 1, 20, "the stale run to be ordered killed")
    assert node_info(cluster, "n2")["State"].endswith("*")  # not used while it runs
    cluster.kill_controller()
    cluster.local.up(cluster.spec)  # a new controller learns of the stale run again
    wait_until(lambda: kills() == 2, 20, "the stale run to be ordered killed again")
    assert node_info(cluster, "n2")["State"].endswith("*")
    assert cluster.job(job_id)["JobState"] == "PENDING"
    wait_until(lambda: cluster.job(job_id)["Reason"] != "BeginTime", 20, "RequeueDelay")

    cluster.kill_agent("n2")
    os.kill(stepd, signal.SIGCONT)  # the stale run is killed at last
    wait_until(lambda: not pid_alive(stepd), 20, "the stale run to end")
    cluster.local.up(cluster.spec)  # registers with nothing stale: in service at once
    info = cluster.wait_state(job_id, "RUNNING", timeout=20)
    assert (info["NodeList"], info["Restarts"]) == ("n2", "1")
    # Begun after a few heartbeats: the node must still take work beside its job.
    later = cluster.sbatch("-w", "n2", "--begin=now+3", "-o", "/dev/null", "--wrap=true")
    assert cluster.wait_state(later, timeout=20)["JobState"] == "COMPLETED"
    assert node_info(cluster, "n2")["State"] == "MIXED"  # not MIXED*: responding
    gate.touch()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    wait_until(lambda: node_info(cluster, "n2")["State"] == "IDLE", 10, "n2 IDLE")
