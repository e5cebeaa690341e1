"""Bad input: Slurm's messages and exit codes, and no change of state.

Each rejected request must leave the cluster as it was: the next accepted
job gets the very next id (rejections use up no job id).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

NOT_AVAILABLE = (
    "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"
)
REJECTED_SBATCH = [
    (
        ["-p", "nosuch", "--wrap=true"],
        1,
        "sbatch: error: invalid partition specified: nosuch\n"
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
    ),
    (
        ["--gres=gpu:99", "--wrap=true"],
        1,
        NOT_AVAILABLE,
    ),
    (
        ["--gpus=99", "--wrap=true"],
        1,
        NOT_AVAILABLE,
    ),
    (
        ["--mem=100G", "--wrap=true"],
        1,
        "sbatch: error: Memory specification can not be satisfied\n" + NOT_AVAILABLE,
    ),
    (
        ["--gres=tpu:1", "--wrap=true"],
        1,
        "sbatch: error: Invalid generic resource (gres) specification\n",
    ),
    (["--time=abc", "--wrap=true"], 255, "sbatch: error: Invalid --time specification\n"),
    (["/nonexistent/script.sh"], 1, "sbatch: error: Unable to open file /nonexistent/script.sh\n"),
    (["-N", "x", "--wrap=true"], 255, 'sbatch: error: "x" is not a valid node count\n'),
    (["--mem=lots", "--wrap=true"], 255, "sbatch: error: Invalid --mem specification\n"),
    (
        ["--bogus-option", "--wrap=true"],
        255,
        "sbatch: unrecognized option '--bogus-option'\n"
        'Try "sbatch --help" for more information\n',
    ),
    # The words and statuses of Slurm 22.05 (checked against it).
    (
        ["-N0", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Node count specification invalid\n",
    ),
    (
        ["-N", "2-1", "--wrap=true"],
        255,
        "sbatch: error: Maximum node count 1 is less than minimum node count 2\n",
    ),
    (["--gres=gpu:-1", "--wrap=true"], 1, NOT_AVAILABLE),
    (
        ["--gres=gpu:1.5", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid Trackable RESource (TRES)"
        " specification\n",
    ),
    (["--gpus-per-node=a100:1", "--wrap=true"], 1, NOT_AVAILABLE),
    (
        ["--nodelist=zz9", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid node name specified\n",
    ),
    (
        ["-w", "n1", "-x", "n1", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid node name specified\n",
    ),
    (["-x", "n[1-2]", "--wrap=true"], 1, NOT_AVAILABLE),
    (
        ["-w", "n[1-2]", "-N1", "--wrap=true"],
        1,
        "sbatch: error: invalid number of nodes (-N 2-1)\n",
    ),
    (
        ["--ntasks=-3", "--wrap=true"],
        1,
        'sbatch: error: Invalid numeric value "-3" for --ntasks.\n',
    ),
    (["-n", "0", "--wrap=true"], 1, 'sbatch: error: Invalid numeric value "0" for --ntasks.\n'),
    (
        ["--cpus-per-task=0", "--wrap=true"],
        1,
        'sbatch: error: Invalid numeric value "0" for --cpus-per-task.\n',
    ),
    (
        ["--mem=100", "--mem-per-cpu=100", "--wrap=true"],
        1,
        "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n",
    ),
    (
        ["--hint=bogus", "--wrap=true"],
        1,
        'sbatch: error: unrecognized --hint argument "bogus", see --hint=help\n',
    ),
    (
        ["--tmp=1G", "--wrap=true"],
        1,
        "sbatch: error: Temporary disk specification can not be satisfied\n" + NOT_AVAILABLE,
    ),
    (
        ["--constraint=fast", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid feature specification\n",
    ),
    (
        ["--licenses=matlab:1", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid license specification\n",
    ),
    (
        ["--time-min=0", "--wrap=true"],
        1,
        "sbatch: error: Batch job submission failed: Invalid time-min specification (exceeds"
        " job's time or other limits)\n",
    ),
    (
        ["--propagate=core", "--wrap=true"],
        1,
        "sbatch: error: Bad rlimit name: core\nsbatch: error: --propagate=core is not valid.\n",
    ),
    (
        ["--clusters=elsewhere", "--wrap=true"],
        1,
        "sbatch: error: No cluster 'elsewhere' known by database.\n"
        "sbatch: error: 'elsewhere' can't be reached now, or it is an invalid entry for"
        " --cluster.  Use 'sacctmgr list clusters' to see available clusters.\n",
    ),
]


def _next_id(cluster: TestCluster) -> int:
    return cluster.sbatch("--hold", "--wrap=true")


@pytest.mark.parametrize(("args", "rc", "stderr"), REJECTED_SBATCH)
def test_rejected_submissions_change_nothing(
    cluster: TestCluster, args: list[str], rc: int, stderr: str | None
) -> None:
    before = _next_id(cluster)
    queue = cluster.run("squeue", "-h", "-o", "%i %t").out
    result = cluster.run("sbatch", *args)
    assert result.rc == rc, result.err
    assert result.out == ""
    if stderr is not None:
        assert result.err == stderr
    else:
        assert result.err.startswith("sbatch: ")
    assert cluster.run("squeue", "-h", "-o", "%i %t").out == queue
    assert _next_id(cluster) == before + 1


def test_empty_script_on_stdin_is_rejected(cluster: TestCluster) -> None:
    result = cluster.run("sbatch", stdin="")
    assert (result.rc, result.err) == (1, "sbatch: error: Batch script is empty!\n")


def test_script_without_interpreter_line_is_rejected(cluster: TestCluster) -> None:
    script = cluster.workdir / "noshebang.sh"
    script.write_text("echo hi\n")
    result = cluster.run("sbatch", str(script))
    assert result.rc == 1
    assert "This does not look like a batch script" in result.err


@pytest.fixture
def small_script_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster that takes batch scripts of at most 200 bytes."""
    yield from run_cluster(
        tmp_path, request, conf_lines="SchedulerParameters=max_script_size=200\n"
    )


def test_script_over_max_script_size_is_rejected(small_script_cluster: TestCluster) -> None:
    cluster = small_script_cluster
    script = cluster.workdir / "big.sh"
    script.write_text("#!/bin/sh\n" + "#" * 190 + "\n")
    result = cluster.run("sbatch", str(script))
    assert (result.rc, result.out) == (1, "")
    assert result.err == (
        "sbatch: error: Batch job submission failed: Batch job script is too large\n"
    )
    script.write_text("#!/bin/sh\n" + "#" * 180 + "\n")
    assert cluster.run("sbatch", str(script)).rc == 0


@pytest.mark.parametrize(
    ("args", "name", "reason"),
    [
        # What real Slurm 22.05 shows a few seconds after the submission.
        (["-N3"], "toomanynodes", "PartitionNodeLimit"),
        (["-n", "99"], "toomanycpus", "PartitionConfig"),
        (["-p", "debug", "-t", "120"], "overmaxtime", "PartitionTimeLimit"),
    ],
)
def test_requests_beyond_partition_limits_pend_with_the_limits_reason(
    cluster: TestCluster, args: list[str], name: str, reason: str
) -> None:
    job_id = cluster.sbatch(*args, "-J", name, "--wrap=true")
    wait_until(lambda: cluster.job(job_id)["Reason"] == reason, 10, reason)
    assert cluster.state(job_id) == "PENDING"
    assert cluster.run("scancel", str(job_id)).rc == 0


@pytest.mark.parametrize(
    ("argv", "rc", "stderr"),
    [
        (["scancel", "999999"], 0, ""),
        (["scancel", "abc"], 1, "scancel: error: Invalid job id abc\n"),
        (
            ["scontrol", "show", "job", "999999"],
            1,
            "slurm_load_jobs error: Invalid job id specified\n",
        ),
        (["squeue", "-j", "999999"], 1, "slurm_load_jobs error: Invalid job id specified\n"),
        (
            ["scontrol", "hold", "999999"],
            1,
            "Invalid job id specified for job 999999\n"
            "slurm_suspend error: Invalid job id specified\n",
        ),
        (["squeue", "-t", "BOGUS"], 1, None),
        (["scontrol", "show", "partition", "nosuch"], 1, ""),  # Slurm says it on stdout
        (["scontrol", "update", "NodeName=n1", "State=DRAIN"], 1, None),
        (["scontrol", "update", "NodeName=nosuch", "State=DRAIN", "Reason=x"], 1, None),
        (["scontrol", "update", "NodeName=n1", "State=BOGUS", "Reason=x"], 1, None),
    ],
)
def test_bad_command_requests_fail_like_slurm(
    cluster: TestCluster, argv: list[str], rc: int, stderr: str | None
) -> None:
    nodes = cluster.run("sinfo", "-N", "-h").out
    result = cluster.run(*argv)
    assert result.rc == rc, result.err
    if stderr is not None:
        assert result.err == stderr
    else:
        assert result.err
    assert cluster.run("sinfo", "-N", "-h").out == nodes


def test_bad_update_of_a_job_changes_nothing(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--hold", "-J", "keep", "-t", "5", "--wrap=true")
    before = cluster.job(job_id)
    for args in (["TimeLimit=abc"], ["Partition=nosuch"], ["Bogus=1"]):
        result = cluster.run("scontrol", "update", f"JobId={job_id}", *args)
        assert result.rc == 1, args
        assert result.err, args
    after = cluster.job(job_id)
    assert {k: after[k] for k in ("JobName", "TimeLimit", "Partition")} == {
        k: before[k] for k in ("JobName", "TimeLimit", "Partition")
    }
    assert cluster.run("scancel", str(job_id)).rc == 0


def test_malformed_rpc_fields_are_rejected_by_the_controller(cluster: TestCluster) -> None:
    """The controller validates what a client could bypass."""
    from minislurm.conffile import read_controller_address
    from minislurm.security import auth
    from minislurm.wire.ctlclient import ControllerClient
    from minislurm.wire.h2grpc import RpcError

    host, port = read_controller_address(cluster.local.conf_path)
    good = {
        "name": "x",
        "script": b"#!/bin/sh\n",
        "work_dir": str(cluster.workdir),
        "user": "nobody",
        "uid": 65534,
        "gid": 65534,
        "batch": True,
        "hold": True,
    }
    bad = [
        {"work_dir": "relative/dir"},
        {"script": b"no interpreter\n"},
        {"environment": {"A=B": "c"}},
        {"nodelist": "n[1-"},
        {"partition": "nosuch"},
        {"mem_per_node": 1, "mem_per_cpu": 1},
        {"name": "bad\0name"},
        {"user": ""},
        {"nice": -5},
    ]
    signer = auth.signer_for(cluster.local.conf_path)
    with ControllerClient(host, port, timeout=10, signer=signer) as client:
        before = len(client.call("GetJobs", all_states=True).jobs)
        for change in bad:
            with pytest.raises(RpcError) as err:
                client.call("SubmitJob", spec={**good, **change})
            assert err.value.code == "INVALID_ARGUMENT", change
        assert len(client.call("GetJobs", all_states=True).jobs) == before


def test_a_release_or_update_out_of_range_is_refused_and_every_job_still_lists(
    cluster: TestCluster,
) -> None:
    """An exit status no process ends with, or a nice beyond Slurm's range, is refused:
    stored, it broke every later listing of the jobs (found by test_fuzz_rpc)."""
    from cli.submit import job_identity
    from minislurm.conffile import read_controller_address
    from minislurm.security import auth
    from minislurm.wire.ctlclient import ControllerClient
    from minislurm.wire.h2grpc import RpcError

    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)
    spec = {**job_identity(), "name": "x", "batch": False, "ntasks": 1, "command": "true"}
    with ControllerClient(host, port, timeout=10, signer=signer) as client:
        job_id = int(client.call("SubmitJob", spec={**spec, "work_dir": "/tmp"}).job_id)
        cluster.wait_state(job_id, "RUNNING")
        for status in ({"exit_code": -2147483648}, {"exit_code": 256}, {"signal": -1}):
            with pytest.raises(RpcError) as err:
                client.call("CompleteJob", job_id=job_id, requester_uid=0, **status)
            assert err.value.code == "INVALID_ARGUMENT", status
        for nice in (-2147483648, 2147483646):
            with pytest.raises(RpcError) as err:
                client.call("UpdateJob", job_id=job_id, requester_uid=0, nice=nice)
            assert err.value.code == "INVALID_ARGUMENT", nice
        assert cluster.job(job_id)["JobState"] == "RUNNING"
        client.call("CompleteJob", job_id=job_id, requester_uid=0, exit_code=3)
        listed = client.call("GetJobs", all_states=True).jobs
    assert any(j.job_id == job_id and j.exit_code == 3 for j in listed)
