"""Invariants every scheduling pass must keep (STYLE.md #18, after dask's ``validate_state``).

``check_plan(snapshot, plan)`` raises AssertionError, naming the job or node,
when a :class:`~minislurm.model.Plan` breaks a rule that holds whatever the
policy: nothing over-committed, every start legal and shaped as requested,
every waiting job explained; and, over time, the reservations of the
resource-time map (starts included) never hold more than the nodes have
once the running jobs end, which is what keeps a backfilled job from
delaying one above it. Scheduler tests call it after each ``plan``;
``check_allocation`` is the per-job part, for tests of ``select_nodes``.

Imports only minislurm.model.
"""

from __future__ import annotations

from collections import Counter

from minislurm.model import Allocation, NodeView, Plan, Reservation, ResourceRequest, Snapshot

KNOWN_REASONS = frozenset(
    {
        "Resources",
        "Priority",
        "PartitionConfig",
        "PartitionTimeLimit",
        "PartitionNodeLimit",
        "ReqNodeNotAvail",
        "PartitionDown",
        "PartitionInactive",
        "Dependency",
        "DependencyNeverSatisfied",
        "BeginTime",
        "JobArrayTaskLimit",
    }
)


def check_allocation(
    req: ResourceRequest, alloc: Allocation, candidates: dict[str, NodeView], who: str = "job"
) -> None:
    """Assert that ``alloc`` gives ``req`` what it asked for on ``candidates``.

    Args:
        req: the resolved request.
        alloc: the allocation chosen for it.
        candidates: the nodes it could use (its partition), by name.
        who: names the job in failure messages.

    Raises:
        AssertionError: the allocation breaks the request or uses a node it may not.
    """
    names = alloc.node_names
    assert names, f"{who}: empty allocation"
    assert len(set(names)) == len(names), f"{who}: a node appears twice in {names}"
    assert req.min_nodes <= len(names) <= req.max_nodes, (
        f"{who}: {len(names)} nodes outside {req.min_nodes}-{req.max_nodes}"
    )
    for name in names:
        assert name in candidates, f"{who}: {name} is not a candidate node"
        assert candidates[name].usable, f"{who}: {name} is not usable"
        assert name not in req.exc_nodes, f"{who}: excluded node {name} allocated"
    for name in req.req_nodes:
        assert name in names, f"{who}: required node {name} missing from {names}"
    assert sum(part.ntasks for part in alloc.nodes) == req.ntasks, (
        f"{who}: {sum(p.ntasks for p in alloc.nodes)} tasks placed, {req.ntasks} requested"
    )
    wanted_gpus = 0
    for part in alloc.nodes:
        where = f"{who} on {part.node}"
        assert part.ntasks >= 1, f"{where}: a node without tasks"
        if req.ntasks_per_node:
            assert part.ntasks <= req.ntasks_per_node, (
                f"{where}: {part.ntasks} tasks over --ntasks-per-node={req.ntasks_per_node}"
            )
        if req.exclusive:  # the whole node: every CPU and GPU it has
            node = candidates[part.node]
            assert part.cpus == node.cpus, f"{where}: {part.cpus} CPUs of {node.cpus}, exclusive"
            assert len(part.gpus) == len(node.gpus), f"{where}: {part.gpus} GPUs, exclusive"
        else:
            assert part.cpus == part.ntasks * req.cpus_per_task, (
                f"{where}: {part.cpus} CPUs for {part.ntasks} tasks of {req.cpus_per_task}"
            )
        if req.mem_per_node:
            assert part.mem == req.mem_per_node, f"{where}: mem {part.mem} != --mem"
        elif req.mem_per_cpu:
            assert part.mem == req.mem_per_cpu * part.cpus, f"{where}: mem {part.mem} != per-cpu"
        else:
            assert part.mem == 0, f"{where}: mem {part.mem} without a memory request"
        assert len(set(part.gpus)) == len(part.gpus), f"{where}: duplicate GPU in {part.gpus}"
        node_need = max(req.gpus_per_node, req.gpus_per_task * part.ntasks)
        assert len(part.gpus) >= node_need, f"{where}: {len(part.gpus)} GPUs < {node_need}"
        wanted_gpus += len(part.gpus) if req.exclusive else node_need
    expected_total = max(req.gpus, wanted_gpus)
    assert alloc.gpus == expected_total, f"{who}: {alloc.gpus} GPUs, expected {expected_total}"


def check_plan(
    snapshot: Snapshot, plan: Plan, now: float | None = None, complete: bool = True
) -> None:
    """Assert every invariant of one scheduling pass.

    Args:
        snapshot: what the pass read.
        plan: what it decided.
        now: the time of the pass, when the caller knows it (starts are reserved from it).
        complete: whether every queued job was examined (False when the pass
            may have stopped at ``bf_max_job_test``: the jobs below it need no reason).

    Raises:
        AssertionError: naming the broken rule, the job and the node.
    """
    _check_starts(snapshot, plan)
    _check_reasons(snapshot, plan, complete)
    check_reservations(snapshot, plan, now)


def _check_starts(snapshot: Snapshot, plan: Plan) -> None:
    nodes = {n.name: n for n in snapshot.nodes}
    parts = {p.name: p for p in snapshot.partitions}
    pending = {j.key: j for j in snapshot.pending}
    started = Counter(s.key for s in plan.starts)
    for key, times in started.items():
        assert times == 1, f"job {key} started {times} times"
        assert key in pending, f"job {key} started but was not pending"
        assert not pending[key].held, f"held job {key} started"
        assert not pending[key].blocked, f"blocked job {key} started"
        if pending[key].array_task_id is None:
            assert key[0] not in plan.reasons, f"job {key[0]} started and has a reason"
    used_cpus: Counter[str] = Counter()
    used_mem: Counter[str] = Counter()
    used_gpus: dict[str, list[int]] = {}
    for start in plan.starts:
        job = pending[start.key]
        part = parts[job.partition]
        assert part.state not in ("DOWN", "INACTIVE"), (
            f"job {job.job_id} started in {part.state} partition {part.name}"
        )
        candidates = {n: nodes[n] for n in part.nodes if n in nodes}
        check_allocation(job.request, start.allocation, candidates, f"job {job.job_id}")
        for node_part in start.allocation.nodes:
            used_cpus[node_part.node] += node_part.cpus
            used_mem[node_part.node] += node_part.mem
            used_gpus.setdefault(node_part.node, []).extend(node_part.gpus)
    for name, cpus in used_cpus.items():
        node = nodes[name]
        assert cpus <= node.free_cpus, f"{name}: {cpus} CPUs allocated, {node.free_cpus} free"
        assert used_mem[name] <= node.free_mem, (
            f"{name}: {used_mem[name]} MiB allocated, {node.free_mem} free"
        )
        gpus = used_gpus.get(name, [])
        assert len(gpus) == len(set(gpus)), f"{name}: a GPU given twice in {sorted(gpus)}"
        assert set(gpus) <= set(node.free_gpus), (
            f"{name}: GPUs {sorted(set(gpus) - set(node.free_gpus))} were not free"
        )


def _check_reasons(snapshot: Snapshot, plan: Plan, complete: bool) -> None:
    pending = {j.key: j for j in snapshot.pending}
    started = Counter(s.key for s in plan.starts)
    for job in snapshot.pending:
        if job.held:
            assert job.key not in started, f"held job {job.job_id} started"
            continue
        if job.key not in started and (complete or job.job_id in plan.reasons):
            assert job.job_id in plan.reasons, f"pending job {job.job_id} has no reason"
            reason = plan.reasons[job.job_id]
            # ReqNodeNotAvail names the nodes: "ReqNodeNotAvail, UnavailableNodes:n1".
            known = reason.partition(", UnavailableNodes:")[0]
            assert known in KNOWN_REASONS, f"job {job.job_id}: unknown reason {reason!r}"
    pending_ids = {key[0] for key in pending}
    for job_id in plan.reasons:
        assert job_id in pending_ids, f"reason for job {job_id}, which is not pending"


def _key(res: Reservation) -> tuple[int, int]:
    return (res.job_id, -1 if res.array_task_id is None else res.array_task_id)


def check_reservations(snapshot: Snapshot, plan: Plan, now: float | None = None) -> None:
    """Assert that the plan's reservations fit together and match its starts and start times.

    Every start is reserved from now with its own allocation; a waiting job's
    expected start is that of its earliest reservation; and at every moment
    the reservations in force hold no more CPUs, memory or GPUs on a node
    than it has free now plus what the running jobs ended by then give back.

    Args:
        snapshot: what the pass read.
        plan: what it decided.
        now: the time of the pass, if known.

    Raises:
        AssertionError: naming the job, the node and the time.
    """
    if not plan.reservations and not plan.start_times:
        return
    pending = {j.key: j for j in snapshot.pending}
    parts = {p.name: p for p in snapshot.partitions}
    nodes = {n.name: n for n in snapshot.nodes}
    held = {_key(r): r for r in plan.reservations}
    assert len(held) == len(plan.reservations), "a job reserved twice"
    for start in plan.starts:
        res = held.get(start.key)
        assert res is not None, f"job {start.key} started without a reservation"
        assert res.allocation == start.allocation, f"job {start.key}: reserved elsewhere"
        if now is not None:
            assert res.start == now, f"job {start.key} reserved from {res.start}, not now"
    starts = {s.key for s in plan.starts}
    expected: dict[int, float] = {}
    for key, res in held.items():
        job = pending.get(key)
        assert job is not None and not job.held and not job.blocked, f"job {key} reserved"
        assert res.end > res.start, f"job {key}: reservation ends at {res.end} <= {res.start}"
        assert res.end - res.start >= job.duration, f"job {key}: reserved for less than its limit"
        candidates = {n: nodes[n] for n in parts[job.partition].nodes if n in nodes}
        check_allocation(job.request, res.allocation, candidates, f"job {key} (reserved)")
        if key not in starts:
            assert now is None or res.start >= now, f"job {key} reserved in the past"
            expected[key[0]] = min(expected.get(key[0], res.start), res.start)
    assert plan.start_times == expected, f"start times {plan.start_times} != {expected}"
    for when in sorted({r.start for r in plan.reservations}):
        _check_moment(snapshot, [r for r in plan.reservations if r.start <= when < r.end], when)


def _check_moment(snapshot: Snapshot, active: list[Reservation], when: float) -> None:
    """No node holds more at ``when`` than is free then."""
    free = {n.name: [n.free_cpus, n.free_mem, set(n.free_gpus)] for n in snapshot.nodes}
    for job in snapshot.running:
        if job.end_time <= when:
            for part in job.allocation.nodes:
                if part.node in free:
                    free[part.node][0] += part.cpus
                    free[part.node][1] += part.mem
                    free[part.node][2].update(part.gpus)
    used: dict[str, list[int]] = {}
    gpus: dict[str, list[int]] = {}
    for res in active:
        for part in res.allocation.nodes:
            held = used.setdefault(part.node, [0, 0])
            held[0] += part.cpus
            held[1] += part.mem
            gpus.setdefault(part.node, []).extend(part.gpus)
    for name, (cpus, mem) in used.items():
        room = free[name]
        where = f"{name} at {when}"
        assert cpus <= room[0], f"{where}: {cpus} CPUs reserved, {room[0]} free"
        assert mem <= room[1], f"{where}: {mem} MiB reserved, {room[1]} free"
        taken = gpus.get(name, [])
        assert len(taken) == len(set(taken)), f"{where}: a GPU reserved twice in {sorted(taken)}"
        assert set(taken) <= room[2], f"{where}: GPUs {sorted(set(taken) - room[2])} not free"
