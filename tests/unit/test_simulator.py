"""Tests of the trace simulator: virtual time through the controller's own ``plan``.

Imports ctld.simulator, ctld.sched and minislurm (the ``minislurm simulate`` command).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from plan_checks import check_plan

from cli.manage import main
from ctld.sched.knobs import BUILTIN, SchedConfig
from ctld.sched.plan import plan
from ctld.simreport import write_outputs
from ctld.simulator import SimJob, simulate, summarize, trace_setup
from minislurm.model import NodeView, PartitionView, PendingJob, Plan, ResourceRequest, Snapshot

# 4 processors. Job 1 takes 2 for 100 s; job 2 needs all 4 (waits for 1); job 3 takes
# 2 for 50 s (estimate 60) and fits beside job 1 before job 2 can start.
TRACE = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1
2 1 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1
3 2 -1 50 2 -1 -1 2 60 -1 1 1 1 1 1 1 -1 -1
4 3 -1 500 1 -1 -1 1 300 -1 1 1 1 1 1 1 -1 -1
"""


def run_trace(tmp_path: Path, cfg: SchedConfig) -> dict[int, tuple[float, float]]:
    """Simulate TRACE, checking every pass; each job's (start, end)."""
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    setup = trace_setup(str(path))
    passes: list[tuple[Snapshot, Plan, float]] = []
    outcome = simulate(
        setup.jobs,
        setup.nodes,
        setup.partitions,
        cfg,
        lambda snapshot, decided, now: passes.append((snapshot, decided, now)),
    )
    for snapshot, decided, now in passes:
        check_plan(snapshot, decided, now)
        assert decided == plan(snapshot, now, cfg)  # the controller's own pass, nothing else
    assert outcome.unfinished == 0
    return {r.job_id: (r.start, r.end) for r in outcome.records}


def test_fifo_runs_in_order_and_kills_a_job_at_its_limit(tmp_path: Path) -> None:
    runs = run_trace(tmp_path, BUILTIN)
    assert runs[1] == (0, 100)
    assert runs[2] == (100, 200)
    assert runs[3] == (200, 250)
    assert runs[4] == (200, 500)  # ran 500 s in the trace, killed at its 300 s estimate


def test_backfill_starts_the_short_job_in_the_gap_without_delaying_the_wide_one(
    tmp_path: Path,
) -> None:
    runs = run_trace(tmp_path, SchedConfig(bf_resolution=1))
    assert runs[2] == (100, 200)  # not delayed
    assert runs[3] == (2, 52)  # backfilled beside job 1
    assert runs[4] == (200, 500)  # its 300 s would overlap job 2: it waits


def test_summary_measures_and_outputs(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    setup = trace_setup(str(path))
    outcome = simulate(setup.jobs, setup.nodes, setup.partitions, BUILTIN)
    measures = summarize(outcome)
    assert measures["jobs"] == 4
    assert measures["makespan"] == 500
    busy = 2 * 100 + 4 * 100 + 2 * 50 + 1 * 300
    assert measures["utilization"] == busy / (4 * 500)
    assert measures["max_wait"] == 198
    # bounded slowdowns: 1, (99 + 100) / 100, (198 + 50) / 50, (197 + 300) / 300
    expected = (1 + 199 / 100 + 248 / 50 + 497 / 300) / 4
    assert abs(measures["mean_bsld"] - expected) < 1e-9
    written = write_outputs(outcome, str(tmp_path / "out"), "t")
    lines = (tmp_path / "out" / "jobs.csv").read_text().splitlines()
    assert lines[0].startswith("job_id,submit,start,end")
    assert len(lines) == 5
    png = tmp_path / "out" / "timeline.png"
    assert str(png) in written
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_simulate_command_json_and_outputs(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    out = tmp_path / "out"
    args = ["simulate", "--trace", str(path), "--policy", "fifo", "--json", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    measures = json.loads(result.stdout.splitlines()[0])
    assert list(measures)[:6] == [
        "utilization",
        "mean_wait",
        "mean_bsld",
        "max_wait",
        "makespan",
        "jobs",
    ]
    assert measures["jobs"] == 4 and measures["makespan"] == 500
    assert (out / "jobs.csv").exists() and (out / "timeline.png").exists()


def test_simulate_command_text_defaults_to_easy_backfill(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    result = CliRunner().invoke(main, ["simulate", "--trace", str(path), "--jobs", "3"])
    assert result.exit_code == 0, result.output
    assert "policy         backfill" in result.stdout
    assert "jobs           3 " in result.stdout
    assert "bounded slowdown (10 s) mean" in result.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sched-params", "bf_window=0"], "bf_window must be a number from 1 to 43200"),
        (["--policy", "lottery"], "Invalid value for '--policy'"),
        (["--jobs", "0"], "Invalid value for '--jobs'"),
    ],
)
def test_simulate_command_rejects_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    result = CliRunner().invoke(main, ["simulate", "--trace", str(path), *extra])
    assert result.exit_code != 0
    assert message in result.output


def test_simulate_command_reports_a_missing_or_malformed_trace(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["simulate", "--trace", str(tmp_path / "none.swf")])
    assert missing.exit_code == 1 and "No such file" in missing.output
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 2 3\n")
    malformed = CliRunner().invoke(main, ["simulate", "--trace", str(bad)])
    assert malformed.exit_code == 1 and "3 fields, expected 18" in malformed.output


def random_workload(count: int, procs: int, seed: int) -> list[SimJob]:
    """Jobs of 1 to ``procs`` processors arriving faster than they end; run times within limits."""
    rng = random.Random(seed)
    jobs, submit = [], 0.0
    for job_id in range(1, count + 1):
        submit += rng.choice([0, 5, 30, 120])
        width = rng.choice([1, 1, 2, 4, procs // 2, procs])
        limit = float(rng.choice([60, 300, 1800, 7200]))
        request = ResourceRequest(min_nodes=width, max_nodes=width, ntasks=width, nodes_set=True)
        pending = PendingJob(job_id, "batch", 1, submit, request, 120, limit_seconds=limit)
        jobs.append(SimJob(pending, limit * rng.choice([0.1, 0.5, 1.0])))
    return jobs


@pytest.mark.parametrize(
    "cfg", [SchedConfig(bf_resolution=1, bf_job_part_count_reserve=1), BUILTIN]
)
def test_passes_skipped_for_want_of_room_change_nothing(cfg: SchedConfig) -> None:
    """Without a hook, passes that cannot start a job are skipped; every job runs the same."""
    jobs = random_workload(400, 16, seed=5)
    nodes = tuple(NodeView(f"n{i}", 1, 1, (), 1, 1, (), True) for i in range(1, 17))
    parts = (PartitionView("batch", tuple(n.name for n in nodes)),)
    seen: list[float] = []
    every = simulate(jobs, nodes, parts, cfg, lambda s, d, now: seen.append(now))
    skipping = simulate(jobs, nodes, parts, cfg)
    assert every.passes == len(seen)
    assert skipping.passes < every.passes  # some were skipped
    assert skipping.records == every.records
    assert skipping.samples == every.samples
