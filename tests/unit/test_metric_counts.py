"""Tests of ctld.metrics' pure parts: job and node gauges as Slurm's metrics name them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_accounting import N1_N2, alloc, job, ran

from ctld.metrics import job_counts, node_class
from ctld.state import NodeUsage
from minislurm.model import HOLD_USER, Allocation, NodeAlloc
from minislurm.states import JobState, NodeFlag, NodeState

MIB = 1024 * 1024


def test_job_gauges_count_states_holds_and_what_active_jobs_hold() -> None:
    big = Allocation((NodeAlloc("n1", 4, 1000, (0, 1)), NodeAlloc("n2", 4, 1000, (0, 1))))
    jobs = [
        job(1, "wait", JobState.PENDING),
        replace(job(2, "held", JobState.PENDING), hold=HOLD_USER),
        ran(3, "train", JobState.RUNNING, allocation=big),
        ran(4, "ending", JobState.COMPLETING, allocation=alloc(("n3", 2, 0))),
        ran(5, "done"),
        ran(6, "gone", JobState.CANCELLED, allocation=N1_N2),
        ran(7, "oom", JobState.OUT_OF_MEMORY),
    ]
    counts = job_counts(jobs)
    assert counts["jobs"] == 7
    assert (counts["jobs_pending"], counts["jobs_hold"], counts["jobs_running"]) == (2, 1, 1)
    assert (counts["jobs_completing"], counts["jobs_completed"]) == (1, 1)
    assert (counts["jobs_cancelled"], counts["jobs_outofmemory"], counts["jobs_finished"]) == (
        1,
        1,
        3,
    )
    # Only running and completing jobs hold resources; an ended one's allocation is history.
    assert counts["jobs_cpus_alloc"] == 10
    assert counts["jobs_nodes_alloc"] == 3
    assert counts["jobs_gpus_alloc"] == 4
    assert counts["jobs_memory_alloc"] == 2000 * MIB


def test_no_jobs_gives_every_gauge_at_zero() -> None:
    counts = job_counts([])
    assert counts["jobs"] == 0 and set(counts.values()) == {0}
    assert {"jobs_node_failed", "jobs_timeout", "jobs_preempted"} <= counts.keys()


@pytest.mark.parametrize(
    ("state", "flags", "cpus_used", "names"),
    [
        (NodeState.IDLE, frozenset(), 0, ["nodes_idle"]),
        (NodeState.IDLE, frozenset(), 3, ["nodes_mixed"]),
        (NodeState.IDLE, frozenset(), 8, ["nodes_alloc"]),
        (NodeState.DOWN, frozenset({NodeFlag.NOT_RESPONDING}), 0, ["nodes_down", "nodes_noresp"]),
        (
            NodeState.IDLE,
            frozenset({NodeFlag.DRAIN}),
            0,
            ["nodes_idle", "nodes_drain", "nodes_drained"],
        ),
        (
            NodeState.IDLE,
            frozenset({NodeFlag.DRAIN}),
            2,
            ["nodes_mixed", "nodes_drain", "nodes_draining"],
        ),
        (NodeState.UNKNOWN, frozenset(), 0, ["nodes_unknown"]),
    ],
)
def test_a_node_counts_in_its_state_and_its_flags(
    state: NodeState, flags: frozenset[NodeFlag], cpus_used: int, names: list[str]
) -> None:
    assert node_class(state, flags, NodeUsage(cpus=cpus_used), 8) == names
