"""Holds through the real commands: reasons, priorities and messages as real Slurm's.

Expected values are what Slurm 22.05 printed for the same commands on the
reference cluster.
"""

from __future__ import annotations

import pytest
from conftest import TestCluster

pytestmark = pytest.mark.timeout(120)


def _pass_ran(cluster: TestCluster) -> None:
    """Wait until scheduling passes have run since now: a new job has started and ended."""
    probe = cluster.sbatch("--wrap=true")
    assert cluster.wait_state(probe)["JobState"] == "COMPLETED"


def _reason(cluster: TestCluster, job_id: int | str) -> str:
    return cluster.run("squeue", "-h", "-j", str(job_id), "-o", "%r").out.strip()


def test_a_hold_replaces_whatever_reason_the_job_waited_for(cluster: TestCluster) -> None:
    later = cluster.sbatch("--begin=now+1hour", "--wrap=true")
    waiting = cluster.sbatch(f"--dependency=afterok:{later}", "--wrap=true")
    begin = cluster.job(later)["EligibleTime"]
    assert cluster.run("scontrol", "uhold", str(later)).rc == 0
    assert cluster.run("scontrol", "hold", str(waiting)).rc == 0
    _pass_ran(cluster)
    held = cluster.job(later)
    assert (held["Reason"], held["Priority"], held["EligibleTime"]) == ("JobHeldUser", "0", begin)
    assert _reason(cluster, later) == "JobHeldUser"
    assert (cluster.job(waiting)["Reason"], _reason(cluster, waiting)) == ("JobHeldAdmin",) * 2
    assert cluster.run("scontrol", "release", f"{later},{waiting}").rc == 0
    _pass_ran(cluster)
    assert (_reason(cluster, later), _reason(cluster, waiting)) == ("BeginTime", "Dependency")
    assert cluster.job(later)["EligibleTime"] == begin
    cluster.run("scancel", str(later), str(waiting))


def test_a_running_job_may_be_held_and_comes_back_held_from_a_requeue(
    cluster: TestCluster,
) -> None:
    job_id = cluster.sbatch("--wrap=sleep 300")
    cluster.wait_state(job_id, "RUNNING")
    assert cluster.run("scontrol", "hold", str(job_id)).rc == 0
    running = cluster.job(job_id)
    assert (running["JobState"], running["Reason"], running["Priority"]) == (
        "RUNNING",
        "JobHeldAdmin",
        "0",
    )
    assert cluster.run("scontrol", "requeue", str(job_id)).rc == 0
    back = cluster.wait_state(job_id, "PENDING")
    assert (back["Reason"], back["Restarts"]) == ("JobHeldAdmin", "1")
    cluster.run("scancel", str(job_id))


def test_requeuehold_says_so_in_slurms_words(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--wrap=sleep 300")
    cluster.wait_state(job_id, "RUNNING")
    assert cluster.run("scontrol", "requeuehold", str(job_id)).rc == 0
    back = cluster.wait_state(job_id, "PENDING")
    assert (back["Reason"], back["Priority"]) == ("job_requeued_in_held_state", "0")
    assert _reason(cluster, job_id) == "job requeued in held state"
    assert cluster.run("scontrol", "release", str(job_id)).rc == 0
    assert cluster.job(job_id)["Reason"] in ("None", "BeginTime")
    cluster.run("scancel", str(job_id))


def test_hold_errors_and_forms_match_real_scontrol(cluster: TestCluster) -> None:
    array = cluster.sbatch("--array=0-3", "-J", "holdme", "--hold", "--wrap=sleep 300")
    done = cluster.sbatch("-J", "holdme", "--wrap=true")
    cluster.wait_state(done)
    missing = cluster.run("scontrol", "release", f"{array}_[2-7]")
    assert (missing.rc, missing.err) == (
        1,
        f"{array}_2-3: No error\n{array}_4-7: Invalid job id specified\n",
    )
    assert cluster.run("scontrol", "hold", f"JobId={array}_1").rc == 0
    assert _reason(cluster, f"{array}_1") == "JobHeldAdmin"
    by_name = cluster.run("scontrol", "uhold", "Name=holdme")
    assert (by_name.rc, by_name.err) == (
        1,
        f"Job has already finished for job {done}\nslurm_suspend error: No error\n",
    )
    bad = cluster.run("scontrol", "hold", "1-3")
    assert (bad.rc, bad.err) == (
        1,
        "Invalid job id specified for job 1-3\nslurm_suspend error: Invalid job id specified\n",
    )
    cluster.run("scancel", str(array))
