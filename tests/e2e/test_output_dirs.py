"""Output files whose directory a tool creates only after sbatch (or srun) has started.

submitit and its kind name the log directory after the job id, so they can
create it only once sbatch has printed the id; the job may already have
started. stepd waits a short grace for such a directory; a directory that
never appears, or any other failure to open the streams, fails the launch as
in Slurm 22.05 (``FAILED``, ``JobLaunchFailure``, ``ExitCode=0:53``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import TestCluster
from test_sacct import sacct_rows

pytestmark = pytest.mark.timeout(90)

LATE = 0.3  # seconds after the command returned (or started) that the directory appears


@contextmanager
def created_later(directory: Path) -> Iterator[None]:
    """Create ``directory`` LATE seconds after the block's start, on a timer thread."""
    timer = threading.Timer(LATE, directory.mkdir)
    timer.start()
    try:
        yield
    finally:
        timer.join()


def test_a_job_whose_output_directory_appears_after_sbatch_completes(
    cluster: TestCluster, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    job_id = cluster.sbatch("-o", f"{logs}/%j/%j_0_log.out", "--wrap", "echo ran")
    with created_later(logs / str(job_id)):
        info = cluster.wait_state(job_id)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0"), info
    assert (logs / str(job_id) / f"{job_id}_0_log.out").read_text() == "ran\n"


def test_srun_task_output_whose_directory_appears_after_srun_started(
    cluster: TestCluster, tmp_path: Path
) -> None:
    late = tmp_path / "late"
    with created_later(late):
        srun = cluster.spawn("srun", "-N1", "-n2", "-o", f"{late}/%t.out", "echo", "ran")
        _, err = srun.communicate(timeout=60)
    assert srun.returncode == 0, err
    assert [(late / f"{task}.out").read_text() for task in range(2)] == ["ran\n", "ran\n"]


@pytest.mark.parametrize("why", ["never-created", "not-a-directory", "missing-input"])
def test_streams_that_cannot_be_opened_fail_the_launch_as_slurm_does(
    cluster: TestCluster, tmp_path: Path, why: str
) -> None:
    (tmp_path / "a-file").write_text("")
    options = {
        "never-created": ["-o", f"{tmp_path}/never/%j.out"],
        "not-a-directory": ["-o", f"{tmp_path}/a-file/%j.out"],
        "missing-input": ["-i", f"{tmp_path}/no-input", "-o", f"{tmp_path}/%j.out"],
    }[why]
    job_id = cluster.sbatch(*options, "--wrap", "cat")
    info = cluster.wait_state(job_id)
    assert (info["JobState"], info["Reason"], info["ExitCode"]) == (
        "FAILED",
        "JobLaunchFailure",
        "0:53",
    ), info
    fields = "JobID,State,ExitCode,DerivedExitCode"
    assert sacct_rows(cluster, 2, "-j", str(job_id), "-o", fields, timeout=20) == [
        [str(job_id), "FAILED", "0:53", "0:0"],
        [f"{job_id}.batch", "CANCELLED", "0:53", ""],
    ]
    assert not (tmp_path / "never").exists()
