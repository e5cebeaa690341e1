"""Commands ride out a controller restart, as Slurm's do for MessageTimeout seconds."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import base_env, run_command

from minislurm.local.cluster import ClusterSpec, LocalCluster
from minislurm.security import cred

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def patient_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose commands keep trying an absent controller for 30 s."""
    yield from run_cluster(tmp_path, request, conf_lines="MessageTimeout=30\n")


def test_sbatch_waits_for_a_restarting_controller(patient_cluster: TestCluster) -> None:
    cluster = patient_cluster
    cluster.kill_controller()
    sbatch = cluster.spawn("sbatch", "--parsable", "--wrap=true")
    queue = cluster.spawn("squeue", "-h", "-o", "%i")
    cluster.start()
    out, err = sbatch.communicate(timeout=60)
    assert sbatch.returncode == 0, err
    job_id = int(out)
    assert queue.communicate(timeout=60)[0].split() in ([], [str(job_id)])
    assert queue.returncode == 0
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    listed = cluster.run("squeue", "-h", "-t", "all", "-o", "%i").out.split()
    assert listed == [str(job_id)]  # submitted once, though tried several times


def test_srun_waiting_for_resources_survives_a_controller_restart(
    patient_cluster: TestCluster,
) -> None:
    cluster = patient_cluster
    gate = cluster.workdir / "gate"
    holder = cluster.sbatch(
        "-N2", "--exclusive", script=f"#!/bin/bash\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n"
    )
    cluster.wait_state(holder, "RUNNING")
    srun = cluster.spawn("srun", "-N1", "echo", "ran")
    assert srun.stderr is not None
    assert "queued and waiting for resources" in srun.stderr.readline()
    cluster.kill_controller()
    cluster.start()
    gate.touch()
    out, err = srun.communicate(timeout=60)
    assert (srun.returncode, out) == (0, "ran\n"), err
    (job_id,) = [
        int(j)
        for j in cluster.run("squeue", "-h", "-t", "all", "-o", "%i").out.split()
        if int(j) != holder
    ]
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"


def test_unreachable_controller_fails_after_message_timeout(tmp_path: Path) -> None:
    local = LocalCluster(str(tmp_path))
    local.write_config(ClusterSpec())
    cred.generate_key(cred.key_path(local.conf_path))
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        text = (
            Path(local.conf_path)
            .read_text()
            .replace(
                "SlurmctldPort=6817\n",
                f"SlurmctldPort={closed.getsockname()[1]}\nMessageTimeout=2\n",
            )
        )
        Path(local.conf_path).write_text(text)
        result = run_command(["squeue"], base_env(local.conf_path), tmp_path)
    assert (result.rc, result.out) == (1, "")
    assert result.err == (
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
    )
