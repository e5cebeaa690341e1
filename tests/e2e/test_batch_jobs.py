"""Batch jobs end to end: environment, GPU binding, output files, exit codes, kills."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import TestCluster
from helpers import BIN, pid_alive, run_command, wait_until

# The repository's checkout sits beside ../shared (locally and in CI).
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"

ENV_SCRIPT = "#!/bin/bash\nenv | sort\n"


def slurm_env(text: str) -> dict[str, str]:
    """The SLURM_*, CUDA and GPU variables of an ``env | sort`` listing."""
    env = {}
    for line in text.splitlines():
        name, eq, value = line.partition("=")
        if eq and (name.startswith("SLURM") or name in GPU_VARS or name == "ENVIRONMENT"):
            env[name] = value
    return env


GPU_VARS = {
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
}
# Set by the reference cluster's site.
NOT_OURS = {"SLURM_ANCHOR_INSTANCE"}


def test_two_node_batch_environment_matches_reference(cluster: TestCluster) -> None:
    job_id = cluster.sbatch(
        "-J",
        "envjob",
        "-N2",
        "--ntasks-per-node=4",
        "--gres=gpu:4",
        "-t",
        "10",
        script=ENV_SCRIPT,
    )
    info = cluster.wait_state(job_id)
    assert info["JobState"] == "COMPLETED", info
    ours = slurm_env((cluster.workdir / f"slurm-{job_id}.out").read_text())
    reference = slurm_env((REFERENCE / "env_batch_N2_tpn4_gres4.txt").read_text())
    assert set(ours) == set(reference) - NOT_OURS
    for name in (
        "SLURM_TASKS_PER_NODE",
        "SLURM_JOB_CPUS_PER_NODE",
        "SLURM_NNODES",
        "SLURM_NTASKS",
        "SLURM_NPROCS",
        "SLURM_NTASKS_PER_NODE",
        "SLURM_CPUS_ON_NODE",
        "SLURM_GPUS_ON_NODE",
        "SLURM_JOB_GPUS",
        "SLURM_JOB_NUM_NODES",
        "SLURM_GTIDS",
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_NODEID",
        "SLURM_NODE_ALIASES",
        "SLURM_TOPOLOGY_ADDR",
        "SLURMD_NODENAME",
        "SLURM_TOPOLOGY_ADDR_PATTERN",
        "SLURM_JOB_NAME",
        "SLURM_JOB_PARTITION",
        "ENVIRONMENT",
        *GPU_VARS,
    ):
        assert ours[name] == reference[name], name
    assert ours["SLURM_JOB_NODELIST"] == ours["SLURM_NODELIST"] == "n[1-2]"
    assert ours["SLURM_JOB_ID"] == ours["SLURM_JOBID"] == str(job_id)
    assert ours["SLURM_SUBMIT_DIR"] == str(cluster.workdir)
    assert ours["SLURM_CONF"] == cluster.local.conf_path
    assert ours["SLURM_WORKING_CLUSTER"].startswith("local:127.0.0.1:")


def test_job_without_gpus_has_no_gpu_variables(cluster: TestCluster) -> None:
    job_id = cluster.sbatch(script=ENV_SCRIPT)
    cluster.wait_state(job_id, "COMPLETED")
    env = slurm_env((cluster.workdir / f"slurm-{job_id}.out").read_text())
    assert not GPU_VARS & set(env)
    assert "SLURM_NTASKS" not in env  # only set when -n or --ntasks-per-node was given


def test_gpu_jobs_on_one_node_get_disjoint_devices_and_a_third_waits(
    cluster: TestCluster,
) -> None:
    hold = cluster.workdir / "gpu-release"
    script = (
        f"#!/bin/bash\necho CVD=$CUDA_VISIBLE_DEVICES\nwhile [ ! -e {hold} ]; do sleep 0.1; done\n"
    )
    first = cluster.sbatch("-w", "n1", "--gres=gpu:4", script=script)
    second = cluster.sbatch("-w", "n1", "--gres=gpu:4", script=script)
    cluster.wait_state(first, "RUNNING")
    cluster.wait_state(second, "RUNNING")
    third = cluster.sbatch("-w", "n1", "--gres=gpu:4", "-J", "third", script=script)
    wait_until(lambda: cluster.job(third)["Reason"] == "Resources", 10, "reason Resources")
    assert cluster.state(third) == "PENDING"

    def devices(job_id: int) -> set[str]:
        out = cluster.workdir / f"slurm-{job_id}.out"
        line = wait_until(lambda: out.exists() and out.read_text().strip(), 10, "output")
        return set(line.split("=")[1].split(","))

    a, b = devices(first), devices(second)
    assert len(a) == len(b) == 4 and not a & b
    assert cluster.run("scancel", str(first)).rc == 0
    cluster.wait_state(third, "RUNNING")
    assert devices(third) == a
    hold.touch()
    for job_id in (second, third):
        cluster.wait_state(job_id, "COMPLETED")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["-o", "%x-%j.out"], ["{name}-{id}.out"]),
        (
            ["-o", "out/%u_%j_%N.log", "-e", "err-%j-%%.txt"],
            ["out/{user}_{id}_n1.log", "err-{id}-%.txt"],
        ),
        (["-o", "arr-%A_%a.out"], ["arr-{id}_4294967294.out"]),
        (["-o", "pad-%5j.out"], ["pad-{id:05d}.out"]),
    ],
)
def test_output_file_patterns(
    cluster: TestCluster, options: list[str], expected: list[str]
) -> None:
    (cluster.workdir / "out").mkdir(exist_ok=True)
    script = "#!/bin/bash\necho to-stdout\necho to-stderr >&2\n"
    job_id = cluster.sbatch("-J", "pat", "-w", "n1", *options, script=script)
    cluster.wait_state(job_id, "COMPLETED")
    import getpass

    names = [e.format(id=job_id, name="pat", user=getpass.getuser()) for e in expected]
    texts = [(cluster.workdir / n).read_text() for n in names]
    if len(names) == 1:
        assert texts[0] == "to-stdout\nto-stderr\n"
    else:
        assert texts == ["to-stdout\n", "to-stderr\n"]


def test_default_output_and_scontrol_paths(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("-J", "ok", "-o", "slurm-%x-%j.out", script="#!/bin/sh\necho hi\n")
    info = cluster.wait_state(job_id, "COMPLETED")
    assert info["StdOut"] == str(cluster.workdir / f"slurm-ok-{job_id}.out")
    assert info["StdErr"] == info["StdOut"]
    assert info["StdIn"] == "/dev/null"
    assert info["WorkDir"] == str(cluster.workdir)


@pytest.mark.parametrize(
    ("body", "state", "exit_code", "reason"),
    [
        ("exit 0", "COMPLETED", "0:0", "None"),
        ("exit 3", "FAILED", "3:0", "NonZeroExitCode"),
        ("kill -9 $$", "FAILED", "0:9", "NonZeroExitCode"),
        ("kill -SEGV $$", "FAILED", "0:11", "NonZeroExitCode"),
    ],
)
def test_exit_codes_and_signals_map_to_states(
    cluster: TestCluster, body: str, state: str, exit_code: str, reason: str
) -> None:
    job_id = cluster.sbatch(script=f"#!/bin/bash\n{body}\n")
    info = cluster.wait_state(job_id)
    assert (info["JobState"], info["ExitCode"], info["Reason"]) == (state, exit_code, reason)


def test_a_script_whose_interpreter_is_missing_fails_as_in_slurm(cluster: TestCluster) -> None:
    # Slurm 22.05 prints stepd's line to the job's output and records ExitCode=2:0.
    job_id = cluster.sbatch(script="#!/no/such/interp\necho never\n")
    info = cluster.wait_state(job_id)
    assert (info["JobState"], info["ExitCode"], info["Reason"]) == (
        "FAILED",
        "2:0",
        "NonZeroExitCode",
    )
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    line = "execve(): bad interpreter(/no/such/interp): No such file or directory"
    assert out == f"slurmstepd-{info['BatchHost']}: error: {line}\n"


def _start_tree(cluster: TestCluster, name: str) -> tuple[int, list[int]]:
    """A job that starts a process tree, including a daemonised escapee; returns its pids."""
    pids = cluster.workdir / f"{name}.pids"
    script = f"""#!/bin/bash
sleep 300 &
echo $! >> {pids}
bash -c 'sleep 300 & echo $! >> {pids}; wait' &
echo $! >> {pids}
setsid bash -c 'sleep 300 & echo $! >> {pids}; wait' &
echo $$ >> {pids}
wait
"""
    job_id = cluster.sbatch("-J", name, script=script)
    cluster.wait_state(job_id, "RUNNING")
    found = wait_until(
        lambda: pids.exists() and len(pids.read_text().split()) >= 5 and pids.read_text(),
        10,
        "the job's processes",
    )
    return job_id, [int(p) for p in found.split()]


def test_scancel_kills_the_whole_process_tree(cluster: TestCluster) -> None:
    job_id, pids = _start_tree(cluster, "tree")
    assert all(pid_alive(p) for p in pids)
    result = cluster.run("scancel", str(job_id))
    assert (result.rc, result.out, result.err) == (0, "", "")
    info = cluster.wait_state(job_id)
    assert (info["JobState"], info["ExitCode"]) == ("CANCELLED", "0:15")
    wait_until(lambda: not any(pid_alive(p) for p in pids), 10, "every process to be gone")
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert f"*** JOB {job_id} ON n1 CANCELLED AT " in out


def test_background_processes_die_when_the_script_ends(cluster: TestCluster) -> None:
    pids = cluster.workdir / "leftover.pids"
    script = f"#!/bin/bash\nsetsid sleep 300 &\necho $! > {pids}\nsleep 300 &\necho $! >> {pids}\n"
    job_id = cluster.sbatch(script=script)
    cluster.wait_state(job_id, "COMPLETED")
    leftovers = [int(p) for p in pids.read_text().split()]
    wait_until(lambda: not any(pid_alive(p) for p in leftovers), 10, "leftovers to be killed")


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_time_limit_gives_timeout_and_the_slurm_message(cluster: TestCluster) -> None:
    script = "#!/bin/bash\necho start\ntrap '' TERM\nsleep 600\n"
    job_id = cluster.sbatch("-t", "1", "-o", "timeout-%j.out", script=script)
    info = cluster.wait_state(job_id, "RUNNING")
    assert info["TimeLimit"] == "00:01:00"
    info = cluster.wait_state(job_id, timeout=100)
    assert (info["JobState"], info["Reason"], info["ExitCode"]) == ("TIMEOUT", "TimeLimit", "0:9")
    lines = (cluster.workdir / f"timeout-{job_id}.out").read_text().splitlines()
    assert lines[0] == "start"
    assert lines[1].startswith(f"slurmstepd-n1: error: *** JOB {job_id} ON n1 CANCELLED AT ")
    assert lines[1].endswith(" DUE TO TIME LIMIT ***")


def test_hold_and_release(cluster: TestCluster) -> None:
    held = cluster.sbatch("--hold", "-J", "held", script="#!/bin/sh\ntrue\n")
    info = cluster.job(held)
    assert (info["JobState"], info["Reason"], info["Priority"]) == ("PENDING", "JobHeldUser", "0")
    assert cluster.run("scontrol", "release", str(held)).rc == 0
    cluster.wait_state(held, "COMPLETED")

    blocker = cluster.workdir / "hold-release"
    waiting = cluster.sbatch(
        "-w",
        "n2",
        "--gres=gpu:8",
        script=f"#!/bin/sh\nwhile [ ! -e {blocker} ]; do sleep 0.1; done\n",
    )
    queued = cluster.sbatch("-w", "n2", "--gres=gpu:8", script="#!/bin/sh\ntrue\n")
    cluster.wait_state(waiting, "RUNNING")
    assert cluster.run("scontrol", "hold", str(queued)).rc == 0
    assert cluster.job(queued)["Reason"] == "JobHeldAdmin"
    assert cluster.run("scontrol", "uhold", str(queued)).rc == 0
    assert cluster.job(queued)["Reason"] == "JobHeldUser"
    blocker.touch()
    cluster.wait_state(waiting, "COMPLETED")
    assert cluster.state(queued) == "PENDING"
    assert cluster.run("scontrol", "release", str(queued)).rc == 0
    cluster.wait_state(queued, "COMPLETED")


def test_a_login_shell_script_gets_the_login_path_and_finds_the_commands_through_a_profile(
    cluster: TestCluster, tmp_path: Path
) -> None:
    # As on a site: the commands are found by login shells through the user's profile.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text(f'export PATH="{BIN}:$PATH"\n')
    submitter_path = f"{tmp_path / 'only-at-submit'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env = {**cluster.env, "HOME": str(home), "PATH": submitter_path}
    login = subprocess.run(
        ["bash", "-l", "-c", 'echo "$PATH"'],
        env={"HOME": str(home), "PATH": submitter_path},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    script = cluster.workdir / "login.sh"
    script.write_text('#!/bin/bash -l\necho "PATH=$PATH"\nsrun -n1 echo ran\n')
    submitted = run_command(
        [str(BIN / "sbatch"), "--parsable", "-o", "login-%j.out", str(script)], env, cluster.workdir
    )
    assert submitted.rc == 0, submitted.err
    job_id = int(submitted.out)
    info = cluster.wait_state(job_id)
    out = (cluster.workdir / f"login-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    assert out.splitlines() == [f"PATH={login}", "ran"]
    assert login.startswith(f"{BIN}:")
