"""Tests of the sacct command against real Slurm's captures (cli.sacct and its modules).

The controller is replaced by a function that answers GetAccounting from a
fixed list of AcctRecord messages written out from the reference cluster's
sacct output (filtered by ctld.accounting.filters, as the controller does); no
socket is opened. Times other than elapsed ones are not compared.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from cli import acctunits, common, sacct, sacct_fields, sacct_layout, timespec
from ctld.accounting.filters import select
from minislurm.requests import AcctQuery, AcctRecord
from minislurm.units import INFINITE
from minislurm.wire import convert
from minislurm.wire.protowire import Message, decode
from minislurm.wire.rpc import minislurm_pb2 as pb

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
T0 = 1796012754
NOW = T0 + 300
NOBODY = INFINITE  # cancelled_by: no user cancelled


def reference(name: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a capture."""
    text = (REF / name).read_text()
    out = text.split("--- stdout ---\n", 1)[1].split("--- stderr ---\n", 1)[0]
    err = text.split("--- stderr ---\n", 1)[1].split("--- exit: ", 1)[0]
    status = int(text.rsplit("--- exit: ", 1)[1].split(" ", 1)[0])
    return out, err, status


def tres(cpus: int, nodes: int, gpus: int = 0, step: bool = False) -> str:
    gres = f",gres/gpu={gpus}" if gpus else ""
    if step:
        return f"cpu={cpus}{gres},mem=0,node={nodes}"
    return f"billing={cpus},cpu={cpus}{gres},node={nodes}"


def head(
    job_id: str, raw: int, name: str, cpus: int = 1, state: str = "COMPLETED", **kw: Any
) -> pb.AcctRecord:
    """A job's line: ran on n1 unless ``nodes=""`` (never ran)."""
    nodes, nnodes, gpus = kw.pop("nodes", "n1"), kw.pop("nnodes", 1), kw.pop("gpus", 0)
    fields: dict[str, Any] = dict(
        job_id=job_id,
        job_id_raw=raw,
        name=name,
        partition="gpu",
        account="root",
        user="root",
        state=state,
        cancelled_by=NOBODY,
        nodes=nodes,
        nnodes=nnodes,
        alloc_cpus=cpus,
        req_cpus=cpus,
        alloc_tres=tres(cpus, nnodes, gpus) if nodes else "",
        req_tres=tres(cpus, nnodes, gpus),
        submit_time=T0,
        eligible_time=T0,
        start_time=T0 + 3,
        end_time=T0 + 3,
        time_limit=INFINITE,
        cluster="anchor",
        qos="normal",
        reason="None",
        work_dir="/cluster/work",
    )
    fields.update(kw)
    return pb.AcctRecord(**fields)


def steps_of(job: pb.AcctRecord, *specs: tuple[Any, ...]) -> list[pb.AcctRecord]:
    """``(step, name, state, exit, signal, cpus, nodes, nnodes, gpus)`` per step."""
    out = []
    for step, name, state, code, signal, cpus, nodes, nnodes, gpus in specs:
        record = pb.AcctRecord()
        record.CopyFrom(job)
        record.MergeFrom(
            pb.AcctRecord(job_id=f"{job.job_id}.{step}", step=step, name=name, state=state)
        )
        record.cancelled_by, record.exit_code, record.exit_signal = NOBODY, code, signal
        record.alloc_cpus = record.req_cpus = cpus
        record.nodes, record.nnodes, record.ntasks = nodes, nnodes, 1
        record.alloc_tres = tres(cpus, nnodes, gpus, step=True)
        record.derived_exit_code = record.derived_exit_signal = 0
        out.append(record)
    return out


def batch_job(job: pb.AcctRecord, state: str = "", code: int = 0, signal: int = 0):
    cpus = job.alloc_cpus if job.nnodes == 1 else job.alloc_cpus // job.nnodes
    gpus = int(sacct_fields.tres_count(job.alloc_tres, "gres/gpu") or 0) // job.nnodes
    spec = ("batch", "batch", state or job.state, code, signal, cpus, "n1", 1, gpus)
    return [job, *steps_of(job, spec)]


def cancelled(job_id: int, name: str, cpus: int = 1, nnodes: int = 1, **kw: Any):
    return head(
        str(job_id), job_id, name, cpus, "CANCELLED", cancelled_by=0, nodes="", nnodes=nnodes, **kw
    )


def records() -> list[pb.AcctRecord]:
    """The reference cluster's accounting, in sacct's order."""
    out = []
    out += batch_job(head("1", 1, "timeout", state="TIMEOUT", elapsed=87), "CANCELLED", 0, 15)
    for raw, name in ((2, "normal"), (3, "parsable")):
        out += batch_job(head(str(raw), raw, name))
    five = head("5", 5, "envjob", 8, nodes="n[1-2]", nnodes=2, gpus=8)
    out += batch_job(five) + steps_of(five, ("0", "bash", "COMPLETED", 0, 0, 8, "n[1-2]", 2, 8))
    for task, raw in ((0, 6), (1, 4)):
        out += batch_job(head(f"4_{task}", raw, "parr", array_job_id=4, array_task_id=task))
    seven = head("7", 7, "gpt", 4, gpus=4)
    out += batch_job(seven) + steps_of(seven, ("0", "bash", "COMPLETED", 0, 0, 4, "n1", 1, 4))
    for task, raw in ((0, 9), (1, 10), (2, 11), (3, 8)):
        out += batch_job(head(f"8_{task}", raw, "arr", array_job_id=8, array_task_id=task))
    twelve = head("12", 12, "bash", gpus=2)
    out += [twelve, *steps_of(twelve, ("0", "bash", "COMPLETED", 0, 0, 1, "n1", 1, 2))]
    thirteen = head("13", 13, "bash", 4, nodes="n[1-2]", nnodes=2)
    out += [thirteen, *steps_of(thirteen, ("0", "bash", "COMPLETED", 0, 0, 4, "n[1-2]", 2, 0))]
    running = head("14", 14, "running", 2, "CANCELLED", cancelled_by=0, gpus=2, elapsed=4)
    out += batch_job(running, "CANCELLED", 0, 15)
    out += batch_job(head("15", 15, "held"))
    out += [cancelled(17, "big", 2, 2, gpus=16), cancelled(18, "prio", 2, 2, gpus=16)]
    out += batch_job(head("20", 20, "ok"))
    out += batch_job(head("21", 21, "fail3", state="FAILED", exit_code=3), "FAILED", 3)
    for raw in (22, 23):
        out.append(head(str(raw), raw, "wrap", state="FAILED", exit_code=1, nodes=""))
    out += [cancelled(24, "toomanynodes", 3, 3), cancelled(25, "toomanycpus", 99)]
    out += [cancelled(26, "overmaxtime", partition="debug"), cancelled(27, "wrap")]
    out.append(head("28", 28, "bigmem", state="FAILED", exit_code=1, nodes=""))
    for raw, cpus, code in ((29, 1, 7), (30, 2, 1)):
        job = head(str(raw), raw, "bash", cpus, "FAILED", exit_code=code, derived_exit_code=code)
        out += [job, *steps_of(job, ("0", "bash", "FAILED", code, 0, cpus, "n1", 1, 0))]
    return out


class FakeController:
    """Answers GetAccounting as the controller does: ctld.accounting.filters over fixed records."""

    def __init__(self, data: list[pb.AcctRecord]) -> None:
        self.data = data
        self.requests: list[dict[str, Any]] = []

    def __call__(self, method: str, **fields: Any) -> Message:
        assert method == "GetAccounting"
        self.requests.append(fields)
        query = convert.record(AcctQuery, pb.GetAccountingRequest(**fields))
        chosen = select([convert.record(AcctRecord, r) for r in self.data], query, NOW)
        reply = pb.GetAccountingReply(records=[convert.message(r) for r in chosen], now=NOW)
        return decode("minislurm.v1.GetAccountingReply", reply.SerializeToString())


@pytest.fixture
def controller(monkeypatch):
    fake = FakeController(records())
    monkeypatch.setattr(common, "call", fake)
    monkeypatch.setattr(sacct, "clock", lambda: NOW)
    monkeypatch.setattr(sacct.os, "getuid", lambda: 0)
    return fake


def run(capsys, *argv: str) -> tuple[str, str, int]:
    status = sacct.main(list(argv))
    out, err = capsys.readouterr()
    return out, err, status


# --------------------------------------------------------------------------- the captures


@pytest.mark.parametrize(
    ("capture", "argv"),
    [
        ("sacct_default.txt", []),
        (
            "sacct_parsable2.txt",
            ["--parsable2", "-o", "JobID,JobName,State,ExitCode,Elapsed,NodeList,AllocTRES"],
        ),
        (
            "sacct_failed_job.txt",
            ["-j", "21", "--parsable2", "-o", "JobID,JobName,State,ExitCode,DerivedExitCode"],
        ),
        (
            "sacct_array.txt",
            ["-j", "8", "--parsable2", "-o", "JobID,JobIDRaw,JobName,State,ExitCode"],
        ),
        (
            "sacct_X_format.txt",
            ["-X", "-o", "JobID,JobName%12,Partition,State,ExitCode,AllocCPUS,NNodes"],
        ),
    ],
)
def test_reproduces_real_sacct(capsys, controller, capture, argv):
    assert run(capsys, *argv) == reference(capture)


def test_default_window_is_since_midnight_and_a_job_list_has_none(capsys, controller):
    run(capsys)
    today = time.localtime(NOW)
    midnight = time.mktime((today.tm_year, today.tm_mon, today.tm_mday, 0, 0, 0, 0, 0, -1))
    assert controller.requests[0]["start_after"] == int(midnight)
    run(capsys, "-j", "21")
    assert "start_after" not in controller.requests[1]
    run(capsys, "-s", "R")
    assert controller.requests[2]["start_after"] == NOW  # with states: from now


# --------------------------------------------------------------------------- tools that parse sacct


def test_submitit_query(capsys, controller):
    out, err, status = run(capsys, "-o", "JobID,State,NodeList", "--parsable2", "-j", "5,14,17")
    assert status == 0 and err == ""
    assert out.splitlines() == [
        "JobID|State|NodeList",
        "5|COMPLETED|n[1-2]",
        "5.batch|COMPLETED|n1",
        "5.0|COMPLETED|n[1-2]",
        "14|CANCELLED by 0|n1",
        "14.batch|CANCELLED|n1",
        "17|CANCELLED by 0|None assigned",
    ]


def test_parsl_query(capsys, controller):
    out, _, status = run(
        capsys, "-X", "--noheader", "--format=jobid,state%20", "--job", "'1,14,21'"
    )
    assert status == 0
    assert out == (
        "1                         TIMEOUT \n"
        "14                 CANCELLED by 0 \n"
        "21                         FAILED \n"
    )
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["1", "TIMEOUT"],
        ["14", "CANCELLED"],
        ["21", "FAILED"],
    ]


# --------------------------------------------------------------------------- options


def test_parsable_ends_lines_with_the_delimiter(capsys, controller):
    out, _, _ = run(capsys, "-p", "-j", "21", "-o", "jobid,state")
    assert out == "JobID|State|\n21|FAILED|\n21.batch|FAILED|\n"
    out, _, _ = run(capsys, "-P", "--delimiter=,", "-n", "-X", "-j", "21", "-o", "jobid,state")
    assert out == "21,FAILED\n"


def test_unknown_job_prints_nothing(capsys, controller):
    assert run(capsys, "-n", "-j", "999") == ("", "", 0)


def test_field_names_are_case_insensitive_prefixes_with_widths(capsys, controller):
    out, _, _ = run(capsys, "-X", "-j", "26", "-o", "JOBID,part%-7,elap,nnodes")
    assert out.splitlines() == [
        "JobID        Partiti    Elapsed   NNodes ",
        "------------ ------- ---------- -------- ",
        "26           debug     00:00:00        1 ",
    ]


def test_unknown_field_is_an_error(capsys, controller):
    assert run(capsys, "-o", "JobID,Bogus%5") == (
        "",
        'sacct: error: Invalid field requested: "Bogus"\n',
        1,
    )
    assert controller.requests == []


def test_bad_job_state_and_user(capsys, controller):
    assert run(capsys, "-j", "abc")[1:] == ("sacct: fatal: Bad job/step specified: abc\n", 1)
    assert run(capsys, "-s", "bogus")[1:] == (
        "sacct: fatal: unrecognized job state value 'bogus'\n",
        1,
    )
    assert run(capsys, "-u", "no-such-user-here")[1:] == (
        "sacct: error: Invalid user id: no-such-user-here\n",
        1,
    )
    assert run(capsys, "extra")[1:] == (
        "sacct: error: Unknown arguments:\nsacct: error:  extra\n",
        1,
    )


def test_job_ids_expand_array_ranges(controller):
    assert sacct.parse_jobs(["8_[0-1],5.batch", "12.0"]) == ["8_0", "8_1", "5.batch", "12.0"]


def test_states_users_times_and_partitions_reach_the_request(capsys, controller):
    run(
        capsys, "-s", "cd,F", "-u", "root", "-S", "2026-11-30T04:00", "-E", "now", "-r", "gpu,debug"
    )
    request = controller.requests[0]
    assert request["states"] == ["COMPLETED", "FAILED"]
    assert request["users"] == ["0"]
    assert request["end_before"] == NOW
    assert request["partitions"] == ["gpu", "debug"]
    assert time.localtime(request["start_after"])[:5] == (2026, 11, 30, 4, 0)


def test_a_user_sees_only_their_jobs_unless_all(capsys, controller, monkeypatch):
    monkeypatch.setattr(sacct.os, "getuid", lambda: 1000)
    run(capsys)
    run(capsys, "-a")
    run(capsys, "-j", "5")
    assert [r.get("users") for r in controller.requests] == [["1000"], None, None]


def test_client_side_filters(capsys, controller):
    out, _, _ = run(capsys, "-n", "-X", "--name=wrap,ok", "-o", "jobid")
    assert out.split() == ["20", "22", "23", "27"]
    out, _, _ = run(capsys, "-n", "-N", "n2", "-o", "jobid")
    assert out.split() == ["5", "5.batch", "5.0", "13", "13.0"]


def test_more_fields(capsys, controller):
    spec = "JobIDRaw,User,UID,Group,Cluster,QOS,Timelimit,ReqTRES,Reason,WorkDir%14,NTasks"
    out, _, _ = run(capsys, "-P", "-n", "-j", "5", "-o", spec)
    assert out.splitlines() == [
        "5|root|0|root|anchor|normal|UNLIMITED|billing=8,cpu=8,gres/gpu=8,node=2|None|/cluster/work|",
        "5.batch||||anchor||||||1",
        "5.0||||anchor||||||1",
    ]


def test_helpformat_lists_fields_four_to_a_line(capsys):
    out, _, status = run(capsys, "--helpformat")
    assert status == 0
    assert out.startswith(
        "Account             AdminComment        AllocCPUS           AllocNodes         \n"
    )
    assert "JobID               JobIDRaw            JobName" in out


def test_version_usage_and_help(capsys):
    assert run(capsys, "-V")[0].startswith("slurm 22.05.8")
    assert run(capsys, "--usage")[0] == "Usage: sacct [options]\n\tUse --help for help\n"
    assert "--starttime" in run(capsys, "--help")[0]


def test_json_nests_steps_in_their_jobs(capsys, controller):
    out, _, status = run(capsys, "--json", "-j", "14,21")
    document = json.loads(out)
    assert status == 0 and document["meta"]["Slurm"]["release"] == "22.05.8"
    first, second = document["jobs"]
    assert (first["job_id"], first["state"]["current"], first["kill_request_user"]) == (
        14,
        "CANCELLED",
        "root",
    )
    assert first["steps"][0]["exit_code"]["signal"]["signal_id"] == 15
    assert second["exit_code"] == {"status": "FAILED", "return_code": 3}
    assert {"type": "gres", "name": "gpu", "id": 1001, "count": 2} in first["tres"]["allocated"]


# --------------------------------------------------------------------------- value formats


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "00:00:00"),
        (0.123, "00:00.123"),
        (62.0, "00:01:02"),
        (61.5, "01:01.500"),
        (3723.25, "01:02:03"),
        (90000.0, "1-01:00:00"),
    ],
)
def test_total_cpu_text(seconds, text):
    assert acctunits.cpu_time_text(seconds) == text


@pytest.mark.parametrize(
    ("kib", "text"),
    [(0, "0"), (1234, "1234K"), (2048, "2M"), (1 << 20, "1G"), (2560, "2.50M"),
     (1536 << 10, "1.50G"), (143688, "143688K"), (512, "512K")],
)  # fmt: skip
def test_max_rss_text(kib, text):
    assert sacct_fields.rss_text(kib) == text


def test_exit_code_texts():
    assert sacct_fields.exit_text(3, 0) == "3:0"
    assert sacct_fields.exit_text(0, 9) == "0:9"
    assert sacct_fields.exit_text(137, 0) == "9:0"  # sacct's own quirk
    assert sacct_fields.exit_text(137, 0, quirk=False) == "137:0"


def test_fixed_cells_cut_strings_with_a_plus_but_not_numbers():
    assert sacct_layout.fixed_cell("toomanynodes", 10, sacct_fields.STR) == "toomanyno+ "
    assert sacct_layout.fixed_cell("123456789012", 8, sacct_fields.NUM) == "123456789012 "
    assert sacct_layout.fixed_cell("2026-11-30T04:26:06", 10, sacct_fields.DATE) == "2026-11-30 "
    assert sacct_layout.fixed_cell(None, -5, sacct_fields.STR) == "      "


def test_all_and_shared_widths():
    assert len(sacct_layout.parse_columns("ALL")) == len(sacct_fields.FIELDS)
    columns = sacct_layout.parse_columns("state,state%20")
    assert [c.width for c in columns] == [20, 20]  # the width lives in the field, as in Slurm


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", (2026, 11, 30, 4, 30, 54)),
        ("now-1hour", (2026, 11, 30, 3, 30, 54)),
        ("now-30minutes", (2026, 11, 30, 4, 0, 54)),
        ("now+2days", (2026, 12, 2, 4, 30, 54)),
        ("midnight", (2026, 11, 30, 0, 0, 0)),
        ("noon", (2026, 11, 30, 12, 0, 0)),
        ("teatime", (2026, 11, 30, 16, 0, 0)),
        ("tomorrow", (2026, 12, 1, 0, 0, 0)),
        ("2026-11-29", (2026, 11, 29, 0, 0, 0)),
        ("2026-11-29T13:05", (2026, 11, 29, 13, 5, 0)),
        ("2026-11-29T13:05:07", (2026, 11, 29, 13, 5, 7)),
        ("11/29", (2026, 11, 29, 0, 0, 0)),
        ("11/29/25", (2025, 11, 29, 0, 0, 0)),
        ("11/29-13:05", (2026, 11, 29, 13, 5, 0)),
        ("1129", (2026, 11, 29, 0, 0, 0)),
        ("11.29.25", (2025, 11, 29, 0, 0, 0)),
        ("13:05", (2026, 11, 30, 13, 5, 0)),
        ("1:05pm", (2026, 11, 30, 13, 5, 0)),
        ("12:00am", (2026, 11, 30, 0, 0, 0)),
    ],
)
def test_time_formats(text, expected):
    now = time.mktime((2026, 11, 30, 4, 30, 54, 0, 0, -1))
    assert time.localtime(timespec.parse_time(text, now))[:6] == expected


@pytest.mark.parametrize("text", ["abc", "2026-13-01", "25:00", "now-1fortnight", "13/40"])
def test_bad_times(text):
    with pytest.raises(ValueError, match="Invalid time specification"):
        timespec.parse_time(text, T0)


def test_bad_time_is_an_error(capsys, controller):
    # Slurm's parse_time prints it, without sacct's name.
    assert run(capsys, "-S", "yesterdayish")[1:] == (
        "Invalid time specification (pos=0): yesterdayish\n",
        1,
    )


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ("2026-13-45", 5),
        ("2026-12-45", 8),
        ("2026-12-01T25:00", 11),
        ("2026-12-01T10:61", 14),
        ("now+bogus", 3),
        ("now+5x", 4),
        ("now-", 3),
        ("12/45", 3),
        ("13/01", 0),
        ("25:00", 0),
        ("10:99", 3),
        ("tomorrowx", 8),
        ("2026-12", 0),
        ("abc", 0),
    ],
)
def test_bad_times_name_where_they_went_wrong_as_slurm_does(text, pos):
    with pytest.raises(ValueError) as err:
        timespec.parse_time(text, T0)
    assert str(err.value) == f"Invalid time specification (pos={pos}): {text}"


@pytest.mark.parametrize(
    ("ids", "err"),
    [
        ("1.abc", "sacct: fatal: Bad step specified: 1\n"),
        ("abc", "sacct: fatal: Bad job/step specified: abc\n"),
        ("-5", "sacct: fatal: Bad job/step specified: -5\n"),
        ("1_abc", "sacct: fatal: Bad job array element specified: 1\n"),
        ("1_[1-3", "sacct: fatal: Bad job array element specified: 1\n"),
        ("1_[a]", "sacct: fatal: Bad job array element specified: 1\n"),
    ],
)
def test_bad_job_ids_get_slurms_fatal_words(capsys, controller, ids, err):
    assert run(capsys, "-j", ids)[1:] == (err, 1)


def test_usage_errors_are_slurms(capsys, controller):
    assert run(capsys, "--bogus")[1:] == ("sacct: unrecognized option '--bogus'\n", 1)
    assert run(capsys, "-e", "bogus")[1:] == (
        "sacct: error: Unknown arguments:\nsacct: error:  bogus\n",
        1,
    )


@pytest.mark.parametrize(("clusters", "lines"), [("nosuch", 0), ("ANCHOR", 1), ("all", 1)])
def test_clusters_other_than_this_one_have_no_records_here(
    capsys, controller, monkeypatch, clusters, lines
):
    config = type("Config", (), {"cluster_name": "anchor"})()
    monkeypatch.setattr(common, "client_config", lambda: config)
    out, err, status = run(capsys, "-X", "-n", "-j", "14", "-M", clusters)
    assert (len(out.splitlines()), err, status) == (lines, "", 0)
