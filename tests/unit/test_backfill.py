"""Tests of the backfill pass (``sched/backfill``): starts around reservations, expected starts.

Imports ctld.sched, ctld.simulator and minislurm; plan_checks checks every pass.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_checks import check_plan
from test_plan import job, node, requests, snapshots

from ctld.sched.knobs import SchedConfig, sched_from_params
from ctld.sched.plan import job_order, plan
from ctld.sched.select import select_nodes
from ctld.sched.timeline import build_timeline
from ctld.simulator import SimJob, simulate, trace_job, trace_machine
from minislurm.config import parse_scheduler_parameters
from minislurm.model import (
    Allocation,
    NodeAlloc,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    ResourceRequest,
    RunningJob,
    Snapshot,
)
from minislurm.units import INFINITE

NOW = 6000.0
CFG = SchedConfig(bf_resolution=60)


def busy(name: str, cpus: int, end: float, job_id: int = 100) -> RunningJob:
    """A running job holding ``cpus`` CPUs of ``name`` until ``end``."""
    return RunningJob(job_id, Allocation((NodeAlloc(name, cpus, 0, (), cpus),)), end)


def run_bf(
    nodes: list[NodeView],
    jobs: list[PendingJob],
    running: list[RunningJob] | None = None,
    cfg: SchedConfig = CFG,
) -> Plan:
    """One backfill pass over one partition "gpu" of every node, checked."""
    part = PartitionView("gpu", tuple(n.name for n in nodes))
    snapshot = Snapshot(tuple(nodes), (part,), tuple(jobs), tuple(running or ()))
    result = plan(snapshot, NOW, cfg)
    check_plan(snapshot, result, NOW, complete=len(jobs) <= cfg.bf_max_job_test)
    return result


def cpu_node(name: str, free: int = 8) -> NodeView:
    return node(name, cpus=8, gpus=0, free_cpus=free)


def test_short_job_backfills_before_the_waiting_head_and_a_long_one_does_not() -> None:
    # n1 is busy for 10 more minutes; the head needs both nodes, so it waits for n1.
    nodes = [cpu_node("n1", free=0), cpu_node("n2")]
    head = job(1, priority=10, min_nodes=2, max_nodes=2, ntasks=2, time_limit=60)
    short = job(2, ntasks=8, time_limit=5)  # ends before n1 frees: fits in the gap
    long = job(3, ntasks=8, time_limit=30)  # would hold n2 past the head's start
    result = run_bf(nodes, [head, short, long], [busy("n1", 8, NOW + 600)])
    assert [s.job_id for s in result.starts] == [2]
    assert result.start_times[1] == NOW + 600
    assert result.reasons[1] == "Resources"
    assert result.start_times[3] >= NOW + 600 + 3600  # after the head, not before


def test_a_one_node_job_starts_on_the_node_that_holds_all_its_tasks() -> None:
    # n2 is the busier and holds one of the two tasks; n1 holds both.
    nodes = [cpu_node("n1", free=2), cpu_node("n2", free=1)]
    running = [busy("n1", 6, NOW + 600, 100), busy("n2", 7, NOW + 600, 101)]
    result = run_bf(nodes, [job(1, ntasks=2, time_limit=10)], running)
    assert [(s.job_id, s.allocation.node_names) for s in result.starts] == [(1, ("n1",))]


def test_builtin_starts_nothing_behind_the_blocked_head() -> None:
    nodes = [cpu_node("n1", free=0), cpu_node("n2")]
    head = job(1, priority=10, min_nodes=2, max_nodes=2, ntasks=2, time_limit=60)
    short = job(2, ntasks=8, time_limit=5)
    part = PartitionView("gpu", ("n1", "n2"))
    snapshot = Snapshot(tuple(nodes), (part,), (head, short), (busy("n1", 8, NOW + 600),))
    result = plan(snapshot, NOW, SchedConfig(scheduler_type="sched/builtin"))
    assert result.starts == ()
    assert result.start_times == {1: NOW + 600}


def test_every_waiting_job_within_the_window_gets_an_expected_start() -> None:
    nodes = [cpu_node("n1")]
    jobs = [job(i, ntasks=8, time_limit=10) for i in range(1, 5)]
    result = run_bf(nodes, jobs)
    assert [s.job_id for s in result.starts] == [1]
    assert result.start_times == {2: NOW + 600, 3: NOW + 1200, 4: NOW + 1800}


def test_bf_window_leaves_later_jobs_without_a_reservation() -> None:
    nodes = [cpu_node("n1")]
    jobs = [job(i, ntasks=8, time_limit=60) for i in range(1, 5)]
    result = run_bf(nodes, jobs, cfg=SchedConfig(bf_window=120, bf_resolution=60))
    assert result.start_times == {2: NOW + 3600, 3: NOW + 7200}
    assert result.reasons[4] == "Priority"


def test_bf_max_job_test_stops_testing_jobs() -> None:
    nodes = [cpu_node("n1"), cpu_node("n2"), cpu_node("n3")]
    jobs = [job(i, ntasks=8, time_limit=10) for i in range(1, 4)]
    result = run_bf(nodes, jobs, cfg=SchedConfig(bf_max_job_test=2, bf_resolution=60))
    assert [s.job_id for s in result.starts] == [1, 2]
    assert result.reasons == {}  # job 3 is not tested: it keeps its reason, as in Slurm


def test_jobs_below_bf_max_job_test_keep_their_reason_unless_blocked() -> None:
    nodes = [cpu_node("n1")]
    jobs = [job(i, ntasks=8, time_limit=10) for i in range(1, 5)]
    jobs[3] = replace(jobs[3], blocked="Dependency")
    result = run_bf(nodes, jobs, cfg=SchedConfig(bf_max_job_test=2, bf_resolution=60))
    assert [s.job_id for s in result.starts] == [1]
    assert result.reasons == {2: "Resources", 4: "Dependency"}


def test_bf_resolution_rounds_ends_up_to_its_grid() -> None:
    nodes = [cpu_node("n1", free=0)]
    running = [busy("n1", 8, NOW + 61)]
    coarse = run_bf(nodes, [job(1, ntasks=8, time_limit=10)], running)
    fine = run_bf(nodes, [job(1, ntasks=8, time_limit=10)], running, SchedConfig(bf_resolution=1))
    assert coarse.start_times == {1: NOW + 120}
    assert fine.start_times == {1: NOW + 61}


def test_unlimited_running_job_never_frees_its_node() -> None:
    nodes = [cpu_node("n1", free=0)]
    result = run_bf(nodes, [job(1, ntasks=8, time_limit=10)], [busy("n1", 8, float("inf"))])
    assert result.starts == ()
    assert result.start_times == {}
    assert result.reasons == {1: "Resources"}


def test_packing_keeps_a_whole_node_free_for_the_large_job_behind() -> None:
    nodes = [cpu_node("n1", free=4), cpu_node("n2")]
    small = job(1, ntasks=4, time_limit=10)
    large = job(2, ntasks=8, time_limit=10)
    result = run_bf(nodes, [small, large], [busy("n1", 4, NOW + 6000)])
    assert {s.job_id: s.allocation.node_names for s in result.starts} == {
        1: ("n1",),
        2: ("n2",),
    }


# ---------------------------------------------------------------- properties

CONFIGS = [SchedConfig(bf_resolution=60), SchedConfig(bf_resolution=1, bf_job_part_count_reserve=1)]


@st.composite
def busy_snapshots(draw: st.DrawFn) -> Snapshot:
    """Random snapshots (test_plan's) whose busy resources belong to running jobs with ends."""
    snapshot = draw(snapshots())
    running = []
    for i, n in enumerate(snapshot.nodes):
        used = NodeAlloc(
            n.name,
            n.cpus - n.free_cpus,
            n.mem - n.free_mem,
            tuple(g for g in n.gpus if g not in n.free_gpus),
            1,
        )
        if used.cpus or used.mem or used.gpus:
            end = draw(st.sampled_from([NOW - 5, NOW + 30, NOW + 600, NOW + 7200, float("inf")]))
            running.append(RunningJob(1000 + i, Allocation((used,)), end))
    limits = st.sampled_from([1, 5, 30, 120, INFINITE])
    pending = tuple(replace(j, time_limit=draw(limits)) for j in snapshot.pending)
    return replace(snapshot, pending=pending, running=tuple(running))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_snapshots(), st.sampled_from(CONFIGS))
def test_backfill_never_overcommits_and_keeps_every_reservation(
    snapshot: Snapshot, cfg: SchedConfig
) -> None:
    check_plan(snapshot, plan(snapshot, NOW, cfg), NOW)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_snapshots(), st.sampled_from(CONFIGS))
def test_jobs_below_never_change_a_higher_priority_jobs_planned_start(
    snapshot: Snapshot, cfg: SchedConfig
) -> None:
    """Whatever starts or is reserved below a job, its planned start is what it is alone above."""
    full = plan(snapshot, NOW, cfg)
    tiers = {p.name: p.priority_tier for p in snapshot.partitions}
    queue = sorted(
        (j for j in snapshot.pending if not j.held),
        key=lambda j: job_order(j, tiers[j.partition]),
    )
    for cut in range(len(queue)):
        above = replace(snapshot, pending=tuple(queue[: cut + 1]))
        alone = plan(above, NOW, cfg)
        job_id = queue[cut].job_id
        assert alone.start_times.get(job_id) == full.start_times.get(job_id)
        assert [s for s in alone.starts if s.job_id == job_id] == [
            s for s in full.starts if s.job_id == job_id
        ]


ALIKE = [f"a{i}" for i in range(1, 13)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 12),
    st.sampled_from([(4, 2000, 0), (8, 8000, 4), (16, 16000, 8)]),
    st.integers(0, 12),
    requests(ALIKE),
)
def test_alike_idle_nodes_are_placed_as_select_nodes_places_them(
    count: int, shape: tuple[int, int, int], busy_count: int, req: ResourceRequest
) -> None:
    """The cached choice on idle alike nodes is select_nodes' own, for starts now and later."""
    cpus, mem, gpus = shape
    names = ALIKE[:count]
    nodes = [node(n, cpus=cpus, mem=mem, gpus=gpus) for n in names]
    held = names[:busy_count]  # whole nodes busy until NOW + 600
    running = [
        RunningJob(
            100 + i, Allocation((NodeAlloc(n, cpus, mem, tuple(range(gpus)), 1),)), NOW + 600
        )
        for i, n in enumerate(held)
    ]
    nodes = [
        replace(n, free_cpus=0, free_mem=0, free_gpus=()) if n.name in held else n for n in nodes
    ]
    req = replace(req, req_nodes=())
    timeline = build_timeline(nodes, running, NOW, 60, NOW + 86400)
    offered = ~timeline.table.mask(req.exc_nodes)
    for k, start in enumerate(timeline.begins):  # now, and when the busy nodes free up
        end = timeline.end_of(start, 3600)
        idle = timeline.idle[k] & offered
        expected = select_nodes(req, timeline.views(start, end, idle, 0, req.max_nodes))
        assert timeline.place(req, start, end, idle, 0, req.max_nodes) == expected


@st.composite
def workloads(draw: st.DrawFn) -> list[SimJob]:
    """Jobs on a 6-processor machine whose run times equal their time limits."""
    jobs = []
    submit = 0
    for job_id in range(1, draw(st.integers(2, 14)) + 1):
        submit += draw(st.sampled_from([0, 0, 10, 60, 300]))
        procs = draw(st.integers(1, 6))
        limit = 60.0 * draw(st.sampled_from([1, 2, 4, 15]))  # time limits are whole minutes
        jobs.append(SimJob(trace_job(job_id, float(submit), procs, limit), limit))
    return jobs


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_with_exact_limits_only_a_job_above_can_delay_a_planned_start(jobs: list[SimJob]) -> None:
    """Conservative backfill: with run times equal to limits, no job below delays a job's start.

    A job may start later than first planned only when a job above it in the
    queue (here: a lower job id) started earlier than its own first planned
    start and took the room; Slurm promises no more (a reservation may move
    to other nodes, and the room it leaves goes to the next job in order).
    """
    cfg = SchedConfig(bf_resolution=1)
    nodes, part = trace_machine(6)
    planned: dict[int, float] = {}

    def on_pass(snapshot: Snapshot, decided: Plan, now: float) -> None:
        check_plan(snapshot, decided, now)
        for job_id, when in decided.start_times.items():
            planned.setdefault(job_id, when)

    outcome = simulate(jobs, nodes, (part,), cfg, on_pass)
    assert outcome.unfinished == 0
    early = [r.job_id for r in outcome.records if r.start < planned.get(r.job_id, r.start)]
    for record in outcome.records:
        if record.start > planned.get(record.job_id, record.start):
            assert any(k < record.job_id for k in early), f"job {record.job_id} delayed"


def test_a_waiting_jobs_reservation_keeps_its_nodes_from_pass_to_pass() -> None:
    # 6 single-CPU nodes. At t=10 job 2 is reserved n1-n4 at 120, job 6 n5,n6 at 70,
    # and job 8 n4 from 60 to 120. At 60 n4 is idle: planned afresh, job 2 would take
    # busy n5 instead (keeping idle nodes for jobs that may start meanwhile), job 6
    # then n4, and job 8, below both, would wait until 190.
    spec = [(1, 0, 3, 2), (2, 0, 4, 1), (3, 0, 4, 1), (4, 0, 1, 1)]
    spec += [(5, 10, 1, 1), (6, 10, 2, 2), (7, 10, 1, 1), (8, 10, 1, 1)]
    jobs = [SimJob(trace_job(i, float(t), n, 60.0 * m), 60.0 * m) for i, t, n, m in spec]
    nodes, part = trace_machine(6)
    planned: dict[int, float] = {}

    def on_pass(snapshot: Snapshot, decided: Plan, now: float) -> None:
        for job_id, when in decided.start_times.items():
            planned.setdefault(job_id, when)

    outcome = simulate(jobs, nodes, (part,), SchedConfig(bf_resolution=1), on_pass)
    starts = {r.job_id: r.start for r in outcome.records}
    assert planned == {2: 120.0, 3: 180.0, 6: 70.0, 8: 60.0}
    assert {job_id: starts[job_id] for job_id in planned} == planned


# ---------------------------------------------------------------- knobs


def test_scheduler_parameters_set_the_knobs_and_the_rest_keep_slurms_defaults() -> None:
    params = parse_scheduler_parameters("bf_window=60,bf_resolution=1,bf_continue,foo=bar")
    cfg = sched_from_params("sched/backfill", params)
    assert (cfg.bf_window, cfg.bf_resolution, cfg.bf_continue) == (60, 1, True)
    assert (cfg.bf_max_job_test, cfg.bf_interval, cfg.bf_job_part_count_reserve) == (500, 30, 0)
    assert cfg.backfill and not sched_from_params("sched/builtin", {}).backfill


@pytest.mark.parametrize(
    "text",
    [
        "bf_window=0",
        "bf_resolution=3601",
        "bf_max_job_test=x",
        "bf_job_part_count_reserve=-1",
        "default_queue_depth=-1",
    ],
)
def test_scheduler_parameters_out_of_slurms_range_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="must be a number from"):
        parse_scheduler_parameters(text)


def test_bf_job_part_count_reserve_reserves_only_the_first_waiting_jobs() -> None:
    nodes = [cpu_node("n1", free=0), cpu_node("n2", free=0)]
    running = [busy("n1", 8, NOW + 600, 100), busy("n2", 8, NOW + 1200, 101)]
    jobs = [job(i, ntasks=8, time_limit=60) for i in range(1, 4)]
    easy = run_bf(nodes, jobs, running, SchedConfig(bf_job_part_count_reserve=1))
    assert easy.start_times == {1: NOW + 600}
    conservative = run_bf(nodes, jobs, running)
    assert conservative.start_times == {1: NOW + 600, 2: NOW + 1200, 3: NOW + 600 + 3600}
