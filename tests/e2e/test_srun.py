"""srun end to end: task layout and environment, I/O, exit codes, concurrent steps."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import TestCluster
from helpers import BIN, pid_alive, wait_until

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
# srun's own ports (we have none: srun talks to the agents, not they to it) and the
# reference site's variable.
NOT_OURS = {"SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT", "SLURM_ANCHOR_INSTANCE"}
# Set by Slurm beside its SLURM_* variables.
ALSO_SLURMS = {"SRUN_DEBUG", "TMPDIR", "HOSTNAME", "ENVIRONMENT"}


def reference_tasks(name: str) -> list[dict[str, str]]:
    """The per-task environments of a reference capture, by task."""
    tasks: list[dict[str, str]] = []
    for line in (REFERENCE / name).read_text().splitlines():
        if line.startswith("====="):
            tasks.append({})
        elif "=" in line and tasks:
            key, _, value = line.partition("=")
            tasks[-1][key] = value
    return tasks


def slurm_vars(env: dict[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in env.items()
        if k.startswith("SLURM") or k.endswith("_DEVICES") or k in ALSO_SLURMS
    }


def parse_env(text: str) -> dict[str, str]:
    return dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)


def test_a_bare_srun_gives_its_tasks_the_variables_slurms_gives_them(
    cluster: TestCluster,
) -> None:
    result = cluster.run("srun", "-n1", "--gres=gpu:2", "bash", "-c", "env | sort")
    assert result.rc == 0, result.err
    ours = slurm_vars(parse_env(result.out))
    theirs = slurm_vars(parse_env((REFERENCE / "srun_env_n1.txt").read_text()))
    assert set(ours) - set(cluster.env) == set(theirs) - NOT_OURS - set(cluster.env)
    assert (ours["SRUN_DEBUG"], ours["TMPDIR"]) == ("3", "/tmp")


def test_tasks_are_laid_out_as_slurm_lays_them_out(cluster: TestCluster) -> None:
    script = (
        "echo host=$SLURMD_NODENAME procid=$SLURM_PROCID"
        " localid=$SLURM_LOCALID nodeid=$SLURM_NODEID"
    )
    result = cluster.run("srun", "-N2", "-n4", "-l", "bash", "-c", script)
    assert result.rc == 0, result.err
    assert sorted(result.out.splitlines()) == [
        "0: host=n1 procid=0 localid=0 nodeid=0",
        "1: host=n1 procid=1 localid=1 nodeid=0",
        "2: host=n1 procid=2 localid=2 nodeid=0",
        "3: host=n2 procid=3 localid=0 nodeid=1",
    ]


def test_step_environment_matches_the_reference(cluster: TestCluster) -> None:
    script = "#!/bin/bash\nsrun bash -c 'env | sort > task_env.$SLURM_JOB_ID.$SLURM_PROCID.txt'\n"
    job_id = cluster.sbatch(
        "-J", "envjob", "-N2", "--ntasks-per-node=4", "--gres=gpu:4", "-t", "10", script=script
    )
    assert cluster.wait_state(job_id, timeout=60)["JobState"] == "COMPLETED"
    reference = reference_tasks("env_tasks_N2_tpn4_gres4.txt")
    for rank in range(8):
        ours = slurm_vars(
            parse_env((cluster.workdir / f"task_env.{job_id}.{rank}.txt").read_text())
        )
        theirs = slurm_vars(reference[rank])
        assert set(ours) == set(theirs) - NOT_OURS, rank
        for name in (
            "SLURM_PROCID",
            "SLURM_LOCALID",
            "SLURM_NODEID",
            "SLURM_GTIDS",
            "SLURM_STEP_ID",
            "SLURM_STEPID",
            "SLURM_STEP_NODELIST",
            "SLURM_STEP_NUM_NODES",
            "SLURM_STEP_NUM_TASKS",
            "SLURM_STEP_TASKS_PER_NODE",
            "SLURM_TASKS_PER_NODE",
            "SLURM_NTASKS",
            "SLURM_NPROCS",
            "SLURM_NNODES",
            "SLURM_NODELIST",
            "SLURM_DISTRIBUTION",
            "SLURM_CPUS_ON_NODE",
            "SLURM_GPUS_ON_NODE",
            "SLURMD_NODENAME",
            "SLURM_UMASK",
            "CUDA_VISIBLE_DEVICES",
            "SLURM_STEP_GPUS",
            "SLURM_JOB_GPUS",
            "SLURM_JOB_NODELIST",
        ):
            assert ours[name] == theirs[name], (rank, name)
        env = parse_env((cluster.workdir / f"task_env.{job_id}.{rank}.txt").read_text())
        assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == (
            str(rank),
            "8",
            str(rank % 4),
        )
        assert env["MASTER_ADDR"] == "n1"
        assert env["MASTER_PORT"] == str(15000 + int(str(job_id)[-4:]))


def test_gpus_per_task_binds_one_distinct_gpu_to_each_task(cluster: TestCluster) -> None:
    script = (
        "#!/bin/bash\n"
        "srun bash -c 'echo $SLURM_PROCID $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS'\n"
        "echo batch $CUDA_VISIBLE_DEVICES\n"
    )
    job_id = cluster.sbatch("-N1", "-n4", "--gpus-per-task=1", "-w", "n2", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=60)
    lines = (cluster.workdir / f"slurm-{job_id}.out").read_text().splitlines()
    tasks = sorted(line.split() for line in lines if not line.startswith("batch"))
    gpus = [t[1] for t in tasks]
    assert [t[0] for t in tasks] == ["0", "1", "2", "3"]
    assert len(set(gpus)) == 4 and all("," not in g for g in gpus)
    assert all(t[1] == t[2] for t in tasks)
    batch = next(line for line in lines if line.startswith("batch")).split()[1]
    assert sorted(batch.split(",")) == sorted(gpus)


@pytest.mark.parametrize(
    ("command", "rc", "stderr"),
    [
        ("exit 7", 7, "srun: error: n1: task 0: Exited with exit code 7\n"),
        (  # killed by no one srun was told of, as Slurm's srun says
            "kill -9 $$",
            137,
            "srun: error: n1: task 0: Killed\nsrun: Force Terminated StepId={job}.0\n",
        ),
    ],
)
def test_srun_exit_status_and_messages(
    cluster: TestCluster, command: str, rc: int, stderr: str
) -> None:
    result = cluster.run("srun", "-n1", "-w", "n1", "bash", "-c", f"echo $SLURM_JOB_ID; {command}")
    assert (result.rc, result.err) == (rc, stderr.format(job=result.out.strip()))


def test_highest_task_exit_code_wins(cluster: TestCluster) -> None:
    result = cluster.run("srun", "-n2", "-w", "n1", "bash", "-c", "exit $SLURM_PROCID")
    assert (result.rc, result.err) == (1, "srun: error: n1: task 1: Exited with exit code 1\n")


def test_stdin_reaches_task_zero_and_labels_keep_lines_whole(cluster: TestCluster) -> None:
    lines = "".join(f"line {i}\n" for i in range(2000))
    result = cluster.run("srun", "-n2", "-l", "bash", "-c", "cat; echo done", stdin=lines)
    assert result.rc == 0, result.err
    out = result.out.splitlines()
    assert [line for line in out if line.startswith("0: line")] == [
        f"0: line {i}" for i in range(2000)
    ]
    assert sorted(line for line in out if "done" in line) == ["0: done", "1: done"]
    assert not [line for line in out if line.startswith("1: line")]


def test_steps_are_numbered_in_order(cluster: TestCluster) -> None:
    script = "#!/bin/bash\nfor i in 1 2 3; do srun -n1 bash -c 'echo $SLURM_STEP_ID'; done\n"
    job_id = cluster.sbatch("-n1", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=60)
    assert (cluster.workdir / f"slurm-{job_id}.out").read_text().split() == ["0", "1", "2"]


def test_concurrent_steps_beyond_the_allocation_wait_unless_they_overlap(
    cluster: TestCluster,
) -> None:
    gate = cluster.workdir / "step-gate"
    script = f"""#!/bin/bash
srun -n2 bash -c 'while [ ! -e {gate} ]; do sleep 0.1; done' &
sleep 1
srun -n2 --overlap bash -c 'echo overlap $SLURM_STEP_ID'
touch {gate}.overlapped
srun -n2 bash -c 'echo waited $SLURM_STEP_ID'
wait
"""
    job_id = cluster.sbatch("-n2", "-w", "n1", script=script)
    out = cluster.workdir / f"slurm-{job_id}.out"
    wait_until(lambda: Path(f"{gate}.overlapped").exists(), 30, "the overlapping step")
    wait_until(lambda: "step creation temporarily disabled" in out.read_text(), 30, "the wait")
    assert "waited" not in out.read_text()
    gate.touch()
    cluster.wait_state(job_id, "COMPLETED", timeout=60)
    text = out.read_text()
    assert "overlap 1\noverlap 1\n" in text
    assert "waited 2\nwaited 2\n" in text
    assert f"srun: Step created for StepId={job_id}.2" in text


def test_impossible_step_is_refused(cluster: TestCluster) -> None:
    script = "#!/bin/bash\nsrun -n4 true\necho status=$?\n"
    job_id = cluster.sbatch("-n2", "-w", "n1", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=30)
    text = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert "srun: error: Unable to create step for job" in text
    assert "status=1" in text


def test_kill_on_bad_exit_terminates_the_other_tasks(cluster: TestCluster) -> None:
    script = "if [ $SLURM_PROCID = 1 ]; then exit 3; fi; sleep 300"
    result = cluster.run("srun", "-K", "-n2", "-w", "n1", "bash", "-c", script)
    # As Slurm's SIG_TERM_KILL: the step's CANCELLED line, then SIGTERM (SIGKILL only
    # after KillWait), and srun, not told of it by anyone else, says it force-terminated.
    assert result.rc == 128 + signal.SIGTERM, result.err
    step = result.err.split("StepId=")[1].split()[0]
    lines = result.err.splitlines()
    assert re.fullmatch(
        rf"slurmstepd-n1: error: \*\*\* STEP {step} ON n1 CANCELLED AT [\dT:-]+ \*\*\*", lines[2]
    ), result.err
    assert lines[:2] + lines[3:] == [
        "srun: error: n1: task 1: Exited with exit code 3",
        f"srun: launch/slurm: _step_signal: Terminating StepId={step}",
        "srun: error: n1: task 0: Terminated",
        f"srun: Force Terminated StepId={step}",
    ]


def test_two_ctrl_c_stop_every_task_and_leave_nothing_behind(cluster: TestCluster) -> None:
    pids = cluster.workdir / "ctrlc.pids"
    env = dict(cluster.env)
    proc = subprocess.Popen(
        [
            str(BIN / "srun"),
            "-N2",
            "-n4",
            "bash",
            "-c",
            f"trap '' INT; echo $$ >> {pids}; sleep 300 & echo $! >> {pids}; wait",
        ],
        env=env,
        cwd=cluster.workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        found = wait_until(
            lambda: pids.exists() and len(pids.read_text().split()) == 8 and pids.read_text(),
            30,
            "the tasks",
        )
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the kernel would merge two signals sent at once
        status = proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert first == "srun: interrupt (one more within 1 sec to abort)\n"
    assert re.fullmatch(r"srun: StepId=\d+\.0 tasks 0-3: running\n", status), status
    lines = err.splitlines()
    assert lines[0].startswith("srun: sending Ctrl-C to StepId=") and lines[1:3] == [
        "srun: forcing job termination",
        "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.",  # KillWait+2
    ], err  # and, as Slurm's srun, nothing about the tasks it killed
    # The step's first node says it was cancelled, as real Slurm's stepd does (once, on n1).
    assert len(lines) == 4 and re.fullmatch(
        r"slurmstepd-n1: error: \*\*\* STEP \d+\.0 ON n1 CANCELLED AT [\dT:-]+ \*\*\*", lines[3]
    ), err
    assert proc.returncode == 128 + signal.SIGKILL
    wait_until(lambda: not any(pid_alive(int(p)) for p in found.split()), 20, "no task left")


def task_ends(lines: list[str]) -> dict[int, str]:
    """The tasks srun said ended, from ``srun: error: n1: task 0: Killed`` or ``tasks 0-1``."""
    ends: dict[int, str] = {}
    for line in lines:
        found = re.fullmatch(r"srun: error: n\d+: tasks? ([\d,-]+): (.+)", line)
        assert found, line
        for part in found[1].split(","):
            first, _, last = part.partition("-")
            for task in range(int(first), int(last or first) + 1):
                assert task not in ends, f"task {task} told twice"
                ends[task] = found[2]
    return ends


def test_sigterm_aborts_the_step_and_sigcont_is_only_said(cluster: TestCluster) -> None:
    # As Slurm 22.05's srun: SIGCONT is said, not forwarded; SIGTERM (HUP, QUIT too)
    # kills the step at once, and the tasks' ends are told (unlike a double Ctrl-C's).
    script = "trap 'echo got CONT' CONT; echo ready; sleep 300 & wait; sleep 300 & wait"
    proc = cluster.spawn(str(BIN / "srun"), "-n2", "-w", "n1", "bash", "-c", script)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGCONT)
        said = proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert said == "srun: got SIGCONT\n" and out == ""
    lines = err.splitlines()
    assert re.fullmatch(r"slurmstepd-n1: error: \*\*\* STEP \d+\.0 ON n1 CANCELLED AT .+", lines[2])
    assert lines[:2] == [
        "srun: forcing job termination",
        "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.",  # KillWait+2
    ], err
    # Each task's end is told once: Slurm's srun says "tasks 0-1: Killed" when the node's
    # stepd reaped both at once (the usual case), a line each otherwise. Told it is
    # aborted, srun does not say it force-terminated the step.
    assert task_ends(lines[3:]) == {0: "Killed", 1: "Killed"}, err
    assert proc.returncode == 128 + signal.SIGKILL


def test_one_ctrl_c_reports_the_tasks_and_interrupts_nothing(cluster: TestCluster) -> None:
    gate = cluster.workdir / "ctrlc-gate"
    script = f"trap 'echo got INT' INT; echo ready; while [ ! -e {gate} ]; do sleep 0.05; done"
    proc = cluster.spawn(str(BIN / "srun"), "-n2", "bash", "-c", script + "; echo end")
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        first, status = proc.stderr.readline(), proc.stderr.readline()
        gate.touch()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert first == "srun: interrupt (one more within 1 sec to abort)\n"
    assert re.fullmatch(r"srun: StepId=\d+\.0 tasks 0-1: running\n", status), status
    assert out == "end\nend\n" and not err and proc.returncode == 0  # as Slurm 22.05's srun


def test_srun_outside_an_allocation_waits_for_one_and_releases_it(cluster: TestCluster) -> None:
    gate = cluster.workdir / "busy-gate"
    blockers = [
        cluster.sbatch(
            "-w",
            n,
            "--gres=gpu:8",
            script=f"#!/bin/sh\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n",
        )
        for n in ("n1", "n2")
    ]
    for job_id in blockers:
        cluster.wait_state(job_id, "RUNNING")
    proc = cluster.spawn(
        str(BIN / "srun"), "--gres=gpu:8", "-J", "waiter", "bash", "-c", "echo ran $SLURM_JOB_ID"
    )
    try:
        assert proc.stderr is not None
        queued = proc.stderr.readline()
        gate.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    job_id = queued.split()[2]
    assert proc.returncode == 0, err
    assert queued == f"srun: job {job_id} queued and waiting for resources\n"
    assert f"srun: job {job_id} has been allocated resources" in err
    assert out == f"ran {job_id}\n"
    assert cluster.wait_state(int(job_id))["JobState"] == "COMPLETED"


def test_salloc_runs_srun_in_its_allocation(cluster: TestCluster) -> None:
    result = cluster.run(
        "salloc", "-N2", "srun", "-l", "bash", "-c", "echo $SLURM_JOB_ID $SLURMD_NODENAME"
    )
    assert result.rc == 0, result.err
    lines = sorted(result.out.splitlines())
    job_id = lines[0].split()[1]
    assert lines == [f"0: {job_id} n1", f"1: {job_id} n2"]
    assert f"salloc: Granted job allocation {job_id}" in result.err
    assert f"salloc: Relinquishing job allocation {job_id}" in result.err
    assert cluster.wait_state(int(job_id))["JobState"] == "COMPLETED"


def test_unknown_partition_is_refused_like_slurm(cluster: TestCluster) -> None:
    result = cluster.run("srun", "-p", "nosuch", "true")
    assert (result.rc, result.err) == (
        1,
        "srun: error: invalid partition specified: nosuch\n"
        "srun: error: Unable to allocate resources: Invalid partition name specified\n",
    )


def test_steps_are_recorded_for_accounting(cluster: TestCluster) -> None:
    from minislurm.conffile import read_controller_address
    from minislurm.security import auth
    from minislurm.wire.ctlclient import ControllerClient
    from minislurm.wire.protowire import Message

    script = "#!/bin/bash\nsrun -N2 -n3 true\nsrun -n1 bash -c 'exit 5'\nexit 0\n"
    job_id = cluster.sbatch("-N2", "-n4", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=60)
    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)
    with ControllerClient(host, port, timeout=10, signer=signer) as ctl:

        def ended() -> list[Message] | None:
            steps = list(ctl.call("GetSteps", job_id=job_id).steps)
            return steps if len(steps) == 2 and all(s.end_time for s in steps) else None

        # Each node reports its steps' ends on its own; n2's may come after the job's end.
        steps = wait_until(ended, 10, "both steps to end")
    assert [(s.step_id, s.state, s.exit_code, s.ntasks) for s in steps] == [
        (0, "COMPLETED", 0, 3),
        (1, "FAILED", 5, 1),
    ]
    assert steps[0].nodelist == "n[1-2]" and steps[1].nodelist in ("n1", "n2")
    assert all(s.start_time and s.end_time >= s.start_time for s in steps)


def test_a_release_waits_for_the_report_of_its_step_end(cluster: TestCluster) -> None:
    """srun releases its allocation once its tasks have exited; the node's report of
    the step's end may come a moment later. The job waits for it: ending first would
    cancel the step and lose its exit code. The test plays the node that reports late."""
    from cli.submit import job_identity
    from minislurm.conffile import read_controller_address
    from minislurm.security import auth
    from minislurm.wire.ctlclient import ControllerClient

    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)

    def client() -> ControllerClient:
        return ControllerClient(host, port, timeout=10, signer=signer)

    uid, log = os.getuid(), cluster.home / "log" / "slurmctld.log"
    spec = {**job_identity(), "name": "late", "batch": False, "ntasks": 1, "nodelist": "n1"}
    spec.update(work_dir=str(cluster.workdir), command="true")
    with client() as ctl, ThreadPoolExecutor(1) as pool:
        job_id = int(ctl.call("SubmitJob", spec=spec).job_id)
        cluster.wait_state(job_id, "RUNNING")
        step = {"job_id": job_id, "argv": ["true"], "ntasks": 1, "requester_uid": uid}
        step_id = int(ctl.call("CreateStep", spec=step).step.step_id)

        def release() -> None:
            with client() as other:
                other.call("CompleteJob", job_id=job_id, exit_code=3, requester_uid=uid)

        released = pool.submit(release)
        waiting = f"job={job_id} released: waiting for the end of step(s) {step_id}"
        wait_until(lambda: waiting in log.read_text(), 10, "the release to wait")
        exits = [{"task_id": 0, "exit_code": 3}]
        ctl.call("StepComplete", node="n1", job_id=job_id, step_id=step_id, tasks=exits)
        released.result(timeout=10)
    fields = ("sacct", "-n", "-P", "-j", str(job_id), "-o", "JobID,State,ExitCode")
    assert cluster.run(*fields).out.split() == [
        f"{job_id}|FAILED|3:0",
        f"{job_id}.{step_id}|FAILED|3:0",
    ]


def test_a_batch_jobs_end_waits_for_the_report_of_a_step_on_another_node(
    cluster: TestCluster,
) -> None:
    """The batch host reports the script's end; another node of its last step may
    report that step's end a moment later. The test plays both nodes' reports."""
    from minislurm.conffile import read_controller_address
    from minislurm.security import auth
    from minislurm.wire.ctlclient import ControllerClient

    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)

    def client() -> ControllerClient:
        return ControllerClient(host, port, timeout=10, signer=signer)

    log = cluster.home / "log" / "slurmctld.log"
    job_id = cluster.sbatch("-N2", "-n2", script="#!/bin/sh\nsleep 300\n")
    cluster.wait_state(job_id, "RUNNING")
    with client() as ctl, ThreadPoolExecutor(1) as pool:
        step = {"job_id": job_id, "argv": ["true"], "nodelist": "n2", "requester_uid": os.getuid()}
        step_id = int(ctl.call("CreateStep", spec={**step, "ntasks": 1}).step.step_id)

        def script_ended() -> None:
            status = {"job_id": job_id, "exit_code": 0, "start_time": 1, "end_time": 2}
            with client() as other:
                other.call("JobComplete", node="n1", status=status)

        ended = pool.submit(script_ended)
        waiting = f"job={job_id} ended: waiting for the end of step(s) {step_id}"
        wait_until(lambda: waiting in log.read_text(), 10, "the job's end to wait")
        exits = [{"task_id": 0, "exit_code": 5}]
        ctl.call("StepComplete", node="n2", job_id=job_id, step_id=step_id, tasks=exits)
        ended.result(timeout=10)
    fields = ("sacct", "-n", "-P", "-j", str(job_id), "-o", "JobID,State,ExitCode")
    assert f"{job_id}.{step_id}|FAILED|5:0" in cluster.run(*fields).out.split()
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"


def test_per_task_output_files_and_cyclic_distribution(cluster: TestCluster) -> None:
    result = cluster.run(
        "srun",
        "-N2",
        "-n4",
        "-m",
        "cyclic",
        "-o",
        "task-%j.%s-%t-%N.out",
        "bash",
        "-c",
        "echo $SLURM_PROCID $SLURMD_NODENAME",
    )
    assert (result.rc, result.out) == (0, "")
    made = sorted(p.name for p in cluster.workdir.glob("task-*.out"))
    assert len(made) == 4
    by_task = {name.split("-")[2]: (cluster.workdir / name).read_text().split() for name in made}
    assert [by_task[str(t)][1] for t in range(4)] == ["n1", "n2", "n1", "n2"]
    assert all(name.endswith(f"-{by_task[name.split('-')[2]][1]}.out") for name in made)
