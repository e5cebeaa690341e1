"""Tests of ctld.sched.preempt: which running jobs a waiting job preempts.

Examples first, then properties over random clusters: a victim is always one
the relation allows, no job preempts when it could start without it, the
preemptor fits once its victims' resources are freed, and no victim could
have been spared.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from plan_checks import check_allocation

from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from ctld.sched.preempt import Preemptee, Preemption, choose
from ctld.sched.select import select_nodes
from minislurm.model import (
    Allocation,
    NodeView,
    PartitionView,
    PendingJob,
    ResourceRequest,
    RunningJob,
    Snapshot,
)

NOW = 1000.0
TIERS = {"lo": 1, "hi": 2}


def node(name: str, cpus: int = 8, gpus: int = 8, mem: int = 8000) -> NodeView:
    """An idle node."""
    return NodeView(name, cpus, mem, tuple(range(gpus)), cpus, mem, tuple(range(gpus)), True)


def pending(job_id: int, partition: str = "hi", priority: int = 1, **request: object) -> PendingJob:
    """A pending job; ``request`` holds ResourceRequest fields."""
    return PendingJob(job_id, partition, priority, float(job_id), ResourceRequest(**request))  # type: ignore[arg-type]


class Cluster:
    """Nodes with running jobs placed on them, each in a partition, and pending jobs."""

    def __init__(self, nodes: list[NodeView]) -> None:
        self.nodes = {n.name: n for n in nodes}
        self.running: list[tuple[Preemptee, str]] = []

    def run(
        self, job_id: int, partition: str, priority: int = 1, start: float = 0.0, **request: object
    ) -> bool:
        """Place a running job where select_nodes puts it; False when it does not fit."""
        alloc = select_nodes(ResourceRequest(**request), list(self.nodes.values()))  # type: ignore[arg-type]
        if alloc is None:
            return False
        for part in alloc.nodes:
            n = self.nodes[part.node]
            gpus = tuple(g for g in n.free_gpus if g not in part.gpus)
            self.nodes[part.node] = replace(
                n, free_cpus=n.free_cpus - part.cpus, free_mem=n.free_mem - part.mem, free_gpus=gpus
            )
        self.running.append((Preemptee(job_id, alloc, priority, start, partition), partition))
        return True

    def snapshot(self, jobs: list[PendingJob]) -> Snapshot:
        names = tuple(self.nodes)
        parts = tuple(PartitionView(p, names, priority_tier=t) for p, t in TIERS.items())
        held = tuple(RunningJob(v.job_id, v.allocation, float("inf")) for v, _ in self.running)
        return Snapshot(tuple(self.nodes.values()), parts, tuple(jobs), held)

    def decide(self, jobs: list[PendingJob]) -> tuple[Snapshot, list[Preemption], set[int]]:
        """Plan, then choose preemptions under partition_prio; also the jobs the plan started."""
        snapshot = self.snapshot(jobs)
        decided = plan(snapshot, NOW, SchedConfig())

        def may(job: PendingJob) -> frozenset[str]:
            return frozenset(p for p, tier in TIERS.items() if tier < TIERS[job.partition])

        out = choose(snapshot, decided, [v for v, _ in self.running], may)
        check_choices(snapshot, decided.starts, out, {v.job_id: v for v, _ in self.running}, may)
        return snapshot, out, {s.job_id for s in decided.starts}


def check_choices(snapshot, starts, out, candidates, may) -> None:  # type: ignore[no-untyped-def]
    """The properties every answer keeps, replayed in order on the free resources."""
    nodes = {n.name: n for n in snapshot.nodes}
    for start in starts:
        nodes = take(nodes, start.allocation, -1)
    jobs = {j.job_id: j for j in snapshot.pending}
    seen: set[int] = set()
    for p in out:
        job = jobs[p.job_id]
        assert p.victims, f"job {p.job_id}: a preemption without victims"
        for v in p.victims:
            assert v not in seen, f"job {v} preempted twice"
            assert candidates[v].group in may(job), f"job {p.job_id} may not preempt {v}"
        seen.update(p.victims)
        assert select_nodes(job.request, list(nodes.values())) is None, (
            f"job {p.job_id} preempted though it could start"
        )
        freed = nodes
        for v in p.victims:
            freed = take(freed, candidates[v].allocation, 1)
        check_allocation(job.request, p.allocation, freed, f"job {p.job_id}")
        for part in p.allocation.nodes:
            n = freed[part.node]
            assert part.cpus <= n.free_cpus and part.mem <= n.free_mem
            assert set(part.gpus) <= set(n.free_gpus), f"job {p.job_id}: GPUs not free"
        for spared in p.victims:
            rest = nodes
            for v in p.victims:
                if v != spared:
                    rest = take(rest, candidates[v].allocation, 1)
            assert select_nodes(job.request, list(rest.values())) is None, (
                f"job {p.job_id}: victim {spared} was not needed"
            )
        nodes = take(freed, p.allocation, -1)


def take(nodes: dict[str, NodeView], alloc: Allocation, sign: int) -> dict[str, NodeView]:
    out = dict(nodes)
    for part in alloc.nodes:
        n = out[part.node]
        gpus = set(n.free_gpus) | set(part.gpus) if sign > 0 else set(n.free_gpus) - set(part.gpus)
        out[part.node] = replace(
            n,
            free_cpus=n.free_cpus + sign * part.cpus,
            free_mem=n.free_mem + sign * part.mem,
            free_gpus=tuple(sorted(gpus)),
        )
    return out


def test_high_tier_job_preempts_the_low_job_holding_all_gpus() -> None:
    c = Cluster([node("n1"), node("n2")])
    c.run(1, "lo", min_nodes=2, max_nodes=2, ntasks=2, gpus_per_node=8)
    _, out, _ = c.decide([pending(2, "hi", min_nodes=2, max_nodes=2, ntasks=2, gpus_per_node=8)])
    assert [(p.job_id, p.victims) for p in out] == [(2, (1,))]


def test_no_preemption_when_the_job_fits() -> None:
    c = Cluster([node("n1"), node("n2")])
    c.run(1, "lo", gpus_per_node=8)
    _, out, started = c.decide([pending(2, "hi", gpus_per_node=8)])
    assert out == [] and started == {2}


def test_same_tier_is_never_preempted() -> None:
    c = Cluster([node("n1")])
    c.run(1, "hi", gpus_per_node=8)
    _, out, _ = c.decide([pending(2, "hi", priority=100, gpus_per_node=8)])
    assert out == []


def test_lowest_priority_then_youngest_go_first_and_only_what_is_needed() -> None:
    c = Cluster([node("n1", cpus=4, gpus=4)])
    c.run(1, "lo", priority=5, start=10.0, gpus_per_node=1)
    c.run(2, "lo", priority=1, start=10.0, gpus_per_node=1)
    c.run(3, "lo", priority=1, start=20.0, gpus_per_node=1)
    c.run(4, "lo", priority=1, start=5.0, gpus_per_node=1)
    _, out, _ = c.decide([pending(9, "hi", gpus_per_node=2)])
    assert [p.victims for p in out] == [(3, 2)]


def test_a_larger_victim_spares_a_smaller_one_taken_before_it() -> None:
    c = Cluster([node("n1", cpus=4, gpus=4)])
    c.run(1, "lo", priority=1, gpus_per_node=1)  # taken first, but not enough
    c.run(2, "lo", priority=2, gpus_per_node=3)
    _, out, _ = c.decide([pending(9, "hi", gpus_per_node=3)])
    assert [p.victims for p in out] == [(2,)]


def test_resources_freed_for_one_job_are_not_offered_to_the_next() -> None:
    c = Cluster([node("n1", cpus=4, gpus=4)])
    c.run(1, "lo", gpus_per_node=4)
    _, out, _ = c.decide([pending(8, "hi", gpus_per_node=4), pending(9, "hi", gpus_per_node=4)])
    assert [(p.job_id, p.victims) for p in out] == [(8, (1,))]


def test_held_and_blocked_jobs_preempt_nobody() -> None:
    c = Cluster([node("n1")])
    c.run(1, "lo", gpus_per_node=8)
    jobs = [
        replace(pending(2, gpus_per_node=8), held=True),
        replace(pending(3, gpus_per_node=8), blocked="Dependency"),
    ]
    _, out, _ = c.decide(jobs)
    assert out == []


def test_no_victims_when_even_all_of_them_are_not_enough() -> None:
    c = Cluster([node("n1", gpus=4)])
    c.run(1, "lo", gpus_per_node=2)
    c.run(2, "hi", gpus_per_node=2)
    _, out, _ = c.decide([pending(9, "hi", gpus_per_node=4)])
    assert out == []


shapes = st.fixed_dictionaries(
    {
        "ntasks": st.integers(1, 3),
        "cpus_per_task": st.integers(1, 2),
        "gpus_per_node": st.integers(0, 3),
        "mem_per_node": st.sampled_from([0, 500, 1500]),
    }
)


def _cpus(ntasks: int, cpus_per_task: int) -> dict[str, int]:
    return {"ntasks": ntasks, "cpus_per_task": cpus_per_task, "gpus_per_node": 0, "mem_per_node": 0}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # the last victim taken was not needed: the job fit where earlier ones had been
    count=2,
    running=[*[("lo", 0, _cpus(1, 1))] * 5, *[("lo", 0, _cpus(1, 2))] * 2, ("lo", 1, _cpus(1, 1))],
    waiting=[("hi", 0, _cpus(2, 2))],
)
@example(  # the waiting job fit on the roomier node only: it must start, not preempt
    count=2,
    running=[
        ("lo", 0, _cpus(1, 1)),
        ("lo", 0, {**_cpus(1, 1), "gpus_per_node": 3}),
        ("lo", 0, {**_cpus(1, 2), "gpus_per_node": 2}),
    ],
    waiting=[("hi", 0, _cpus(2, 1))],
)
@given(
    st.integers(1, 3),
    st.lists(st.tuples(st.sampled_from(["lo", "hi"]), st.integers(0, 3), shapes), max_size=8),
    st.lists(st.tuples(st.sampled_from(["lo", "hi"]), st.integers(0, 3), shapes), max_size=5),
)
def test_properties_on_random_clusters(
    count: int,
    running: list[tuple[str, int, dict[str, int]]],
    waiting: list[tuple[str, int, dict[str, int]]],
) -> None:
    c = Cluster([node(f"n{i}", cpus=4, gpus=4, mem=2000) for i in range(1, count + 1)])
    for i, (part, prio, shape) in enumerate(running, start=1):
        c.run(i, part, prio, float(i), **shape)
    jobs = [pending(100 + i, p, prio, **shape) for i, (p, prio, shape) in enumerate(waiting)]
    _, out, started = c.decide(jobs)  # decide checks every property
    assert not {p.job_id for p in out} & started


def test_jobs_being_killed_count_as_gone() -> None:
    c = Cluster([node("n1")])
    c.run(1, "lo", gpus_per_node=8)
    c.run(2, "lo", cpus_per_task=4)
    snapshot = c.snapshot([pending(9, "hi", gpus_per_node=8)])
    decided = plan(snapshot, NOW, SchedConfig())
    dying, rest = c.running[0][0], [c.running[1][0]]
    assert choose(snapshot, decided, rest, lambda j: {"lo"}, [dying]) == []
    assert [p.victims for p in choose(snapshot, decided, [dying, *rest], lambda j: {"lo"})] == [
        (1,)
    ]
