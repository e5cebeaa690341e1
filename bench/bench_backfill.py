"""Speed of the backfill pass and of the trace simulator (pure: no cluster is started).

Run by hand: ``.venv/bin/python bench/bench_backfill.py [--repeat N] [--sim-jobs N]``.
Prints each figure (wall time, and CPU time: the machine may be shared),
its target and a JSON line with all of them.

1. one full backfill pass over 10,000 pending jobs on 1,000 nodes of 64
   CPUs, 512 GiB and 8 GPUs, most of them busy with running jobs of
   various ends (``bf_max_job_test`` 10,000, so every job is tested):
   median of ``--repeat`` passes, target 1 s;
   the same pass with a two-level tree of switches (``topology/tree``:
   leaves of 32 nodes, a SuperPOD's scalable unit, under one spine): its
   time over the flat pass's, target 1.5;
2. the event-triggered pass on the same snapshot (``plan_event``: Slurm's
   main scheduler over the top ``default_queue_depth`` = 100 jobs, strict
   priority order, starts only): median, target 20 ms; and, for
   comparison only, a backfill pass that tests the top 100 jobs
   (``bf_max_job_test=100``);
3. the same two passes as the controller runs them, from its records (10,000
   queued jobs, the running ones): the snapshot a full pass computes anew,
   or the one an event pass takes mostly from the last pass
   (:class:`~ctld.sched.snapshot.KeptEntries`), then the pass; no target (the
   planner's targets are above), for what a live pass adds;
4. the simulator on ``lublin_256.swf`` (first ``--sim-jobs`` records) with
   ``minislurm simulate``'s default backfill knobs: jobs per second of wall
   time, target 1,000.

It first times a fixed pure-Python loop (``calibration_s``, the best of
three), so that figures taken on machines of different speeds, or on one
shared machine at different times, can be compared.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchcluster import calibration

from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan, plan_event
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import KeptEntries, build_snapshot
from ctld.simreport import SIM_PARAMS, policy_config
from ctld.simulator import simulate, summarize, trace_setup
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.model import (
    Allocation,
    Job,
    Node,
    NodeAlloc,
    NodeView,
    PartitionView,
    PendingJob,
    Plan,
    ResourceRequest,
    RunningJob,
    Snapshot,
)
from minislurm.states import JobState, NodeState
from minislurm.topology import TREE, Switch, Topology

NOW = 1_000_000.0
NODES, CPUS, MEM, GPUS = 1000, 64, 512 * 1024, 8
TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "lublin_256.swf"
TARGETS = {
    "full_pass_s": 1.0,
    "tree_over_flat": 1.5,
    "event_pass_ms": 20.0,
    "sim_jobs_per_s": 1000.0,
}
LEAF = 32  # nodes under each leaf switch of the tree
Planner = Callable[[Snapshot, float, SchedConfig], Plan]
WEIGHTS = PriorityWeights(age=1000, job_size=1000, partition=1000)


def cluster_snapshot(pending_count: int, seed: int = 1) -> Snapshot:
    """1,000 GPU nodes, about 90 % busy, and a queue of mixed single- and multi-node jobs."""
    rng = random.Random(seed)
    nodes = []
    running = []
    for i in range(NODES):
        name = f"gpu{i:04d}"
        used_gpus = rng.choice([0, 2, 4, 8, 8, 8, 8, 8, 8, 8])
        used_cpus = used_gpus * CPUS // GPUS
        free = tuple(range(used_gpus, GPUS))
        nodes.append(
            NodeView(name, CPUS, MEM, tuple(range(GPUS)), CPUS - used_cpus, MEM, free, True)
        )
        if used_gpus:
            held = NodeAlloc(name, used_cpus, 0, tuple(range(used_gpus)), 1)
            end = NOW + rng.choice([600, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 48 * 3600])
            running.append(RunningJob(100_000 + i, Allocation((held,)), end))
    pending = []
    for job_id in range(1, pending_count + 1):
        shape = rng.random()
        if shape < 0.5:  # a few GPUs on one node
            gpus = rng.choice([1, 2, 4])
            req = ResourceRequest(ntasks=1, cpus_per_task=gpus * 8, gpus_per_node=gpus)
        elif shape < 0.85:  # whole nodes
            count = rng.choice([1, 2, 4, 8, 16])
            req = ResourceRequest(
                min_nodes=count,
                max_nodes=count,
                ntasks=count * 8,
                ntasks_per_node=8,
                cpus_per_task=8,
                gpus_per_node=8,
                nodes_set=True,
            )
        else:  # CPU only
            req = ResourceRequest(ntasks=rng.choice([1, 4, 16]))
        limit = rng.choice([30, 60, 240, 720, 1440])
        pending.append(PendingJob(job_id, "gpu", rng.randint(1, 1000), NOW - job_id, req, limit))
    part = PartitionView("gpu", tuple(n.name for n in nodes))
    return Snapshot(tuple(nodes), (part,), tuple(pending), tuple(running))


def two_level_tree(snapshot: Snapshot) -> Topology:
    """Leaf switches of ``LEAF`` nodes, in node order, under one spine."""
    names = [n.name for n in snapshot.nodes]
    leaves = tuple(
        Switch(f"leaf{k}", 0, tuple(names[i : i + LEAF]))
        for k, i in enumerate(range(0, len(names), LEAF))
    )
    spine = Switch("spine", 1, tuple(names), tuple(leaf.name for leaf in leaves))
    return Topology(TREE, switches=(*leaves, spine))


def controller_state(snapshot: Snapshot) -> ClusterState:
    """The cluster of a snapshot as the controller's records: nodes, partition, jobs."""
    nodes = [
        Node(n.name, n.cpus, n.mem, n.gpus, ("gpu",), state=NodeState.IDLE) for n in snapshot.nodes
    ]
    state = ClusterState(nodes, [PartitionConfig("gpu", tuple(n.name for n in nodes), True)])
    one_task = ResourceRequest(ntasks=1)
    for held in snapshot.running:
        job = Job(held.job_id, "run", 0, 0, "u", "u", "gpu", JobState.RUNNING, one_task, NOW)
        limit = round((held.end_time - NOW) / 60)
        state.put_job(replace(job, allocation=held.allocation, start_time=NOW, time_limit=limit))
    for entry in snapshot.pending:
        job = Job(entry.job_id, "j", 0, 0, "u", "u", "gpu", JobState.PENDING, entry.request, 0.0)
        state.put_job(replace(job, submit_time=entry.submit_time, time_limit=entry.time_limit))
    return state


def median_controller_pass(
    state: ClusterState, cfg: SchedConfig, repeat: int, full: bool
) -> tuple[float, float, int]:
    """Median wall seconds of the controller's pass (snapshot and plan), and of its snapshot.

    An event pass finds the entries the pass before it kept, as in the
    controller between two full passes with nothing changed.
    """
    kept = KeptEntries()
    build_snapshot(state, NOW, WEIGHTS, None, kept)
    times, snapshot_times = [], []
    for _ in range(repeat):
        began = time.perf_counter()
        snapshot = build_snapshot(state, NOW, WEIGHTS, None, kept, reuse=not full)
        built = time.perf_counter()
        decided = (plan if full else plan_event)(snapshot, NOW, cfg)
        times.append(time.perf_counter() - began)
        snapshot_times.append(built - began)
    med = statistics.median
    return med(times), med(snapshot_times), len(decided.starts)


def median_pass(
    snapshot: Snapshot, cfg: SchedConfig, repeat: int, planner: Planner = plan
) -> tuple[float, float, int, int]:
    """Median wall and CPU seconds of a pass, and the starts and planned starts of the last one.

    Each pass gets new job objects, as the controller's passes do (it builds
    them from its records every time): nothing kept by identity carries over.
    """
    times, cpu = [], []
    for _ in range(repeat):
        fresh = replace(
            snapshot,
            pending=tuple(replace(j) for j in snapshot.pending),
            running=tuple(replace(j) for j in snapshot.running),
        )
        began, began_cpu = time.perf_counter(), time.process_time()
        decided = planner(fresh, NOW, cfg)
        times.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    med = statistics.median
    return med(times), med(cpu), len(decided.starts), len(decided.start_times)


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sim-jobs", type=int, default=10_000)
    args = parser.parse_args()
    calibrated = calibration()
    print(f"calibration: a 5,000,000-step Python loop takes {calibrated:.3f} s on this machine")
    snapshot = cluster_snapshot(10_000)
    cfg = SchedConfig(bf_max_job_test=10_000)
    full, full_cpu, starts, reserved = median_pass(snapshot, cfg, args.repeat)
    print(
        f"full pass (10,000 jobs, 1,000 nodes x 8 GPUs): {full:.3f} s median, CPU {full_cpu:.3f} s"
        f" ({starts} starts, {reserved} planned starts); target {TARGETS['full_pass_s']} s"
    )
    tree_cfg = replace(cfg, topology=two_level_tree(snapshot))
    tree, tree_cpu, starts, reserved = median_pass(snapshot, tree_cfg, args.repeat)
    flat_again, _, _, _ = median_pass(snapshot, cfg, args.repeat)  # the same moment's load
    ratio = tree / min(full, flat_again)
    print(
        f"full pass on a two-level tree ({len(snapshot.nodes) // LEAF} leaves of {LEAF} nodes):"
        f" {tree:.3f} s median, CPU {tree_cpu:.3f} s ({starts} starts, {reserved} planned"
        f" starts); {ratio:.2f} x the flat pass; target {TARGETS['tree_over_flat']} x"
    )
    event, event_cpu, starts, _ = median_pass(snapshot, SchedConfig(), args.repeat, plan_event)
    print(
        f"event pass (top 100 jobs, default_queue_depth): {event * 1000:.1f} ms median,"
        f" CPU {event_cpu * 1000:.1f} ms ({starts} starts); target {TARGETS['event_pass_ms']} ms"
    )
    top, top_cpu, starts, reserved = median_pass(
        snapshot, SchedConfig(bf_max_job_test=100), args.repeat
    )
    print(
        f"backfill pass over the top 100 jobs: {top * 1000:.1f} ms median, CPU"
        f" {top_cpu * 1000:.1f} ms ({starts} starts, {reserved} planned starts); no target"
    )
    state = controller_state(snapshot)
    live_full, live_full_snap, starts = median_controller_pass(state, cfg, args.repeat, True)
    print(
        f"controller's full pass (snapshot of its records computed anew, then the full pass):"
        f" {live_full:.3f} s median, of which the snapshot {live_full_snap * 1000:.1f} ms"
        f" ({starts} starts); no target"
    )
    live_event, live_event_snap, starts = median_controller_pass(
        state, SchedConfig(), args.repeat, False
    )
    print(
        f"controller's event pass (snapshot from the entries kept, then the event pass):"
        f" {live_event * 1000:.1f} ms median, of which the snapshot"
        f" {live_event_snap * 1000:.1f} ms ({starts} starts); no target"
    )
    setup = trace_setup(str(TRACE), args.sim_jobs)
    sim_cfg = policy_config("backfill", SIM_PARAMS)
    began_cpu = time.process_time()
    measures = summarize(simulate(setup.jobs, setup.nodes, setup.partitions, sim_cfg))
    cpu_rate = measures["jobs"] / (time.process_time() - began_cpu)
    rate = measures["jobs_per_second"]
    print(
        f"simulator ({TRACE.name}, {int(measures['jobs'])} jobs): {rate:.0f} jobs per wall second"
        f" ({cpu_rate:.0f} per CPU second), {measures['sched_ms_per_pass']:.2f} ms per pass;"
        f" target {TARGETS['sim_jobs_per_s']:.0f}"
    )
    figures = {
        "calibration_s": calibrated,
        "full_pass_s": full,
        "full_pass_cpu_s": full_cpu,
        "tree_pass_s": tree,
        "tree_over_flat": ratio,
        "event_pass_ms": event * 1000,
        "event_pass_cpu_ms": event_cpu * 1000,
        "top100_backfill_ms": top * 1000,
        "top100_backfill_cpu_ms": top_cpu * 1000,
        "controller_full_pass_s": live_full,
        "controller_full_snapshot_ms": live_full_snap * 1000,
        "controller_event_pass_ms": live_event * 1000,
        "controller_event_snapshot_ms": live_event_snap * 1000,
        "sim_jobs_per_s": rate,
        "sim_jobs_per_cpu_s": cpu_rate,
        "sim_ms_per_pass": measures["sched_ms_per_pass"],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
