"""``minislurm simulate``: run a trace through the simulator and report its measures.

The command line (in cli.manage) parses; this module sets the trace
up, picks the policy's knobs, runs :func:`ctld.simulator.simulate` and
formats the result as text or one JSON object; it writes the per-job CSV
and the queue and utilization plot.

``--policy fifo`` is ``sched/builtin``; ``--policy backfill`` is
``sched/backfill`` with :data:`SIM_PARAMS` unless ``--sched-params`` says
otherwise: ``bf_resolution=1`` (trace times are to the second, as an
administrator of such a machine would set it) and
``bf_job_part_count_reserve=1`` (one reservation per partition: EASY
backfilling, as the literature's figures use); ``--sched-params ""`` gives
Slurm's defaults (a reservation for every job tested). The queue is in
submission order unless ``--conf`` names a slurm.conf: its ``PriorityWeight*``,
``PriorityMaxAge`` and ``PriorityFavorSmall`` then set the jobs' priorities,
as the controller's.

``--nodes-of G`` simulates GPU nodes (:mod:`ctld.simtopo`). With
``--topology FILE`` the trace runs twice through the same ``plan``: placed
by the file's switches or blocks (``SchedConfig.topology``), and with the topology
ignored; both runs' placements are counted against the file's leaf
switches (or blocks), so the gain and its cost sit side by side. With
``--switch-wait W`` the topology run's multi-node jobs that could fit in one
leaf ask for one (``--switches=1@W``); ``max_switch_wait`` caps W as it
caps a submitted job's wait, and is raised to W unless ``--sched-params``
sets it.

Imports ctld.simulator, ctld.simtopo, ctld.ranking, ctld.sched.knobs and minislurm
(config, errors, hostlist, topology); matplotlib only inside :func:`write_plot`.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field, replace

from ctld.ranking import weights_of
from ctld.sched.knobs import SCHED_BACKFILL, SCHED_BUILTIN, SchedConfig, sched_from_params
from ctld.simtopo import (
    gpu_setup,
    leaf_domains,
    placement_measures,
    read_topology,
    with_switches,
)
from ctld.simulator import FCFS, SimOutcome, TraceSetup, simulate, summarize, trace_setup
from minislurm import hostlist
from minislurm.config import load_slurm_conf, parse_scheduler_parameters
from minislurm.errors import ConfigError
from minislurm.topology import Topology

SIM_PARAMS = "bf_resolution=1,bf_job_part_count_reserve=1"
POLICY_TYPES = {"fifo": SCHED_BUILTIN, "backfill": SCHED_BACKFILL}
JSON_KEYS = ("utilization", "mean_wait", "mean_bsld", "max_wait", "makespan", "jobs")
# A run's keys first when two runs are compared (the four, in its order).
TOPOLOGY_KEYS = ("utilization", "mean_bsld", "single_domain_share", "mean_leaves_per_job")
RUNS = ("topology", "flat")  # placed by the topology; the topology ignored


@dataclass(frozen=True)
class SimRequest:
    """What ``minislurm simulate`` was asked."""

    trace: str
    jobs: int | None
    policy: str
    nodes: int | None
    sched_params: str
    out_dir: str | None
    conf: str | None = None  # a slurm.conf whose priority weights order the queue
    gpus_per_node: int = 0  # --nodes-of: each processor is a GPU on nodes of this many (0: off)
    topology: str | None = None  # a topology.conf: run placed by it and run flat
    switch_wait: int = 0  # --switch-wait: fitting multi-node jobs ask --switches=1@this (0: off)


@dataclass(frozen=True)
class Report:
    """What a simulation measured: one run, or the ``topology`` and ``flat`` runs.

    ``runs`` maps ``"run"`` (alone) or each of :data:`RUNS` to its measures;
    ``machine`` holds what the runs share: ``processors``, ``skipped``, and
    in node mode ``nodes`` and ``gpus_per_node``, with a topology ``leaves``
    and ``leaf_nodes`` (the largest leaf's nodes).
    """

    runs: dict[str, dict[str, float]]
    machine: dict[str, float] = field(default_factory=dict)
    blocks: bool = False  # the topology is topology/block: its leaves are base blocks


def policy_config(policy: str, sched_params: str) -> SchedConfig:
    """The knobs of a policy.

    Args:
        policy: ``fifo`` or ``backfill``.
        sched_params: a ``SchedulerParameters`` value.

    Returns:
        The configuration.

    Raises:
        ValueError: an unknown policy or a bad parameter.
    """
    if policy not in POLICY_TYPES:
        raise ValueError(f"invalid policy {policy!r}: use fifo or backfill")
    return sched_from_params(POLICY_TYPES[policy], parse_scheduler_parameters(sched_params))


def run(req: SimRequest) -> tuple[Report, list[str]]:
    """Simulate as asked.

    Args:
        req: the request.

    Returns:
        The report (see :func:`ctld.simulator.summarize` and
        :func:`ctld.simtopo.placement_measures`) and the files written.

    Raises:
        OSError: the trace or topology cannot be read, or the output not written.
        ValueError: a malformed trace, a bad policy or parameter.
        ConfigError: ``conf`` or ``topology`` cannot be read or is malformed.
    """
    params = req.sched_params
    if req.switch_wait and "max_switch_wait" not in parse_scheduler_parameters(params):
        params = ",".join(p for p in (params, f"max_switch_wait={req.switch_wait}") if p)
    cfg = policy_config(req.policy, params)
    weights = weights_of(load_slurm_conf(req.conf)) if req.conf else FCFS
    if req.gpus_per_node:
        setup = gpu_setup(req.trace, req.gpus_per_node, req.jobs, req.nodes)
    else:
        setup = trace_setup(req.trace, req.jobs, req.nodes)
    machine: dict[str, float] = {"skipped": setup.skipped, "processors": setup.size}
    if req.gpus_per_node:
        machine.update(nodes=len(setup.nodes), gpus_per_node=req.gpus_per_node)
    topology = _topology(req.topology, setup) if req.topology else None
    if req.switch_wait and (topology is None or not topology.tree):
        raise ValueError("--switch-wait needs --topology with switches (topology/tree)")
    title = f"{req.trace}: {req.policy}, {setup.size} processors"
    written: list[str] = []
    if topology is None:
        outcome = simulate(setup.jobs, setup.nodes, setup.partitions, cfg, weights=weights)
        if req.out_dir is not None:
            written = write_outputs(outcome, req.out_dir, title)
        return Report({"run": summarize(outcome)}, machine), written
    domains = leaf_domains(topology)
    leaf_nodes = max(len(d) for d in domains)
    machine.update(leaves=len(domains), leaf_nodes=leaf_nodes)
    placed = setup.jobs  # the topology run's jobs
    if req.switch_wait:
        wait = min(req.switch_wait, cfg.max_switch_wait)  # capped when submitted, as in Slurm
        machine.update(switch_wait=wait)
        placed = with_switches(setup.jobs, leaf_nodes, wait)
    runs: dict[str, dict[str, float]] = {}
    plans = ((placed, replace(cfg, topology=topology)), (setup.jobs, cfg))
    for name, (work, knobs) in zip(RUNS, plans, strict=True):
        outcome = simulate(work, setup.nodes, setup.partitions, knobs, weights=weights)
        runs[name] = summarize(outcome) | placement_measures(outcome.records, topology)
        if req.out_dir is not None:
            out = os.path.join(req.out_dir, name)
            written += write_outputs(outcome, out, f"{title}, {name}")
    return Report(runs, machine, topology.block), written


def _topology(path: str, setup: TraceSetup) -> Topology:
    """The topology.conf over the simulated nodes; an unknown node's error names them."""
    try:
        return read_topology(path, setup.nodes)
    except ConfigError as err:
        names = hostlist.compress([n.name for n in setup.nodes])
        raise ConfigError(err.path, err.line, f"{err.message} (simulated: {names})") from None


def as_json(report: Report) -> str:
    """The report as one JSON object.

    One run: its measures, the issue's keys first, then the machine's. Two:
    a ``topology`` and a ``flat`` object (utilization, mean bounded slowdown,
    the share of multi-node jobs in one leaf, the leaves per multi-node job
    first), then the machine's values.

    Args:
        report: from :func:`run`.

    Returns:
        One line of JSON.
    """
    if "run" in report.runs:
        return json.dumps(_ordered(report.runs["run"], JSON_KEYS) | report.machine)
    runs = {name: _ordered(report.runs[name], TOPOLOGY_KEYS) for name in RUNS}
    return json.dumps(runs | report.machine)


def _ordered(measures: dict[str, float], first: tuple[str, ...]) -> dict[str, float]:
    ordered = {k: measures[k] for k in first if k in measures}
    return ordered | {k: v for k, v in measures.items() if k not in ordered}


def as_text(req: SimRequest, report: Report) -> str:
    """The report for a person to read: the run's measures, or the two runs side by side.

    Args:
        req: the request.
        report: from :func:`run`.

    Returns:
        Lines of text.
    """
    machine = report.machine
    if req.gpus_per_node:
        shape = f"{int(machine['nodes'])} nodes of {req.gpus_per_node} GPUs"
    else:
        shape = f"{int(machine['processors'])} processors"
    if "run" not in report.runs:
        return _as_table(req, report, shape)
    m = report.runs["run"]
    if not m.get("jobs"):
        return f"{req.trace}: no job ran ({m.get('unfinished', 0)} never fit)"
    return "\n".join(
        [
            f"trace          {req.trace} ({shape})",
            f"policy         {req.policy}",
            f"jobs           {int(m['jobs'])} ({int(machine['skipped'])} records skipped,"
            f" {int(m['unfinished'])} never started)",
            f"utilization    {m['utilization']:.3f}",
            f"wait           mean {m['mean_wait']:.0f} s, median {m['median_wait']:.0f} s,"
            f" max {m['max_wait']:.0f} s",
            f"bounded slowdown (10 s) mean {m['mean_bsld']:.2f}",
            f"makespan       {m['makespan']:.0f} s",
            f"scheduler      {m['sched_ms_per_pass']:.2f} ms per pass ({int(m['passes'])} passes),"
            f" {m['sched_ms_per_start']:.2f} ms per job started",
            f"throughput     {m['jobs_per_second']:.0f} jobs per second of wall time",
        ]
    )


def _as_table(req: SimRequest, report: Report, shape: str) -> str:
    """The topology run beside the flat one, a row per measure."""
    m, topo, flat = report.machine, report.runs["topology"], report.runs["flat"]
    if not topo.get("jobs") or not flat.get("jobs"):
        return f"{req.trace}: no job ran ({topo.get('unfinished', 0)} never fit)"
    leaf, leaves = ("block", "blocks") if report.blocks else ("leaf", "leaves")
    kind = "base blocks" if report.blocks else "leaf switches"
    fits = int(topo.get("single_domain_fits", 0))
    rows = [
        ("jobs run", "{:.0f}", "jobs"),
        ("utilization", "{:.3f}", "utilization"),
        ("bounded slowdown (10 s), mean", "{:.2f}", "mean_bsld"),
        ("wait, mean (s)", "{:.0f}", "mean_wait"),
        (f"fitting multi-node jobs in one {leaf}", "{:.1%}", "single_domain_share"),
        (f"{leaves} per multi-node job, mean", "{:.2f}", "mean_leaves_per_job"),
        ("scheduler, ms per pass", "{:.2f}", "sched_ms_per_pass"),
    ]
    lines = [
        f"trace          {req.trace} ({shape}; {int(m['skipped'])} records skipped)",
        f"topology       {req.topology}: {int(m['leaves'])} {kind},"
        f" the largest of {int(m['leaf_nodes'])} nodes",
        f"policy         {req.policy}",
        *_switch_line(m),
        f"{'':<36}{'topology':>12}{'flat':>12}",
    ]
    for label, fmt, key in rows:
        lines.append(f"{label:<36}{fmt.format(topo[key]):>12}{fmt.format(flat[key]):>12}")
    multi = int(topo["multi_node_jobs"])
    lines.append(f"({multi} multi-node jobs; {fits} fitting: no wider than the largest {leaf})")
    return "\n".join(lines)


def _switch_line(machine: dict[str, float]) -> list[str]:
    """The line that says what the topology run's jobs asked of the switches, if anything."""
    if "switch_wait" not in machine:
        return []
    return [
        f"switches       multi-node jobs of up to {int(machine['leaf_nodes'])} nodes ask"
        f" --switches=1@{int(machine['switch_wait'])}s (topology run)"
    ]


# ---------------------------------------------------------------- outputs


def write_csv(outcome: SimOutcome, path: str) -> None:
    """Write one line per job: id, submit, start, end, wait, run, CPUs, nodes.

    Args:
        outcome: what happened.
        path: the CSV file.
    """
    with open(path, "w", newline="", encoding="utf-8") as stream:
        out = csv.writer(stream)
        out.writerow(["job_id", "submit", "start", "end", "wait", "run", "cpus", "nodes"])
        for r in outcome.records:
            out.writerow([r.job_id, r.submit, r.start, r.end, r.wait, r.run, r.cpus, len(r.nodes)])


def write_plot(outcome: SimOutcome, path: str, title: str) -> None:
    """Plot queue length and utilization over time into a PNG.

    Args:
        outcome: what happened.
        path: the PNG file.
        title: the figure's title.

    Raises:
        ImportError: matplotlib is not installed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = [s.time / 3600 for s in outcome.samples]
    fig, (queue, util) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    queue.step(hours, [s.queued for s in outcome.samples], where="post")
    queue.set_ylabel("jobs queued")
    util.step(hours, [s.busy_cpus / outcome.total_cpus for s in outcome.samples], where="post")
    util.set_ylabel("utilization")
    util.set_xlabel("hours")
    util.set_ylim(0, 1.05)
    fig.suptitle(title)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_outputs(outcome: SimOutcome, out_dir: str, title: str) -> list[str]:
    """Write ``jobs.csv`` and, when matplotlib is installed, ``timeline.png`` into ``out_dir``.

    Args:
        outcome: what happened.
        out_dir: the directory (created if missing).
        title: the plot's title.

    Returns:
        The files written.
    """
    os.makedirs(out_dir, exist_ok=True)
    written = [os.path.join(out_dir, "jobs.csv")]
    write_csv(outcome, written[0])
    try:
        write_plot(outcome, os.path.join(out_dir, "timeline.png"), title)
    except ImportError:
        return written
    return [*written, os.path.join(out_dir, "timeline.png")]
