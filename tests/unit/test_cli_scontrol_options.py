"""scontrol show job shows the options a job was accepted with, as Slurm 22.05 shows them.

The expected lines are those real Slurm printed for jobs submitted with the
same options (``sbatch --hold --time-min=5 ...`` on the reference cluster).
"""

from __future__ import annotations

import pytest
from test_cli_scontrol import job

from cli import scontrol_show as show
from minislurm.jobopts import parse_switches


def shown(**options: str) -> list[str]:
    record = job(7, "wrap", "PENDING", options=options, **_fields(options))
    return [line.strip() for line in show.job_text(record).splitlines()]


def _fields(options: dict[str, str]) -> dict[str, object]:
    """The JobInfo fields the controller sets from these options (max_switch_wait=300)."""
    fields: dict[str, object] = {}
    if "cpus-per-gpu" in options or "mem-per-gpu" in options:
        fields["gpus"] = 2
    if "switches" in options:
        fields["req_switch"], fields["wait4switch"] = parse_switches(options["switches"], 300)
    return fields


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({}, "RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A"),
        ({"time-min": "5"}, "RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=00:05:00"),
        ({"delay-boot": "3"}, "Features=(null) DelayBoot=00:03:00"),
        ({"constraint": ""}, "Features= DelayBoot=00:00:00"),
        ({"mincpus": "2"}, "MinCPUsNode=2 MinMemoryNode=0 MinTmpDiskNode=0"),
        ({"network": "n"}, "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=n"),
        ({"contiguous": "1"}, "OverSubscribe=OK Contiguous=1 Licenses=(null) Network=(null)"),
        ({"oversubscribe": "1"}, "OverSubscribe=YES Contiguous=0 Licenses=(null) Network=(null)"),
        ({"exclusive": "user"}, "OverSubscribe=USER Contiguous=0 Licenses=(null) Network=(null)"),
        ({"reboot": "1"}, "OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)"),
        ({"reboot": "1"}, "Requeue=1 Restarts=0 BatchFlag=1 Reboot=1 ExitCode=0:0"),
        ({"mcs-label": "m"}, "UserId=root(0) GroupId=root(0) MCS_label=m"),
        (
            {"cores-per-socket": "2"},
            "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:2:*",
        ),
        (
            {"hint": "nomultithread"},
            "NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:1",
        ),
        ({"ntasks-per-core": "1"}, "Socks/Node=* NtasksPerN:B:S:C=0:0:*:1 CoreSpec=*"),
        ({"ntasks-per-socket": "1"}, "Socks/Node=* NtasksPerN:B:S:C=0:0:1:* CoreSpec=*"),
        ({"sockets-per-node": "1"}, "Socks/Node=1 NtasksPerN:B:S:C=0:0:*:* CoreSpec=*"),
        ({"cluster-constraint": "a"}, "ClusterFeatures=a"),
        ({"switches": "2@1:00"}, "Switches=2@00:01:00"),
        ({"switches": "1@10"}, "Switches=1@00:05:00"),
        ({"switches": "1@0:45"}, "Switches=1@00:00:45"),
        ({"switches": "1@xyz"}, "Switches=1@00:05:00"),
        ({"bb": "abc"}, "BurstBuffer=abc"),
        (
            {"cpu-freq": "low-high:performance"},
            "CPU_min_freq=Low CPU_max_freq=High Governor=Performance",
        ),
        ({"cpu-freq": "high"}, "CPU_max_freq=High"),
        ({"spread-job": "1"}, "SpreadJob=Yes"),
        ({"gres-flags": "enforce-binding", "spread-job": "1"}, "GresEnforceBind=YesSpreadJob=Yes"),
        ({"gpu-bind": "closest"}, "TresBind=gpu:closest"),
        ({"gpu-freq": "low,memory=low"}, "TresFreq=gpu:low,memory=low"),
        ({"cpus-per-gpu": "2"}, "CpusPerTres=gres:gpu:2"),
        ({"mem-per-gpu": "100"}, "MemPerTres=gres:gpu:100"),
        ({"ntasks-per-gpu": "2"}, "NtasksPerTRES=2"),
        ({"container": "/c"}, "Container=/c"),
    ],
)
def test_an_option_shows_in_the_line_slurm_shows_it_in(options: dict[str, str], line: str) -> None:
    assert line in shown(**options)


def test_the_lines_of_options_come_in_slurms_order() -> None:
    lines = shown(
        **{
            "switches": "1",
            "bb": "x",
            "cpu-freq": "high",
            "gres-flags": "enforce-binding",
            "spread-job": "1",
            "gpu-bind": "closest",
            "container": "/c",
        }
    )
    tail = lines[lines.index("StdOut=/cluster/work/slurm-7.out") + 1 :]
    assert tail[:7] == [
        "Switches=1@00:05:00",
        "BurstBuffer=x",
        "CPU_max_freq=High",
        "Power=",
        "GresEnforceBind=YesSpreadJob=Yes",
        "TresBind=gpu:closest",
        "Container=/c",
    ]
