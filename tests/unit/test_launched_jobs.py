"""Tests of nodeagent.steps.LaunchedJobs: a launch's job, converted once per slurmd process."""

from __future__ import annotations

from minislurm.wire.rpc import minislurm_pb2 as pb
from nodeagent.steps import LaunchedJobs


def info(job_id: int, nodes: list[str]) -> pb.JobInfo:
    return pb.JobInfo(
        job_id=job_id,
        state="RUNNING",
        allocation=[pb.NodeAllocation(node=n, cpus=2) for n in nodes],
    )


def test_the_nodes_of_one_launch_share_one_record() -> None:
    jobs = LaunchedJobs()
    first = jobs.job(info(5, ["n1", "n2", "n3"]))
    again = jobs.job(info(5, ["n1", "n2", "n3"]))  # another node's request, a copy
    assert again is first
    assert (first.job_id, first.allocation.nodelist) == (5, "n[1-3]")


def test_another_job_or_a_changed_one_is_converted_anew() -> None:
    jobs = LaunchedJobs()
    first = jobs.job(info(5, ["n1", "n2"]))
    other = jobs.job(info(6, ["n1", "n2"]))
    grown = jobs.job(info(6, ["n1", "n2", "n4"]))
    assert other is not first and other.job_id == 6
    assert grown is not other and grown.allocation.nodelist == "n[1-2,4]"
