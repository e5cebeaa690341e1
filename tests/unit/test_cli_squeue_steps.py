"""squeue -s against real Slurm 22.05's output (cli.squeue_steps).

The controller is replaced by a function that answers GetSteps with the
steps real Slurm showed: job 1 (``-N2 -n4``) running ``srun -n2 -N1 -J
stepa`` and ``srun -n1 -N1 --overlap -J stepb`` beside its batch script,
four seconds after they started. The expected texts are what
``/usr/bin/squeue`` printed for the same commands.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from cli import common, squeue
from minislurm import units
from minislurm.stepids import BATCH_STEP
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

START = units.parse_timestamp("2026-12-01T21:40:23")
NOW = START + 4
HEADER = "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
STEP_0 = "            1.0    stepb       gpu     root      0:04 n1\n"
STEP_1 = "            1.1    stepa       gpu     root      0:04 n1\n"
BATCH = "        1.batch    batch       gpu     root      0:04 n1\n"


def step(step_id: int, name: str, **fields: Any) -> dict[str, Any]:
    base = {
        "job_id": 1,
        "step_id": step_id,
        "name": name,
        "state": "RUNNING",
        "ntasks": 1,
        "nodelist": "n1",
        "start_time": START,
        "uid": 0,
        "partition": "gpu",
        "time_limit": units.INFINITE,
        "num_cpus": 3,
        "distribution": "cyclic",
    }
    return {**base, **fields}


# In the controller's order: the batch step first, then the srun steps.
STEPS = [
    step(BATCH_STEP, "batch", num_cpus=0),
    step(0, "stepb", srun_host="n1", srun_pid=6621),
    step(1, "stepa", ntasks=2, distribution="block", srun_host="n1", srun_pid=6620),
]


class FakeController:
    """Answers GetSteps ``running`` with ``steps``."""

    def __init__(self) -> None:
        self.steps = STEPS
        self.requests: list[dict[str, Any]] = []

    def __call__(self, method: str, **request: Any) -> Message:
        assert method == "GetSteps"
        self.requests.append(request)
        reply = {"steps": self.steps, "now": NOW, "cluster": "anchor"}
        return Message("minislurm.v1.GetStepsReply", reply)


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> FakeController:
    fake = FakeController()
    monkeypatch.setattr(common, "call", fake)
    return fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = squeue.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


@pytest.mark.parametrize(
    ("argv", "lines"),
    [
        (["-s"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["--steps"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["-s", "-h"], [STEP_0, STEP_1, BATCH]),
        (["--steps=1.0"], [HEADER, STEP_0]),
        (["-s", "1.0,1.batch"], [HEADER, STEP_0]),  # "batch" reads as step 0, as in Slurm
        (["-s", "1.x"], [HEADER, STEP_0]),
        (["-s", "1.5"], [HEADER]),
        (["-s", "99.0"], [HEADER]),
        (["-s", "-j", "1"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["-s", "-j", "999999"], [HEADER]),
        (["-s", "-p", "debug"], [HEADER]),
        (["-s", "-p", "gpu,debug"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["-s", "-w", "n2"], [HEADER]),
        (["-s", "-t", "PD"], [HEADER, STEP_0, STEP_1, BATCH]),  # states do not filter steps
        (["-s", "-n", "nosuch"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["-s", "-A", "nosuch"], [HEADER, STEP_0, STEP_1, BATCH]),
        (["-s", "-u", "nobody"], [HEADER]),
        (["-s", "-S", "-i"], [HEADER, BATCH, STEP_1, STEP_0]),
        (["-s", "-S", "M"], [HEADER, BATCH, STEP_0, STEP_1]),  # equal: the controller's order
        (["-s", "-S", "t"], [HEADER, BATCH, STEP_0, STEP_1]),  # not a step key: ignored
    ],
)
def test_lists_filters_and_sorts_steps_as_real_squeue(
    controller: FakeController,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    lines: list[str],
) -> None:
    assert run(argv, capsys) == ("".join(lines), "", 0)
    assert controller.requests == [{"running": True}]


def test_long_adds_the_date_line(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-s", "-l"], capsys)
    date, rest = out.split("\n", 1)
    assert re.fullmatch(r"\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}", date)
    assert rest == HEADER + STEP_0 + STEP_1 + BATCH
    assert (err, status) == ("", 0)


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["-s", "abc"], "squeue: error: Invalid job_step id: abc.??\n"),
        (["-s", "1"], "squeue: error: Invalid job_step id: 1.??\n"),
        (["-s", "1.-1"], "squeue: error: Invalid job_step id: 1.-1\n"),
        (["-j", "-s"], "squeue: error: Incompatible options --jobs and --steps\n"),
    ],
)
def test_bad_step_lists_are_refused_like_real_squeue(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert controller.requests == []


def test_an_unknown_user_is_reported_and_matches_nothing(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-s", "-u", "nosuchuser"], capsys) == (
        HEADER,
        "squeue: error: Invalid user: nosuchuser\n\n",
        0,
    )


def test_step_format_codes_match_real_squeue(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-s", "1.0", "-o", "%A|%b|%i|%j|%l|%M|%N|%P|%S|%U|%u|%t|%5t|x"], capsys)
    assert out == (
        "TASKS|TRES_PER_JOB|STEPID|NAME|TIME_LIMIT|TIME|NODELIST|PARTITION|START_TIME|UID|USER"
        "|%t|%5t|x\n"
        "1|(null)|1.0|stepb|UNLIMITED|0:04|n1|gpu|2026-12-01T21:40:23|0|root|%t|%5t|x\n"
    )
    assert err == "squeue: error: Invalid job step format specification: t\n" * 2
    assert status == 0
    out, _, _ = run(["-s", "1.0", "-o", "hdr %.20i %10j"], capsys)
    assert out == "hdr               STEPID NAME      \nhdr                  1.0 stepb     \n"


def test_all_prints_every_step_code_bar_separated(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, _ = run(["-s", "1.0", "-o", "%all"], capsys)
    assert out == (
        "TRES_PER_JOB|STEPID|NAME|TIME_LIMIT|USER|TASKS|TIME|NODELIST|PARTITION|START_TIME|UID|\n"
        "(null)|1.0|stepb|UNLIMITED|root|1|0:04|n1|gpu|2026-12-01T21:40:23|0|\n"
    )
    assert err == ""


LONG_NAMES = (
    "cluster,container,numtasks,gres,stepid,stepname,timelimit,timeused,nodes,partition,"
    "starttime,userid,username,arrayjobid,arraytaskid,jobid,network,numcpus,cpufreq,resvports,"
    "stepstate,cpus-per-tres,mem-per-tres,tres-bind,tres-freq,tres-per-job,tres-per-step,"
    "tres-per-node,tres-per-socket,tres-per-task,bogus"
)


def test_long_format_names_match_real_squeue(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-s", "1.0,1.1", "-O", LONG_NAMES], capsys)
    header, first, second = out.splitlines()
    assert header.split() == [
        "CLUSTER", "CONTAINER", "TASKS", "TRES_PER_JOB", "STEPID", "NAME", "TIME_LIMIT", "TIME",
        "NODELIST", "PARTITION", "START_TIME", "UID", "USER", "ARRAY_JOB_ID", "ARRAY_TASK_ID",
        "JOB_ID", "NETWORK", "NUM_CPUS", "CPU_FREQ", "RESERVED_PORTS", "STATE", "CPUS_PER_TRES",
        "MEM_PER_TRES", "TRES_BIND", "TRES_FREQ", "TRES_PER_STEP", "TRES_PER_STEP",
        "TRES_PER_JOB", "TRES_PER_SOCKET", "TRES_PER_TASK",
    ]  # fmt: skip
    assert first == (
        "anchor              (null)              1                   (null)              "
        "1.0                 stepb               UNLIMITED           0:04                "
        "n1                  gpu                 2026-12-01T21:40:23 0                   "
        "root                0                   N/A                 1                   "
        "(null)              3                   Unknown-Unknown:Unkn(null)              "
        "RUNNING             (null)              (null)              (null)              "
        "(null)              (null)              (null)              (null)              "
        "(null)              (null)              "
    )
    assert second.split()[2] == "2" and second.split()[4] == "1.1"
    assert (err, status) == ("squeue: error: Invalid job step format specification: bogus\n", 0)
    out, _, _ = run(["-s", "1.0", "-O", "stepid:5,stepname:.12,numtasks"], capsys)
    assert out == "STEPI        NAMETASKS               \n1.0         stepb1                   \n"


def test_array_task_steps_are_named_by_task_and_sort_by_raw_job_id(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    task = {"array_job_id": 24, "partition": "gpu"}
    controller.steps = [
        step(BATCH_STEP, "batch", job_id=26, array_task_id=1, num_cpus=0, **task),
        step(0, "gstep", job_id=26, array_task_id=1, ntasks=2, tres_per_node="gres:gpu:1", **task),
        step(BATCH_STEP, "batch", job_id=24, array_task_id=2, num_cpus=0, **task),
        step(0, "gstep", job_id=24, array_task_id=2, ntasks=2, tres_per_node="gres:gpu:1", **task),
    ]
    out, _, _ = run(["-s", "-o", "%i %b", "-h"], capsys)
    assert out == "24_2.0 gres:gpu:1\n24_2.batch (null)\n24_1.0 gres:gpu:1\n24_1.batch (null)\n"
    out, _, _ = run(["-s", "24_1.0", "-O", "stepid,arrayjobid,arraytaskid,jobid,cpufreq"], capsys)
    assert out.splitlines()[1].split() == ["24_1.0", "24", "1", "26", "Unknown-Unknown:Unkn"]
    out, _, _ = run(["-s", "-j", "24_2", "-h", "-o", "%i"], capsys)
    assert out == "24_2.0\n24_2.batch\n"
    out, _, _ = run(["-s", "24.batch", "-h", "-o", "%i"], capsys)  # 24.0: the array's tasks
    assert out == "24_2.0\n24_1.0\n"


def test_controller_errors_are_slurm_get_job_steps_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def down(method: str, **request: Any) -> Message:
        raise RpcError("UNAVAILABLE", "refused")

    monkeypatch.setattr(common, "call", down)
    assert run(["-s"], capsys) == (
        "",
        "slurm_get_job_steps error: Unable to contact slurm controller (connect failure)\n",
        1,
    )
