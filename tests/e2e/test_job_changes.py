"""Holds and updates through the real commands: reasons, priorities and messages as Slurm's.

Expected values are what Slurm 22.05 printed for the same commands on the
reference cluster.
"""

from __future__ import annotations

import pytest
from conftest import TestCluster
from helpers import wait_until

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
    # As in Slurm, the released jobs show Reason=None until the next scheduling cycle.
    wanted = ("BeginTime", "Dependency")
    wait_until(
        lambda: (_reason(cluster, later), _reason(cluster, waiting)) == wanted, 10, "reasons"
    )
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


def test_update_takes_slurms_forms_and_fields(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--hold", "-t", "30", "--wrap=true")
    assert cluster.run("scontrol", "update", "job", str(job_id), "TimeLimit=1:30:00").rc == 0
    assert cluster.job(job_id)["TimeLimit"] == "01:30:00"
    changes = [
        "NumNodes=2",
        "StartTime=now+1hour",
        "Comment=hello world",
        "ExcNodeList=n2",
        "Requeue=0",
        "MailType=END",
        "Priority=0",
        "timelimit+=10",
    ]
    assert cluster.run("scontrol", "update", f"jobid={job_id}", *changes).rc == 0
    job = cluster.job(job_id)
    assert (job["NumNodes"], job["NumTasks"], job["ExcNodeList"]) == ("2", "2", "n2")
    assert (job["Comment"].strip(), job["Requeue"], job["MailType"]) == ("hello world", "0", "END")
    assert (job["Reason"], job["TimeLimit"]) == ("JobHeldAdmin", "01:40:00")
    assert job["StartTime"] == job["EligibleTime"] != "Unknown"
    held = cluster.run("scontrol", "update", f"JobId={job_id}", "Priority=5")
    assert (held.rc, held.err) == (
        1,
        f"Job is in held state, pending scheduler release for job {job_id}\n",
    )
    cluster.run("scancel", str(job_id))


def test_a_running_job_refuses_what_only_a_pending_one_may_change(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("-t", "30", "--wrap=sleep 300")
    cluster.wait_state(job_id, "RUNNING")
    for change, error in (
        ("Partition=debug", "Job is no longer pending execution"),
        ("NumNodes=2", "Requested operation not supported on this system"),
        ("Dependency=afterok:1", "Job is no longer pending execution"),
    ):
        result = cluster.run("scontrol", "update", f"JobId={job_id}", change)
        assert (result.rc, result.err) == (1, f"{error} for job {job_id}\n"), change
    assert cluster.run("scontrol", "update", f"JobId={job_id}", "Name=renamed", "Nice=5").rc == 0
    assert cluster.run("scontrol", "update", f"JobId={job_id}", "Priority=77").rc == 0
    job = cluster.job(job_id)
    assert (job["JobName"], job["Priority"], job["Nice"]) == ("renamed", "77", "0")
    cluster.run("scancel", str(job_id))
    cluster.wait_state(job_id)
    done = cluster.run("scontrol", "update", f"JobId={job_id}", "Comment=x")
    assert (done.rc, done.err) == (1, f"Job has already finished for job {job_id}\n")
