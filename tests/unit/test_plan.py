"""Tests of ctld.sched.plan under sched/builtin: which pending jobs start now, and why others wait.

Backfill has its own tests (test_backfill.py).

Every pass is checked with :func:`plan_checks.check_plan` (STYLE.md #18).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_checks import check_plan

from ctld.sched.knobs import BUILTIN
from ctld.sched.plan import exceeds_partition, job_order, plan
from minislurm.model import NodeView, PartitionView, PendingJob, Plan, ResourceRequest, Snapshot
from minislurm.units import INFINITE


def node(
    name: str,
    cpus: int = 8,
    mem: int = 8000,
    gpus: int = 8,
    free_cpus: int | None = None,
    free_mem: int | None = None,
    free_gpus: tuple[int, ...] | None = None,
    usable: bool = True,
) -> NodeView:
    """A node like the reference cluster's (8 CPUs, 8000 MiB, 8 GPUs), idle unless told."""
    return NodeView(
        name=name,
        cpus=cpus,
        mem=mem,
        gpus=tuple(range(gpus)),
        free_cpus=cpus if free_cpus is None else free_cpus,
        free_mem=mem if free_mem is None else free_mem,
        free_gpus=tuple(range(gpus)) if free_gpus is None else free_gpus,
        usable=usable,
    )


def job(
    job_id: int,
    partition: str = "gpu",
    priority: int = 1,
    submit_time: float | None = None,
    time_limit: int = INFINITE,
    held: bool = False,
    **request: object,
) -> PendingJob:
    """A pending job; ``request`` holds ResourceRequest fields (submit time defaults to id)."""
    return PendingJob(
        job_id=job_id,
        partition=partition,
        priority=priority,
        submit_time=float(job_id) if submit_time is None else submit_time,
        request=ResourceRequest(**request),  # type: ignore[arg-type]
        time_limit=time_limit,
        held=held,
    )


def run(
    nodes: list[NodeView], jobs: list[PendingJob], partitions: list[PartitionView] | None = None
) -> Plan:
    """One pass over a snapshot (default: one partition "gpu" of every node), checked."""
    if partitions is None:
        partitions = [PartitionView("gpu", tuple(n.name for n in nodes))]
    snapshot = Snapshot(tuple(nodes), tuple(partitions), tuple(jobs))
    result = plan(snapshot, 1000.0, BUILTIN)
    check_plan(snapshot, result)
    return result


def started(result: Plan) -> list[int]:
    return [s.job_id for s in result.starts]


def gpus_of(result: Plan, job_id: int) -> dict[str, tuple[int, ...]]:
    for s in result.starts:
        if s.job_id == job_id:
            return {p.node: p.gpus for p in s.allocation.nodes}
    raise AssertionError(f"job {job_id} did not start")


# ---------------------------------------------------------------- order


@pytest.mark.parametrize(
    ("jobs", "expected_first"),
    [
        # priority first, whatever the submit time and id
        ([job(1, priority=1), job(2, priority=5), job(3, priority=3)], 2),
        # equal priority: oldest submission
        ([job(1, submit_time=30.0), job(2, submit_time=10.0), job(3, submit_time=20.0)], 2),
        # equal priority and submit time: lowest id
        ([job(7, submit_time=5.0), job(3, submit_time=5.0), job(9, submit_time=5.0)], 3),
        # the order in the snapshot does not matter
        ([job(3), job(2), job(1)], 1),
    ],
)
def test_plan_starts_jobs_by_priority_then_submit_time_then_id(
    jobs: list[PendingJob], expected_first: int
) -> None:
    result = run([node("n1", cpus=1, gpus=0)], jobs)
    assert started(result) == [expected_first]


def test_plan_starts_as_many_jobs_as_fit_in_queue_order() -> None:
    jobs = [job(1, priority=1), job(2, priority=3), job(3, priority=2), job(4, priority=0)]
    result = run([node("n1", cpus=2, gpus=0)], jobs)
    assert started(result) == [2, 3]
    assert result.reasons == {1: "Resources", 4: "Priority"}


def test_plan_tries_higher_priority_tier_partitions_first() -> None:
    nodes = [node("n1", cpus=1, gpus=0)]
    partitions = [
        PartitionView("low", ("n1",), priority_tier=1),
        PartitionView("high", ("n1",), priority_tier=2),
    ]
    jobs = [job(1, "low", priority=100, submit_time=0.0), job(2, "high", priority=1)]
    result = run(nodes, jobs, partitions)
    assert started(result) == [2]
    assert result.reasons == {1: "Resources"}


@pytest.mark.parametrize(
    ("pending", "tier", "key"),
    [
        (job(5, priority=10, submit_time=3.0), 1, (-1, -10, 3.0, (5, -1))),
        (job(2, priority=0, submit_time=0.5), 4, (-4, 0, 0.5, (2, -1))),
    ],
)
def test_job_order_sorts_by_tier_and_priority_descending_then_age_and_id(
    pending: PendingJob, tier: int, key: tuple[int, int, float, int]
) -> None:
    assert job_order(pending, tier) == key


def test_job_order_puts_higher_tier_before_higher_priority() -> None:
    assert job_order(job(1, priority=1), 2) < job_order(job(2, priority=1000), 1)


# ---------------------------------------------------------------- Resources and Priority


def test_plan_blocks_partition_behind_first_job_that_does_not_fit() -> None:
    # job 1 waits for the whole node; the small jobs behind it must not pass it
    nodes = [node("n1", free_cpus=4, gpus=0)]
    jobs = [job(1, ntasks=8, max_nodes=8), job(2), job(3)]
    result = run(nodes, jobs)
    assert started(result) == []
    assert result.reasons == {1: "Resources", 2: "Priority", 3: "Priority"}


def test_plan_jobs_ahead_of_the_blocked_job_still_start() -> None:
    nodes = [node("n1", cpus=4, gpus=0)]
    jobs = [job(1, ntasks=2, max_nodes=2), job(2, ntasks=4, max_nodes=4), job(3)]
    result = run(nodes, jobs)
    assert started(result) == [1]
    assert result.reasons == {2: "Resources", 3: "Priority"}


def test_plan_jobs_in_another_partition_still_start_when_one_is_blocked() -> None:
    nodes = [node("n1", free_cpus=0), node("n2")]
    partitions = [PartitionView("a", ("n1",)), PartitionView("b", ("n2",))]
    jobs = [job(1, "a"), job(2, "a"), job(3, "b")]
    result = run(nodes, jobs, partitions)
    assert started(result) == [3]
    assert result.reasons == {1: "Resources", 2: "Priority"}


def test_plan_held_jobs_neither_start_nor_block_nor_get_a_reason() -> None:
    jobs = [job(1, held=True), job(2)]
    result = run([node("n1", cpus=1, gpus=0)], jobs)
    assert started(result) == [2]
    assert result.reasons == {}


def test_plan_with_nothing_pending_starts_nothing() -> None:
    result = run([node("n1")], [])
    assert result.starts == ()
    assert result.reasons == {}


# ---------------------------------------------------------------- PartitionConfig


@pytest.mark.parametrize(
    ("blocker", "partition", "follower", "reason"),
    [
        # sbatch -p debug -t 120 (MaxTime=60): err_debug_time_over_max.txt; real Slurm
        # 22.05 then shows PartitionTimeLimit (and PartitionNodeLimit for -N3)
        (
            job(1, time_limit=120),
            PartitionView("gpu", ("n1", "n2"), max_time=60),
            job(2, time_limit=60),
            "PartitionTimeLimit",
        ),
        # sbatch -N3 on two nodes: err_too_many_nodes.txt
        (
            job(1, min_nodes=3, max_nodes=3, ntasks=3),
            PartitionView("gpu", ("n1", "n2")),
            job(2),
            "PartitionNodeLimit",
        ),
        # sbatch -n 99 on 16 CPUs: err_too_many_cpus.txt
        (
            job(1, ntasks=99, max_nodes=99),
            PartitionView("gpu", ("n1", "n2")),
            job(2),
            "PartitionConfig",
        ),
        # -w n3 where n3 is not in the partition
        (
            job(1, req_nodes=("n3",)),
            PartitionView("gpu", ("n1", "n2")),
            job(2),
            "PartitionConfig",
        ),
        # fewer nodes than the partition's MinNodes, more than its MaxNodes
        (
            job(1),
            PartitionView("gpu", ("n1", "n2"), min_nodes=2),
            job(2, min_nodes=2, max_nodes=2, ntasks=2),
            "PartitionNodeLimit",
        ),
        (
            job(1, min_nodes=2, max_nodes=2, ntasks=2),
            PartitionView("gpu", ("n1", "n2"), max_nodes=1),
            job(2),
            "PartitionNodeLimit",
        ),
    ],
)
def test_plan_partition_limit_reasons_never_block_the_partition(
    blocker: PendingJob, partition: PartitionView, follower: PendingJob, reason: str
) -> None:
    nodes = [node("n1"), node("n2"), node("n3")]
    result = run(nodes, [blocker, follower], [partition])
    assert result.reasons == {1: reason}
    assert started(result) == [2]


@pytest.mark.parametrize(
    ("pending", "partition", "expected"),
    [
        (job(1, time_limit=60), PartitionView("p", ("n1", "n2"), max_time=60), False),
        (job(1, time_limit=61), PartitionView("p", ("n1", "n2"), max_time=60), True),
        (job(1, time_limit=INFINITE), PartitionView("p", ("n1", "n2"), max_time=60), True),
        (job(1, time_limit=INFINITE), PartitionView("p", ("n1", "n2")), False),
        (job(1, min_nodes=2, max_nodes=2, ntasks=2), PartitionView("p", ("n1", "n2")), False),
        (job(1, min_nodes=3, max_nodes=3, ntasks=3), PartitionView("p", ("n1", "n2")), True),
        # a partition node missing from the snapshot does not count
        (job(1, min_nodes=2, max_nodes=2, ntasks=2), PartitionView("p", ("n1", "nX")), True),
        (job(1, ntasks=16, max_nodes=16), PartitionView("p", ("n1", "n2")), False),
        (job(1, ntasks=17, max_nodes=17), PartitionView("p", ("n1", "n2")), True),
        (job(1, ntasks=8, cpus_per_task=2, max_nodes=8), PartitionView("p", ("n1", "n2")), False),
        (job(1, ntasks=9, cpus_per_task=2, max_nodes=9), PartitionView("p", ("n1", "n2")), True),
        (job(1, req_nodes=("n2",)), PartitionView("p", ("n1", "n2")), False),
        (job(1, req_nodes=("n3",)), PartitionView("p", ("n1", "n2")), True),
        (job(1), PartitionView("p", ("n1", "n2"), min_nodes=2), True),
        (
            job(1, min_nodes=2, max_nodes=2, ntasks=2),
            PartitionView("p", ("n1", "n2"), max_nodes=1),
            True,
        ),
        (
            job(1, min_nodes=1, max_nodes=2, ntasks=2),
            PartitionView("p", ("n1", "n2"), max_nodes=1),
            False,
        ),
    ],
)
def test_exceeds_partition_rules_out_jobs_the_partition_can_never_run(
    pending: PendingJob, partition: PartitionView, expected: bool
) -> None:
    nodes = {n.name: n for n in (node("n1"), node("n2"), node("n3"))}
    assert exceeds_partition(pending, partition, nodes) is expected


def test_exceeds_partition_counts_configured_cpus_not_free_ones() -> None:
    nodes = {"n1": node("n1", free_cpus=0)}
    assert not exceeds_partition(job(1, ntasks=8, max_nodes=8), PartitionView("p", ("n1",)), nodes)


# ---------------------------------------------------------------- unavailable nodes and partitions


@pytest.mark.parametrize(
    "unusable", [node("n1", usable=False), node("n1", usable=False, free_cpus=0)]
)
def test_plan_req_node_not_avail_when_a_required_node_is_drained_and_it_does_not_block(
    unusable: NodeView,
) -> None:
    result = run([unusable, node("n2")], [job(1, req_nodes=("n1",)), job(2)])
    assert result.reasons == {1: "ReqNodeNotAvail, UnavailableNodes:n1"}
    assert started(result) == [2]


def test_plan_required_node_busy_waits_for_resources() -> None:
    result = run([node("n1", free_cpus=0), node("n2")], [job(1, req_nodes=("n1",)), job(2)])
    assert result.reasons == {1: "Resources", 2: "Priority"}


@pytest.mark.parametrize(
    ("state", "reason"), [("DOWN", "PartitionDown"), ("INACTIVE", "PartitionInactive")]
)
def test_plan_jobs_of_a_down_or_inactive_partition_wait_with_its_reason(
    state: str, reason: str
) -> None:
    nodes = [node("n1"), node("n2")]
    partitions = [PartitionView("a", ("n1",), state=state), PartitionView("b", ("n2",))]
    result = run(nodes, [job(1, "a"), job(2, "a"), job(3, "b")], partitions)
    assert result.reasons == {1: reason, 2: reason}
    assert started(result) == [3]


def test_plan_drained_partition_still_runs_its_queued_jobs() -> None:
    partitions = [PartitionView("gpu", ("n1",), state="DRAIN")]
    result = run([node("n1")], [job(1)], partitions)
    assert started(result) == [1]


def test_plan_gives_nothing_on_unusable_nodes() -> None:
    nodes = [node("n1", usable=False), node("n2", cpus=2, gpus=0)]
    result = run(nodes, [job(1), job(2), job(3)])
    assert started(result) == [1, 2]
    assert result.reasons == {3: "Resources"}
    assert all("n1" not in s.allocation.node_names for s in result.starts)


# ---------------------------------------------------------------- GPUs


def test_plan_two_four_gpu_jobs_share_an_eight_gpu_node_and_a_third_waits() -> None:
    jobs = [job(1, gpus_per_node=4), job(2, gpus_per_node=4), job(3, gpus_per_node=4)]
    result = run([node("n1")], jobs)
    assert started(result) == [1, 2]
    assert gpus_of(result, 1) == {"n1": (0, 1, 2, 3)}
    assert gpus_of(result, 2) == {"n1": (4, 5, 6, 7)}
    assert result.reasons == {3: "Resources"}


def test_plan_packs_small_gpu_jobs_so_a_whole_node_stays_free_for_a_large_one() -> None:
    jobs = [job(1, gpus_per_node=4), job(2, gpus_per_node=4), job(3, gpus_per_node=8)]
    result = run([node("n1"), node("n2")], jobs)
    assert started(result) == [1, 2, 3]
    assert gpus_of(result, 1).keys() == gpus_of(result, 2).keys()
    assert gpus_of(result, 3) == {({"n1", "n2"} - set(gpus_of(result, 1))).pop(): tuple(range(8))}


def test_plan_gpus_per_task_gives_each_task_its_gpus() -> None:
    # sbatch -N1 -n4 --gpus-per-task=1 (env_batch_n4_gpus_per_task1.txt)
    jobs = [job(1, ntasks=4, gpus_per_task=1), job(2, ntasks=3, gpus_per_task=2)]
    result = run([node("n1")], jobs)
    assert started(result) == [1]
    assert gpus_of(result, 1) == {"n1": (0, 1, 2, 3)}
    assert result.reasons == {2: "Resources"}


def test_plan_total_gpus_request_takes_that_many_gpus() -> None:
    jobs = [job(1, gpus=3), job(2, gpus=5), job(3, gpus=1)]
    result = run([node("n1")], jobs)
    assert started(result) == [1, 2]
    assert gpus_of(result, 1) == {"n1": (0, 1, 2)}
    assert gpus_of(result, 2) == {"n1": (3, 4, 5, 6, 7)}
    assert result.reasons == {3: "Resources"}


def test_plan_uses_only_free_gpu_indices() -> None:
    result = run([node("n1", free_gpus=(2, 5, 6))], [job(1, gpus_per_node=2)])
    assert gpus_of(result, 1) == {"n1": (2, 5)}


# ---------------------------------------------------------------- memory


@pytest.mark.parametrize(
    ("request_mem", "expected_started"),
    [
        ({"mem_per_node": 3000}, [1, 2]),  # 3000 + 3000 fit in 8000, a third does not
        ({"mem_per_node": 4000}, [1, 2]),
        ({"mem_per_node": 5000}, [1]),
        ({"mem_per_cpu": 2000, "ntasks": 2, "max_nodes": 2}, [1, 2]),  # 4000 each
        ({"mem_per_cpu": 3000, "ntasks": 2, "max_nodes": 2}, [1]),  # 6000 each
    ],
)
def test_plan_memory_limits_how_many_jobs_share_a_node(
    request_mem: dict[str, int], expected_started: list[int]
) -> None:
    jobs = [job(i, **request_mem) for i in (1, 2, 3)]  # type: ignore[arg-type]
    result = run([node("n1", gpus=0)], jobs)
    assert started(result) == expected_started
    assert result.reasons[len(expected_started) + 1] == "Resources"


# ---------------------------------------------------------------- several nodes


def test_plan_multi_node_job_with_ntasks_per_node_gets_that_many_tasks_everywhere() -> None:
    # sbatch -N2 --ntasks-per-node=4 --gres=gpu:4 (env_batch_N2_tpn4_gres4.txt)
    spec = {"min_nodes": 2, "max_nodes": 2, "ntasks": 8, "ntasks_per_node": 4, "gpus_per_node": 4}
    result = run([node("n1"), node("n2")], [job(1, **spec)])  # type: ignore[arg-type]
    alloc = result.starts[0].allocation
    assert sorted(alloc.node_names) == ["n1", "n2"]
    assert [(p.ntasks, p.cpus, p.gpus) for p in alloc.nodes] == [(4, 4, (0, 1, 2, 3))] * 2


def test_plan_multi_node_job_without_ntasks_per_node_puts_at_least_one_task_per_node() -> None:
    result = run([node("n1"), node("n2")], [job(1, min_nodes=2, max_nodes=2, ntasks=4)])
    alloc = result.starts[0].allocation
    assert sorted(alloc.node_names) == ["n1", "n2"]
    assert sorted(p.ntasks for p in alloc.nodes) == [1, 3]


def test_plan_multi_node_job_waits_when_too_few_nodes_are_free() -> None:
    nodes = [node("n1"), node("n2", free_cpus=0)]
    result = run(nodes, [job(1, min_nodes=2, max_nodes=2, ntasks=2), job(2)])
    assert result.reasons == {1: "Resources", 2: "Priority"}


def test_plan_excluded_nodes_are_never_used() -> None:
    nodes = [node("n1"), node("n2", free_cpus=1), node("n3")]
    result = run(nodes, [job(1, min_nodes=2, max_nodes=2, ntasks=2, exc_nodes=("n2",))])
    assert set(result.starts[0].allocation.node_names) == {"n1", "n3"}


def test_plan_excluding_the_only_free_node_makes_the_job_wait() -> None:
    nodes = [node("n1"), node("n2", free_cpus=0)]
    result = run(nodes, [job(1, exc_nodes=("n1",))])
    assert result.reasons == {1: "Resources"}


def test_plan_later_jobs_see_resources_taken_by_earlier_starts() -> None:
    jobs = [job(1, ntasks=6, max_nodes=6), job(2, ntasks=2, max_nodes=2), job(3)]
    result = run([node("n1", gpus=0)], jobs)
    assert started(result) == [1, 2]
    assert result.reasons == {3: "Resources"}


# ---------------------------------------------------------------- property


NODE_NAMES = ("n1", "n2", "n3", "n4")


def mostly(common: object, *rare: object) -> st.SearchStrategy[object]:
    """Mostly ``common`` (six draws in six plus the rare ones), else one of ``rare``."""
    return st.sampled_from([common] * 6 + list(rare))


@st.composite
def node_views(draw: st.DrawFn, name: str) -> NodeView:
    cpus = draw(st.sampled_from([4, 8, 16]))
    mem = draw(st.sampled_from([2000, 8000, 16000]))
    ngpus = draw(st.sampled_from([0, 2, 4, 8]))
    all_gpus = tuple(range(ngpus))
    some_gpus = st.sets(st.sampled_from(all_gpus)) if ngpus else st.just(set())
    return NodeView(
        name=name,
        cpus=cpus,
        mem=mem,
        gpus=all_gpus,
        free_cpus=draw(st.one_of(st.just(cpus), st.integers(0, cpus))),
        free_mem=draw(st.one_of(st.just(mem), st.integers(0, mem))),
        free_gpus=tuple(sorted(draw(st.one_of(st.just(set(all_gpus)), some_gpus)))),
        usable=draw(mostly(True, False)),  # type: ignore[arg-type]
        weight=draw(mostly(1, 2)),  # type: ignore[arg-type]
    )


@st.composite
def requests(draw: st.DrawFn, names: list[str]) -> ResourceRequest:
    """Consistent requests, as ctld.jobs.resolve_request produces them."""
    min_nodes: int = draw(mostly(1, 2, 3))  # type: ignore[assignment]
    tpn: int = draw(mostly(0, 1, 2, 4))  # type: ignore[assignment]
    if tpn:
        max_nodes, ntasks = min_nodes, tpn * min_nodes
    else:
        ntasks = draw(st.integers(min_nodes, min_nodes + 4))
        max_nodes = draw(st.integers(min_nodes, max(ntasks, min_nodes)))
    mem_kind = draw(mostly("none", "node", "cpu"))
    gpu_kind = draw(mostly("none", "node", "task", "total"))
    req_nodes: list[str] = []
    if draw(mostly(False, True)):
        req_nodes = draw(st.lists(st.sampled_from(names), unique=True, max_size=min_nodes))
    exc_nodes: list[str] = []
    others = [n for n in names if n not in req_nodes]
    if others and draw(mostly(False, True)):
        exc_nodes = draw(st.lists(st.sampled_from(others), unique=True))
    return ResourceRequest(
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        ntasks=ntasks,
        ntasks_per_node=tpn,
        cpus_per_task=draw(mostly(1, 2, 3)),  # type: ignore[arg-type]
        mem_per_node=draw(st.integers(100, 4000)) if mem_kind == "node" else 0,
        mem_per_cpu=draw(st.integers(50, 1000)) if mem_kind == "cpu" else 0,
        gpus_per_node=draw(st.integers(1, 4)) if gpu_kind == "node" else 0,
        gpus_per_task=draw(st.integers(1, 2)) if gpu_kind == "task" else 0,
        gpus=draw(st.integers(1, 8)) if gpu_kind == "total" else 0,
        req_nodes=tuple(req_nodes),
        exc_nodes=tuple(exc_nodes),
    )


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    names = list(NODE_NAMES[: draw(st.integers(1, len(NODE_NAMES)))])
    nodes = tuple(draw(node_views(name)) for name in names)
    partitions = tuple(
        PartitionView(
            name=f"p{i}",
            nodes=tuple(draw(st.lists(st.sampled_from(names), min_size=1, unique=True))),
            priority_tier=draw(st.integers(1, 3)),
            max_time=draw(mostly(INFINITE, 60)),  # type: ignore[arg-type]
            max_nodes=draw(mostly(INFINITE, 1, 2)),  # type: ignore[arg-type]
            min_nodes=draw(mostly(0, 1, 2)),  # type: ignore[arg-type]
            state=draw(mostly("UP", "DOWN", "INACTIVE", "DRAIN")),  # type: ignore[arg-type]
        )
        for i in range(draw(st.integers(1, 3)))
    )
    pending = tuple(
        PendingJob(
            job_id=job_id,
            partition=draw(st.sampled_from([p.name for p in partitions])),
            priority=draw(st.integers(0, 3)),
            submit_time=float(draw(st.integers(0, 3))),
            request=draw(requests(names)),
            time_limit=draw(mostly(30, INFINITE, 120)),  # type: ignore[arg-type]
            held=draw(mostly(False, True)),  # type: ignore[arg-type]
        )
        for job_id in range(1, draw(st.integers(0, 10)) + 1)
    )
    return Snapshot(nodes, partitions, pending)


# Examples are bounded so that each property stays well within its timeout on a loaded
# machine (a few seconds of 120 when idle); the snapshots are small, so 100-200 cover them.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_plan_keeps_every_invariant_on_random_snapshots(snapshot: Snapshot) -> None:
    check_plan(snapshot, plan(snapshot, 0.0, BUILTIN))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_plan_never_starts_a_job_queued_behind_a_resources_job_of_its_partition(
    snapshot: Snapshot,
) -> None:
    result = plan(snapshot, 0.0, BUILTIN)
    check_plan(snapshot, result)
    check_strict_order(snapshot, result)


def check_strict_order(snapshot: Snapshot, result: Plan) -> None:
    """Assert that no job started past a job above it that waits for Resources on its nodes."""
    parts = {p.name: p for p in snapshot.partitions}
    queue = sorted(
        (j for j in snapshot.pending if not j.held),
        key=lambda j: job_order(j, parts[j.partition].priority_tier),
    )
    started_on = {s.job_id: set(s.allocation.node_names) for s in result.starts}
    blocked: set[str] = set()
    closed: set[str] = set()  # the nodes of the blocked partitions
    for pending in queue:
        if pending.partition in blocked:
            assert pending.job_id not in started_on, f"job {pending.job_id} passed a blocked job"
            # (No reason: a job below those an event pass looks at.)
            reason = result.reasons.get(pending.job_id, "Priority")
            assert reason.partition(", UnavailableNodes:")[0] in (
                "Priority",
                "PartitionConfig",
                "PartitionTimeLimit",
                "PartitionNodeLimit",
                "ReqNodeNotAvail",
                "PartitionDown",
                "PartitionInactive",
            )
        # Nor on a node of a partition blocked above it, whatever its own partition.
        assert not started_on.get(pending.job_id, set()) & closed
        if result.reasons.get(pending.job_id) == "Resources":
            blocked.add(pending.partition)
            closed.update(parts[pending.partition].nodes)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_plan_is_deterministic_and_ignores_the_order_of_pending_jobs(snapshot: Snapshot) -> None:
    reordered = Snapshot(snapshot.nodes, snapshot.partitions, tuple(reversed(snapshot.pending)))
    first, second = plan(snapshot, 0.0, BUILTIN), plan(reordered, 0.0, BUILTIN)
    check_plan(snapshot, first)
    assert first == second


# ---------------------------------------------------------------- arrays and blocked jobs


def test_blocked_jobs_wait_with_their_reason_and_do_not_block_the_partition() -> None:
    blocked = replace(job(1, priority=10, cpus_per_task=8), blocked="Dependency")
    result = run([node("n1", cpus=8, gpus=0)], [blocked, job(2)])
    assert started(result) == [2]
    assert result.reasons == {1: "Dependency"}


def test_array_tasks_start_with_their_ids_and_the_array_keeps_the_first_waiting_reason() -> None:
    tasks = [replace(job(8, cpus_per_task=2), array_task_id=t) for t in range(5)]
    result = run([node("n1", cpus=6, gpus=0)], tasks)
    assert [(s.job_id, s.array_task_id) for s in result.starts] == [(8, 0), (8, 1), (8, 2)]
    assert result.reasons == {8: "Resources"}
