"""Tests of the trace simulator: virtual time through the controller's own ``plan``.

Imports ctld.simulator, ctld.sched, ctld.accounting and minislurm (the ``minislurm simulate``
command).
"""

from __future__ import annotations

import json
import random
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from plan_checks import check_plan

from cli.manage import main
from ctld.accounting import assocedit
from ctld.accounting.manager import Accounting
from ctld.sched.knobs import BUILTIN, SchedConfig
from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights
from ctld.simreport import write_outputs
from ctld.simulator import (
    SimJob,
    SimOutcome,
    simulate,
    summarize,
    trace_job,
    trace_machine,
    trace_setup,
)
from minislurm.config import SlurmConfig
from minislurm.model import Plan, Resv, Snapshot

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


# 4 processors. Job 1 takes all 4 for 100 s; job 2 needs all 4, job 3 one, for 10 s.
PRIORITY_TRACE = """\
; MaxProcs: 4
1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1
2 1 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1
3 2 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1
"""


def test_simulate_command_takes_the_priority_weights_of_a_slurm_conf(tmp_path: Path) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(PRIORITY_TRACE)
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityFavorSmall=YES\n"
    )
    args = ["simulate", "--trace", str(trace), "--policy", "fifo", "--json"]
    # In submission order job 3 waits for job 2 (198 s); favouring small jobs, it starts
    # when job 1 ends (98 s) and job 2 waits 10 s more (109 s).
    fcfs = CliRunner().invoke(main, args)
    weighted = CliRunner().invoke(main, [*args, "--conf", str(conf)])
    assert fcfs.exit_code == 0 and weighted.exit_code == 0, fcfs.output + weighted.output
    assert json.loads(fcfs.stdout)["mean_wait"] == (0 + 99 + 198) / 3
    assert json.loads(weighted.stdout)["mean_wait"] == (0 + 109 + 98) / 3
    conf.write_text("PriorityWeightJobSize=many\n")
    bad = CliRunner().invoke(main, [*args, "--conf", str(conf)])
    assert bad.exit_code == 1 and "invalid value for PriorityWeightJobSize" in bad.output


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
        job = trace_job(job_id, submit, width, limit)
        jobs.append(SimJob(job, limit * rng.choice([0.1, 0.5, 1.0])))
    return jobs


@pytest.mark.parametrize(
    "cfg", [SchedConfig(bf_resolution=1, bf_job_part_count_reserve=1), BUILTIN]
)
def test_passes_skipped_for_want_of_room_change_nothing(cfg: SchedConfig) -> None:
    """Without a hook, passes that cannot start a job are skipped; every job runs the same."""
    jobs = random_workload(400, 16, seed=5)
    nodes, part = trace_machine(16)
    parts = (part,)
    seen: list[float] = []
    every = simulate(jobs, nodes, parts, cfg, lambda s, d, now: seen.append(now))
    skipping = simulate(jobs, nodes, parts, cfg)
    assert every.passes == len(seen)
    assert skipping.passes < every.passes  # some were skipped
    assert skipping.records == every.records
    assert skipping.samples == every.samples


def _runs(outcome: SimOutcome) -> dict[int, tuple[float, tuple[str, ...]]]:
    return {r.job_id: (r.start, r.nodes) for r in outcome.records}


def test_priorities_are_the_controllers_computed_from_the_weights() -> None:
    """Job 3 (the whole machine) waits behind job 2 first come first served, not by size."""
    nodes, part = trace_machine(2)
    jobs = [
        SimJob(trace_job(1, 0, 2, 120), 100),
        SimJob(trace_job(2, 1, 1, 600), 50),
        SimJob(trace_job(3, 2, 2, 600), 50),
    ]
    priorities: dict[int, int] = {}

    def on_pass(snapshot: Snapshot, decided: Plan, now: float) -> None:
        check_plan(snapshot, decided, now)
        priorities.update((p.job_id, p.priority) for p in snapshot.pending)

    fcfs = _runs(simulate(jobs, nodes, (part,), BUILTIN, on_pass))
    assert priorities == {1: 1, 2: 1, 3: 1}
    assert fcfs[2][0] == 100 and fcfs[3][0] == 150
    weights = PriorityWeights(job_size=1000)
    by_size = _runs(simulate(jobs, nodes, (part,), BUILTIN, on_pass, weights=weights))
    assert priorities == {1: 1000, 2: 500, 3: 1000}
    assert by_size[3][0] == 100 and by_size[2][0] == 150


def test_a_reservation_keeps_other_jobs_off_its_nodes_while_it_holds_them() -> None:
    nodes, part = trace_machine(2)
    jobs = [SimJob(trace_job(1, 0, 1, 300), 100), SimJob(trace_job(2, 0, 1, 300), 100)]
    free = _runs(simulate(jobs, nodes, (part,), BUILTIN))
    assert free[1][0] == free[2][0] == 0
    maint = Resv("maint", 0.0, 1000.0, ("n1",), users=("alice",), flags=("MAINT",))
    held = _runs(simulate(jobs, nodes, (part,), BUILTIN, reservations=[maint]))
    assert held == {1: (0, ("n2",)), 2: (100, ("n2",))}


def test_association_limits_hold_jobs_back() -> None:
    """MaxJobs=1 for root lets one of its jobs run at a time, with room for two."""

    def transaction() -> AbstractContextManager[Any]:
        return nullcontext(None)

    accounting = Accounting(SlurmConfig(accounting_storage_enforce=("limits",)), transaction, ())
    accounting.book, _ = assocedit.modify(
        accounting.book, "user", {"name": "root"}, {"MaxJobs": "1"}, "c"
    )
    nodes, part = trace_machine(2)
    jobs = [SimJob(trace_job(1, 0, 1, 300), 100), SimJob(trace_job(2, 0, 1, 300), 100)]
    limited = _runs(simulate(jobs, nodes, (part,), BUILTIN, accounting=accounting))
    assert limited[1][0] == 0 and limited[2][0] == 100
