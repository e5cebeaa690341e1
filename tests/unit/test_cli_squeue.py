"""Tests of squeue against real Slurm's captures (cli.squeue, cli.squeue_fields, cli.squeue_json).

The controller is replaced by a function that answers GetJobs from a fixed
list of JobInfo messages rebuilt from the reference cluster's jobs; no socket
is opened.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from cli import common, fmt, squeue, squeue_env, squeue_json
from cli import squeue_fields as fields
from cli.opts import parse
from minislurm.units import INFINITE
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
NOW = 1796012772
TERMINAL = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT"}


def reference(name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a capture."""
    text = (REF / name).read_text()
    out = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    err = text.split("--- stderr ---\n", 1)[1].split("--- exit: ", 1)[0]
    status = int(text.rsplit("--- exit: ", 1)[1].split(" ", 1)[0])
    return out, err, status


def job(job_id: int, name: str, state: str, **fields_: Any) -> Message:
    base: dict[str, Any] = {
        "job_id": job_id,
        "name": name,
        "state": state,
        "partition": "gpu",
        "user": "root",
        "uid": 0,
        "group": "root",
        "gid": 0,
        "account": "root",
        "qos": "normal",
        "time_limit": INFINITE,
        "min_nodes": 1,
        "num_cpus": 1,
        "num_tasks": 1,
        "cpus_per_task": 1,
        "batch": True,
        "requeue": True,
        "work_dir": "/cluster/work",
        "submit_time": NOW - 10,
        "state_compact": {
            "PENDING": "PD",
            "RUNNING": "R",
            "COMPLETED": "CD",
            "CANCELLED": "CA",
            "FAILED": "F",
        }[state],
        "reason": "None",
    }
    base.update(fields_)
    return Message("minislurm.v1.JobInfo", base)


# The reference cluster's queue (squeue_default.txt), without the array job 19.
QUEUE = [
    job(
        1,
        "timeout",
        "RUNNING",
        priority=4294901759,
        run_time=15,
        nodes="n1",
        time_limit=1,
        start_time=NOW - 15,
    ),
    job(
        14,
        "running",
        "RUNNING",
        priority=4294901750,
        run_time=3,
        nodes="n1",
        time_limit=5,
        num_cpus=2,
        num_tasks=2,
        start_time=NOW - 3,
    ),
    job(15, "held", "PENDING", priority=0, reason="JobHeldUser"),
    job(16, "dep", "PENDING", priority=4294901749, reason="Dependency"),
    job(
        17,
        "big",
        "PENDING",
        priority=4294901748,
        reason="Resources",
        min_nodes=2,
        max_nodes=2,
        num_cpus=2,
        num_tasks=2,
    ),
    job(
        18,
        "prio",
        "PENDING",
        priority=4294901747,
        reason="Priority",
        min_nodes=2,
        max_nodes=2,
        num_cpus=2,
        num_tasks=2,
    ),
    job(20, "ok", "COMPLETED", priority=4294901744, nodes="n1"),
]


def without_arrays(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if "_" not in line.split()[0])


class FakeController:
    """Answers GetJobs like slurmctld: ids (NOT_FOUND when none is known), states, names."""

    def __init__(self, jobs: list[Message]) -> None:
        self.jobs = jobs
        self.requests: list[dict[str, Any]] = []

    def __call__(self, method: str, **request: Any) -> Message:
        if method == "GetNodes":
            known = [{"name": n} for n in request["names"] if n in ("n1", "n2")]
            return Message("minislurm.v1.GetNodesReply", {"nodes": known})
        assert method == "GetJobs"
        self.requests.append(request)
        jobs = self.jobs
        if request.get("job_ids"):
            jobs = [j for j in jobs if j.job_id in request["job_ids"]]
            if not jobs:
                raise RpcError("NOT_FOUND", "Invalid job id specified")
        states = request.get("states")
        if states:
            jobs = [j for j in jobs if j.state in states]
        elif not request.get("all_states"):
            jobs = [j for j in jobs if j.state not in TERMINAL]
        for key, attr in (("users", "user"), ("partitions", "partition"), ("names", "name")):
            if request.get(key):
                jobs = [j for j in jobs if getattr(j, attr) in request[key]]
        reply = {"jobs": [j.to_dict() for j in jobs], "now": NOW}
        return Message("minislurm.v1.GetJobsReply", reply)


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> FakeController:
    fake = FakeController(QUEUE)
    monkeypatch.setattr(common, "call", fake)
    return fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = squeue.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


# --------------------------------------------------------------------------- reference captures


@pytest.mark.parametrize(
    ("capture", "argv"),
    [
        ("squeue_default.txt", []),
        ("squeue_format.txt", ["-o", "%i %P %j %u %t %M %D %R"]),
        ("squeue_after_hold.txt", ["-j", "18", "-o", "%i %t %r"]),
        ("squeue_completed_job.txt", ["-j", "20"]),
        ("squeue_completed_job_t_all.txt", ["-t", "all", "-j", "20", "-o", "%i %t %T %r"]),
    ],
)
def test_output_matches_real_squeue(
    controller: FakeController,
    capsys: pytest.CaptureFixture[str],
    capture: str,
    argv: list[str],
) -> None:
    if capture == "squeue_after_hold.txt":
        controller.jobs = [
            j if j.job_id != 18 else job(18, "prio", "PENDING", reason="JobHeldAdmin")
            for j in QUEUE
        ]
    expected_out, expected_err, expected_status = reference(capture)
    assert run(argv, capsys) == (without_arrays(expected_out), expected_err, expected_status)


def test_long_output_matches_real_squeue_after_its_date_line(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    expected, _, _ = reference("squeue_long.txt")
    out, err, status = run(["-l"], capsys)
    date, rest = out.split("\n", 1)
    assert re.fullmatch(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}", date)
    assert rest == without_arrays(expected.split("\n", 1)[1])
    assert (err, status) == ("", 0)


def test_pending_reasons_sort_by_partition_then_priority(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    controller.jobs = [
        job(24, "toomanynodes", "PENDING", priority=4294901740, reason="PartitionConfig"),
        job(25, "toomanycpus", "PENDING", priority=4294901739, reason="PartitionConfig"),
        job(
            26,
            "overmaxtime",
            "PENDING",
            priority=4294901738,
            reason="PartitionConfig",
            partition="debug",
        ),
        job(27, "wrap", "PENDING", priority=4294901737, reason="Priority"),
    ]
    expected = reference("squeue_pending_reasons_accepted_bad_requests.txt")
    assert run(["-o", "%i %j %t %r", "-t", "PD"], capsys) == expected


def test_unknown_job_id_is_slurm_load_jobs_error(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-j", "999999"], capsys) == reference("err_squeue_j_999999.txt")


def test_unreachable_controller_is_slurm_load_jobs_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def down(method: str, **request: Any) -> Message:
        raise RpcError("UNAVAILABLE", "connection refused")

    monkeypatch.setattr(common, "call", down)
    out, err, status = run([], capsys)
    assert (out, status) == ("", 1)
    assert err == "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"


# --------------------------------------------------------------------------- requests


@pytest.mark.parametrize(
    ("argv", "request_"),
    [
        ([], {}),
        (["-j", "15,16"], {"job_ids": [15, 16]}),
        (["-j15"], {"job_ids": [15]}),
        (["--jobs=15"], {"job_ids": [15]}),
        (["-t", "pd,R"], {"states": ["PENDING", "RUNNING"], "all_states": False}),
        (["-t", "all"], {"states": [], "all_states": True}),
        (["-p", "gpu,debug", "-n", "dep"], {"partitions": ["gpu", "debug"], "names": ["dep"]}),
        (["-u", "root,0"], {"users": ["root", "0"]}),
        (["--start"], {"states": ["PENDING"], "all_states": False}),
    ],
)
def test_options_become_getjobs_filters(
    controller: FakeController,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    request_: dict[str, Any],
) -> None:
    run(argv, capsys)
    assert controller.requests == [request_]


def test_me_asks_for_the_callers_jobs(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["--me"], capsys)
    assert controller.requests[0]["users"] == [fmt.user_name(os.getuid())]


def test_unknown_user_is_an_error_message_but_exit_0_with_no_jobs(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-u", "no-such-user-xyz"], capsys)
    assert out == reference("squeue_completed_job.txt")[0]  # the header alone
    assert err == "squeue: error: Invalid user: no-such-user-xyz\n\n"
    assert status == 0


def test_unknown_user_beside_a_known_one_keeps_the_known_ones_jobs(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, status = run(["-u", "no-such-user-xyz,root", "-h", "-o", "%i"], capsys)
    assert (out.split(), status) == (["16", "17", "18", "15", "1", "14"], 0)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (
            ["-t", "BOGUS"],
            "squeue: error: Invalid job state specified: BOGUS\n"
            "squeue: error: Valid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,"
            "CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,"
            "COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,REQUEUED,REQUEUE_FED,REQUEUE_HOLD,"
            "REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED\n\n",
        ),
        (["-j", "abc"], "squeue: error: Invalid job id: abc\n"),
        (["-w", "n[1-"], "squeue: error: Invalid node name n]\n"),
        (["-i", "0"], "squeue: error: --iterate=0\n\n"),
        (
            ["-o", "%i", "-O", "jobid"],
            "squeue: error: -o (--format) is incompatible with -O (--Format)\n",
        ),
        (
            ["-O", "jobid", "-o", "%i"],
            "squeue: error: -O (--Format) is incompatible with -o (--format)\n",
        ),
        (
            ["-l", "-o", "%i"],
            "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry.\n",
        ),
    ],
)
def test_bad_values_fail_with_slurms_words(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert controller.requests == []


def test_invalid_sort_key_fails_after_the_header(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-S", "Z"], capsys)
    assert out == reference("squeue_completed_job.txt")[0]
    assert (err, status) == ("squeue: error: Invalid sort specification: Z\n", 1)


def test_extra_argument_prints_usage_and_fails(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-j", "15", "foo"], capsys)
    assert out.startswith("Usage: squeue")
    assert (err, status) == ("squeue: error: Unrecognized option: foo\n", 1)


def test_invalid_format_code_is_reported_and_printed_as_written(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-j", "14", "-o", "pre %i %! %Z"], capsys)
    assert out == "pre JOBID %! WORK_DIR\npre 14 %! /cluster/work\n"
    assert (err, status) == ("squeue: error: Invalid job format specification: !\n", 0)


# --------------------------------------------------------------------------- fields and sorting


def test_long_format_names_pad_and_cut_like_real_squeue(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-j", "14,17", "-O", "JobID,Name:3,State:.4,ReasonList,NumNodes:2"], capsys)
    assert out.splitlines() == [
        "JOBID               NAMSTATNODELIST(REASON)    NO",
        "17                  bigPEND(Resources)         2 ",
        "14                  runRUNNn1                  1 ",
    ]


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("%p", "0.99998474121093"),
        ("%Q", "4294901759"),
        ("%l", "1:00"),
        ("%L", "0:45"),
        ("%e", "N/A"),
        ("%b", "N/A"),
        ("%B", "n/a"),
        ("%c", "1"),
        ("%m", "0"),
        ("%h", "OK"),
        ("%z", "*:*:*"),
        ("%K", "N/A"),
        ("%E", "(null)"),
    ],
)
def test_short_codes_print_slurms_values(code: str, value: str) -> None:
    columns, _ = fmt.parse_format(code, fields.SHORT)
    assert fields.value_text(columns[0], QUEUE[0], NOW, False)[0] == value


@pytest.mark.parametrize(
    ("changes", "code", "value"),
    [
        ({"state": "RUNNING", "time_limit": INFINITE}, "%e", "NONE"),
        ({"mem_per_node": 2048}, "%m", "2G"),
        ({"mem_per_cpu": 100}, "%m", "100M"),
        ({"cpus_per_task": 2, "ntasks_per_node": 2}, "%c", "4"),
        (
            {"state": "FAILED", "reason": "NonZeroExitCode", "nodes": "n1"},
            "%R",
            "(NonZeroExitCode)",
        ),
        ({"state": "COMPLETED", "nodes": "n[1-2]"}, "%D", "2"),
        ({"tres_per_node": "gres:gpu:1"}, "%b", "gres:gpu:1"),
        ({"run_time": 2 * 86400 + 3723}, "%M", "2-01:02:03"),
    ],
)
def test_short_codes_follow_the_jobs_fields(changes: dict[str, Any], code: str, value: str) -> None:
    fields_ = {**QUEUE[0].to_dict(), **changes}
    message = Message("minislurm.v1.JobInfo", fields_)
    columns, _ = fmt.parse_format(code, fields.SHORT)
    assert fields.value_text(columns[0], message, NOW, False)[0] == value


def test_nodelist_is_not_cut_to_its_width_in_o_formats() -> None:
    columns, _ = fmt.parse_format("%.1N|%1R", fields.SHORT)
    message = job(9, "run2", "RUNNING", nodes="n[1-2]")
    line = fmt.render(columns, lambda c: fields.value_text(c, message, NOW, False))
    assert line == "n[1-2]|n"


@pytest.mark.parametrize(
    ("spec", "order"),
    [
        ("P,t,-p", [16, 17, 18, 15, 1, 14]),
        ("i", [1, 14, 15, 16, 17, 18]),
        ("-i", [18, 17, 16, 15, 14, 1]),
        ("-D,i", [17, 18, 1, 14, 15, 16]),
        ("j", [17, 16, 15, 18, 14, 1]),
        ("cluster,-M,i", [1, 14, 15, 16, 17, 18]),
    ],
)
def test_sort_keys_apply_last_to_first(spec: str, order: list[int]) -> None:
    active = [j for j in QUEUE if j.state not in TERMINAL]
    assert [j.job_id for j in fields.sort_jobs(active, spec, NOW)] == order


def test_held_jobs_of_equal_priority_list_newest_first() -> None:
    held = [job(i, "h", "PENDING", priority=0) for i in (1, 2, 3)]
    assert [j.job_id for j in fields.sort_jobs(held, fields.DEFAULT_SORT, NOW)] == [3, 2, 1]


def test_jobs_of_equal_priority_with_a_start_time_list_latest_start_then_oldest_first() -> None:
    # Slurm 22.05: jobs held after submission with --begin keep their begin time as their
    # start time and list oldest first; jobs held at submission (no start time) follow,
    # newest first.
    begin = NOW + 3600
    queue = [job(i, "h", "PENDING", priority=0, start_time=begin) for i in (4, 5)]
    queue += [job(i, "h", "PENDING", priority=0) for i in (1, 2)]
    queue.append(job(3, "h", "PENDING", priority=0, start_time=begin + 60))
    order = [j.job_id for j in fields.sort_jobs(queue, fields.DEFAULT_SORT, NOW)]
    assert order == [3, 4, 5, 2, 1]


# --------------------------------------------------------------------------- --json


def test_json_has_slurms_frame_and_the_jobs_fields(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["--json", "-j", "999999"], capsys)  # --json ignores filters
    document = json.loads(out)
    reference_doc = json.loads(reference("squeue_json.txt")[0])
    assert list(document) == ["meta", "errors", "jobs"]
    assert document["meta"] == reference_doc["meta"]
    assert [j["job_id"] for j in document["jobs"]] == [j.job_id for j in QUEUE]
    reference_keys = set(reference_doc["jobs"][0])
    assert set(document["jobs"][0]) <= reference_keys
    assert (err, status) == ("", 0)
    assert controller.requests == [{"all_states": True}]


def test_json_job_values_use_slurms_unset_forms() -> None:
    running = squeue_json.json_job(QUEUE[0])
    assert running["time_limit"] == 1
    assert running["job_state"] == "RUNNING"
    assert running["nice"] is None
    assert squeue_json.json_job(QUEUE[2])["time_limit"] is None
    text = squeue_json.json_text(Message("minislurm.v1.GetJobsReply", {"now": NOW}))
    assert '"errors": [\n  ],' in text and '"jobs": [\n  ]' in text


def test_help_and_usage_go_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert squeue.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("Usage: squeue [OPTIONS]")
    assert squeue.main(["--usage"]) == 0
    assert capsys.readouterr().out.startswith("Usage: squeue [-A account]")


def test_help_and_usage_are_slurms_own_texts(capsys: pytest.CaptureFixture[str]) -> None:
    squeue.main(["--help"])
    text = capsys.readouterr().out
    assert "comma separated list of accounts\n\t\t\t\t  to view, default is all" in text
    assert "      --array-unique              display one unique pending job array\n" in text
    assert "  -w, --nodelist=hostlist         list of nodes to view, default is \n" in text
    assert len(text.splitlines()) == 52
    squeue.main(["--usage"])
    usage = capsys.readouterr().out
    assert usage.endswith("[--federation] [--local] [--sibling]\n\t      [-ahjlrsv]\n")


def test_json_keys_follow_slurms_order() -> None:
    order = list(json.loads(reference("squeue_json.txt")[0])["jobs"][0])
    keys = list(squeue_json.json_job(QUEUE[0]))
    assert "job_resources" not in keys  # no allocation in this message
    with_nodes = job(9, "x", "RUNNING", nodes="n1", allocation=[{"node": "n1", "cpus": 2}])
    keys = list(squeue_json.json_job(with_nodes))
    assert keys == sorted(keys, key=order.index)


def test_all_prints_every_field_bar_separated(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-j", "15", "-o", "%all"], capsys)
    header, line = out.splitlines()
    assert header == (
        "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|"
        "JOBID|NAME|COMMENT|TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|"
        "USER|RESERVATION|WCKEY|EXC_NODES|NICE|S:C:T|JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|"
        "ARRAY_JOB_ID|GROUP|SOCKETS_PER_NODE|CORES_PER_SOCKET|THREADS_PER_CORE|ARRAY_TASK_ID|"
        "TIME_LEFT|TIME|NODELIST|CONTIGUOUS|PARTITION|PRIORITY|NODELIST(REASON)|START_TIME|"
        "STATE|UID|SUBMIT_TIME|LICENSES|CORE_SPEC|SCHEDNODES|WORK_DIR"
    )
    assert line.startswith("root|N/A|1|0|N/A|(null)|root|OK|15|held|(null)|UNLIMITED|0||")


# ------------------------------------------------------------------ error paths, environment


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["-w", "nosuch"], "squeue: error: Invalid node name nosuch\n"),
        (["-w", "n[1-3]"], "squeue: error: Invalid node name n3\n"),
    ],
)
def test_unknown_nodes_fail_before_any_job_is_asked_for(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert controller.requests == []


@pytest.mark.parametrize("ids", ["14.0", "14abc", "14.batch"])
def test_a_job_id_is_read_as_slurm_reads_it_up_to_its_first_non_digit(
    controller: FakeController, capsys: pytest.CaptureFixture[str], ids: str
) -> None:
    run(["-j", ids], capsys)
    assert controller.requests[0]["job_ids"] == [14]


@pytest.mark.parametrize(
    "argv", [["-j", ""], ["-L", "matlab"], ["-R", "nosuch"], ["-h", "-R", "nosuch"]]
)
def test_lists_no_job_can_match_print_the_header_alone(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    out, err, status = run(argv, capsys)
    assert (out.count("\n"), err, status) == (0 if "-h" in argv else 1, "", 0)


def test_an_empty_format_prints_an_empty_line_per_job(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["--format="], capsys)
    assert set(out.splitlines()) == {""} and len(out.splitlines()) > 1


@pytest.mark.parametrize(
    ("environ", "argv", "expected"),
    [
        ({"SQUEUE_USERS": "alice"}, [], {"user": "alice"}),
        ({"SQUEUE_USERS": "alice"}, ["-u", "bob"], {"user": "bob"}),
        ({"SQUEUE_STATES": "all", "SQUEUE_SORT": "-i"}, [], {"states": "all", "sort": "-i"}),
        ({"SQUEUE_PARTITION": "debug", "SQUEUE_ACCOUNT": "a"}, [], {"partition": "debug"}),
        ({"SQUEUE_NAMES": "x", "SQUEUE_QOS": "q"}, [], {"name": "x", "qos": "q"}),
        ({"SQUEUE_ARRAY": "", "SQUEUE_ALL": "1"}, [], {"array": True, "all": True}),
        ({"SQUEUE_FORMAT": "%i", "SQUEUE_FORMAT2": "jobid"}, [], {"env_format": "%i"}),
        ({"SQUEUE_FORMAT2": "jobid"}, [], {"env_Format": "jobid"}),
        ({"SQUEUE_FORMAT": "%i"}, ["-o", "%t"], {"format": "%t"}),
    ],
)
def test_environment_stands_for_options_the_command_line_does_not_give(
    environ: dict[str, str], argv: list[str], expected: dict[str, object]
) -> None:
    values, _ = parse(squeue.OPTIONS, argv)
    merged = squeue_env.with_environment(values, environ)
    assert {k: merged[k] for k in expected} == expected
    if argv:
        assert "env_format" not in merged


@pytest.mark.parametrize(
    ("environ", "argv", "header"),
    [
        ({"SQUEUE_FORMAT": "%i|%j"}, [], "JOBID|NAME"),
        ({"SQUEUE_FORMAT": "%i|%j"}, ["-o", "%t"], "ST"),
        ({"SQUEUE_FORMAT2": "jobid:6,name:8"}, [], "JOBID NAME    "),
        ({"SQUEUE_FORMAT2": "jobid:6", "SQUEUE_FORMAT": "%t"}, [], "ST"),
        ({"SQUEUE_FORMAT": ""}, [], ""),
    ],
)
def test_format_variables_as_the_reference_squeue_reads_them(
    controller: FakeController,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str],
    argv: list[str],
    header: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out, _, _ = run(argv, capsys)
    assert out.splitlines()[0] == header


def test_long_listing_wins_over_squeue_format(
    controller: FakeController, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQUEUE_FORMAT", "%i|%j")
    out, _, _ = run(["-l"], capsys)
    assert out.splitlines()[1].split() == [
        "JOBID",
        "PARTITION",
        "NAME",
        "USER",
        "STATE",
        "TIME",
        "TIME_LIMI",
        "NODES",
        "NODELIST(REASON)",
    ]


def test_an_arrays_pending_tasks_with_records_of_their_own_show_in_its_line(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    # Slurm 22.05, after `scontrol hold 30_2` of a pending array 30_[0-3].
    array = {"array_job_id": 30, "start_time": NOW + 3600}
    controller.jobs = [
        job(30, "wrap", "PENDING", array_tasks="0-1,3", array_throttle=2, **array),
        job(31, "wrap", "PENDING", array_task_id=2, reason="JobHeldAdmin", **array),
        job(32, "wrap", "PENDING", array_task_id=5, reason="JobHeldAdmin", **array),
        job(33, "other", "PENDING", array_task_id=6, reason="JobHeldAdmin", **array),
    ]
    out, _, _ = run(["-o", "%i %t %r"], capsys)
    assert out.splitlines()[1:] == ["30_[0-3,5] PD None,JobHeldAdmin", "30_6 PD JobHeldAdmin"]
    apart, _, _ = run(["--array-unique", "-o", "%i %r"], capsys)
    assert apart.splitlines()[1:3] == ["30_[0-1,3%2] None", "30_2 JobHeldAdmin"]
    each, _, _ = run(["-r", "-o", "%i"], capsys)
    assert each.splitlines()[1:] == ["30_0", "30_1", "30_3", "30_2", "30_5", "30_6"]


@pytest.mark.parametrize(
    ("values", "shown"),
    [({}, ["0", "0:00"]), ({"req_switch": 1, "wait4switch": 300}, ["1", "5:00"])],
)
def test_requested_switches_and_their_wait(values: dict[str, int], shown: list[str]) -> None:
    job = Message("minislurm.v1.JobInfo", {"job_id": 5, **values})
    assert [fields.LONG[name][1](job, 0) for name in ("reqswitch", "wait4switch")] == shown
