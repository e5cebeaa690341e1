"""The trace simulator's node level: GPU nodes, a trace's jobs as GPU jobs, and their leaves.

``minislurm simulate --nodes-of G`` reads each processor of an SWF trace as
one GPU on nodes of G GPUs (and G CPUs, one per GPU):

- a job of P <= G processors is a one-node job of P tasks with a GPU each
  (``-N1 -n P --gpus-per-task=1``); it shares its node with others;
- a job of P > G processors takes ceil(P / G) whole nodes
  (``-N k -n P --gpus-per-task=1 --exclusive``), so it holds k * G GPUs.

The machine has the nodes asked for, else the trace's processors over G,
rounded up (every job of the trace then fits).

:func:`placement_measures` says how the multi-node jobs of a run lie on the
leaf switches of a ``topology/tree`` (or the base blocks of a
``topology/block``): the share of those that could fit in one leaf that got
one (``single_domain_share``) and the mean leaves per multi-node job
(``mean_leaves_per_job``). A job *could fit in one* when it asks no more
nodes than the largest leaf has, whatever was busy at the time; a node under
several leaves counts under the first, as the scheduler counts it; a node
under none is a leaf of its own (a run without topology may use it).

Imports ctld.simulator and minislurm.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace

from ctld.simulator import JobRecord, SimJob, TraceSetup, trace_job
from minislurm.config import PartitionConfig
from minislurm.model import Job, Node, ResourceRequest
from minislurm.states import NodeState
from minislurm.swf import read_swf, trace_jobs
from minislurm.topology import Topology, load_topology, plugin_of

NODE_MEMORY = 1  # MiB: jobs ask none


def gpu_setup(
    path: str, gpus: int, limit: int | None = None, nodes: int | None = None
) -> TraceSetup:
    """Read an SWF trace as GPU jobs on nodes of ``gpus`` GPUs, in one partition.

    Args:
        path: the SWF file.
        gpus: GPUs (and CPUs) per node; each processor of the trace is one GPU.
        limit: simulate the first this many records (None: all).
        nodes: nodes of the machine (None: the trace's processors over ``gpus``,
            rounded up).

    Returns:
        The setup; its ``size`` is the machine's GPUs.

    Raises:
        OSError: the file cannot be read.
        ValueError: a malformed line, or no machine size in the trace nor given.
    """
    trace = read_swf(path, limit)
    if nodes is None:
        if trace.machine_size <= 0:
            raise ValueError(f"{path}: no MaxProcs or MaxNodes header; give the machine size")
        nodes = math.ceil(trace.machine_size / gpus)
    work, skipped = trace_jobs(trace.records, nodes * gpus)
    machine, partition = gpu_machine(nodes, gpus)
    jobs = tuple(
        SimJob(gpu_job(j.job_id, j.submit_time, j.procs, j.limit, gpus), j.run_time) for j in work
    )
    return TraceSetup(jobs, machine, (partition,), nodes * gpus, skipped)


def gpu_machine(count: int, gpus: int) -> tuple[tuple[Node, ...], PartitionConfig]:
    """``count`` nodes (n1, n2, ...) of ``gpus`` GPUs and as many CPUs, in partition ``batch``.

    Args:
        count: nodes.
        gpus: GPUs (and CPUs) per node.

    Returns:
        The nodes, idle, and the partition.
    """
    partition = PartitionConfig("batch", tuple(f"n{i}" for i in range(1, count + 1)))
    devices = tuple(range(gpus))
    nodes = tuple(
        Node(name, gpus, NODE_MEMORY, devices, (partition.name,), NodeState.IDLE)
        for name in partition.nodes
    )
    return nodes, partition


def gpu_job(job_id: int, submit: float, procs: int, limit: float, gpus: int) -> Job:
    """A trace's job of ``procs`` GPUs on nodes of ``gpus``, PENDING, as root's in account root.

    Args:
        job_id: its id.
        submit: its submit time.
        procs: GPUs it asks in all.
        limit: its time limit in seconds, rounded up to whole minutes as Slurm keeps it.
        gpus: GPUs per node.

    Returns:
        The record: one node shared for ``procs <= gpus``, else whole nodes.
    """
    count = math.ceil(procs / gpus)
    request = ResourceRequest(
        min_nodes=count,
        max_nodes=count,
        ntasks=procs,
        gpus_per_task=1,
        nodes_set=True,
        ntasks_set=True,
        exclusive=count > 1,
    )
    return trace_job(job_id, submit, procs, limit, request)


def with_switches(jobs: Sequence[SimJob], leaf_nodes: int, wait: int) -> tuple[SimJob, ...]:
    """The jobs, each multi-node one of at most ``leaf_nodes`` nodes asking ``--switches=1@wait``.

    Args:
        jobs: the trace's jobs.
        leaf_nodes: the largest leaf's nodes: a job no wider could fit in one.
        wait: seconds it waits for one leaf (already capped by ``max_switch_wait``).

    Returns:
        The jobs, those changed.
    """
    return tuple(
        SimJob(replace(j.job, request=replace(req, switches=1, switch_wait=wait)), j.run_time)
        if 2 <= (req := j.job.request).min_nodes <= leaf_nodes
        else j
        for j in jobs
    )


def read_topology(path: str, nodes: Sequence[Node]) -> Topology:
    """A topology.conf for the simulated nodes: switches (tree) or blocks, by its lines.

    Args:
        path: the file.
        nodes: the machine.

    Returns:
        The topology.

    Raises:
        OSError: the file cannot be read.
        ConfigError: it is malformed or names a node the machine lacks.
    """
    with open(path, encoding="utf-8") as stream:
        plugin = plugin_of(stream.read())
    topology = load_topology(path, plugin, (), [n.name for n in nodes])
    assert topology is not None  # plugin_of names a tree or blocks
    return topology


def leaf_domains(topology: Topology) -> tuple[tuple[str, ...], ...]:
    """The nodes of each leaf switch (tree) or base block (block), in file order."""
    if topology.block:
        return tuple(b.nodes for b in topology.blocks)
    return tuple(s.nodes for s in topology.switches if s.level == 0)


def placement_measures(records: Sequence[JobRecord], topology: Topology) -> dict[str, float]:
    """How a run's multi-node jobs lie on the topology's leaf switches or base blocks.

    Args:
        records: what happened to each job (its nodes).
        topology: the switches or blocks to count against (a run that ignored
            them is counted against them too).

    Returns:
        ``single_domain_share``: of the multi-node jobs that ask no more nodes
        than the largest leaf has, the share placed under one leaf (1.0 when
        there are none); ``mean_leaves_per_job``: the leaves a multi-node job
        spans, on average (0.0 without any); ``multi_node_jobs`` and
        ``single_domain_fits`` (how many could fit in one).
    """
    domains = leaf_domains(topology)
    leaf: dict[str, int] = {}
    for k, members in enumerate(domains):
        for node in members:
            leaf.setdefault(node, k)
    largest = max((len(members) for members in domains), default=0)
    spans, fits, within = [], 0, 0
    for record in records:
        if len(record.nodes) < 2:
            continue
        span = len({leaf.get(node, node) for node in record.nodes})
        spans.append(span)
        if len(record.nodes) <= largest:
            fits += 1
            within += span == 1
    return {
        "single_domain_share": within / fits if fits else 1.0,
        "mean_leaves_per_job": statistics.fmean(spans) if spans else 0.0,
        "multi_node_jobs": len(spans),
        "single_domain_fits": fits,
    }
