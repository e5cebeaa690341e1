"""Tests of ctld.jobs: validating submissions as Slurm does, and every job transition.

The cluster is the reference's (../shared/reference/outputs/INDEX.md): nodes
n1 and n2 with 8 CPUs, 8000 MiB and 8 GPUs each; partitions gpu (default)
and debug (MaxTime=60); plus "short" (DefaultTime=10) and a CPU-only "cpu".
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctld.intents import Terminate
from ctld.jobs import (
    NOT_AVAILABLE,
    begin_kill,
    build_job,
    cancel_pending,
    check_satisfiable,
    ended,
    node_failed,
    resolve_request,
    start,
    warning_time,
)
from ctld.state import ClusterState
from minislurm.config import PartitionConfig, parse_scheduler_parameters
from minislurm.errors import InvalidRequest, InvalidTransition
from minislurm.model import (
    HOLD_NONE,
    HOLD_USER,
    Allocation,
    Job,
    Node,
    NodeAlloc,
    ResourceRequest,
    time_limit_end,
)
from minislurm.requests import Submission
from minislurm.states import KILL_EVENTS, JobEvent, JobState, kill_name
from minislurm.units import INFINITE
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb

NOW = 1_800_000_000.0
GRES_TYPES = ("gpu",)
MEM_MESSAGE = f"Memory specification can not be satisfied\n{NOT_AVAILABLE}"


def cluster() -> ClusterState:
    nodes = [
        Node(name=n, cpus=8, real_memory=8000, gpus=tuple(range(8)), partitions=("gpu", "debug"))
        for n in ("n1", "n2")
    ]
    nodes.append(Node(name="c1", cpus=4, real_memory=4000, gpus=(), partitions=("cpu",)))
    partitions = [
        PartitionConfig("gpu", ("n1", "n2"), default=True),
        PartitionConfig("debug", ("n1", "n2"), max_time=60),
        PartitionConfig("short", ("n1", "n2"), max_time=60, default_time=10),
        PartitionConfig("cpu", ("c1",)),
        PartitionConfig("closed", ("n1",), state="INACTIVE"),
        PartitionConfig("drained", ("n1",), state="DRAIN"),
        PartitionConfig("down", ("n1",), state="DOWN"),
    ]
    return ClusterState(nodes, partitions)


def spec(**fields: object) -> Submission:
    """A valid batch submission (sbatch --wrap=true as root), changed by ``fields``."""
    base: dict[str, object] = {
        "name": "wrap",
        "script": b"#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n",
        "work_dir": "/cluster/work",
        "submit_dir": "/cluster/work",
        "uid": 0,
        "gid": 0,
        "user": "root",
        "group": "root",
        "batch": True,
        "submit_host": "vm",
    }
    base.update(fields)
    return convert.record(Submission, pb.JobSpec(**base))  # type: ignore[arg-type]


def build(state: ClusterState | None = None, **fields: object) -> Job:
    job, _ = build_job(spec(**fields), 5, NOW, state or cluster(), "gpu", GRES_TYPES)
    return job


def rejection(**fields: object) -> str:
    """The message of the InvalidRequest the submission gets; nothing may change."""
    state = cluster()
    with pytest.raises(InvalidRequest) as err:
        build_job(spec(**fields), 5, NOW, state, "gpu", GRES_TYPES)
    assert state.jobs == {}
    assert state.last_job_id == 0
    return str(err.value)


# ---------------------------------------------------------------- Slurm's rejections


def test_unknown_partition_is_rejected_with_slurms_two_lines() -> None:
    # err_unknown_partition.txt
    assert rejection(partition="nosuch").split("\n") == [
        "invalid partition specified: nosuch",
        "Invalid partition name specified",
    ]


def test_no_partition_and_no_default_is_rejected() -> None:
    with pytest.raises(InvalidRequest):
        build_job(spec(), 5, NOW, cluster(), None, GRES_TYPES)


@pytest.mark.parametrize("partition", ["closed", "drained"])
def test_inactive_or_drained_partition_takes_no_new_jobs(partition: str) -> None:
    assert rejection(partition=partition)


def test_down_partition_still_accepts_jobs() -> None:
    assert build(partition="down").partition == "down"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # err_too_many_gpus.txt, err_too_many_gpus_gpus_flag.txt
        ({"gres": "gpu:99"}, NOT_AVAILABLE),
        ({"gpus": 99}, NOT_AVAILABLE),
        ({"gres": "gpu:9"}, NOT_AVAILABLE),
        ({"gpus_per_node": 9}, NOT_AVAILABLE),
        ({"gpus_per_task": 9}, NOT_AVAILABLE),
        ({"gpus": 17}, NOT_AVAILABLE),
        ({"gpus_per_task": 3, "ntasks_per_node": 3}, NOT_AVAILABLE),
        ({"partition": "cpu", "gres": "gpu:1"}, NOT_AVAILABLE),
        # err_mem_too_big.txt
        ({"mem_per_node": 100 * 1024}, MEM_MESSAGE),
        ({"mem_per_node": 8001}, MEM_MESSAGE),
        ({"mem_per_cpu": 9000}, MEM_MESSAGE),
        ({"mem_per_cpu": 3000, "cpus_per_task": 3}, MEM_MESSAGE),
        ({"cpus_per_task": 9}, f"CPU count per node can not be satisfied\n{NOT_AVAILABLE}"),
        (
            {"ntasks_per_node": 5, "cpus_per_task": 2},
            f"CPU count per node can not be satisfied\n{NOT_AVAILABLE}",
        ),
        # err_gres_bad_name.txt
        ({"gres": "tpu:1"}, "Invalid generic resource (gres) specification"),
        ({"gres": "gpu:"}, "Invalid generic resource (gres) specification"),
        ({"gres": "gpu:1,tpu:1"}, "Invalid generic resource (gres) specification"),
    ],
)
def test_requests_no_node_could_ever_satisfy_are_rejected(
    fields: dict[str, object], message: str
) -> None:
    assert rejection(**fields) == message


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        # err_too_many_nodes.txt, err_too_many_cpus.txt, err_debug_time_over_max.txt: accepted,
        # they pend with PartitionConfig later
        ({"min_nodes": 3}, {"min_nodes": 3, "max_nodes": 3, "ntasks": 3}),
        ({"ntasks": 99}, {"ntasks": 99, "min_nodes": 1}),
        ({"gres": "gpu:8"}, {"gpus_per_node": 8}),
        ({"gpus": 16}, {"gpus": 16}),
        ({"mem_per_node": 8000}, {"mem_per_node": 8000}),
        # Slurm 22.05: -c 99 asks more CPUs than the partition has; it pends (PartitionConfig)
        # before any node is tried, so the CPUs per node are never found lacking.
        ({"cpus_per_task": 99}, {"cpus_per_task": 99}),
        ({"cpus_per_task": 9, "partition": "debug", "time_limit": 120}, {"cpus_per_task": 9}),
        ({"cpus_per_task": 9, "min_nodes": 3}, {"cpus_per_task": 9, "min_nodes": 3}),
    ],
)
def test_requests_that_only_exceed_the_partition_are_accepted(
    fields: dict[str, object], expected: dict[str, int]
) -> None:
    job = build(**fields)
    assert job.state is JobState.PENDING
    assert {k: getattr(job.request, k) for k in expected} == expected


@pytest.mark.parametrize(
    "fields",
    [
        # Slurm 22.05 tries no node for a held job: sbatch --hold takes these, sbatch refuses.
        {"gres": "gpu:9"},
        {"gpus": 99},
        {"gpus_per_node": 2, "gpu_type": "a100"},
        {"mem_per_node": 100 * 1024},
        {"cpus_per_task": 9},
        {"options": {"tmp": "999999"}},
        {"options": {"mincpus": "99"}},
    ],
)
def test_a_held_job_is_not_tried_against_the_nodes(fields: dict[str, object]) -> None:
    assert rejection(**fields)
    assert build(hold=True, **fields).reason == "JobHeldUser"


def test_a_held_job_still_gets_the_checks_that_need_no_node() -> None:
    message = "Invalid feature specification"
    assert rejection(hold=True, options={"constraint": "nosuch"}) == message
    assert rejection(hold=True, gres="tpu:1") == "Invalid generic resource (gres) specification"


def test_time_over_partition_max_time_is_accepted() -> None:
    job = build(partition="debug", time_limit=120)
    assert job.time_limit == 120
    assert job.partition == "debug"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"work_dir": "relative/dir"}, "Working directory must be an absolute path"),
        ({"work_dir": ""}, "Working directory must be an absolute path"),
        ({"script": b"echo hi\n"}, "This does not look like a batch script."),
        ({"name": "a\0b"}, "Invalid NUL character in job description"),
        ({"stdout": "out\0"}, "Invalid NUL character in job description"),
        ({"argv": ["ok", "b\0d"]}, "Invalid NUL character in job description"),
        ({"environment": {"A": "x\0y"}}, "Invalid NUL character in job description"),
        ({"environment": {"A\0": "x"}}, "Invalid NUL character in job description"),
        ({"environment": {"": "x"}}, "Invalid environment variable name"),
        ({"environment": {"A=B": "x"}}, "Invalid environment variable name"),
        ({"user": ""}, "Invalid user id"),
        ({"script": b"#!/bin/sh\n" + b"#" * (4 * 1024 * 1024)}, "Batch job script is too large"),
        ({"nice": -5, "uid": 1000, "user": "alice"}, "Access/permission denied"),
        ({"nice": 2147483646}, "Invalid nice value"),
        (
            {"mem_per_node": 100, "mem_per_cpu": 10},
            "--mem and --mem-per-cpu are mutually exclusive",
        ),
        ({"nodelist": "n9"}, "Invalid node name specified"),
        ({"exclude": "n[1-3]"}, "Invalid node name specified"),
        ({"nodelist": "n[1-"}, "Invalid node name specified"),
        (
            {"nodelist": "n1", "exclude": "n1"},
            "Invalid node name specified",
        ),
        ({"min_nodes": 3, "ntasks": 2}, f"can't run 2 processes on 3 nodes\n{NOT_AVAILABLE}"),
        ({"min_nodes": 4, "max_nodes": 2}, NOT_AVAILABLE),
        ({"comment": "a\0b"}, "Invalid NUL character in job description"),
        ({"mail_type": "SOMETIMES"}, "Invalid mail type specification"),
        ({"mail_type": "END,BEGIN"}, "Invalid mail type specification"),  # not normalised
        ({"open_mode": "sideways"}, "Invalid open mode specification"),
        ({"warn_signal": 99}, "Invalid signal specification"),
        ({"warn_signal": 10, "warn_time": 70000}, "Invalid signal specification"),
    ],
)
def test_malformed_submissions_are_rejected(fields: dict[str, object], message: str) -> None:
    text = rejection(**fields)
    assert message in text


def test_root_may_set_a_negative_nice() -> None:
    assert build(nice=-5).nice == -5


def test_a_non_batch_allocation_needs_no_script() -> None:
    job = build(script=b"", batch=False)
    assert job.batch is False


# ---------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, (1, 1, 1, 0, False, False)),
        ({"min_nodes": 2}, (2, 2, 2, 0, True, False)),
        ({"min_nodes": 2, "max_nodes": 4}, (2, 4, 2, 0, True, False)),
        ({"ntasks": 4}, (1, 4, 4, 0, False, True)),
        ({"ntasks": 4, "min_nodes": 2}, (2, 2, 4, 0, True, True)),
        ({"ntasks_per_node": 4}, (1, 1, 4, 4, False, True)),
        # sbatch -N2 --ntasks-per-node=4 (env_batch_N2_tpn4_gres4.txt: SLURM_NTASKS=8)
        ({"min_nodes": 2, "ntasks_per_node": 4}, (2, 2, 8, 4, True, True)),
        ({"ntasks": 6, "ntasks_per_node": 4}, (2, 2, 6, 4, False, True)),
        ({"ntasks": 8, "ntasks_per_node": 4}, (2, 2, 8, 4, False, True)),
        ({"nodelist": "n[1-2]"}, (2, 2, 2, 0, False, False)),
    ],
)
def test_resolve_request_fills_node_and_task_counts_as_slurm_does(
    fields: dict[str, object], expected: tuple[int, int, int, int, bool, bool]
) -> None:
    req = resolve_request(spec(**fields), cluster(), GRES_TYPES)
    assert (
        req.min_nodes,
        req.max_nodes,
        req.ntasks,
        req.ntasks_per_node,
        req.nodes_set,
        req.ntasks_set,
    ) == expected


@pytest.mark.parametrize(
    ("fields", "gpus_per_node"),
    [
        ({}, 0),
        ({"gres": "gpu:4"}, 4),
        ({"gres": "gpu:a100:2"}, 2),
        ({"gres": "gpu"}, 1),
        ({"gpus_per_node": 3}, 3),
        ({"gres": "gpu:4", "gpus_per_node": 2}, 4),
    ],
)
def test_resolve_request_reads_gpus_per_node_from_gres(
    fields: dict[str, object], gpus_per_node: int
) -> None:
    assert resolve_request(spec(**fields), cluster(), GRES_TYPES).gpus_per_node == gpus_per_node


def test_resolve_request_keeps_the_other_fields() -> None:
    req = resolve_request(
        spec(
            cpus_per_task=2,
            mem_per_cpu=512,
            gpus=3,
            gpus_per_task=1,
            ntasks=3,
            nodelist="n2",
            exclude="n1",
        ),
        cluster(),
        GRES_TYPES,
    )
    assert req == ResourceRequest(
        min_nodes=1,
        max_nodes=3,
        ntasks=3,
        cpus_per_task=2,
        mem_per_cpu=512,
        gpus_per_task=1,
        gpus=3,
        req_nodes=("n2",),
        exc_nodes=("n1",),
        ntasks_set=True,
        cpus_per_task_set=True,
    )


def test_resolve_request_drops_duplicate_node_names() -> None:
    req = resolve_request(spec(nodelist="n1,n2,n1"), cluster(), GRES_TYPES)
    assert req.req_nodes == ("n1", "n2")


@pytest.mark.parametrize(
    ("partition", "fields", "limit"),
    [
        ("gpu", {}, INFINITE),  # no DefaultTime, MaxTime=UNLIMITED
        ("debug", {}, 60),  # no DefaultTime: MaxTime
        ("short", {}, 10),  # DefaultTime
        ("gpu", {"time_limit": 30}, 30),
        ("short", {"time_limit": 45}, 45),
        ("gpu", {"time_limit": 0}, INFINITE),  # --time=0 is UNLIMITED
        ("debug", {"time_limit": 0}, INFINITE),
    ],
)
def test_time_limit_comes_from_the_request_or_the_partition(
    partition: str, fields: dict[str, object], limit: int
) -> None:
    assert build(partition=partition, **fields).time_limit == limit


def test_a_held_submission_waits_with_job_held_user_and_is_not_eligible() -> None:
    job = build(hold=True)
    assert (job.hold, job.reason, job.eligible_time) == (HOLD_USER, "JobHeldUser", 0.0)


def test_a_plain_submission_is_pending_eligible_now_with_reason_none() -> None:
    job = build()
    assert job.state is JobState.PENDING
    assert (job.hold, job.reason, job.eligible_time) == (HOLD_NONE, "None", NOW)
    assert (job.job_id, job.submit_time, job.partition) == (5, NOW, "gpu")


@pytest.mark.parametrize(
    ("fields", "attribute", "value"),
    [
        ({"name": ""}, "name", "sbatch"),
        ({"name": "train"}, "name", "train"),
        ({}, "qos", "normal"),
        ({"qos": "high"}, "qos", "high"),
        ({"group": "", "gid": 42}, "group", "42"),
        ({"submit_dir": ""}, "submit_dir", "/cluster/work"),
        ({"submit_dir": "/home/u"}, "submit_dir", "/home/u"),
        ({}, "requeue", True),
        ({"requeue": False}, "requeue", False),
        ({"account": "dev"}, "account", "dev"),
        ({}, "account", ""),
        ({"gres": "gpu:2"}, "gres", "gpu:2"),
        ({"stdout": "out-%j.txt"}, "stdout", "out-%j.txt"),
    ],
)
def test_build_job_records_the_submission_with_slurms_defaults(
    fields: dict[str, object], attribute: str, value: object
) -> None:
    assert getattr(build(**fields), attribute) == value


def test_build_job_returns_the_script_apart_from_the_record() -> None:
    job, script = build_job(
        spec(argv=["a", "b"], environment={"HOME": "/root"}, umask=0o22),
        5,
        NOW,
        cluster(),
        "gpu",
        GRES_TYPES,
    )
    assert script.script.startswith(b"#!/bin/sh")
    assert (script.argv, script.environment, script.umask) == (["a", "b"], {"HOME": "/root"}, 0o22)
    assert job.state is JobState.PENDING


# ---------------------------------------------------------------- check_satisfiable


def test_check_satisfiable_rejects_a_partition_without_nodes() -> None:
    with pytest.raises(InvalidRequest, match=NOT_AVAILABLE):
        check_satisfiable(ResourceRequest(), PartitionConfig("empty", ()), cluster())


def test_check_satisfiable_rejects_more_gpus_per_task_than_the_partition_has() -> None:
    req = ResourceRequest(ntasks=9, max_nodes=9, gpus_per_task=2)
    with pytest.raises(InvalidRequest, match=NOT_AVAILABLE):
        check_satisfiable(req, cluster().partitions["gpu"], cluster())


def test_check_satisfiable_counts_mem_per_cpu_for_every_task_on_the_node() -> None:
    req = ResourceRequest(ntasks=8, ntasks_per_node=8, mem_per_cpu=2000)
    with pytest.raises(InvalidRequest, match="Memory specification can not be satisfied"):
        check_satisfiable(req, cluster().partitions["gpu"], cluster())


# ---------------------------------------------------------------- transitions


ALLOC = Allocation((NodeAlloc("n1", 4, 0, (0, 1), 4),))


def pending_job(**changes: object) -> Job:
    return replace(build(), **changes)  # type: ignore[arg-type]


def running_job(**changes: object) -> Job:
    started, _ = start(build(time_limit=10), ALLOC, NOW + 5)
    return replace(started, **changes)  # type: ignore[arg-type]


def test_start_gives_a_pending_job_its_allocation() -> None:
    job, _ = start(pending_job(), ALLOC, NOW + 5)
    assert job.state is JobState.RUNNING
    assert job.allocation == ALLOC
    assert (job.start_time, job.last_sched_eval, job.reason) == (NOW + 5, NOW + 5, "None")


def test_the_options_tools_set_are_recorded() -> None:
    job = build(
        comment="rule_first",
        mail_type="END,FAIL",
        open_mode="append",
        warn_signal=12,
        warn_time=90,
        exclusive=True,
    )
    assert (job.comment, job.mail_type, job.open_mode) == ("rule_first", "END,FAIL", "append")
    assert job.mail_user == "root"  # Slurm mails the submitter unless told otherwise
    assert (job.warn_signal, job.warn_time, job.warn_batch, job.warn_sent) == (12, 90, False, False)
    assert job.request.exclusive


def test_a_warning_time_without_a_signal_is_dropped() -> None:
    job = build(warn_time=90, warn_batch=True)
    assert (job.warn_signal, job.warn_time, job.warn_batch) == (0, 0, False)


@pytest.mark.parametrize(
    ("changes", "due"),
    [
        ({"warn_signal": 10, "warn_time": 50}, NOW + 5 + 600 - 50),
        ({"warn_signal": 10, "warn_time": 900}, NOW + 5 - 300),  # due at once
        ({"warn_signal": 10, "warn_time": 50, "warn_sent": True}, float("inf")),
        ({"warn_signal": 10, "warn_time": 50, "time_limit": INFINITE}, float("inf")),
        ({}, float("inf")),
    ],
)
def test_warning_time_is_the_limit_less_the_warning(changes: dict[str, object], due: float) -> None:
    assert warning_time(running_job(**changes)) == due


def test_a_new_run_may_be_warned_again() -> None:
    job, _ = start(replace(pending_job(), warn_signal=10, warn_sent=True), ALLOC, NOW)
    assert not job.warn_sent


@pytest.mark.parametrize("state", [JobState.RUNNING, JobState.COMPLETED, JobState.CANCELLED])
def test_start_of_a_job_that_is_not_pending_raises(state: JobState) -> None:
    with pytest.raises(InvalidTransition):
        start(pending_job(state=state), ALLOC, NOW)


@pytest.mark.parametrize(
    ("exit_code", "signal", "launch_failed", "state", "reason"),
    [
        (0, 0, False, JobState.COMPLETED, "None"),
        # scontrol_show_job_failed.txt: FAILED Reason=NonZeroExitCode ExitCode=3:0
        (3, 0, False, JobState.FAILED, "NonZeroExitCode"),
        (0, 9, False, JobState.FAILED, "NonZeroExitCode"),
        (1, 0, True, JobState.FAILED, "JobLaunchFailure"),
    ],
)
def test_ended_running_job_gets_slurms_state_reason_and_exit_code(
    exit_code: int, signal: int, launch_failed: bool, state: JobState, reason: str
) -> None:
    job = ended(running_job(), exit_code, signal, NOW + 60, launch_failed)
    assert (job.state, job.reason) == (state, reason)
    assert (job.exit_code, job.exit_signal, job.end_time) == (exit_code, signal, NOW + 60)


def test_a_job_its_node_killed_for_its_memory_ends_out_of_memory() -> None:
    job = ended(running_job(), 0, 9, NOW + 60, out_of_memory=True)
    assert (job.state, job.reason, job.exit_code, job.exit_signal) == (
        JobState.OUT_OF_MEMORY,
        "OutOfMemory",
        0,
        125,  # Slurm's ExitCode of an OOM-killed job: 0:125, whatever signal killed it
    )


@pytest.mark.parametrize(
    ("outcome", "state", "reason"),
    [
        # scontrol_show_job_timeout.txt: TIMEOUT Reason=TimeLimit ExitCode=0:15
        ("TIMEOUT", JobState.TIMEOUT, "TimeLimit"),
        # scontrol_show_job_cancelled.txt: CANCELLED Reason=None
        ("CANCELLED", JobState.CANCELLED, "None"),
    ],
)
def test_a_killed_job_ends_as_what_its_kill_was_for(
    outcome: str, state: JobState, reason: str
) -> None:
    killing, _ = begin_kill(running_job(), KILL_EVENTS[outcome], NOW + 30)
    assert killing.state is JobState.COMPLETING
    job = ended(killing, 0, 15, NOW + 35)
    assert (job.state, job.reason, job.exit_code, job.exit_signal) == (state, reason, 0, 15)


@pytest.mark.parametrize(("outcome", "reason"), [("TIMEOUT", "TimeLimit"), ("CANCELLED", "None")])
def test_begin_kill_moves_a_running_job_to_completing(outcome: str, reason: str) -> None:
    job, kill = begin_kill(running_job(), KILL_EVENTS[outcome], NOW + 30)
    assert (job.state, kill_name(job.kill_event), job.reason, job.end_time) == (
        JobState.COMPLETING,
        outcome,
        reason,
        NOW + 30,
    )
    assert kill == [Terminate(job.job_id, ("n1",), outcome)]  # asked of its nodes after commit
    assert job.allocation == ALLOC  # it holds its nodes until they confirm


@pytest.mark.parametrize(
    ("job_state", "action"),
    [
        (JobState.PENDING, lambda j: ended(j, 0, 0, NOW)),
        (JobState.COMPLETED, lambda j: ended(j, 0, 0, NOW)),
        (JobState.PENDING, lambda j: begin_kill(j, JobEvent.TIME_LIMIT, NOW)),
        (JobState.COMPLETING, lambda j: begin_kill(j, JobEvent.TIME_LIMIT, NOW)),
        (JobState.COMPLETING, lambda j: cancel_pending(j, NOW)),
        (JobState.CANCELLED, lambda j: cancel_pending(j, NOW)),
        (JobState.PENDING, lambda j: node_failed(j, NOW)),
        (JobState.FAILED, lambda j: node_failed(j, NOW)),
    ],
)
def test_transitions_from_the_wrong_state_raise(job_state: JobState, action: object) -> None:
    job = running_job(state=job_state)
    with pytest.raises(InvalidTransition):
        action(job)  # type: ignore[operator]


def test_cancel_pending_ends_the_job_at_once() -> None:
    job = cancel_pending(pending_job(), NOW + 7)
    assert (job.state, job.reason, job.start_time, job.end_time) == (
        JobState.CANCELLED,
        "None",
        NOW + 7,
        NOW + 7,
    )


@pytest.mark.parametrize("reason", ["JobHeldUser", "BeginTime", "Resources"])
def test_a_cancelled_pending_job_keeps_the_reason_it_waited_for(reason: str) -> None:
    # Slurm 22.05: scontrol show job of a held job cancelled says Reason=JobHeldUser.
    assert cancel_pending(pending_job(reason=reason), NOW).reason == reason


@pytest.mark.parametrize("state", [JobState.RUNNING, JobState.COMPLETING])
def test_node_failed_ends_an_active_job_with_node_fail(state: JobState) -> None:
    job = node_failed(running_job(state=state), NOW + 9)
    assert (job.state, job.reason, job.end_time) == (JobState.NODE_FAIL, "NodeFail", NOW + 9)


@pytest.mark.parametrize(
    ("time_limit", "start_time", "end"),
    [(10, 1000.0, 1600.0), (1, 0.0, 60.0), (INFINITE, 1000.0, float("inf"))],
)
def test_time_limit_end_is_start_plus_the_limit(
    time_limit: int, start_time: float, end: float
) -> None:
    assert time_limit_end(running_job(time_limit=time_limit, start_time=start_time)) == end


def test_max_script_size_bounds_the_batch_script() -> None:
    fits = b"#!/bin/sh\n" + b"#" * 90
    build_job(spec(script=fits), 5, NOW, cluster(), "gpu", GRES_TYPES, max_script_size=100)
    with pytest.raises(InvalidRequest, match="Batch job script is too large"):
        build_job(
            spec(script=fits + b"#"), 5, NOW, cluster(), "gpu", GRES_TYPES, max_script_size=100
        )


@pytest.mark.parametrize(
    "text", ["max_script_size=x", "max_script_size=0", "max_script_size=536870913"]
)
def test_max_script_size_out_of_slurms_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="max_script_size must be a number from 1 to 536870912"):
        parse_scheduler_parameters(text)


@pytest.mark.parametrize(
    ("fields", "tres"),
    [
        # Slurm 22.05, a held job: without --mem, the partition's first node's RealMemory per node.
        ({"min_nodes": 2, "ntasks_per_node": 4}, "cpu=8,mem=16000M,node=2,billing=8"),
        ({"gres": "gpu:4"}, "cpu=1,mem=8000M,node=1,billing=1,gres/gpu=4"),
        ({"mem_per_node": 1000, "min_nodes": 2}, "cpu=2,mem=2000M,node=2,billing=2"),
        ({"mem_per_cpu": 100, "ntasks": 3}, "cpu=3,mem=300M,node=1,billing=3"),
        ({"partition": "cpu"}, "cpu=1,mem=4000M,node=1,billing=1"),
    ],
)
def test_a_pending_jobs_tres_count_the_memory_slurm_reckons(
    fields: dict[str, object], tres: str
) -> None:
    assert convert.tres_text(build(**fields)) == tres


def test_a_running_jobs_tres_count_the_memory_it_holds() -> None:
    job, _ = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    assert convert.tres_text(job) == "cpu=1,node=1,billing=1"
