"""Tests of the event pass (``plan_event``, Slurm's main scheduler): strict order, starts only.

Imports ctld.sched and minislurm; plan_checks checks every pass.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_checks import check_plan
from test_backfill import NOW, busy, busy_snapshots, cpu_node
from test_plan import check_strict_order, job

from ctld.sched.knobs import SchedConfig, sched_from_params
from ctld.sched.plan import plan, plan_event
from minislurm.config import parse_scheduler_parameters
from minislurm.model import NodeView, PartitionView, PendingJob, Plan, Snapshot

CFG = SchedConfig(bf_resolution=60)


def event_pass(
    nodes: list[NodeView],
    jobs: list[PendingJob],
    partitions: list[PartitionView] | None = None,
    cfg: SchedConfig = CFG,
) -> Plan:
    """One event pass (default: one partition "gpu" of every node), checked."""
    parts = partitions or [PartitionView("gpu", tuple(n.name for n in nodes))]
    running = tuple(
        busy(n.name, n.cpus - n.free_cpus, NOW + 600, 100 + i)
        for i, n in enumerate(nodes)
        if n.free_cpus < n.cpus
    )
    snapshot = Snapshot(tuple(nodes), tuple(parts), tuple(jobs), running)
    result = plan_event(snapshot, NOW, cfg)
    check_plan(snapshot, result, NOW, complete=len(jobs) <= cfg.default_queue_depth)
    check_strict_order(snapshot, result)
    return result


def test_starts_in_order_until_a_job_does_not_fit_and_backfills_nothing() -> None:
    nodes = [cpu_node("n1", free=0), cpu_node("n2"), cpu_node("n3")]
    first = job(1, priority=10, ntasks=8, time_limit=60)
    wide = job(2, priority=9, min_nodes=3, max_nodes=3, ntasks=3, time_limit=60)
    short = job(3, ntasks=8, time_limit=5)  # fits n3 and ends long before n1 frees
    result = event_pass(nodes, [first, wide, short])
    assert [(s.job_id, s.allocation.node_names) for s in result.starts] == [(1, ("n2",))]
    assert result.reasons == {2: "Resources", 3: "Priority"}
    assert result.start_times == {}
    # A backfill pass over the same snapshot starts the short job in the gap.
    snapshot = Snapshot(
        tuple(nodes),
        (PartitionView("gpu", ("n1", "n2", "n3")),),
        (first, wide, short),
        (busy("n1", 8, NOW + 600),),
    )
    assert [s.job_id for s in plan(snapshot, NOW, CFG).starts] == [1, 3]


def test_a_blocked_partitions_nodes_are_closed_to_every_job_below() -> None:
    nodes = [cpu_node("n1", free=0), cpu_node("n2"), cpu_node("n3")]
    parts = [PartitionView("a", ("n1", "n2")), PartitionView("b", ("n2", "n3"))]
    head = job(1, "a", priority=10, min_nodes=2, max_nodes=2, ntasks=2, time_limit=60)
    below = [job(2, "b", ntasks=8, time_limit=60), job(3, "b", ntasks=8, time_limit=60)]
    result = event_pass(nodes, [head, *below], parts)
    # Job 2 takes n3, outside the blocked partition; n2 is kept for job 1, so job 3 waits.
    assert [(s.job_id, s.allocation.node_names) for s in result.starts] == [(2, ("n3",))]
    assert result.reasons == {1: "Resources", 3: "Resources"}


def test_looks_at_default_queue_depth_jobs_and_below_only_at_blocked_ones() -> None:
    nodes = [cpu_node("n1"), cpu_node("n2"), cpu_node("n3")]
    jobs = [job(i, ntasks=8, time_limit=10) for i in range(1, 5)]
    jobs[3] = replace(jobs[3], blocked="Dependency")
    cfg = SchedConfig(default_queue_depth=2)
    result = event_pass(nodes, jobs, cfg=cfg)
    assert [s.job_id for s in result.starts] == [1, 2]
    assert result.reasons == {4: "Dependency"}  # job 3 keeps its reason, as in Slurm
    assert event_pass(nodes, jobs, cfg=SchedConfig(default_queue_depth=0)).starts == ()


def test_default_queue_depth_is_a_scheduler_parameter_of_slurms_default() -> None:
    assert sched_from_params("sched/backfill", {}).default_queue_depth == 100
    params = parse_scheduler_parameters("default_queue_depth=7")
    assert sched_from_params("sched/backfill", params).default_queue_depth == 7


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_snapshots(), st.integers(0, 12), st.sampled_from(["sched/backfill", "sched/builtin"]))
def test_event_passes_keep_every_invariant_and_strict_order(
    snapshot: Snapshot, depth: int, scheduler_type: str
) -> None:
    cfg = SchedConfig(scheduler_type=scheduler_type, default_queue_depth=depth)
    result = plan_event(snapshot, NOW, cfg)
    queued = sum(not j.held for j in snapshot.pending)
    check_plan(snapshot, result, NOW, complete=queued <= depth)
    check_strict_order(snapshot, result)
    assert result.start_times == {}
    # What it starts, a full sched/builtin pass starts too: it only looks at fewer jobs.
    full = plan(snapshot, NOW, replace(cfg, scheduler_type="sched/builtin"))
    assert set(result.starts) <= set(full.starts)
