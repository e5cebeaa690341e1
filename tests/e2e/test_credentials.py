"""slurmd launches nothing without a valid, unexpired credential signed by the controller."""

from __future__ import annotations

import time

import pytest
from conftest import TestCluster

from minislurm.conffile import read_controller_address
from minislurm.security import auth, cred
from minislurm.wire.agentclient import AgentClient
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError
from minislurm.wire.rpc import minislurm_pb2 as pb


def _agent(cluster: TestCluster, node: str) -> AgentClient:
    host, port = read_controller_address(cluster.local.conf_path)
    signer = auth.signer_for(cluster.local.conf_path)
    with ControllerClient(host, port, timeout=10, signer=signer) as ctl:
        info = next(n for n in ctl.call("GetNodes").nodes if n.name == node)
    return AgentClient(info.addr, info.port, timeout=10)


def _credential(
    key: bytes, expires: float, job_id: int = 999, node: str = "n1"
) -> dict[str, object]:
    payload = pb.StepCredential(
        job_id=job_id,
        step_id=0,
        uid=0,
        gid=0,
        user="root",
        expires=int(expires),
        nodes=[pb.StepNode(node=node, addr="127.0.0.1", cpus=1, task_ids=[0])],
        ntasks=1,
    ).SerializeToString()
    return {"payload": payload, "signature": cred.sign(key, payload)}


def _launch(cluster: TestCluster, credential: dict[str, object], job_id: int = 999) -> None:
    marker = cluster.workdir / f"forged-{job_id}"
    with _agent(cluster, "n1") as agent:
        stream = agent.stream(
            "LaunchTasks",
            credential=credential,
            job_id=job_id,
            step_id=0,
            argv=["/bin/sh", "-c", f"touch {marker}"],
            cwd=str(cluster.workdir),
            environment={"PATH": "/usr/bin:/bin"},
        )
        try:
            while not stream.done:
                stream.read(block=True)
        finally:
            assert not marker.exists()


@pytest.mark.parametrize("how", ["forged", "wrong key", "expired", "other job", "other node"])
def test_agent_refuses_launches_without_a_valid_credential(cluster: TestCluster, how: str) -> None:
    key = cred.load_key(cred.key_path(cluster.local.conf_path))
    now = time.time()
    credential = {
        "forged": {**_credential(key, now + 60), "signature": b"\0" * 32},
        "wrong key": _credential(b"another key of thirty-two bytes!!", now + 60),
        "expired": _credential(key, now - 1),
        "other job": _credential(key, now + 60, job_id=1000),
        "other node": _credential(key, now + 60, node="n2"),
    }[how]
    with pytest.raises(RpcError) as err:
        _launch(cluster, credential)
    assert err.value.code == "PERMISSION_DENIED"
