"""The options of sbatch, srun and salloc that scripts rely on, and their input variables, live.

Each behaviour was checked against Slurm 22.05 first: the messages and exit
statuses asserted here are the ones it printed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import run_command

from minislurm.local.cluster import ClusterSpec, LocalCluster

DATA = Path(__file__).resolve().parent.parent / "data" / "options"


def lines(text: str) -> list[str]:
    return sorted(text.splitlines())


# ---------------------------------------------------------------- srun


def test_srun_wait_kills_the_other_tasks_after_the_first_ends(cluster: TestCluster) -> None:
    # Megatron's and accelerate's launchers pass --wait=60: a rank that dies ends the step.
    script = "if [ $SLURM_PROCID = 0 ]; then exit 0; fi; sleep 300"
    result = cluster.run("srun", "-n2", "-w", "n1", "--wait=1", "bash", "-c", script)
    assert result.rc == 137, result.err
    step = result.err.split("StepId=")[1].split()[0]
    # The node's stepd says the step was cancelled, in between srun's lines.
    cancelled = [line for line in result.err.splitlines() if line.startswith("slurmstepd-")]
    assert len(cancelled) == 1 and f"*** STEP {step} ON n1 CANCELLED AT " in cancelled[0]
    assert [line for line in result.err.splitlines() if line not in cancelled] == [
        "srun: First task exited 1s ago",
        f"srun: StepId={step} task 1: running",
        f"srun: StepId={step} task 0: exited",
        f"srun: launch/slurm: _step_signal: Terminating StepId={step}",
        "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.",
        "srun: error: n1: task 1: Killed",
    ]


def test_srun_exclude_and_nodelist_choose_the_nodes_of_its_own_allocation(
    cluster: TestCluster,
) -> None:
    excluded = cluster.run("srun", "-x", "n1", "printenv", "SLURMD_NODENAME")
    chosen = cluster.run("srun", "-w", "n2", "printenv", "SLURMD_NODENAME")
    assert (excluded.rc, excluded.out, chosen.rc, chosen.out) == (0, "n2\n", 0, "n2\n")


def test_steps_take_nodelist_exclude_and_distributions_inside_a_job(cluster: TestCluster) -> None:
    show = "printenv SLURMD_NODENAME"
    script = f"""#!/bin/bash
srun -w n2 -N1 -n1 {show} | sed 's/^/w /'
srun -x n1 -N1 -n1 {show} | sed 's/^/x /'
srun -l -n4 -m plane=2 {show} | sed 's/^/plane /'
srun -l -n3 -m arbitrary -w n1,n2,n1 {show} | sed 's/^/arbitrary /'
srun -l -n4 -m cyclic:fcyclic {show} | sed 's/^/cyclic /'
"""
    job_id = cluster.sbatch("-N2", "-n4", script=script)
    info = cluster.wait_state(job_id, timeout=60)
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    # The job has 3 CPUs on n1 and 1 on n2, as in Slurm: tasks are dealt as they fit.
    assert cluster.job(job_id)["NodeList"] == "n[1-2]"
    assert lines(out) == [
        "arbitrary 0: n1",
        "arbitrary 1: n2",
        "arbitrary 2: n1",
        "cyclic 0: n1",
        "cyclic 1: n2",
        "cyclic 2: n1",
        "cyclic 3: n1",
        "plane 0: n1",
        "plane 1: n1",
        "plane 2: n2",
        "plane 3: n1",
        "w n2",
        "x n2",
    ]


def test_ntasks_per_gpu_shares_each_gpu_between_that_many_tasks(cluster: TestCluster) -> None:
    result = cluster.run(
        "srun", "--gpus=2", "--ntasks-per-gpu=2", "-l", "printenv", "CUDA_VISIBLE_DEVICES"
    )
    assert result.rc == 0, result.err
    assert lines(result.out) == ["0: 0", "1: 0", "2: 1", "3: 1"]


def test_exclusive_steps_share_no_cpu_and_so_run_side_by_side(cluster: TestCluster) -> None:
    # Without --exclusive (or --exact) the first step takes every CPU of the job
    # and the second waits for it, which waits for the second: the loop times out.
    flag = cluster.workdir / "exclusive-b"
    wait_for_b = f"for i in $(seq 600); do [ -e {flag} ] && exit 0; sleep 0.1; done; exit 1"
    script = f"""#!/bin/bash
srun --exclusive -n1 bash -c '{wait_for_b}' &
srun --exclusive -n1 touch {flag}
wait %1 && echo side-by-side
"""
    job_id = cluster.sbatch("-n2", "-w", "n1", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=90)
    assert (cluster.workdir / f"slurm-{job_id}.out").read_text() == "side-by-side\n"


def test_multi_prog_runs_the_program_each_rank_is_given(cluster: TestCluster) -> None:
    conf = cluster.workdir / "multi.conf"
    conf.write_text("# rank program\n0 echo first\n1-2 echo middle %t %o\n* echo rest %t\n")
    result = cluster.run("srun", "-n4", "-l", "--multi-prog", str(conf))
    assert result.rc == 0, result.err
    assert lines(result.out) == ["0: first", "1: middle 1 0", "2: middle 2 1", "3: rest 3"]


def test_srun_dependency_waits_for_the_job_it_names(cluster: TestCluster) -> None:
    first = cluster.sbatch("--wrap=sleep 1")
    result = cluster.run("srun", f"--dependency=afterok:{first}", "printenv", "SLURM_JOB_ID")
    assert result.rc == 0, result.err
    mine = cluster.job(int(result.out))
    assert mine["StartTime"] >= cluster.wait_state(first)["EndTime"]


def test_srun_immediate_gives_up_on_busy_nodes(cluster: TestCluster) -> None:
    gate = cluster.workdir / "immediate-gate"
    blocker = cluster.sbatch(
        "-N2", "--exclusive", script=f"#!/bin/sh\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"
    )
    cluster.wait_state(blocker, "RUNNING")
    try:
        result = cluster.run("srun", "-I", "true")
    finally:
        gate.touch()
    assert (result.rc, result.err) == (
        1,
        "srun: error: Unable to allocate resources: Requested nodes are busy\n",
    )


# ---------------------------------------------------------------- salloc


def test_salloc_no_shell_allocates_and_srun_runs_in_it(cluster: TestCluster) -> None:
    result = cluster.run("salloc", "--no-shell", "-N1", "-w", "n2")
    assert result.rc == 0, result.err
    job_id = int(result.err.split()[-1])
    assert result.err == f"salloc: Granted job allocation {job_id}\n"
    assert cluster.job(job_id)["JobName"] == "no-shell"
    step = cluster.run("srun", f"--jobid={job_id}", "printenv", "SLURM_JOB_ID", "SLURMD_NODENAME")
    assert (step.rc, step.out) == (0, f"{job_id}\nn2\n"), step.err
    assert cluster.state(job_id) == "RUNNING"
    cluster.run("scancel", str(job_id))
    assert cluster.wait_state(job_id)["JobState"] == "CANCELLED"


# ---------------------------------------------------------------- input variables


def test_the_environment_overrides_directives_and_the_command_line_both(
    cluster: TestCluster,
) -> None:
    script = "#!/bin/bash\n#SBATCH -J from-directive\n#SBATCH -t 3\ntrue\n"
    cluster.env.update(SBATCH_JOB_NAME="from-env", SBATCH_TIMELIMIT="5")
    try:
        by_env = cluster.sbatch("--hold", script=script)
        by_cli = cluster.sbatch("--hold", "-J", "from-cli", script=script)
        wrapped = cluster.sbatch("--hold", "--wrap=true")
    finally:
        del cluster.env["SBATCH_JOB_NAME"], cluster.env["SBATCH_TIMELIMIT"]
    assert (cluster.job(by_env)["JobName"], cluster.job(by_env)["TimeLimit"]) == (
        "from-env",
        "00:05:00",
    )
    assert cluster.job(by_cli)["JobName"] == "from-cli"
    assert cluster.job(wrapped)["JobName"] == "from-env"  # not "wrap"
    cluster.run("scancel", str(by_env), str(by_cli), str(wrapped))


def test_srun_reads_its_input_variables(cluster: TestCluster) -> None:
    env = dict(cluster.env, SLURM_NTASKS="3", SLURM_LABELIO="1", SLURM_JOB_NAME="named")
    result = run_command(["srun", "printenv", "SLURM_JOB_NAME"], env, cluster.workdir)
    assert result.rc == 0, result.err
    assert lines(result.out) == ["0: named", "1: named", "2: named"]


def test_srun_takes_the_geometry_of_its_batch_job_and_slurm_warnings(cluster: TestCluster) -> None:
    script = """#!/bin/bash
srun -N1 printenv SLURMD_NODENAME | sort | uniq -c | sed 's/^ */N1 /'
srun --ntasks-per-node=1 true
"""
    job_id = cluster.sbatch("-N2", "-n4", "-c2", script=script)
    cluster.wait_state(job_id, "COMPLETED", timeout=60)
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    # SLURM_NTASKS=4 from the job, -N1 from the command line: four tasks on one
    # node, of one CPU each (srun reads SRUN_CPUS_PER_TASK, not SLURM_CPUS_PER_TASK).
    assert "N1 4 n" in out
    assert (
        "srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the requested"
        " tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node.\n" in out
    )


# ---------------------------------------------------------------- accepted without effect


def test_options_without_effect_are_kept_and_shown_as_slurm_shows_them(
    cluster: TestCluster,
) -> None:
    job_id = cluster.sbatch(
        "--hold",
        "--hint=nomultithread",
        "--network=sn_all",
        "-t",
        "10",
        "--time-min=5",
        "--gpu-bind=closest",
        "--spread-job",
        "--exclusive=user",
        "--nodefile",
        str(DATA / "nodefile"),
        "--wrap=true",
    )
    result = cluster.run("scontrol", "show", "job", str(job_id))
    shown = [line.strip() for line in result.out.splitlines()]
    assert "RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=00:05:00" in shown
    assert "NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:1" in shown
    assert "OverSubscribe=USER Contiguous=0 Licenses=(null) Network=sn_all" in shown
    assert "ReqNodeList=n[1-2] ExcNodeList=(null)" in shown
    assert shown[shown.index("Power=") + 1 :][:2] == ["SpreadJob=Yes", "TresBind=gpu:closest"]
    cluster.run("scancel", str(job_id))


# ---------------------------------------------------------------- typed GPUs


@pytest.fixture(scope="module")
def typed_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Two nodes whose GPUs have types: n1 a100, n2 v100."""
    home = tmp_path_factory.mktemp("typed")
    local = LocalCluster(str(home))
    local.write_config(ClusterSpec(kill_wait=2, min_job_age=600))
    conf = Path(local.conf_path)
    (line,) = [line for line in conf.read_text().splitlines() if line.startswith("NodeName=")]
    typed = "\n".join(
        line.replace("n[1-2]", node).replace("Gres=gpu:8", f"Gres=gpu:{kind}:8")
        for node, kind in (("n1", "a100"), ("n2", "v100"))
    )
    conf.write_text(conf.read_text().replace(line, typed))
    yield from run_cluster(home, request)


def test_a_gpu_type_places_the_job_on_nodes_with_that_type(typed_cluster: TestCluster) -> None:
    v100 = typed_cluster.run("srun", "--gpus-per-node=v100:1", "printenv", "SLURMD_NODENAME")
    a100 = typed_cluster.run("srun", "--gres=gpu:a100:2", "printenv", "SLURMD_NODENAME")
    assert (v100.out, a100.out) == ("n2\n", "n1\n"), v100.err + a100.err
    missing = typed_cluster.run("sbatch", "--gpus=h100:1", "--wrap=true")
    assert (missing.rc, missing.err) == (
        1,
        "sbatch: error: Batch job submission failed: Requested node configuration is not"
        " available\n",
    )
    job_id = typed_cluster.sbatch("--hold", "--gpus-per-node=a100:2", "--wrap=true")
    assert typed_cluster.job(job_id)["TresPerNode"] == "gres:gpu:a100:2"
    typed_cluster.run("scancel", str(job_id))


def test_a_step_asks_for_the_gpu_type_of_its_job(typed_cluster: TestCluster) -> None:
    script = "#!/bin/bash\nsrun --gpus=a100:1 printenv SLURMD_NODENAME\nsrun --gpus=v100:1 true\n"
    job_id = typed_cluster.sbatch("--gres=gpu:a100:1", script=script)
    typed_cluster.wait_state(job_id, timeout=60)
    assert (typed_cluster.workdir / f"slurm-{job_id}.out").read_text() == (
        "n1\n"
        f"srun: error: Unable to create step for job {job_id}: Requested node configuration"
        " is not available\n"
    )


def test_gpus_of_two_types_in_one_request_are_refused(typed_cluster: TestCluster) -> None:
    result = typed_cluster.run("sbatch", "--gres=gpu:a100:1", "--gpus=v100:1", "--wrap=true")
    assert (result.rc, result.err) == (
        1,
        "sbatch: error: Invalid generic resource (gres) specification\n",
    )


@pytest.mark.skipif(os.getuid() != 0, reason="--uid is root's")
def test_root_submits_a_job_that_runs_as_another_user(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--uid=nobody", "--hold", "--wrap=true")
    assert cluster.job(job_id)["UserId"].startswith("nobody(")
    cluster.run("scancel", str(job_id))
