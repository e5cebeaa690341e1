"""Tests of ctld.accounting.records and ctld.accounting.filters against real Slurm's sacct captures.

The reference cluster's jobs (2 nodes n1, n2 with 8 CPUs and 8 GPUs each;
see ../shared/reference/outputs/INDEX.md) are rebuilt as Job and Step
records; their accounting records must be what sacct printed for them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cli import sacct_layout
from ctld.accounting.filters import JobSelector, parse_selector, parse_states, select
from ctld.accounting.records import (
    NO_REQUESTER,
    accounted_state,
    batch_outcome,
    job_id_text,
    job_order,
    job_records,
)
from minislurm.errors import InvalidRequest
from minislurm.model import Allocation, Job, NodeAlloc, ResourceRequest, Step, StepNodeAlloc
from minislurm.requests import AcctQuery, AcctRecord
from minislurm.states import JobEvent, JobState
from minislurm.wire import convert
from minislurm.wire.protowire import decode
from minislurm.wire.rpc import minislurm_pb2 as pb

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
T0 = 1796012754  # the reference jobs' first submit time
NOW = T0 + 300


def stdout_of(name: str) -> str:
    text = (REF / name).read_text()
    return text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]


def alloc(*parts: tuple[str, int, int]) -> Allocation:
    """(node, cpus, gpus) per node."""
    return Allocation(tuple(NodeAlloc(n, c, 0, tuple(range(g))) for n, c, g in parts))


def job(job_id: int, name: str, state: JobState, **fields: Any) -> Job:
    cpus = fields.pop("cpus", 1)
    nodes = fields.pop("nodes", 1)
    gpus = fields.pop("gpus_per_node", 0)
    base: dict[str, Any] = {
        "uid": 0,
        "gid": 0,
        "user": "root",
        "group": "root",
        "account": "root",
        "partition": "gpu",
        "request": ResourceRequest(
            min_nodes=nodes, max_nodes=nodes, ntasks=cpus, gpus_per_node=gpus
        ),
        "submit_time": T0,
        "eligible_time": T0,
        "work_dir": "/cluster/work",
    }
    if state is not JobState.PENDING and "allocation" not in fields:
        fields.setdefault("start_time", T0 + 3)
    if state not in (JobState.PENDING, JobState.RUNNING):
        fields.setdefault("end_time", fields.get("start_time", T0 + 3))
    base.update(fields)
    return Job(job_id=job_id, name=name, state=state, **base)


def ran(job_id: int, name: str, state: JobState = JobState.COMPLETED, **fields: Any) -> Job:
    """A job that ran on n1 with one CPU unless told otherwise."""
    fields.setdefault("allocation", alloc(("n1", fields.get("cpus", 1), 0)))
    fields.setdefault("start_time", T0 + 3)
    return job(job_id, name, state, **fields)


def step(job_id: int, parts: tuple[tuple[str, int, int], ...], **fields: Any) -> Step:
    nodes = tuple(StepNodeAlloc(n, c, 0, tuple(range(g)), ()) for n, c, g in parts)
    base: dict[str, Any] = {"name": "bash", "state": JobState.COMPLETED, "ntasks": 1}
    base.update(start_time=T0 + 12, end_time=T0 + 12)
    base.update(fields)
    return Step(job_id=job_id, step_id=base.pop("step_id", 0), nodes=nodes, **base)


CANCELLED, FAILED, TIMEOUT = JobState.CANCELLED, JobState.FAILED, JobState.TIMEOUT
N1_N2 = alloc(("n1", 4, 4), ("n2", 4, 4))


def array_task(job_id: int, array: int, task: int, name: str) -> Job:
    return ran(job_id, name, array_job_id=array, array_task_id=task)


# The reference cluster's jobs in sacct's order, each with its srun steps.
REFERENCE: list[tuple[Job, list[Step]]] = [
    (
        ran(1, "timeout", TIMEOUT, time_limit=1, exit_signal=15, end_time=T0 + 90),
        [],
    ),
    (ran(2, "normal"), []),
    (ran(3, "parsable"), []),
    (
        ran(5, "envjob", cpus=8, nodes=2, gpus_per_node=4, allocation=N1_N2),
        [step(5, (("n1", 4, 4), ("n2", 4, 4)), ntasks=8)],
    ),
    (array_task(6, 4, 0, "parr"), []),
    (array_task(4, 4, 1, "parr"), []),
    (
        ran(7, "gpt", cpus=4, allocation=alloc(("n1", 4, 4))),
        [step(7, (("n1", 4, 4),), ntasks=4)],
    ),
    (array_task(9, 8, 0, "arr"), []),
    (array_task(10, 8, 1, "arr"), []),
    (array_task(11, 8, 2, "arr"), []),
    (array_task(8, 8, 3, "arr"), []),
    (ran(12, "bash", batch=False, allocation=alloc(("n1", 1, 2))), [step(12, (("n1", 1, 2),))]),
    (
        ran(13, "bash", cpus=4, batch=False, allocation=alloc(("n1", 2, 0), ("n2", 2, 0))),
        [step(13, (("n1", 2, 0), ("n2", 2, 0)), ntasks=4)],
    ),
    (
        ran(
            14,
            "running",
            CANCELLED,
            cpus=2,
            allocation=alloc(("n1", 2, 2)),
            cancelled_by=0,
            exit_signal=15,
            end_time=T0 + 7,
        ),
        [],
    ),
    (ran(15, "held"), []),
    (job(17, "big", CANCELLED, cpus=2, nodes=2, gpus_per_node=8, cancelled_by=0), []),
    (job(18, "prio", CANCELLED, cpus=2, nodes=2, gpus_per_node=8, cancelled_by=0), []),
    (ran(20, "ok"), []),
    (ran(21, "fail3", FAILED, exit_code=3), []),
    (job(22, "wrap", FAILED, exit_code=1), []),
    (job(23, "wrap", FAILED, exit_code=1), []),
    (job(24, "toomanynodes", CANCELLED, cpus=3, nodes=3, cancelled_by=0), []),
    (job(25, "toomanycpus", CANCELLED, cpus=99, cancelled_by=0), []),
    (job(26, "overmaxtime", CANCELLED, partition="debug", cancelled_by=0), []),
    (job(27, "wrap", CANCELLED, cancelled_by=0), []),
    (job(28, "bigmem", FAILED, exit_code=1), []),
    (
        ran(29, "bash", FAILED, batch=False, exit_code=7),
        [step(29, (("n1", 1, 0),), state=FAILED, exit_code=7)],
    ),
    (
        ran(30, "bash", FAILED, cpus=2, batch=False, exit_code=1, allocation=alloc(("n1", 2, 0))),
        [step(30, (("n1", 2, 0),), state=FAILED, exit_code=1, ntasks=2)],
    ),
]
# Never eligible (a dependency, a pending array cancelled): sacct's default window hides them.
HIDDEN: list[tuple[Job, list[Step]]] = [
    (job(16, "dep", CANCELLED, eligible_time=0.0, cancelled_by=0), []),
    (
        job(
            19,
            "arrpend",
            CANCELLED,
            eligible_time=0.0,
            cancelled_by=0,
            array_job_id=19,
            array_tasks="0-3",
            array_throttle=2,
        ),
        [],
    ),
]


def records_of(jobs: list[tuple[Job, list[Step]]]) -> list[AcctRecord]:
    out: list[AcctRecord] = []
    for one, steps in jobs:
        out.extend(job_records(one, steps, NOW, "anchor"))
    return out


def render(records: list[AcctRecord], spec: str, parsable2: bool = False) -> str:
    """What the sacct command prints for these records (header included)."""
    columns = sacct_layout.parse_columns(spec)
    layout = sacct_layout.Layout(parsable=parsable2)
    lines = sacct_layout.header_lines(columns, layout)
    for record in records:
        message = decode("minislurm.v1.AcctRecord", convert.message(record).SerializeToString())
        lines.append(sacct_layout.record_line(columns, message, NOW, layout))
    return "".join(line + "\n" for line in lines)


def window(**fields: Any) -> AcctQuery:
    return convert.record(AcctQuery, pb.GetAccountingRequest(**fields))


# --------------------------------------------------------------------------- the reference outputs


def test_default_listing_matches_sacct():
    spec = "jobid,jobname,partition,account,alloccpus,state,exitcode"
    assert render(records_of(REFERENCE), spec) == stdout_of("sacct_default.txt")


def test_parsable2_listing_matches_sacct():
    spec = "JobID,JobName,State,ExitCode,Elapsed,NodeList,AllocTRES"
    assert render(records_of(REFERENCE), spec, parsable2=True) == stdout_of("sacct_parsable2.txt")


def test_failed_job_shows_derived_exit_code_on_the_job_only():
    records = select(records_of(REFERENCE), window(jobs=["21"]), NOW)
    spec = "JobID,JobName,State,ExitCode,DerivedExitCode"
    assert render(records, spec, parsable2=True) == stdout_of("sacct_failed_job.txt")


def test_array_id_selects_every_task_with_its_own_raw_id():
    records = select(records_of(REFERENCE), window(jobs=["8"]), NOW)
    spec = "JobID,JobIDRaw,JobName,State,ExitCode"
    assert render(records, spec, parsable2=True) == stdout_of("sacct_array.txt")


def test_allocations_only_with_widths_matches_sacct():
    records = select(records_of(REFERENCE), window(jobs_only=True), NOW)
    spec = "JobID,JobName%12,Partition,State,ExitCode,AllocCPUS,NNodes"
    assert render(records, spec) == stdout_of("sacct_X_format.txt")


# --------------------------------------------------------------------------- records


def by_id(records: list[AcctRecord]) -> dict[str, AcctRecord]:
    return {r.job_id: r for r in records}


def test_batch_step_holds_the_first_node_only():
    records = by_id(records_of(REFERENCE))
    assert records["5"].nodes == "n[1-2]"
    assert records["5"].alloc_tres == "billing=8,cpu=8,gres/gpu=8,node=2"
    batch = records["5.batch"]
    assert (batch.nodes, batch.alloc_cpus, batch.nnodes) == ("n1", 4, 1)
    assert batch.alloc_tres == "cpu=4,gres/gpu=4,mem=0,node=1"
    assert (batch.job_id_raw, batch.step, batch.name) == (5, "batch", "batch")


def test_cancelled_job_line_is_zero_and_its_batch_step_was_signalled():
    records = by_id(records_of(REFERENCE))
    head, batch = records["14"], records["14.batch"]
    assert (head.state, head.cancelled_by) == ("CANCELLED", 0)
    assert (head.exit_code, head.exit_signal) == (0, 0)
    assert (batch.state, batch.cancelled_by, batch.exit_signal) == ("CANCELLED", NO_REQUESTER, 15)
    assert head.elapsed == batch.elapsed == 4


def test_timeout_job_line_is_zero_and_its_batch_step_cancelled():
    records = by_id(records_of(REFERENCE))
    assert (records["1"].state, records["1"].exit_signal) == ("TIMEOUT", 0)
    assert (records["1.batch"].state, records["1.batch"].exit_signal) == ("CANCELLED", 15)
    assert records["1"].time_limit == 1


def test_job_that_never_ran_has_no_batch_step_and_its_request_as_allocation():
    records = records_of([REFERENCE[15]])  # 17: two nodes, 16 GPUs, cancelled pending
    assert [r.job_id for r in records] == ["17"]
    head = records[0]
    assert (head.nodes, head.alloc_tres, head.alloc_cpus, head.nnodes) == ("", "", 2, 2)
    assert head.req_tres == "billing=2,cpu=2,gres/gpu=16,node=2"
    assert head.elapsed == 0


def test_srun_only_job_has_steps_and_their_highest_exit_code_derived():
    records = by_id(records_of(REFERENCE))
    assert "29.batch" not in records
    assert (records["29"].derived_exit_code, records["29.0"].exit_code) == (7, 7)
    assert records["29.0"].alloc_tres == "cpu=1,mem=0,node=1"
    assert records["13.0"].nodes == "n[1-2]" and records["13.0"].ntasks == 4


def test_array_task_ids():
    records = by_id(records_of(REFERENCE))
    task = records["8_0"]
    assert (task.job_id_raw, task.array_job_id, task.array_task_id) == (9, 8, 0)
    assert records["8_3.batch"].job_id_raw == 8
    assert records["2"].array_task_id is None


def test_pending_array_record_shows_its_pending_tasks_and_throttle():
    assert job_id_text(HIDDEN[1][0]) == "19_[0-3%2]"


def test_running_job_elapsed_counts_to_now_and_its_batch_step_runs():
    running = ran(40, "train", JobState.RUNNING, start_time=NOW - 65)
    head, batch = job_records(running, [], NOW, "anchor")
    assert (head.state, head.end_time, head.elapsed) == ("RUNNING", 0, 65)
    assert (batch.state, batch.end_time, batch.elapsed) == ("RUNNING", 0, 65)


def test_a_job_cancelled_before_it_started_has_no_reason_in_accounting():
    held = job(42, "held", CANCELLED, reason="JobHeldUser", start_time=T0, end_time=T0)
    (head,) = job_records(held, [], NOW, "anchor")
    assert head.reason == "None"  # as Slurm's sacct, whatever scontrol shows
    timed_out = ran(43, "late", TIMEOUT, reason="TimeLimit")
    assert job_records(timed_out, [], NOW, "anchor")[0].reason == "TimeLimit"


def test_pending_job_is_listed_without_nodes():
    (head,) = job_records(job(41, "wait", JobState.PENDING), [], NOW, "anchor")
    assert (head.state, head.nodes, head.elapsed, head.start_time) == ("PENDING", "", 0, 0)


def test_job_being_cancelled_is_already_cancelled_while_its_script_still_runs():
    killing = ran(
        42,
        "kill",
        JobState.COMPLETING,
        kill_event=JobEvent.CANCEL,
        cancelled_by=1000,
        start_time=NOW - 10,
        end_time=NOW - 2,
    )
    assert accounted_state(killing) is CANCELLED
    head, batch = job_records(killing, [], NOW, "anchor")
    assert (head.state, head.cancelled_by, head.elapsed) == ("CANCELLED", 1000, 8)
    assert (batch.state, batch.end_time) == ("RUNNING", 0)


def test_step_left_running_when_its_job_was_cancelled_ends_cancelled():
    cancelled = ran(43, "j", CANCELLED, cancelled_by=0, exit_signal=15, end_time=T0 + 20)
    left = step(43, (("n1", 1, 0),), state=JobState.RUNNING, end_time=0.0)
    records = job_records(cancelled, [left], NOW, "anchor")
    assert (records[2].state, records[2].end_time) == ("CANCELLED", T0 + 20)


def test_batch_outcomes():
    assert batch_outcome(ran(44, "x", FAILED, exit_signal=9)) == ("CANCELLED", 0, 9)
    assert batch_outcome(ran(45, "x", FAILED, exit_code=2)) == ("FAILED", 2, 0)
    assert batch_outcome(ran(46, "x", CANCELLED)) == ("CANCELLED", 0, 15)
    assert batch_outcome(ran(47, "x")) == ("COMPLETED", 0, 0)


def test_memory_and_usage_appear_when_known():
    with_mem = ran(
        48,
        "m",
        allocation=Allocation((NodeAlloc("n1", 2, 4096, (0,)),)),
        request=ResourceRequest(ntasks=2, mem_per_node=4096, gpus_per_node=1),
        max_rss=2048,
        total_cpu=1.5,
    )
    used = replace(step(48, (("n1", 2, 1),)), max_rss=1234, total_cpu=0.25)
    head, batch, one = job_records(with_mem, [used], NOW, "anchor")
    assert head.alloc_tres == "billing=2,cpu=2,gres/gpu=1,mem=4G,node=1"
    assert head.req_tres == "billing=2,cpu=2,gres/gpu=1,mem=4G,node=1"
    assert batch.alloc_tres == "cpu=2,gres/gpu=1,mem=4G,node=1"
    assert (batch.max_rss, one.max_rss) == (2048, 1234)
    assert head.total_cpu == pytest.approx(1.75)


def test_job_order_is_submit_time_then_array_tasks_by_task():
    jobs = [REFERENCE[5][0], REFERENCE[4][0], ran(3, "later", submit_time=T0 + 5)]
    ordered = sorted(jobs, key=job_order)
    assert [job_id_text(j) for j in ordered] == ["4_0", "4_1", "3"]


# --------------------------------------------------------------------------- selection


def ids(records: list[AcctRecord]) -> list[str]:
    return [r.job_id for r in records]


def test_default_window_hides_jobs_that_were_never_eligible():
    everything = records_of(REFERENCE + HIDDEN)
    since_midnight = select(everything, window(start_after=T0 - 3600), NOW)
    assert ids(since_midnight) == ids(records_of(REFERENCE))
    assert "16" in ids(select(everything, window(), NOW))  # no bounds (-j): all


def test_window_excludes_jobs_that_ended_before_it():
    everything = records_of(REFERENCE)
    assert select(everything, window(start_after=T0 + 3600), NOW) == []
    assert select(everything, window(end_before=T0 - 1), NOW) == []


def test_step_selectors_pick_single_steps():
    everything = records_of(REFERENCE)
    assert ids(select(everything, window(jobs=["5.batch"]), NOW)) == ["5.batch"]
    assert ids(select(everything, window(jobs=["5.0", "2"]), NOW)) == ["2", "2.batch", "5.0"]
    assert ids(select(everything, window(jobs=["8_2"]), NOW)) == ["8_2", "8_2.batch"]
    assert ids(select(everything, window(jobs=["8_3.batch"]), NOW)) == ["8_3.batch"]
    assert ids(select(everything, window(jobs=["9"]), NOW)) == ["8_0", "8_0.batch"]
    assert select(everything, window(jobs=["999"]), NOW) == []


def test_task_of_a_pending_array_record_selects_it():
    records = records_of(HIDDEN)
    assert ids(select(records, window(jobs=["19_2"]), NOW)) == ["19_[0-3%2]"]
    assert select(records, window(jobs=["19_7"]), NOW) == []


def test_states_match_on_the_job_and_take_their_steps_along():
    everything = records_of(REFERENCE)
    failed = select(everything, window(states=["f"]), NOW)
    assert ids(failed) == ["21", "21.batch", "22", "23", "28", "29", "29.0", "30", "30.0"]
    assert ids(select(everything, window(states=["TO", "nf"]), NOW)) == ["1", "1.batch"]


def test_states_in_a_window():
    everything = records_of(REFERENCE) + job_records(
        ran(50, "live", JobState.RUNNING, start_time=NOW - 5), [], NOW, "anchor"
    )
    running_now = select(everything, window(states=["R"], start_after=NOW), NOW)
    assert ids(running_now) == ["50", "50.batch"]
    completed_since = select(everything, window(states=["CD"], start_after=T0), NOW)
    assert "2" in ids(completed_since) and "50" not in ids(completed_since)
    assert select(everything, window(states=["CD"], start_after=NOW), NOW) == []


def test_users_partitions_and_allocations_only():
    everything = records_of(REFERENCE)
    assert ids(select(everything, window(partitions=["debug"]), NOW)) == ["26"]
    assert select(everything, window(users=["nobody"]), NOW) == []
    assert len(select(everything, window(users=["0"]), NOW)) == len(everything)
    assert len(select(everything, window(users=["root"], jobs_only=True), NOW)) == 28


@pytest.mark.parametrize(
    ("text", "selector"),
    [
        ("123", JobSelector(123)),
        ("123_4", JobSelector(123, 4)),
        ("123.batch", JobSelector(123, None, "batch")),
        ("123.00", JobSelector(123, None, "0")),
        ("123_4.batch", JobSelector(123, 4, "batch")),
    ],
)
def test_parse_selector(text, selector):
    assert parse_selector(text) == selector


@pytest.mark.parametrize("text", ["", "abc", "12.x", "_4", "0", "1_", "1_a", "12.batch.0"])
def test_bad_selectors_are_rejected(text):
    with pytest.raises(InvalidRequest, match="Bad job/step specified"):
        parse_selector(text)


def test_states_take_names_and_codes_and_reject_others():
    assert parse_states(["cd", "CANCELLED", "oom", "rq"]) == [
        "COMPLETED",
        "CANCELLED",
        "OUT_OF_MEMORY",
        "REQUEUED",
    ]
    assert select(records_of(REFERENCE), window(states=["REQUEUED"]), NOW) == []
    with pytest.raises(InvalidRequest, match="unrecognized job state value BOGUS"):
        parse_states(["BOGUS"])
