"""sstat against real Slurm 22.05's output (cli.sstat, cli.sstat_fields).

The controller is replaced by a function answering GetSteps and
GetStepStats with what real Slurm measured for job 29: ``srun -n2`` of a
Python process holding 200 MiB, on n2, beside the batch script. The
expected texts are what ``/usr/bin/sstat`` printed for those figures.
"""

from __future__ import annotations

from typing import Any

import pytest

from cli import common, sstat
from minislurm.stepids import BATCH_STEP
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.protowire import Message

# Real sstat's default output for step 29.0, and its -e list.
DEFAULT_HEADER = (
    "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode "
    "MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask   AvePages     MinCPU MinCPUNode "
    "MinCPUTask     AveCPU   NTasks AveCPUFreq ReqCPUFreqMin ReqCPUFreqMax ReqCPUFreqGov "
    "ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask  AveDiskRead MaxDiskWrite "
    "MaxDiskWriteNode MaxDiskWriteTask AveDiskWrite TRESUsageInAve TRESUsageInMax "
    "TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode TRESUsageInMinTask "
    "TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode TRESUsageOutMaxTask "
    "TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot \n"
)
DEFAULT_LINE = (
    "29.0            221372K             n2              0    221372K    218204K         n2     "
    "     1    218156K        0           n2              0          0   00:00:00         n2     "
    "     1   00:00:00        2          0       Unknown       Unknown       Unknown             "
    " 0      1685844              n2               0      1685844         1703               n2 "
    "               0         1703 cpu=00:00:00,+ cpu=00:00:00,+ cpu=n2,energy=n2,+ "
    "cpu=00:00:00,fs/d+ cpu=00:00:00,+ cpu=n2,energy=n2,+ cpu=00:00:00,fs/d+ cpu=00:00:01,+ "
    "energy=0,fs/di+ energy=0,fs/di+ energy=n2,fs/disk=+           fs/disk=0 energy=0,fs/di+ "
    "energy=n2,fs/disk=+           fs/disk=0 energy=0,fs/di+ \n"
)
PARSABLE_LINE = (
    "29.0|221372K|n2|0|221372K|218204K|n2|1|218156K|0|n2|0|0|00:00:00|n2|1|00:00:00|2|0|Unknown|"
    "Unknown|Unknown|0|1685844|n2|0|1685844|1703|n2|0|1703|"
    "cpu=00:00:00,energy=0,fs/disk=1685844,mem=218156K,pages=0,vmem=221372K|"
    "cpu=00:00:00,energy=0,fs/disk=1685844,mem=218204K,pages=0,vmem=221372K|"
    "cpu=n2,energy=n2,fs/disk=n2,mem=n2,pages=n2,vmem=n2|cpu=00:00:00,fs/disk=0,mem=1,pages=0,vmem=0|"
    "cpu=00:00:00,energy=0,fs/disk=1685844,mem=218108K,pages=0,vmem=221372K|"
    "cpu=n2,energy=n2,fs/disk=n2,mem=n2,pages=n2,vmem=n2|cpu=00:00:00,fs/disk=0,mem=0,pages=0,vmem=0|"
    "cpu=00:00:01,energy=0,fs/disk=3371688,mem=436312K,pages=0,vmem=442744K|energy=0,fs/disk=1703|"
    "energy=0,fs/disk=1703|energy=n2,fs/disk=n2|fs/disk=0|energy=0,fs/disk=1703|energy=n2,fs/disk=n2|"
    "fs/disk=0|energy=0,fs/disk=3406\n"
)
HELP_FORMAT = """\
AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       
AvePages            AveRSS              AveVMSize           ConsumedEnergy     
ConsumedEnergyRaw   JobID               MaxDiskRead         MaxDiskReadNode    
MaxDiskReadTask     MaxDiskWrite        MaxDiskWriteNode    MaxDiskWriteTask   
MaxPages            MaxPagesNode        MaxPagesTask        MaxRSS             
MaxRSSNode          MaxRSSTask          MaxVMSize           MaxVMSizeNode      
MaxVMSizeTask       MinCPU              MinCPUNode          MinCPUTask         
Nodelist            NTasks              Pids                ReqCPUFreq         
ReqCPUFreqMin       ReqCPUFreqMax       ReqCPUFreqGov       TRESUsageInAve     
TRESUsageInMax      TRESUsageInMaxNode  TRESUsageInMaxTask  TRESUsageInMin     
TRESUsageInMinNode  TRESUsageInMinTask  TRESUsageInTot      TRESUsageOutAve    
TRESUsageOutMax     TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutMin    
TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot    
"""  # noqa: W291


def task(task_id: int, rss: int, cpu: float) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "max_rss": rss,
        "max_vmem": 221372,
        "cpu": cpu,
        "disk_read": 1685844,
        "disk_write": 1703,
    }


STEPS = [
    {"job_id": 29, "step_id": BATCH_STEP, "name": "batch", "nodelist": "n2"},
    {"job_id": 29, "step_id": 0, "name": "python3", "nodelist": "n2"},
]
TASKS = [task(0, 218108, 0.6), task(1, 218204, 0.5)]
STATS = {
    (29, 0): [{"node": "n2", "pids": [16663, 16664], "tasks": TASKS}],
    (29, BATCH_STEP): [{"node": "n2", "pids": [16646, 16647], "tasks": [task(0, 13876, 0.0)]}],
}


class FakeController:
    """GetSteps (job 29's running steps; 30 is known and finished) and GetStepStats."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.denied = False

    def __call__(self, method: str, **request: Any) -> Message:
        self.calls.append((method, request))
        if method == "GetSteps":
            if request["job_id"] not in (29, 30):
                raise RpcError("NOT_FOUND", "Invalid job id specified")
            steps = STEPS if request["job_id"] == 29 else []
            return Message("minislurm.v1.GetStepsReply", {"steps": steps})
        assert method == "GetStepStats"
        if self.denied:
            raise RpcError("PERMISSION_DENIED", "Invalid user id")
        nodes = STATS.get((request["job_id"], request["step_id"]))
        if nodes is None:
            raise RpcError("NOT_FOUND", "Invalid job id specified")
        return Message("minislurm.v1.StepStatReply", {"nodes": nodes})


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> FakeController:
    fake = FakeController()
    monkeypatch.setattr(common, "call", fake)
    return fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    status = sstat.main(argv)
    captured = capsys.readouterr()
    return captured.out, captured.err, status


def test_default_fields_match_real_sstat(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, status = run(["-j", "29"], capsys)
    header, rule, line = out.splitlines(keepends=True)
    assert (header, line, err, status) == (DEFAULT_HEADER, DEFAULT_LINE, "", 0)
    assert set(rule) == {"-", " ", "\n"} and len(rule) == len(header)
    assert controller.calls == [
        ("GetSteps", {"job_id": 29, "running": True}),
        ("GetStepStats", {"job_id": 29, "step_id": 0}),  # the first srun step, not the batch
    ]


def test_parsable_lines_match_real_sstat(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-P", "-j", "29"], capsys)
    assert out.splitlines(keepends=True)[1] == PARSABLE_LINE
    out, _, _ = run(["-p", "-n", "-j", "29", "-o", "JobID,MaxRSS,AveCPU,NTasks"], capsys)
    assert out == "29.0|218204K|00:00:00|2|\n"
    out, _, _ = run(["-j", "29", "-o", "jobid,maxrss%3,maxrss,jobid%5", "-p"], capsys)
    assert out == "JobID|MaxRSS|MaxRSS|JobID|\n29.0|218204K|218204K|29.0|\n"


def test_allsteps_pidformat_and_noconvert_match_real_sstat(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = run(["-a", "-j", "29", "-o", "jobid,maxrss%20,ntasks,averss"], capsys)
    assert out == (
        "JobID                      MaxRSS   NTasks     AveRSS \n"
        "------------ -------------------- -------- ---------- \n"
        "29.batch                   13876K        1     13876K \n"
        "29.0                      218204K        2    218156K \n"
    )
    out, _, _ = run(["-i", "-j", "29"], capsys)
    assert out == (
        "JobID                    Nodelist                 Pids \n"
        "------------ -------------------- -------------------- \n"
        "29.0                           n2          16663,16664 \n"
    )
    out, _, _ = run(["-i", "-p", "-a", "-j", "29"], capsys)
    assert out == "JobID|Nodelist|Pids|\n29.batch|n2|16646,16647|\n29.0|n2|16663,16664|\n"
    out, _, _ = run(["-i", "-o", "maxrss", "-j", "29", "-n"], capsys)
    assert out == "29.0                           n2          16663,16664            \n"
    out, _, _ = run(
        ["-P", "-n", "-j", "29", "-o", "maxrss,averss,tresusageinmax", "--noconvert"], capsys
    )
    assert out == (
        "223440896|223391744|"
        "cpu=00:00:00,energy=0,fs/disk=1685844,mem=223440896,pages=0,vmem=226684928\n"
    )


def test_steps_are_chosen_as_real_sstat_chooses_them(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-n", "-o", "jobid", "-j", "29.batch"], capsys)[0] == "29.batch     \n"
    assert run(["-n", "-o", "jobid", "-j", "29.0,29.0"], capsys)[0] == "29.0         \n"
    assert run(["-n", "-o", "jobid", "29", "29.batch"], capsys)[0] == "29.0         \n"
    out, _, _ = run(["-n", "-o", "jobid", "-j", "29", "-j", "29.batch"], capsys)
    assert out == "29.0         \n29.batch     \n"


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["-j", "99999"], "sstat: error: couldn't get steps for job 99999\n"),
        (["-j", "29.5"], "sstat: error: StepId=29.5 not found running.\n"),
        (["-j", "30"], "sstat: error: No steps running for job 30\n"),
        (["-j", "30.batch"], "sstat: error: StepId=30.batch not found running.\n"),
    ],
)
def test_steps_not_running_are_reported_and_exit_0(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    out, error, status = run(argv, capsys)
    assert (out.splitlines()[0].split()[:2], error, status) == (["JobID", "MaxVMSize"], err, 0)


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        ([], "sstat: error: You didn't give me any jobs to stat.\n"),
        (["-j", "29", "-o", "bogus"], 'sstat: error: Invalid field requested: "bogus"\n'),
        (["-j", "abc"], "sstat: fatal: Bad job/step specified: abc\n"),
        (["-j", "29.x"], "sstat: fatal: Bad step specified: 29\n"),
        (["-j", "29_x.0"], "sstat: fatal: Bad job array element specified: 29\n"),
    ],
)
def test_bad_command_lines_exit_1_like_real_sstat(
    controller: FakeController, capsys: pytest.CaptureFixture[str], argv: list[str], err: str
) -> None:
    assert run(argv, capsys) == ("", err, 1)
    assert controller.calls == []


def test_another_users_step_is_invalid_user_id_per_node(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    controller.denied = True
    out, err, status = run(["-j", "29.0", "-o", "jobid,ntasks"], capsys)
    assert out == "JobID          NTasks \n------------ -------- \n"
    assert err == (
        "sstat: error: slurm_job_step_stat: there was an error with the request to n2 rc = "
        "Invalid user id\n"
        "sstat: error: problem getting step_layout for StepId=29.0: Invalid user id\n"
    )
    assert status == 0


def test_helpformat_lists_every_field_like_real_sstat(
    controller: FakeController, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["-e"], capsys) == (HELP_FORMAT, "", 0)
    out, _, status = run(["--help"], capsys)
    assert out.startswith("sstat [<OPTION>] -j <job(.stepid)>   ") and status == 0
    assert run(["--usage"], capsys) == (
        "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n",
        "",
        0,
    )
