"""Advance reservations: creation rules, and that no pass ever starts a job into one.

The property test builds the controller's in-memory state (nodes, a
partition, reservations, pending jobs), takes the scheduler's snapshot and
runs the real planner, then checks every start: a job outside a
reservation never holds its nodes while its window is open or before its
time limit could end, and a job in a reservation runs only on its nodes
inside its window.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctld.resv import rules as resvops
from ctld.resv.rules import Cluster, Request, ResvError
from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import build_snapshot
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import Job, Node, ResourceRequest, Resv
from minislurm.states import JobState, NodeState
from minislurm.units import INFINITE

NOW = 1_000_000.0
NODES = ("n1", "n2", "n3")
CLUSTER = Cluster(NODES, {"gpu": NODES}, "gpu", ("root", "physics"), {})


def test_create_names_picks_and_flags_like_slurm() -> None:
    first = resvops.create(
        Request("", duration=3600.0, nodes=("n1",), users=("root",), flags=("MAINT",)),
        {}, CLUSTER, NOW, 1,
    )  # fmt: skip
    assert (first.name, first.start, first.end) == ("root_1", NOW, NOW + 3600)
    assert first.flags == ("MAINT", "SPEC_NODES") and first.partition == ""
    second = resvops.create(
        Request("train", start=NOW + 60, end=NOW + 120, node_count=2, accounts=("physics",)),
        {"root_1": first}, CLUSTER, NOW, 2,
    )  # fmt: skip
    # n1 is in a maintenance window, which may be shared.
    assert second.nodes == ("n1", "n2") and second.partition == "gpu"


@pytest.mark.parametrize(
    ("request_", "busy", "message"),
    [
        (Request("x", duration=60.0, nodes=("n9",), users=("root",)), {}, "Invalid node name"),
        (Request("a", duration=60.0, nodes=("n1",), users=("root",)), {}, "Duplicate reservation"),
        (Request("x", duration=60.0, nodes=("n2",), users=("root",)), {}, "overlaps with another"),
        (Request("x", duration=60.0, nodes=("n3",), users=("root",)), {"n3": NOW + 5}, "busy"),
        (Request("x", duration=60.0, node_count=3, users=("root",)), {}, "busy"),
        (Request("x", duration=60.0, nodes=("n3",), accounts=("chem",)), {}, "Invalid account"),
        (Request("x", duration=60.0, nodes=("n3",)), {}, "Users/Groups and/or Accounts"),
        (Request("x", nodes=("n3",), users=("root",)), {}, "end time or duration"),
    ],
)
def test_create_refuses_what_slurm_refuses(
    request_: Request, busy: dict[str, float], message: str
) -> None:
    existing = {"a": Resv("a", NOW, NOW + 600, ("n2",), ("root",))}
    cluster = Cluster(NODES, {"gpu": NODES}, "gpu", ("root",), busy)
    with pytest.raises(ResvError, match=message):
        resvops.create(request_, existing, cluster, NOW, 1)


def test_ignore_jobs_and_overlap_flags_allow_busy_and_shared_nodes() -> None:
    existing = {"a": Resv("a", NOW, NOW + 600, ("n2",), ("root",))}
    cluster = Cluster(NODES, {"gpu": NODES}, "gpu", ("root",), {"n2": NOW + 5})
    flags = ("OVERLAP", "IGNORE_JOBS")
    made = resvops.create(
        Request("b", duration=60.0, nodes=("n2",), users=("root",), flags=flags),
        existing, cluster, NOW, 1,
    )  # fmt: skip
    assert made.nodes == ("n2",)


def test_a_job_waits_for_its_reservation_and_is_refused_one_it_may_not_use() -> None:
    resv = Resv("r", NOW + 60, NOW + 600, ("n1",), ("alice",))
    limits = resvops.job_limits("r", 60.0, NOW, [resv], NODES)
    assert limits.blocked == "Reservation"
    assert resvops.job_limits("gone", 60.0, NOW, [resv], NODES).blocked == "ReservationDeleted"
    inside = resvops.job_limits("r", 60.0, NOW + 61, [resv], NODES)
    assert (inside.blocked, inside.avoid) == ("", frozenset({"n2", "n3"}))
    outside = resvops.job_limits("", 120.0, NOW, [resv], NODES)
    assert outside.avoid == {"n1"} and outside.crowded.startswith("ReqNodeNotAvail")
    assert resvops.job_limits("", 30.0, NOW, [resv], NODES).avoid == frozenset()
    resvops.check_job("r", "alice", "", {"r": resv})
    with pytest.raises(ResvError, match="Access denied"):
        resvops.check_job("r", "bob", "physics", {"r": resv})
    with pytest.raises(ResvError, match="Requested reservation is invalid"):
        resvops.check_job("nope", "alice", "", {"r": resv})


def _state(resvs: list[Resv], jobs: list[Job]) -> ClusterState:
    nodes = [
        Node(n, 4, 4000, (), ("gpu",), state=NodeState.IDLE) for n in NODES
    ]  # fmt: skip
    state = ClusterState(nodes, [PartitionConfig("gpu", NODES, default=True)])
    state.reservations.update((r.name, r) for r in resvs)
    for job in jobs:
        state.put_job(job)
    return state


reservations = st.lists(
    st.builds(
        lambda i, start, length, nodes, maint: Resv(
            f"r{i}",
            NOW + start,
            NOW + start + length if length else math.inf,
            nodes,
            ("u",),
            flags=("MAINT",) if maint else (),
        ),
        st.integers(0, 3),
        st.sampled_from([-600, 0, 30, 600, 7200]),
        st.sampled_from([0, 60, 3600]),
        st.sets(st.sampled_from(NODES), min_size=1).map(lambda s: tuple(sorted(s))),
        st.booleans(),
    ),
    max_size=3,
    unique_by=lambda r: r.name,
)
jobs = st.lists(
    st.tuples(
        st.sampled_from([1, 10, 60, 600, INFINITE]),  # time limit, minutes
        st.integers(1, 3),  # nodes
        st.sampled_from(["", "r0", "r1"]),  # reservation
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(reservations, jobs)
def test_no_pass_ever_starts_a_job_into_a_reservation(
    resvs: list[Resv], specs: list[tuple[int, int, str]]
) -> None:
    pending = [
        Job(
            i + 1,
            "j",
            0,
            0,
            "u",
            "u",
            "gpu",
            JobState.PENDING,
            ResourceRequest(min_nodes=n, max_nodes=n, ntasks=n),
            NOW - 10,
            time_limit=limit,
            reservation=resv,
        )
        for i, (limit, n, resv) in enumerate(specs)
    ]
    state = _state(resvs, pending)
    snapshot = build_snapshot(state, NOW, PriorityWeights())
    decided = plan(snapshot, NOW, SchedConfig())
    by_id = {j.job_id: j for j in pending}
    for start in decided.starts:
        job = by_id[start.job_id]
        end = math.inf if job.time_limit == INFINITE else NOW + job.time_limit * 60
        for resv in resvs:
            mine = resv.name == job.reservation
            held = set(start.allocation.node_names) & set(resv.nodes)
            if mine:
                assert resv.active(NOW), (job, resv)
                assert set(start.allocation.node_names) <= set(resv.nodes), (job, resv)
            elif held:
                assert not resv.overlaps(NOW, end), (job, resv, start)
        if job.reservation and job.reservation not in {r.name for r in resvs}:
            raise AssertionError(f"job {job.job_id} started in a missing reservation")
    for job_id, reason in decided.reasons.items():
        assert reason, job_id
