"""The commands' error paths and input variables through the real commands.

Expected texts and exit codes are what Slurm 22.05's commands printed on
the reference cluster for the same invocations.
"""

from __future__ import annotations

import re

import pytest
from conftest import TestCluster
from helpers import Result, run_command

pytestmark = pytest.mark.timeout(120)


def run_with(cluster: TestCluster, environ: dict[str, str], *argv: str, stdin: str = "") -> Result:
    """One command with variables of its own in its environment."""
    return run_command(list(argv), {**cluster.env, **environ}, cluster.workdir, stdin or None)


@pytest.mark.parametrize(
    ("argv", "rc", "err"),
    [
        (["squeue", "-w", "nosuch"], 1, "squeue: error: Invalid node name nosuch\n"),
        (["sacct", "-S", "notadate"], 1, "Invalid time specification (pos=0): notadate\n"),
        (["sacct", "-j", "1.abc"], 1, "sacct: fatal: Bad step specified: 1\n"),
        (["sinfo", "-i", "0"], 1, "sinfo: error: Error: invalid entry for --iterate=0\n"),
        (["sprio", "-j", "abc"], 1, "sprio: error: Invalid job id: abc\n"),
        (["sshare", "-o", "bogus"], 1, 'sshare: error: Invalid field requested: "bogus"\n'),
        (["scontrol", "delete"], 1, "too few arguments for delete keyword\n"),
        (["scancel", "-t", "R", "999999"], 1, None),
        (
            ["scontrol", "-M", "nosuch", "ping"],
            1,
            "scontrol: error: No cluster 'nosuch' known by database.\n"
            "scontrol: error: 'nosuch' can't be reached now, or it is an invalid entry for "
            "--cluster.  Use 'sacctmgr list clusters' to see available clusters.\n",
        ),
    ],
)
def test_errors_match_real_slurm(
    cluster: TestCluster, argv: list[str], rc: int, err: str | None
) -> None:
    result = cluster.run(*argv)
    assert result.rc == rc, result
    if err is None:
        assert (
            result.err
            == "scancel: error: Kill job error on job id 999999: Invalid job id specified\n"
        )
    else:
        assert result.err == err


def test_squeue_and_sinfo_read_their_variables(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--hold", "-J", "envjob", "--wrap=true")
    shown = run_with(cluster, {"SQUEUE_FORMAT": "%i|%j|%t", "SQUEUE_STATES": "PD"}, "squeue", "-h")
    assert f"{job_id}|envjob|PD\n" in shown.out
    other = run_with(cluster, {"SQUEUE_USERS": "nobody"}, "squeue", "-h", "-j", str(job_id))
    assert other.out == ""
    sorted_parts = run_with(cluster, {"SINFO_SORT": "-P"}, "sinfo", "-h", "-o", "%P")
    assert sorted_parts.out.split() == ["gpu*", "debug"]
    assert run_with(cluster, {"SINFO_SORT": "P"}, "sinfo", "-h", "-o", "%P").out.split() == [
        "debug",
        "gpu*",
    ]
    cluster.run("scancel", str(job_id))


def test_slurm_time_format_shapes_every_time_printed(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--hold", "--wrap=true")
    relative = run_with(cluster, {"SLURM_TIME_FORMAT": "relative"}, "squeue", "-h", "-o", "%V")
    assert re.fullmatch(r"\d\d:\d\d:\d\d\n", relative.out.splitlines(True)[-1]), relative
    epoch = run_with(cluster, {"SLURM_TIME_FORMAT": "%s"}, "scontrol", "show", "job", str(job_id))
    assert re.search(r"SubmitTime=\d{10} ", epoch.out), epoch
    bad = run_with(cluster, {"SLURM_TIME_FORMAT": "bogus"}, "squeue", "-h", "-o", "%V")
    assert bad.err == "squeue: error: invalid SLURM_TIME_FORMAT = 'bogus'\n"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", bad.out.splitlines()[-1])
    cluster.run("scancel", str(job_id))


def test_scontrol_reads_commands_from_stdin(cluster: TestCluster) -> None:
    result = run_with(cluster, {}, "scontrol", stdin="show partition nosuch\nping\n")
    lines = result.out.splitlines()
    assert lines[:2] == ["scontrol: show partition nosuch", "Partition nosuch not found"]
    assert lines[2] == "scontrol: ping" and lines[3].endswith(" is UP")
    assert (lines[4], result.rc) == ("scontrol: ", 0)
