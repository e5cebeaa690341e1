"""Workflows end to end: job arrays, dependencies, begin times, sbatch --wait/--test-only."""

from __future__ import annotations

import time

from conftest import TERMINAL, TestCluster
from helpers import wait_until

# Each task writes its ids and when it ran (start and end, epoch seconds).
STAMP = """#!/bin/bash
echo "$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_JOB_ID $SLURM_ARRAY_TASK_COUNT \
$SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $(date +%s.%N)"
sleep {sleep}
date +%s.%N
"""


def intervals(texts: list[str]) -> list[tuple[float, float]]:
    """(start, end) of each output written by STAMP."""
    spans = []
    for text in texts:
        first, last = text.strip().splitlines()
        spans.append((float(first.split()[-1]), float(last)))
    return spans


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The largest number of intervals that overlap at one instant."""
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def squeue(cluster: TestCluster, *args: str) -> list[str]:
    result = cluster.run("squeue", "-h", *args)
    assert result.rc == 0, result.err
    return result.out.splitlines()


def test_throttled_array_runs_at_most_n_tasks_and_each_sees_its_ids(cluster: TestCluster) -> None:
    array = cluster.sbatch(
        "--array=0-19%4", "-J", "sweep", "-o", "sweep-%A_%a.out", script=STAMP.format(sleep=0.4)
    )
    wait_until(
        lambda: not squeue(cluster, "-j", str(array), "-t", "PD,R,CG"), 90, "the array to end"
    )
    outputs = {t: (cluster.workdir / f"sweep-{array}_{t}.out").read_text() for t in range(20)}
    job_ids = set()
    for task, text in outputs.items():
        words = text.split()
        assert words[:2] == [str(array), str(task)], text
        assert words[3:7] == ["20", "0", "19", "1"], text
        job_ids.add(int(words[2]))
    assert len(job_ids) == 20 and array in job_ids  # the last task keeps the array's id
    assert most_at_once(intervals(list(outputs.values()))) <= 4
    states = squeue(cluster, "-j", str(array), "-t", "all", "-o", "%i %T")
    assert sorted(states) == sorted(f"{array}_{t} COMPLETED" for t in range(20))


def test_pending_array_is_compacted_expanded_and_cancelled_by_task(cluster: TestCluster) -> None:
    array = cluster.sbatch("--array=0-9%2", "-H", "--wrap=true")
    assert squeue(cluster, "-j", str(array), "-o", "%i %t %r") == [
        f"{array}_[0-9%2] PD JobHeldUser"
    ]
    expanded = squeue(cluster, "-r", "-j", str(array), "-o", "%i")
    assert expanded == [f"{array}_{t}" for t in range(10)]
    assert cluster.run("scancel", f"{array}_4").rc == 0
    assert cluster.run("scancel", f"{array}_[1-3]").rc == 0
    assert squeue(cluster, "-j", str(array), "-o", "%i") == [f"{array}_[0,5-9%2]"]
    assert squeue(cluster, "-j", f"{array}_5", "-o", "%i %t") == [f"{array}_5 PD"]
    # Releasing one task splits it off under a job id of its own; it runs alone.
    assert cluster.run("scontrol", "release", f"{array}_5").rc == 0
    wait_until(
        lambda: squeue(cluster, "-t", "all", "-j", f"{array}_5", "-o", "%T") == ["COMPLETED"],
        30,
        "task 5 to complete",
    )
    show = cluster.run("scontrol", "-o", "show", "job", str(array)).out.splitlines()
    assert len(show) == 2 and "ArrayTaskId=0,6-9%2 ArrayTaskThrottle=2" in show[0]
    assert cluster.run("scancel", str(array)).rc == 0
    assert squeue(cluster, "-j", str(array)) == []
    assert cluster.run("scancel", f"{array}_77").rc == 0  # silent, as Slurm


def test_array_task_limits_and_bad_specs(cluster: TestCluster) -> None:
    bad = cluster.run("sbatch", "--array=abc", "--wrap=true")
    assert (bad.rc, bad.err) == (
        1,
        "sbatch: error: Batch job submission failed: Invalid job array specification\n",
    )
    assert cluster.run("sbatch", "--array=0-10001", "--wrap=true").rc == 1  # MaxArraySize
    array = cluster.sbatch("--array=1,3,5-9:2", "-H", "--wrap=true")
    job = cluster.job(array)
    assert job["ArrayJobId"] == str(array) and job["ArrayTaskId"] == "1,3,5,7,9", job  # Slurm's
    assert cluster.run("scancel", str(array)).rc == 0


def test_afterok_on_a_failed_job_is_never_satisfied(cluster: TestCluster) -> None:
    failing = cluster.sbatch("--wrap=exit 3")
    waiting = cluster.sbatch(f"--dependency=afterok:{failing}", "--wrap=true")
    killed = cluster.sbatch(
        f"--dependency=afterok:{failing}", "--kill-on-invalid-dep=yes", "--wrap=true"
    )
    job = wait_until(
        lambda: (j := cluster.job(waiting))["Reason"] == "DependencyNeverSatisfied" and j,
        30,
        "DependencyNeverSatisfied",
    )
    assert job["JobState"] == "PENDING"
    assert job["Dependency"] == f"afterok:{failing}(failed)"
    assert cluster.wait_state(killed)["JobState"] == "CANCELLED"
    assert cluster.run("scancel", str(waiting)).rc == 0


def test_afterany_runs_after_a_cancel_and_afternotok_after_a_failure(
    cluster: TestCluster,
) -> None:
    first = cluster.sbatch("-H", "--wrap=true")
    after_any = cluster.sbatch(f"--dependency=afterany:{first}", "--wrap=true")
    after_not_ok = cluster.sbatch(f"--dependency=afternotok:{first}", "--wrap=true")
    job = wait_until(lambda: (j := cluster.job(after_any))["Reason"] == "Dependency" and j)
    assert job["Dependency"] == f"afterany:{first}(unfulfilled)"
    assert job["EligibleTime"] == "Unknown"
    assert cluster.run("scancel", str(first)).rc == 0
    assert cluster.wait_state(after_any)["JobState"] == "COMPLETED"
    assert cluster.wait_state(after_not_ok)["JobState"] == "COMPLETED"  # CANCELLED is not ok


def test_dependency_can_be_changed_with_scontrol_update(cluster: TestCluster) -> None:
    blocker = cluster.sbatch("-H", "--wrap=true")
    job = cluster.sbatch(f"--dependency=afterok:{blocker}", "--wrap=true")
    wait_until(lambda: cluster.job(job)["Reason"] == "Dependency")
    update = cluster.run("scontrol", "update", f"JobId={job}", "Dependency=")
    assert update.rc == 0, update.err
    assert cluster.wait_state(job)["JobState"] == "COMPLETED"
    bad = cluster.run("scontrol", "update", f"JobId={blocker}", "Dependency=bogus:1")
    assert bad.rc == 1 and "Job dependency problem" in bad.err
    assert cluster.run("scancel", str(blocker)).rc == 0


def test_singleton_jobs_of_one_name_run_one_at_a_time(cluster: TestCluster) -> None:
    ids = [
        cluster.sbatch(
            "-J", "solo", "-d", "singleton", "-o", f"solo-{i}.out", script=STAMP.format(sleep=0.5)
        )
        for i in range(3)
    ]
    for job_id in ids:
        cluster.wait_state(job_id)
    spans = intervals([(cluster.workdir / f"solo-{i}.out").read_text() for i in range(3)])
    assert most_at_once(spans) == 1
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)  # in submission order


def test_begin_time_holds_a_job_until_then(cluster: TestCluster) -> None:
    submitted = time.time()
    job_id = cluster.sbatch("--begin=now+5", "--wrap=date +%s.%N")
    job = wait_until(lambda: (j := cluster.job(job_id))["Reason"] == "BeginTime" and j)
    assert job["JobState"] == "PENDING"
    cluster.wait_state(job_id, timeout=30)
    started = float((cluster.workdir / f"slurm-{job_id}.out").read_text())
    assert started >= int(submitted) + 5  # begin times are whole seconds, as in Slurm


def test_sbatch_wait_returns_the_exit_code_and_test_only_stores_nothing(
    cluster: TestCluster,
) -> None:
    waited = cluster.run("sbatch", "--wait", "--wrap=exit 7")
    assert waited.rc == 7 and waited.out.startswith("Submitted batch job "), waited
    job_id = int(waited.out.split()[-1])
    assert cluster.state(job_id) == "FAILED"
    tested = cluster.run("sbatch", "--test-only", "-N2", "-n16", "--wrap=true")
    assert tested.rc == 0, tested.err
    assert tested.err.startswith(f"sbatch: Job {job_id + 1} to start at ")
    assert tested.err.rstrip().endswith("using 16 processors on nodes n[1-2] in partition gpu")
    assert cluster.run("squeue", "-h", "-j", str(job_id + 1)).rc == 1  # nothing was stored
    never = cluster.run("sbatch", "--test-only", "-N3", "--wrap=true")
    assert never.rc == 1


def test_deadline_that_cannot_be_met_ends_the_job(cluster: TestCluster) -> None:
    blocker = cluster.sbatch("-H", "--wrap=true")
    job_id = cluster.sbatch(f"--dependency=afterok:{blocker}", "--deadline=now+2", "--wrap=true")
    assert cluster.wait_state(job_id, timeout=30)["JobState"] == "DEADLINE"
    late = cluster.run("sbatch", "--begin=now+120", "--deadline=now+60", "--wrap=true")
    assert (late.rc, late.err) == (
        1,
        "sbatch: error: Incompatible begin and deadline time specification\n",
    )
    assert cluster.run("scancel", str(blocker)).rc == 0


def test_arrays_and_dependencies_survive_a_controller_kill(fresh_cluster: TestCluster) -> None:
    array = fresh_cluster.sbatch("--array=0-5", "-H", "--wrap=true")
    dependent = fresh_cluster.sbatch(f"--dependency=afterok:{array}", "--wrap=true")
    fresh_cluster.kill_controller()
    fresh_cluster.start()
    assert fresh_cluster.job(array)["ArrayTaskId"] == "0-5"
    assert fresh_cluster.run("scontrol", "release", str(array)).rc == 0
    assert fresh_cluster.wait_state(dependent)["JobState"] == "COMPLETED"
    states = squeue(fresh_cluster, "-t", "all", "-j", str(array), "-o", "%T")
    assert sorted(states) == ["COMPLETED"] * 6 and set(states) <= TERMINAL


def test_scancel_of_a_step_kills_only_that_step(cluster: TestCluster) -> None:
    marker = cluster.workdir / "step-started"
    job_id = cluster.sbatch(
        script=f"#!/bin/bash\nsrun bash -c 'touch {marker}; sleep 60'\necho srun-rc=$?\n"
    )
    wait_until(marker.exists, 30, "the step to start")
    result = cluster.run("scancel", f"{job_id}.0")
    assert result.rc == 0, result.err
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    output = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert "srun-rc=137" in output, output
    missing = cluster.run("scancel", f"{job_id}.5")  # real Slurm: a finished job's step is an error
    assert (missing.rc, missing.err) == (
        1,
        f"scancel: error: Kill job error on job step id {job_id}.5: Invalid job id specified\n",
    )
