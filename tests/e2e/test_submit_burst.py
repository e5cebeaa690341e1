"""Bursts of concurrent submissions: committed in groups, yet each acknowledged job is durable
and counted against limits while its group is still open."""

from __future__ import annotations

import os
import pwd
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import STATE_DBS, TestCluster, run_cluster

from minislurm.conffile import read_controller_address
from minislurm.local.cluster import ClusterSpec
from minislurm.security import auth
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError

pytestmark = pytest.mark.timeout(180)

CLIENTS = 8


def _spec(cluster: TestCluster, name: str) -> dict[str, object]:
    work = str(cluster.workdir)
    return {
        "name": name,
        "script": b"#!/bin/sh\ntrue\n",
        "work_dir": work,
        "submit_dir": work,
        "batch": True,
        "hold": True,
        "uid": os.getuid(),
        "gid": os.getgid(),
        "user": pwd.getpwuid(os.getuid()).pw_name,
        "environment": {"PATH": os.environ.get("PATH", "")},
    }


def _burst(cluster: TestCluster, submit: Callable[[ControllerClient, int], None]) -> None:
    """Run ``submit(client, n)`` in CLIENTS threads at once, each with its own connection."""
    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)
    start = threading.Barrier(CLIENTS)
    errors: list[BaseException] = []

    def client(n: int) -> None:
        try:
            with ControllerClient(host, port, timeout=20, signer=signer) as ctl:
                ctl.call("Ping")
                start.wait()
                submit(ctl, n)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _squeue_ids(cluster: TestCluster) -> set[int]:
    out = cluster.run("squeue", "-h", "-o", "%i")
    assert out.rc == 0, out.err
    return {int(line) for line in out.out.split()}


@pytest.mark.parametrize("fresh_cluster", STATE_DBS, indirect=True)
def test_every_acknowledged_submission_of_a_burst_survives_sigkill(
    fresh_cluster: TestCluster,
) -> None:
    cluster = fresh_cluster
    acked: list[int] = []
    lock = threading.Lock()

    def submit(ctl: ControllerClient, n: int) -> None:
        for i in range(25):
            job_id = ctl.call("SubmitJob", spec=_spec(cluster, f"b{n}-{i}")).job_id
            with lock:
                acked.append(job_id)

    _burst(cluster, submit)
    assert len(acked) == len(set(acked)) == CLIENTS * 25
    cluster.kill_controller()
    cluster.start()
    assert _squeue_ids(cluster) >= set(acked)
    assert cluster.sbatch("--hold", "--wrap=true") == max(acked) + 1


@pytest.fixture
def limited_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster enforcing association limits."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600)
    yield from run_cluster(
        tmp_path, request, spec, "AccountingStorageEnforce=associations,limits\n"
    )


def test_max_submit_jobs_holds_for_submissions_committed_together(
    limited_cluster: TestCluster,
) -> None:
    cluster = limited_cluster
    user = pwd.getpwuid(os.getuid()).pw_name
    made = cluster.run("sacctmgr", "-i", "modify", "user", user, "set", "MaxSubmitJobs=3")
    assert made.rc == 0, made.err
    accepted: list[int] = []
    refused: list[str] = []
    lock = threading.Lock()

    def submit(ctl: ControllerClient, n: int) -> None:
        for i in range(2):
            try:
                job_id = ctl.call("SubmitJob", spec=_spec(cluster, f"m{n}-{i}")).job_id
            except RpcError as err:
                with lock:
                    refused.append(str(err))
            else:
                with lock:
                    accepted.append(job_id)

    _burst(cluster, submit)
    assert len(accepted) == 3, (accepted, refused)
    assert len(refused) == 2 * CLIENTS - 3
    assert all("AssocMaxSubmitJobLimit" in r for r in refused), refused
    assert _squeue_ids(cluster) == set(accepted)
