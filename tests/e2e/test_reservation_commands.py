"""Advance reservations through scontrol and sbatch --reservation on a real cluster.

Output layouts, messages and reasons are those of real Slurm 22.05 on the
same commands (two nodes of 8 CPUs).
"""

from __future__ import annotations

import re

import pytest
from conftest import TestCluster
from helpers import wait_until

OTHER = "ReqNodeNotAvail,_May_be_reserved_for_other_job"
MAINT = "ReqNodeNotAvail,_Reserved_for_maintenance"


def _ok(cluster: TestCluster, *argv: str) -> str:
    result = cluster.run(*argv)
    assert result.rc == 0, (argv, result)
    return result.out


def _reason(cluster: TestCluster, job: int, reason: str) -> None:
    wait_until(lambda: cluster.job(job)["Reason"] == reason, 20, f"job {job}: {reason}")
    assert cluster.state(job) == "PENDING"


@pytest.mark.timeout(180)
def test_reservations_hold_their_nodes_and_let_their_users_in(
    fresh_cluster: TestCluster,
) -> None:
    cluster = fresh_cluster
    out = _ok(cluster, "scontrol", "create", "reservation", "StartTime=now", "Duration=60",
              "Nodes=n1", "Users=root")  # fmt: skip
    assert out == "Reservation created: root_1\n"
    shown = _ok(cluster, "scontrol", "show", "reservation").splitlines()
    assert re.fullmatch(
        r"ReservationName=root_1 StartTime=\S+ EndTime=\S+ Duration=01:00:00", shown[0]
    )
    assert shown[1:] == [
        "   Nodes=n1 NodeCnt=1 CoreCnt=8 Features=(null) PartitionName=(null) Flags=SPEC_NODES",
        "   TRES=cpu=8",
        "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE "
        "BurstBuffer=(null) Watts=n/a",
        "   MaxStartDelay=(null)",
        "",
    ]
    for argv, message in (
        (["Nodes=n9"], "Error creating the reservation: Invalid node name specified\n"),
        (["Nodes=n1", "ReservationName=root_1"],
         "Error creating the reservation: Duplicate reservation name\n"),
        (["Nodes=n1"],
         "Error creating the reservation: Requested reservation overlaps with another "
         "reservation\n"),
    ):  # fmt: skip
        bad = cluster.run("scontrol", "create", "res", "StartTime=now", "Duration=60",
                          "Users=root", *argv)  # fmt: skip
        assert (bad.rc, bad.err) == (1, message), argv
    refused = cluster.run("sbatch", "--reservation=nosuch", "--wrap=true")
    assert refused.err == (
        "sbatch: error: Batch job submission failed: Requested reservation is invalid\n"
    )
    # Outside the reservation: n1 is out of reach while it lasts, n2 is free.
    pinned = cluster.sbatch("-w", "n1", "-t", "10", "--wrap=true")
    wide = cluster.sbatch("-N", "2", "-t", "10", "--wrap=true")
    free = cluster.sbatch("-t", "10", "--wrap=hostname")
    _reason(cluster, pinned, OTHER)
    _reason(cluster, wide, OTHER)
    assert cluster.wait_state(free, "COMPLETED")["NodeList"] == "n2"
    inside = cluster.sbatch("--reservation=root_1", "-N", "1", "--wrap=sleep 300")
    job = cluster.wait_state(inside, "RUNNING")
    assert (job["NodeList"], job["Reservation"]) == ("n1", "root_1")
    assert _ok(cluster, "squeue", "-h", "-j", str(inside), "-o", "%v") == "root_1\n"
    _ok(cluster, "scancel", str(inside))
    ran = _ok(cluster, "srun", "--reservation=root_1", "printenv", "SLURM_JOB_NODELIST")
    assert ran == "n1\n"
    # A maintenance window in 30 minutes on n2: only jobs that end before it may use n2.
    out = _ok(cluster, "scontrol", "create", "reservation", "ReservationName=maint",
              "StartTime=now+30minutes", "Duration=60", "Nodes=n2", "Users=root",
              "Flags=maint,ignore_jobs")  # fmt: skip
    assert out == "Reservation created: maint\n"
    crossing = cluster.sbatch("-w", "n2", "-t", "60", "--wrap=true")
    _reason(cluster, crossing, MAINT)
    short = cluster.sbatch("-w", "n2", "-t", "10", "--wrap=true")
    cluster.wait_state(short, "COMPLETED")
    assert _ok(cluster, "scontrol", "update", "ReservationName=maint", "Duration=120") == (
        "Reservation updated.\n"
    )
    cluster.kill_controller()
    cluster.start()
    line = _ok(cluster, "scontrol", "-o", "show", "reservation", "maint")
    assert "Duration=02:00:00 Nodes=n2 NodeCnt=1 CoreCnt=8" in line
    assert "Flags=MAINT,IGNORE_JOBS,SPEC_NODES" in line and "State=INACTIVE" in line
    missing = cluster.run("scontrol", "delete", "ReservationName=nosuch")
    assert (missing.rc, missing.err) == (
        1, "delete_reservation ReservationName=nosuch: Requested reservation is invalid\n",
    )  # fmt: skip
    assert _ok(cluster, "scontrol", "delete", "ReservationName=root_1") == ""
    assert _ok(cluster, "scontrol", "delete", "ReservationName=maint") == ""
    assert _ok(cluster, "scontrol", "show", "res") == "No reservations in the system\n"
    for job_id in (pinned, wide, crossing):
        cluster.wait_state(job_id, "COMPLETED")
