"""sbatch's options and directives, and signals sent with scancel or --signal, on a live cluster."""

from __future__ import annotations

import time

import pytest
from conftest import TestCluster
from helpers import wait_until


def test_command_line_beats_directives_and_arguments_reach_the_script(
    cluster: TestCluster,
) -> None:
    script = (
        "#!/bin/bash\n"
        "#SBATCH -J from-directive\n"
        "#SBATCH --time=7\n"
        "# a comment between directives\n"
        "#SBATCH -o directive-%j.out\n"
        "echo args=$# first=$1 second=$2\n"
        "#SBATCH -J ignored-after-a-command\n"
    )
    path = cluster.workdir / "directives.sh"
    path.write_text(script)
    result = cluster.run("sbatch", "--parsable", "-J", "from-cli", str(path), "a b", "c")
    assert result.rc == 0, result.err
    job_id = int(result.out)
    info = cluster.wait_state(job_id, "COMPLETED")
    assert (info["JobName"], info["TimeLimit"]) == ("from-cli", "00:07:00")
    out = (cluster.workdir / f"directive-{job_id}.out").read_text()
    assert out == "args=2 first=a b second=c\n"
    assert info["Command"] == str(path)


def test_chdir_sets_the_working_directory_but_not_the_submit_directory(
    cluster: TestCluster,
) -> None:
    (cluster.workdir / "elsewhere").mkdir()
    job_id = cluster.sbatch(
        "-D", "elsewhere", script="#!/bin/bash\necho pwd=$PWD submit=$SLURM_SUBMIT_DIR\n"
    )
    info = cluster.wait_state(job_id, "COMPLETED")
    where = cluster.workdir / "elsewhere"
    assert info["WorkDir"] == str(where)
    out = (where / f"slurm-{job_id}.out").read_text()
    assert out == f"pwd={where} submit={cluster.workdir}\n"


def test_export_controls_the_environment_the_job_takes(cluster: TestCluster) -> None:
    script = "#!/bin/bash\necho keep=${KEEP-unset} extra=${EXTRA-unset}\n"
    cluster.env["KEEP"] = "yes"
    try:
        everything = cluster.sbatch(script=script)
        nothing = cluster.sbatch("--export=NONE", script=script)
        chosen = cluster.sbatch("--export=EXTRA=1", script=script)
        added = cluster.sbatch("--export=ALL,EXTRA=2", script=script)
    finally:
        del cluster.env["KEEP"]
    expected = {
        everything: "keep=yes extra=unset",
        nothing: "keep=unset extra=unset",
        chosen: "keep=unset extra=1",
        added: "keep=yes extra=2",
    }
    for job_id, line in expected.items():
        cluster.wait_state(job_id, "COMPLETED")
        assert (cluster.workdir / f"slurm-{job_id}.out").read_text().strip() == line


def test_scancel_signal_reaches_the_batch_shell_only_with_batch_flag(
    cluster: TestCluster,
) -> None:
    flag = cluster.workdir / "usr1-received"
    ready = cluster.workdir / "usr1-ready"
    script = (
        "#!/bin/bash\n"
        f"trap 'touch {flag}; exit 0' USR1\n"
        f"touch {ready}\n"
        "while true; do sleep 0.1; done\n"
    )
    job_id = cluster.sbatch(script=script)
    wait_until(ready.exists, 20, "the job to trap USR1")
    result = cluster.run("scancel", "--signal=USR1", str(job_id))
    assert result.rc == 0, result.err
    assert cluster.state(job_id) == "RUNNING" and not flag.exists()
    assert cluster.run("scancel", "-b", "--signal=SIGUSR1", str(job_id)).rc == 0
    info = cluster.wait_state(job_id)
    assert info["JobState"] == "COMPLETED" and flag.exists()


def test_nice_lowers_priority_and_held_jobs_show_zero(cluster: TestCluster) -> None:
    nice = cluster.sbatch("--hold", "--nice=50", "--wrap=true")
    assert cluster.job(nice)["Nice"] == "50"
    assert cluster.run("scontrol", "release", str(nice)).rc == 0
    cluster.wait_state(nice, "COMPLETED")


def test_open_mode_append_keeps_the_files_for_the_script_and_its_steps(
    cluster: TestCluster,
) -> None:
    # submitit's shape: the batch script and its srun's task 0 share one file.
    out = cluster.workdir / "append.out"
    out.write_text("before\n")
    script = "#!/bin/bash\necho batch $SLURM_OPEN_MODE\nsrun -o append.out echo step\n"
    job_id = cluster.sbatch("--open-mode=append", "-o", str(out), script=script)
    cluster.wait_state(job_id, "COMPLETED")
    assert out.read_text() == "before\nbatch a\nstep\n"
    job_id = cluster.sbatch("-o", str(out), "--wrap=echo again $SLURM_OPEN_MODE")
    cluster.wait_state(job_id, "COMPLETED")
    assert out.read_text() == "again\n"  # truncate: the default (JobFileAppend=0)


def test_exclusive_job_gets_whole_nodes(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--exclusive", "--wrap=echo $SLURM_CPUS_ON_NODE $CUDA_VISIBLE_DEVICES")
    info = cluster.wait_state(job_id, "COMPLETED")
    assert (info["NumCPUs"], info["OverSubscribe"]) == ("8", "NO")
    out = (cluster.workdir / f"slurm-{job_id}.out").read_text()
    assert out == "8 0,1,2,3,4,5,6,7\n"


def test_comment_and_mail_show_as_slurm_shows_them(cluster: TestCluster) -> None:
    job_id = cluster.sbatch(
        "--hold",
        "--comment=rule first",
        "--mail-type=fail,begin",
        "--wckey=submitit",
        "--wrap=true",
    )
    text = cluster.run("scontrol", "show", "job", str(job_id)).out
    assert "\n   Comment=rule first \n" in text  # with Slurm's trailing space
    assert "\n   MailUser=root MailType=BEGIN,FAIL\n" in text
    squeue = cluster.run("squeue", "-h", "-j", str(job_id), "-o", "%k|%h")
    assert squeue.out == "rule first|OK\n"
    assert cluster.run("scancel", str(job_id)).rc == 0


@pytest.mark.slow
def test_signal_warns_steps_or_batch_shell_before_the_limit_across_a_restart(
    fresh_cluster: TestCluster,
) -> None:
    # -t 1 --signal=USR1@50: the warning is due 10 s after the start. Job "steps"
    # must warn its srun step only; job "batch" (B:) its batch shell only.
    cluster = fresh_cluster
    work = cluster.workdir
    loop = "while :; do sleep 0.2; done"
    steps = cluster.sbatch(
        "-t",
        "1",
        "--signal=USR1@50",
        script=(
            "#!/bin/bash\n"
            f"trap 'touch {work}/steps-batch-warned' USR1\n"
            f'srun bash -c \'trap "date +%s > {work}/steps-step-warned; exit 0" USR1; '
            f"touch {work}/steps-ready; {loop}'\n"
        ),
    )
    batch = cluster.sbatch(
        "-t",
        "1",
        "--signal=B:USR1@50",
        script=(
            "#!/bin/bash\n"
            f"trap 'date +%s > {work}/batch-batch-warned; exit 0' USR1\n"
            f'srun bash -c \'trap "touch {work}/batch-step-warned" USR1; '
            f"touch {work}/batch-ready; {loop}' &\n"
            f"{loop}\n"
        ),
    )
    for name in ("steps-ready", "batch-ready"):
        wait_until((work / name).exists, 20, name)
    cluster.kill_controller()  # the warning must survive a restart
    cluster.start()
    for job_id, name in ((steps, "steps-step-warned"), (batch, "batch-batch-warned")):
        info = cluster.wait_state(job_id, "COMPLETED", timeout=40)
        start = time.mktime(time.strptime(info["StartTime"], "%Y-%m-%dT%H:%M:%S"))
        warned = int((work / name).read_text())
        assert 8 <= warned - start <= 14, f"job {job_id} warned {warned - start}s after start"
    assert not (work / "steps-batch-warned").exists()
    assert not (work / "batch-step-warned").exists()
