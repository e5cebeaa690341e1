"""sbatch's options and directives, and signals sent with scancel, on a live cluster."""

from __future__ import annotations

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
