"""Tests of sdiag's counters (ctld.diag) and its report (cli.sdiag)."""

from __future__ import annotations

from dataclasses import replace

from test_accounting import job, ran

from cli.sdiag import report, rpc_order
from ctld.diag import JobTally, RpcStats
from minislurm.states import JobState
from minislurm.wire.protowire import Message


def test_the_tally_counts_submissions_starts_and_ends_once_each() -> None:
    tally = JobTally()
    pending = job(5, "j", JobState.PENDING)
    tally.see(None, pending)
    running = ran(5, "j", JobState.RUNNING)
    tally.see(pending, running)
    tally.see(running, running)  # saved again, unchanged state: nothing new
    done = ran(5, "j", JobState.COMPLETED)
    tally.see(running, done)
    tally.see(done, done)
    tally.see(None, replace(job(6, "a", JobState.PENDING), array_job_id=6, array_task_id=0))
    split = replace(job(7, "a", JobState.PENDING), array_job_id=6, array_task_id=1)
    tally.see(None, split)  # a task split off the array: not a submission
    tally.see(split, replace(split, state=JobState.CANCELLED))
    tally.see(None, ran(8, "t", JobState.RUNNING))  # submitted and started in one commit
    tally.see(ran(8, "t", JobState.RUNNING), ran(8, "t", JobState.TIMEOUT))
    assert tally == JobTally(submitted=3, started=2, completed=1, canceled=1, failed=1)


def test_rpc_stats_count_by_method_and_uid_and_reset() -> None:
    stats = RpcStats()
    stats.record("SubmitJob", 1000, 0.002)
    stats.record("SubmitJob", 0, 0.004)
    stats.record("GetJobs", 1000, 0.001)
    assert (stats.by_method["SubmitJob"].count, stats.by_uid[1000].count) == (2, 2)
    assert round(stats.by_method["SubmitJob"].seconds, 6) == 0.006
    stats.reset()
    assert stats.by_method == {} and stats.by_uid == {}


def stats_reply() -> Message:
    return Message(
        "minislurm.v1.GetStatsReply",
        sched_cycle_last_us=884,
        sched_cycle_max_us=900,
        sched_cycle_sum_us=1784,
        sched_cycle_count=2,
        server_start=1796261091,
        now=1796261094,
        jobs_submitted=3,
        jobs_started=2,
        jobs_completed=1,
        rpcs_by_type=[
            {"name": "GetJobs", "count": 5, "total_us": 500},
            {"name": "SubmitJob", "count": 3, "total_us": 9000},
        ],
        rpcs_by_user=[{"uid": 0, "count": 8, "total_us": 9500}],
    )


def test_the_report_is_slurms_layout_with_the_figures_we_have() -> None:
    text = report(stats_reply(), "count")
    lines = text.splitlines()
    assert lines[0] == lines[3] == "*" * 55
    assert lines[1].startswith("sdiag output at ") and lines[1].endswith(" (1796261094)")
    assert lines[2].startswith("Data since      ") and lines[2].endswith(" (1796261091)")
    assert "Jobs submitted: 3\nJobs started:   2\nJobs completed: 1\n" in text
    assert (
        "\tLast cycle:   884\n\tMax cycle:    900\n\tTotal cycles: 2\n\tMean cycle:   892\n" in text
    )
    assert "Backfilling stats\n\tTotal cycles: 0\n\tLast cycle: 0\n\tMax cycle:  0\n\n" in text
    assert f"\t{'GetJobs':<40}count:5      ave_time:100    total_time:500\n" in text
    assert "\troot            (       0) count:8      ave_time:1187   total_time:9500\n" in text
    assert text.endswith("Pending RPC statistics\n\tNo pending RPCs\n")


def test_rpcs_sort_by_count_name_total_or_average_time() -> None:
    def order(how: str) -> list[str]:
        lines = report(stats_reply(), how).split("by message type\n")[1].split("\n\n")[0]
        return [line.split()[0] for line in lines.splitlines()]

    assert order("count") == ["GetJobs", "SubmitJob"]  # as the controller sent them
    assert order("id") == ["GetJobs", "SubmitJob"]
    assert order("time") == order("time2") == ["SubmitJob", "GetJobs"]
    assert rpc_order({"sort_by_time2": True}) == "time2" and rpc_order({}) == "count"
