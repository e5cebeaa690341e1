"""scontrol show step against real Slurm 22.05's output (cli.scontrol_steps).

GetSteps is answered with the steps real Slurm showed for job 1 (its batch
script and two srun steps) and for task 1 of array 24 (a step asking
``--gres=gpu:1``); the expected texts are what ``/usr/bin/scontrol`` printed.
"""

from __future__ import annotations

from typing import Any

import pytest

from cli import common, scontrol
from minislurm import units
from minislurm.stepids import BATCH_STEP
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

START = units.parse_timestamp("2026-12-01T21:40:23")
ARRAY_START = units.parse_timestamp("2026-12-01T21:44:08")

BATCH_TEXT = """\
StepId=1.batch UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED
   State=RUNNING Partition=gpu NodeList=n1
   Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)
   TRES=(null)
   ResvPorts=(null)
   CPUFreqReq=Default
   SrunHost:Pid=(null):0

"""
STEP_0_TEXT = """\
StepId=1.0 UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED
   State=RUNNING Partition=gpu NodeList=n1
   Nodes=1 CPUs=3 Tasks=1 Name=stepb Network=(null)
   TRES=cpu=3,mem=0,node=1
   ResvPorts=(null)
   CPUFreqReq=Default Dist=Cyclic
   SrunHost:Pid=n1:6621

"""
STEP_1_TEXT = """\
StepId=1.1 UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED
   State=RUNNING Partition=gpu NodeList=n1
   Nodes=1 CPUs=3 Tasks=2 Name=stepa Network=(null)
   TRES=cpu=3,mem=0,node=1
   ResvPorts=(null)
   CPUFreqReq=Default Dist=Block
   SrunHost:Pid=n1:6620

"""
ONE_LINERS = (
    "StepId=1.batch UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED State=RUNNING "
    "Partition=gpu NodeList=n1 Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null) TRES=(null) "
    "ResvPorts=(null) CPUFreqReq=Default SrunHost:Pid=(null):0\n"
    "StepId=1.0 UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED State=RUNNING "
    "Partition=gpu NodeList=n1 Nodes=1 CPUs=3 Tasks=1 Name=stepb Network=(null) "
    "TRES=cpu=3,mem=0,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Cyclic "
    "SrunHost:Pid=n1:6621\n"
    "StepId=1.1 UserId=0 StartTime=2026-12-01T21:40:23 TimeLimit=UNLIMITED State=RUNNING "
    "Partition=gpu NodeList=n1 Nodes=1 CPUs=3 Tasks=2 Name=stepa Network=(null) "
    "TRES=cpu=3,mem=0,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Block "
    "SrunHost:Pid=n1:6620\n"
)
GPU_STEP_TEXT = """\
StepId=24_1.0 UserId=0 StartTime=2026-12-01T21:44:08 TimeLimit=UNLIMITED
   State=RUNNING Partition=gpu NodeList=n1
   Nodes=1 CPUs=4 Tasks=2 Name=gstep Network=(null)
   TRES=cpu=4,gres/gpu=1,mem=0,node=1
   ResvPorts=(null)
   CPUFreqReq=Default Dist=Block
   SrunHost:Pid=n1:15704
   TresPerNode=gres:gpu:1

"""


def step(job_id: int, step_id: int, name: str, **fields: Any) -> dict[str, Any]:
    base = {
        "job_id": job_id,
        "step_id": step_id,
        "name": name,
        "state": "RUNNING",
        "ntasks": 1,
        "nodelist": "n1",
        "start_time": START,
        "uid": 0,
        "partition": "gpu",
        "time_limit": units.INFINITE,
    }
    return {**base, **fields}


JOB_1 = [
    step(1, BATCH_STEP, "batch"),
    step(1, 0, "stepb", num_cpus=3, tres="cpu=3,mem=0,node=1", distribution="cyclic",
         srun_host="n1", srun_pid=6621),
    step(1, 1, "stepa", ntasks=2, num_cpus=3, tres="cpu=3,mem=0,node=1", distribution="block",
         srun_host="n1", srun_pid=6620),
]  # fmt: skip
ARRAY_24 = [
    step(26, 0, "gstep", array_job_id=24, array_task_id=1, ntasks=2, num_cpus=4,
         tres="cpu=4,gres/gpu=1,mem=0,node=1", distribution="block", srun_host="n1",
         srun_pid=15704, tres_per_node="gres:gpu:1", start_time=ARRAY_START),
]  # fmt: skip


class FakeController:
    """GetSteps ``running``: the steps of a known job (NOT_FOUND for another), or all."""

    def __init__(self) -> None:
        self.steps = [*JOB_1, *ARRAY_24]
        self.requests: list[dict[str, Any]] = []

    def __call__(self, method: str, **request: Any) -> Message:
        assert method == "GetSteps" and request["running"]
        self.requests.append(request)
        job_id = request.get("job_id", 0)
        steps = [s for s in self.steps if job_id in (0, s["job_id"], s.get("array_job_id"))]
        if job_id and job_id not in (5, 1, 24, 26):  # 5: a finished job the controller remembers
            raise RpcError("NOT_FOUND", "Invalid job id specified")
        return Message("minislurm.v1.GetStepsReply", {"steps": steps, "now": START})


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> FakeController:
    fake = FakeController()
    monkeypatch.setattr(common, "call", fake)
    return fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = scontrol.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


@pytest.mark.parametrize(
    ("argv", "out"),
    [
        (["show", "step", "1"], BATCH_TEXT + STEP_0_TEXT + STEP_1_TEXT),
        (["show", "step", "1.0"], STEP_0_TEXT),
        (["show", "steps", "1.0"], STEP_0_TEXT),
        (["show", "st", "1.1"], STEP_1_TEXT),
        (["show", "step", "1.batch"], STEP_0_TEXT),  # as Slurm reads it: step 0
        (["show", "step", "1.abc"], STEP_0_TEXT),
        (["-d", "show", "step", "1.0"], STEP_0_TEXT),
        (["-o", "show", "step", "1"], ONE_LINERS),
        (["show", "step", "-o", "1.1"], ONE_LINERS.splitlines(keepends=True)[2]),
        (["show", "step", "24_1"], GPU_STEP_TEXT),
        (["show", "step", "26.0"], GPU_STEP_TEXT),
    ],
)
def test_steps_print_as_real_scontrol(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], out: str
) -> None:
    assert run(argv, capsys) == (out, "", 0)


def test_without_an_id_every_running_step_is_shown(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, status = run(["show", "step"], capsys)
    assert (out, status) == (BATCH_TEXT + STEP_0_TEXT + STEP_1_TEXT + GPU_STEP_TEXT, 0)
    assert controller.requests == [{"job_id": 0, "running": True}]
    controller.steps = []
    assert run(["show", "step"], capsys) == ("No job steps in the system\n", "", 0)


@pytest.mark.parametrize(
    ("argv", "out", "err"),
    [
        (["show", "step", "1.7"], "Job step 1.7 not found\n", ""),
        (["show", "step", "5"], "Job step 5. not found\n", ""),
        (["show", "step", "5.0"], "Job step 5.0 not found\n", ""),
        (["show", "step", "1_2"], "Job step 1_2. not found\n", ""),
        (["show", "step", "99"], "", "slurm_get_job_steps error: Invalid job id specified\n"),
        (["show", "step", "99.0"], "", "slurm_get_job_steps error: Invalid job id specified\n"),
    ],
)
def test_missing_steps_answer_as_real_scontrol(
    controller: FakeController,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    out: str,
    err: str,
) -> None:
    assert run(argv, capsys) == (out, err, 1)
