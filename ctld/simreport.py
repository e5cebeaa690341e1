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

Imports ctld.simulator, ctld.ranking, ctld.sched.knobs and minislurm.config; matplotlib only inside
:func:`write_plot`.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass

from ctld.ranking import weights_of
from ctld.sched.knobs import SCHED_BACKFILL, SCHED_BUILTIN, SchedConfig, sched_from_params
from ctld.simulator import FCFS, SimOutcome, simulate, summarize, trace_setup
from minislurm.config import load_slurm_conf, parse_scheduler_parameters

SIM_PARAMS = "bf_resolution=1,bf_job_part_count_reserve=1"
POLICY_TYPES = {"fifo": SCHED_BUILTIN, "backfill": SCHED_BACKFILL}
JSON_KEYS = ("utilization", "mean_wait", "mean_bsld", "max_wait", "makespan", "jobs")


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


def run(req: SimRequest) -> tuple[dict[str, float], list[str]]:
    """Simulate as asked.

    Args:
        req: the request.

    Returns:
        The measures (see :func:`ctld.simulator.summarize`) and the files written.

    Raises:
        OSError: the trace cannot be read or the output not written.
        ValueError: a malformed trace, a bad policy or parameter.
        ConfigError: ``conf`` cannot be read or is malformed.
    """
    cfg = policy_config(req.policy, req.sched_params)
    weights = weights_of(load_slurm_conf(req.conf)) if req.conf else FCFS
    setup = trace_setup(req.trace, req.jobs, req.nodes)
    outcome = simulate(setup.jobs, setup.nodes, setup.partitions, cfg, weights=weights)
    measures = summarize(outcome)
    measures["skipped"] = setup.skipped
    measures["processors"] = setup.size
    written: list[str] = []
    if req.out_dir is not None:
        title = f"{req.trace}: {req.policy}, {setup.size} processors"
        written = write_outputs(outcome, req.out_dir, title)
    return measures, written


def as_json(measures: dict[str, float]) -> str:
    """The measures as one JSON object: the issue's keys first, then the rest.

    Args:
        measures: from :func:`run`.

    Returns:
        One line of JSON.
    """
    ordered = {k: measures[k] for k in JSON_KEYS if k in measures}
    ordered.update({k: v for k, v in measures.items() if k not in ordered})
    return json.dumps(ordered)


def as_text(req: SimRequest, measures: dict[str, float]) -> str:
    """The measures for a person to read.

    Args:
        req: the request.
        measures: from :func:`run`.

    Returns:
        Lines of text.
    """
    if not measures.get("jobs"):
        return f"{req.trace}: no job ran ({measures.get('unfinished', 0)} never fit)"
    m = measures
    return "\n".join(
        [
            f"trace          {req.trace} ({int(m['processors'])} processors)",
            f"policy         {req.policy}",
            f"jobs           {int(m['jobs'])} ({int(m['skipped'])} records skipped,"
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
