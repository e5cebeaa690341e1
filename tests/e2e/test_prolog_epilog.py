"""Prolog, Epilog, TaskProlog and TaskEpilog as Slurm runs them, and what their failures do."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

PROLOG = """#!/bin/sh
echo "$SLURM_JOB_ID" >> "{d}/prolog-ran-$SLURMD_NODENAME"
env > "{d}/prolog-env-$SLURMD_NODENAME-$SLURM_JOB_ID"
[ -e "{d}/fail-prolog-$SLURMD_NODENAME" ] && exit 1
exit 0
"""
EPILOG = """#!/bin/sh
env > "{d}/epilog-$SLURMD_NODENAME-$SLURM_JOB_ID"
[ -e "{d}/fail-epilog-$SLURMD_NODENAME" ] && exit 3
exit 0
"""
TASK_PROLOG = """#!/bin/sh
echo "export PROLOG_SAYS=hello-$SLURM_PROCID"
echo "unset UNWANTED"
echo "print from the task prolog"
echo "not a command"
echo "to stderr" >&2
"""
TASK_EPILOG = """#!/bin/sh
echo "$SLURM_SCRIPT_CONTEXT $PROLOG_SAYS" > "{d}/task-epilog-$SLURM_JOB_ID-$SLURM_PROCID"
"""


def env_file(path: Path) -> dict[str, str]:
    """A file ``env`` wrote, as a dict."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site's programs, in a directory of their own (prolog.d: a directory of Prologs)."""
    d = tmp_path_factory.mktemp("site")
    (d / "prolog.d").mkdir()
    for name, text in (
        ("prolog.d/50-record", PROLOG),
        ("epilog", EPILOG),
        ("task_prolog", TASK_PROLOG),
        ("task_epilog", TASK_EPILOG),
    ):
        path = d / name
        path.write_text(text.format(d=d))
        path.chmod(0o755)
    return d


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, scripts: Path
) -> Iterator[TestCluster]:
    """Two nodes whose slurm.conf names the site's programs."""
    spec = ClusterSpec(
        kill_wait=2,
        min_job_age=600,
        conf_lines=(
            f"Prolog={scripts}/prolog.d",
            f"Epilog={scripts}/epilog",
            f"TaskProlog={scripts}/task_prolog",
            f"TaskEpilog={scripts}/task_epilog",
            "PrologEpilogTimeout=20",
            "RequeueDelay=0",
        ),
    )
    yield from run_cluster(tmp_path_factory.mktemp("cluster"), request, spec)


def reason(cluster: TestCluster, node: str) -> str:
    result = cluster.run("sinfo", "-h", "-n", node, "-o", "%E")
    assert result.rc == 0, result.err
    return result.out.strip()


def resume(cluster: TestCluster, node: str) -> None:
    result = cluster.run("scontrol", "update", f"nodename={node}", "state=resume")
    assert result.rc == 0, result.err


@pytest.mark.timeout(120)
def test_prolog_and_epilog_run_around_every_job(site: TestCluster, scripts: Path) -> None:
    one = site.sbatch("-w", "n1", "--gpus=2", "--wrap", "exit 3")
    two = site.sbatch("-N2", "--wrap", "srun hostname")
    idle = site.sbatch("-N2", "--wrap", "true")  # no step on n2: no Prolog there, an Epilog
    assert site.wait_state(one)["JobState"] == "FAILED"
    # The batch host's Epilog has run when the job's end is known.
    ep = env_file(scripts / f"epilog-n1-{one}")
    assert ep["SLURM_SCRIPT_CONTEXT"] == "epilog_slurmd"
    assert ep["SLURM_JOB_EXIT_CODE2"] == "3:0"
    assert ep["SLURM_JOB_EXIT_CODE"] == str(3 << 8)
    assert "PATH" not in ep  # as Slurm's: no search path
    pro = env_file(scripts / f"prolog-env-n1-{one}")
    assert pro["SLURM_SCRIPT_CONTEXT"] == "prolog_slurmd"
    assert pro["SLURMD_NODENAME"] == "n1"
    assert pro["SLURM_JOB_USER"] == pwd.getpwuid(os.getuid()).pw_name
    assert pro["SLURM_JOB_UID"] == str(os.getuid())
    assert pro["SLURM_JOB_NODELIST"] == "n1"
    assert pro["SLURM_JOB_GPUS"] == pro["CUDA_VISIBLE_DEVICES"]
    assert len(pro["SLURM_JOB_GPUS"].split(",")) == 2
    for job in (two, idle):
        assert site.wait_state(job)["JobState"] == "COMPLETED"
        assert (scripts / f"epilog-n1-{job}").exists()
        wait_until(lambda job=job: (scripts / f"epilog-n2-{job}").exists(), 20, "n2's Epilog")
        assert env_file(scripts / f"epilog-n2-{job}")["SLURM_JOB_NODELIST"] == "n[1-2]"
    ran_on_n2 = (scripts / "prolog-ran-n2").read_text().split()
    assert str(two) in ran_on_n2  # its srun step started there
    assert str(idle) not in ran_on_n2  # nothing started there: no Prolog (Slurm's default)
    assert reason(site, "n1") == reason(site, "n2") == "none"


@pytest.mark.timeout(60)
def test_task_prolog_sets_the_task_environment(site: TestCluster, scripts: Path) -> None:
    script = '#!/bin/sh\necho "batch: $PROLOG_SAYS ${UNWANTED:-unset}"\nsrun printenv PROLOG_SAYS\n'
    path = site.workdir / "tp.sh"
    path.write_text(script)
    job = site.run(
        "sbatch", "--parsable", "-n2", "-o", "tp-%j.out", "--export=ALL,UNWANTED=x", str(path)
    )
    assert job.rc == 0, job.err
    job_id = int(job.out)
    assert site.wait_state(job_id)["JobState"] == "COMPLETED"
    lines = (site.workdir / f"tp-{job_id}.out").read_text().splitlines()
    assert lines[0] == "from the task prolog"  # printed before the script's own output
    assert lines[1] == "batch: hello-0 unset"
    assert sorted(line for line in lines[2:] if line.startswith("hello")) == ["hello-0", "hello-1"]
    assert lines.count("from the task prolog") == 3  # the script and each task
    assert "to stderr" not in (site.workdir / f"tp-{job_id}.out").read_text()
    said = (scripts / f"task-epilog-{job_id}-1").read_text()
    assert said == "epilog_task hello-1\n"


@pytest.mark.timeout(120)
def test_failing_prolog_drains_the_node_and_requeues_the_job_held(
    site: TestCluster, scripts: Path
) -> None:
    (scripts / "fail-prolog-n2").touch()
    try:
        alone = site.sbatch("-w", "n2", "--wrap", "true")
        held = wait_until(
            lambda: (
                (job := site.job(alone))["JobState"] == "PENDING" and job["Restarts"] == "1" and job
            ),
            30,
            "the job requeued",
        )
        assert held["Reason"] == "launch_failed_requeued_held"
        assert held["Priority"] == "0"
        assert reason(site, "n2") == "Prolog error"
        listed = site.run("squeue", "-h", "-j", str(alone), "-o", "%T %r")
        assert listed.out.strip() == "PENDING launch failed requeued held"
        # A step launched on a node whose Prolog fails: srun says so as Slurm's does.
        resume(site, "n2")
        wide = site.sbatch("-N2", "-o", "wide-%j.out", "--wrap", "srun hostname")
        wait_until(
            lambda: site.job(wide)["Restarts"] == "1" and site.state(wide) == "PENDING",
            30,
            "the two-node job requeued",
        )
        assert site.job(wide)["Reason"] == "launch_failed_requeued_held"
        out = wait_until(
            lambda: (
                "launch failed" in (text := (site.workdir / f"wide-{wide}.out").read_text())
                and text
            ),
            20,
            "srun's words",
        )
        said = f"srun: error: Task launch for StepId={wide}.0 failed on node n2: Job prolog failed"
        assert said in out
        assert "srun: error: Application launch failed: Job prolog failed" in out
    finally:
        (scripts / "fail-prolog-n2").unlink()
    resume(site, "n2")
    for job in (alone, wide):
        assert site.run("scontrol", "release", str(job)).rc == 0
        assert site.wait_state(job, timeout=30)["JobState"] == "COMPLETED"
    assert reason(site, "n2") == "none"


@pytest.mark.timeout(60)
def test_failing_epilog_drains_the_node(site: TestCluster, scripts: Path) -> None:
    (scripts / "fail-epilog-n2").touch()
    try:
        job = site.sbatch("-w", "n2", "--wrap", "true")
        assert site.wait_state(job)["JobState"] == "COMPLETED"  # the job is not to blame
        wait_until(lambda: reason(site, "n2") == "Epilog error", 20, "n2 drained")
        listed = site.run("sinfo", "-R", "-h", "-o", "%E|%N")
        assert "Epilog error|n2" in listed.out
    finally:
        (scripts / "fail-epilog-n2").unlink()
        resume(site, "n2")


@pytest.fixture
def alloc_prolog(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes whose Prolog runs at allocation (PrologFlags=Alloc), saying where it ran."""
    prolog = tmp_path / "prolog"
    prolog.write_text(f'#!/bin/sh\necho "$SLURM_JOB_ID" >> "{tmp_path}/ran-$SLURMD_NODENAME"\n')
    prolog.chmod(0o755)
    spec = ClusterSpec(
        kill_wait=2, min_job_age=600, conf_lines=(f"Prolog={prolog}", "PrologFlags=Alloc")
    )
    (tmp_path / "cluster").mkdir()
    yield from run_cluster(tmp_path / "cluster", request, spec)


@pytest.mark.timeout(90)
def test_prolog_flags_alloc_runs_the_prolog_on_every_node_at_once(
    alloc_prolog: TestCluster, tmp_path: Path
) -> None:
    idle = alloc_prolog.sbatch("-N2", "--wrap", "true")  # no step on n2, yet a Prolog there
    assert alloc_prolog.wait_state(idle)["JobState"] == "COMPLETED"
    n2 = tmp_path / "ran-n2"
    wait_until(lambda: n2.exists() and n2.read_text().split() == [str(idle)], 20, "n2's Prolog")
    assert (tmp_path / "ran-n1").read_text().split() == [str(idle)]  # once, for both asks


CTLD_PROLOG = """#!/bin/sh
env > "{d}/ctld-$SLURM_SCRIPT_CONTEXT-$SLURM_JOB_ID"
[ -e "{d}/fail-ctld-prolog" ] && exit 1
exit 0
"""


@pytest.fixture
def controller_scripts(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes; slurmctld runs PrologSlurmctld and EpilogSlurmctld (one program)."""
    program = tmp_path / "ctld.sh"
    program.write_text(CTLD_PROLOG.format(d=tmp_path))
    program.chmod(0o755)
    spec = ClusterSpec(
        kill_wait=2,
        min_job_age=600,
        conf_lines=(
            f"PrologSlurmctld={program}",
            f"EpilogSlurmctld={program}",
            "RequeueDelay=0",
        ),
    )
    (tmp_path / "cluster").mkdir()
    yield from run_cluster(tmp_path / "cluster", request, spec)


@pytest.mark.timeout(90)
def test_prolog_and_epilog_slurmctld_run_around_every_job(
    controller_scripts: TestCluster, tmp_path: Path
) -> None:
    cluster = controller_scripts
    job = cluster.sbatch("-N2", "-J", "around", "--wrap", "exit 2")
    assert cluster.wait_state(job)["JobState"] == "FAILED"
    pro = env_file(tmp_path / f"ctld-prolog_slurmctld-{job}")
    assert (pro["SLURM_JOB_NAME"], pro["SLURM_JOB_NODELIST"]) == ("around", "n[1-2]")
    epilog = tmp_path / f"ctld-epilog_slurmctld-{job}"
    wait_until(epilog.exists, 20, "EpilogSlurmctld")
    assert env_file(epilog)["SLURM_JOB_EXIT_CODE2"] == "2:0"
    # A failing PrologSlurmctld requeues a batch job (not held), as Slurm does.
    (tmp_path / "fail-ctld-prolog").touch()
    again = cluster.sbatch("--wrap", "true")
    wait_until(lambda: cluster.job(again)["Restarts"] != "0", 30, "the job requeued")
    (tmp_path / "fail-ctld-prolog").unlink()
    done = cluster.wait_state(again, timeout=30)
    assert (done["JobState"], int(done["Restarts"]) >= 1) == ("COMPLETED", True)
    # An allocation without a script is cancelled.
    (tmp_path / "fail-ctld-prolog").touch()
    try:
        alloc = cluster.run("salloc", "--no-shell")
        assert alloc.rc == 0, alloc.err
        alloc_id = int(alloc.err.split()[-1])
        assert cluster.wait_state(alloc_id, timeout=30)["JobState"] == "CANCELLED"
    finally:
        (tmp_path / "fail-ctld-prolog").unlink()


@pytest.mark.timeout(60)
def test_srun_runs_its_prolog_and_epilog_and_a_failing_prolog_cancels_the_step(
    site: TestCluster, tmp_path: Path
) -> None:
    prolog = tmp_path / "srun-prolog"
    prolog.write_text(f'#!/bin/sh\nenv > "{tmp_path}/$SLURM_SCRIPT_CONTEXT"\nexit ${{FAIL:-0}}\n')
    prolog.chmod(0o755)
    ran = site.run("srun", f"--prolog={prolog}", f"--epilog={prolog}", "-N1", "true")
    assert ran.rc == 0, ran.err
    before = env_file(tmp_path / "prolog_srun")
    after = env_file(tmp_path / "epilog_srun")
    assert before["SLURM_STEP_ID"] == after["SLURM_STEP_ID"] == "0"
    assert before["SLURM_JOB_ID"] == after["SLURM_JOB_ID"]
    job = before["SLURM_JOB_ID"]
    assert site.wait_state(int(job))["JobState"] == "COMPLETED"
    failing = site.run("/usr/bin/env", "FAIL=3", "srun", f"--prolog={prolog}", "-N1", "true")
    assert failing.rc == 1
    assert "srun: error: srun prolog failed rc = 3. Aborting step." in failing.err
    job = env_file(tmp_path / "prolog_srun")["SLURM_JOB_ID"]
    rows = site.run("sacct", "-j", job, "-n", "-P", "-o", "JobID,State").out.split()
    assert f"{job}.0|CANCELLED" in rows


@pytest.mark.timeout(60)
def test_srun_task_prolog_runs_after_the_sites_and_sets_the_task_environment(
    site: TestCluster, tmp_path: Path
) -> None:
    mine = tmp_path / "my-task-prolog"
    mine.write_text('#!/bin/sh\necho "export MINE=$PROLOG_SAYS-and-mine"\n')
    mine.chmod(0o755)
    after = tmp_path / "my-task-epilog"
    after.write_text(f'#!/bin/sh\necho "$MINE" > "{tmp_path}/after-$SLURM_PROCID"\n')
    after.chmod(0o755)
    ran = site.run(
        "srun", "-n2", f"--task-prolog={mine}", f"--task-epilog={after}", "printenv", "MINE"
    )
    assert ran.rc == 0, ran.err
    assert sorted(line for line in ran.out.splitlines() if "mine" in line) == [
        "hello-0-and-mine",
        "hello-1-and-mine",
    ]
    assert (tmp_path / "after-1").read_text() == "hello-1-and-mine\n"
