"""TLSType=tls/openssl: every gRPC channel is TLS, and nothing in cleartext gets through.

One cluster made by ``ClusterSpec(tls=True)`` (as ``minislurm cluster up
--tls``): a CA and a certificate from ``openssl``, the controller and both
agents serving TLS only, the agents and the controller dialling each other
over TLS, and the commands (sbatch, squeue, srun to the agents) too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.conffile import read_client_config
from minislurm.local.cluster import ClusterSpec
from minislurm.security import auth
from minislurm.wire import tls
from minislurm.wire.agentclient import AgentClient
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture(scope="module")
def tls_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """A two-node cluster under TLSType=tls/openssl."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, tls=True)
    yield from run_cluster(tmp_path_factory.mktemp("tls"), request, spec)


def test_jobs_steps_and_queries_work_over_tls(tls_cluster: TestCluster) -> None:
    cluster = tls_cluster
    assert "TLSType=tls/openssl" in Path(cluster.local.conf_path).read_text()
    job = cluster.sbatch("-N2", script="#!/bin/sh\necho batch-ran\nsrun -N2 -l echo step-ran\n")
    assert cluster.wait_state(job)["JobState"] == "COMPLETED"
    out = (cluster.workdir / f"slurm-{job}.out").read_text().split("\n")
    assert out[0] == "batch-ran" and sorted(out[1:3]) == ["0: step-ran", "1: step-ran"], out
    result = cluster.run("srun", "-N2", "-n2", "echo", "direct")
    assert (result.rc, result.out.split()) == (0, ["direct", "direct"]), result
    listed = cluster.run("squeue", "-h", "-t", "all", "-j", str(job), "-o", "%i %T")
    assert listed.out.split() == [str(job), "COMPLETED"], listed


def test_cleartext_and_untrusted_clients_are_refused(
    tls_cluster: TestCluster, tmp_path: Path
) -> None:
    cluster = tls_cluster
    config = read_client_config(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)
    agent_port = _agent_port(cluster, "n1")
    with ControllerClient(config.host, config.port, 5, signer=signer) as plain:
        with pytest.raises(RpcError) as refused:
            plain.call("GetNodes")
    assert refused.value.code == "UNAVAILABLE"
    with AgentClient("127.0.0.1", agent_port, 5, signer=signer) as plain_agent:
        with pytest.raises(RpcError):
            plain_agent.call("Ping")
    other_ca = tmp_path / "other-ca.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(tmp_path / "k"), "-out", str(other_ca), "-days", "1",
         "-subj", "/CN=someone else"],
        check=True, capture_output=True,
    )  # fmt: skip
    untrusting = tls.client_context(str(other_ca))
    with ControllerClient(config.host, config.port, 5, signer=signer, tls=untrusting) as c:
        with pytest.raises(RpcError, match="CERTIFICATE_VERIFY_FAILED"):
            c.call("GetNodes")
    trusting = tls.client_context(config.tls_ca)
    with ControllerClient(config.host, config.port, 5, signer=signer, tls=trusting) as c:
        assert sorted(n.name for n in c.call("GetNodes").nodes) == ["n1", "n2"]
    with AgentClient("127.0.0.1", agent_port, 5, signer=signer, tls=trusting) as agent:
        agent.call("Ping")


def _agent_port(cluster: TestCluster, node: str) -> int:
    """The port the node's slurmd says it listens on."""
    log = cluster.home / "log" / f"slurmd-{node}.log"
    found = wait_until(
        lambda: re.search(r"listening on [\d.]+:(\d+)", log.read_text()), 10, "slurmd's port"
    )
    return int(found.group(1))
