"""A job runs as the user who submitted it, when slurmd runs as root."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster

from minislurm import auth
from minislurm.conffile import read_controller_address
from minislurm.ctlclient import ControllerClient

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="needs root to run jobs as another user")


@pytest.fixture
def public_cluster(request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose spool the job's user can reach (pytest's tmp dirs are root-only)."""
    home = Path(tempfile.mkdtemp(prefix="minislurm-priv-", dir="/tmp"))
    os.chmod(home, 0o755)
    try:
        yield from run_cluster(home, request)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_job_runs_as_its_user_and_writes_output_as_that_user(public_cluster: TestCluster) -> None:
    cluster = public_cluster
    nobody = pwd.getpwnam("nobody")
    work = cluster.workdir / "nobody"
    work.mkdir()
    os.chmod(work, 0o777)
    host, port = read_controller_address(cluster.local.conf_path)
    spec = {
        "name": "who",
        "script": b"#!/bin/sh\nid -u\nid -g\ntouch made-here\n",
        "work_dir": str(work),
        "batch": True,
        "uid": nobody.pw_uid,
        "gid": nobody.pw_gid,
        "user": "nobody",
        "environment": {"PATH": "/usr/bin:/bin"},
    }
    signer = auth.signer_for(cluster.local.conf_path)
    with ControllerClient(host, port, timeout=10, signer=signer) as client:
        job_id = client.call("SubmitJob", spec=spec).job_id
    info = cluster.wait_state(job_id)
    assert info["JobState"] == "COMPLETED", info
    out = work / f"slurm-{job_id}.out"
    assert out.read_text().split() == [str(nobody.pw_uid), str(nobody.pw_gid)]
    assert out.stat().st_uid == nobody.pw_uid
    assert (work / "made-here").stat().st_uid == nobody.pw_uid
