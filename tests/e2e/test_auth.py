"""Every RPC needs a valid credential: forged, replayed, expired or missing ones change nothing.

Under the default ``AuthType=auth/hmac`` and under ``auth/munge`` (real munged;
skipped where it is not running).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.conffile import read_controller_address
from minislurm.security import auth, authd, cred, munge
from minislurm.wire.agentclient import AgentClient
from minislurm.wire.ctlclient import ControllerClient
from minislurm.wire.h2grpc import RpcError

pytestmark = pytest.mark.timeout(120)


def _client(cluster: TestCluster, signer: auth.Signer | None) -> ControllerClient:
    host, port = read_controller_address(cluster.local.conf_path)
    return ControllerClient(host, port, timeout=10, signer=signer)


def _key(cluster: TestCluster) -> bytes:
    return cred.load_key(cred.key_path(cluster.local.conf_path))


def _ctld_log(cluster: TestCluster) -> str:
    return (cluster.home / "log" / "slurmctld.log").read_text(errors="replace")


def _held_job(cluster: TestCluster) -> int:
    return cluster.sbatch("--hold", "-J", "target", "--wrap=true")


def _signed(key: bytes, uid: int = 0, issued: Callable[[], float] = time.time) -> auth.Signer:
    return lambda method: auth.make(key, uid, 0, "h", issued(), method)


def _replaying(signer: auth.Signer) -> auth.Signer:
    """Signs once, then sends that same credential again and again."""
    first: list[str] = []

    def sign(method: str) -> str:
        if not first:
            first.append(signer(method))
        return first[0]

    return sign


def _other_method(key: bytes) -> auth.Signer:
    return lambda method: auth.make(key, 0, 0, "h", time.time(), method + "x")


def _tampered(key: bytes) -> auth.Signer:
    """A credential made for uid 1000 and edited to say uid 0."""
    return lambda method: auth.make(key, 1000, 0, "h", time.time(), method).replace(
        "v1:1000:", "v1:0:", 1
    )


BAD: dict[str, Callable[[bytes], auth.Signer | None]] = {
    "missing": lambda key: None,
    "forged": lambda key: _signed(b"not the cluster key, but 32 long"),
    "expired": lambda key: _signed(key, issued=lambda: time.time() - auth.TTL - 5),
    "future": lambda key: _signed(key, issued=lambda: time.time() + auth.TTL + 60),
    "other method": _other_method,
    "tampered": _tampered,
    "garbage": lambda key: lambda method: "v1:0:0:h:x:y:z",
}


@pytest.mark.parametrize("how", sorted(BAD))
def test_bad_credential_is_unauthenticated_logged_and_changes_nothing(
    cluster: TestCluster, how: str
) -> None:
    job_id = _held_job(cluster)
    with _client(cluster, BAD[how](_key(cluster))) as client:
        for method, fields in (
            ("CancelJobs", {"job_ids": [job_id]}),
            ("UpdateNode", {"names": "n1", "state": "DRAIN", "reason": "x"}),
            ("GetJobs", {}),
        ):
            with pytest.raises(RpcError) as err:
                client.call(method, **fields)
            assert err.value.code == "UNAUTHENTICATED", (method, err.value)
            assert "Protocol authentication error" in err.value.details
    assert cluster.state(job_id) == "PENDING"
    assert "DRAIN" not in cluster.run("sinfo", "-h", "-n", "n1", "-o", "%T").out.upper()
    wait_until(
        lambda: "auth: CancelJobs from ipv4:127.0.0.1" in _ctld_log(cluster),
        5,
        "the rejection in slurmctld.log",
    )
    assert cluster.run("scancel", str(job_id)).rc == 0


def test_replayed_credential_is_rejected_after_its_first_use(cluster: TestCluster) -> None:
    job_id = _held_job(cluster)
    with _client(cluster, _replaying(_signed(_key(cluster)))) as client:
        assert [j.job_id for j in client.call("GetJobs", job_ids=[job_id]).jobs] == [job_id]
        with pytest.raises(RpcError) as err:
            client.call("GetJobs", job_ids=[job_id])
    assert err.value.code == "UNAUTHENTICATED"
    assert "replayed" in err.value.details
    assert "rejected: credential replayed" in _ctld_log(cluster)
    assert cluster.run("scancel", str(job_id)).rc == 0


def test_credential_used_before_a_controller_restart_is_refused_after_it(
    fresh_cluster: TestCluster,
) -> None:
    cluster = fresh_cluster
    replaying = _replaying(_signed(_key(cluster)))
    with _client(cluster, replaying) as client:
        client.call("GetJobs")
    cluster.kill_controller()
    cluster.start()
    with _client(cluster, replaying) as client, pytest.raises(RpcError) as err:
        client.call("GetJobs")
    assert err.value.code == "UNAUTHENTICATED"
    assert "issued before this daemon started" in err.value.details


def test_the_uid_in_a_request_is_the_authenticated_one(cluster: TestCluster) -> None:
    """A client cannot claim root in the request body: requester_uid is overwritten."""
    job_id = _held_job(cluster)  # root's
    with _client(cluster, _signed(_key(cluster), uid=4242)) as client:
        results = client.call("CancelJobs", job_ids=[job_id], requester_uid=0).results
        assert [r.error for r in results] == ["Access/permission denied"]
        with pytest.raises(RpcError) as err:
            client.call("UpdateNode", names="n1", state="DRAIN", reason="x", requester_uid=0)
        assert err.value.code == "PERMISSION_DENIED"
        spec = {"name": "x", "script": b"#!/bin/sh\n", "uid": 0, "gid": 0, "user": "root"}
        with pytest.raises(RpcError) as err:
            client.call("SubmitJob", spec={**spec, "work_dir": "/tmp", "batch": True})
        assert (err.value.code, err.value.details) == (
            "PERMISSION_DENIED",
            "Access/permission denied",
        )
        with pytest.raises(RpcError) as err:
            client.call("JobComplete", node="n1")
        assert err.value.code == "PERMISSION_DENIED"
        with pytest.raises(RpcError) as err:  # sdiag -r: operators only
            client.call("GetStats", reset=True, requester_uid=0)
        assert err.value.code == "PERMISSION_DENIED"
    assert cluster.state(job_id) == "PENDING"
    assert cluster.run("scancel", str(job_id)).rc == 0


def test_agent_port_refuses_calls_not_from_the_controller(cluster: TestCluster) -> None:
    with _client(cluster, auth.signer_for(cluster.local.conf_path)) as ctl:
        info = next(n for n in ctl.call("GetNodes").nodes if n.name == "n1")
    for signer, code in (
        (None, "UNAUTHENTICATED"),
        (_signed(b"not the cluster key, but 32 long"), "UNAUTHENTICATED"),
        (_signed(_key(cluster), uid=4242), "PERMISSION_DENIED"),
    ):
        with AgentClient(info.addr, info.port, timeout=10, signer=signer) as agent:
            for method in ("Ping", "TerminateJob", "SignalJob"):
                with pytest.raises(RpcError) as err:
                    agent.call(method)
                assert err.value.code == code, (method, signer)
    with AgentClient(info.addr, info.port, timeout=10, signer=_signed(_key(cluster))) as agent:
        assert agent.call("Ping").name == "n1"


# ------------------------------------------------------------------ AuthType=auth/munge


@pytest.fixture(scope="module")
def munge_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """A cluster whose daemons and commands authenticate through munged."""
    if not munge.running():
        pytest.skip("munge is not installed or munged is not running (apt-get install munge)")
    home = tmp_path_factory.mktemp("munge")
    yield from run_cluster(home, request, conf_lines="AuthType=auth/munge\n")


def _munged(*args: str) -> auth.Signer:
    def sign(method: str) -> str:
        done = subprocess.run(["munge", *args, "-s", method], capture_output=True, check=True)
        return done.stdout.decode().strip()

    return sign


def test_munge_cluster_works_through_the_commands(munge_cluster: TestCluster) -> None:
    job_id = munge_cluster.sbatch("--wrap=true")
    assert munge_cluster.wait_state(job_id)["JobState"] == "COMPLETED"
    config = munge_cluster.run("scontrol", "show", "config").out.splitlines()
    assert "AuthType                = auth/munge" in config


@pytest.mark.parametrize("how", ["missing", "forged", "hmac", "other method", "replayed"])
def test_munge_rejects_bad_credentials(munge_cluster: TestCluster, how: str) -> None:
    cluster = munge_cluster
    job_id = _held_job(cluster)
    signer = {
        "missing": None,
        "forged": lambda method: "MUNGE:AwQFAAB" + "x" * 80 + ":",
        "hmac": _signed(_key(cluster)),  # the wrong kind for this cluster
        "other method": lambda method: _munged()(method + "x"),
        "replayed": _replaying(_munged()),
    }[how]
    with _client(cluster, signer) as client:
        if how == "replayed":
            client.call("GetJobs", job_ids=[job_id])
        with pytest.raises(RpcError) as err:
            client.call("CancelJobs", job_ids=[job_id])
    assert err.value.code == "UNAUTHENTICATED", err.value
    if how == "replayed":
        assert "Replayed credential" in err.value.details
    assert cluster.state(job_id) == "PENDING"
    assert "auth: CancelJobs from ipv4:127.0.0.1" in _ctld_log(cluster)
    assert cluster.run("scancel", str(job_id)).rc == 0


def test_munge_rejects_an_expired_credential(munge_cluster: TestCluster) -> None:
    cluster = munge_cluster
    job_id = _held_job(cluster)
    made = time.time()
    token = _munged("--ttl=1")("/minislurm.v1.SlurmController/CancelJobs")
    # munged's clock is the one that matters; wait it out on ours (1 s TTL + 1 s granularity).
    wait_until(lambda: time.time() > made + 2.5, 5, "the credential's TTL to pass")
    with _client(cluster, lambda method: token) as client, pytest.raises(RpcError) as err:
        client.call("CancelJobs", job_ids=[job_id])
    assert (err.value.code, "Expired credential" in err.value.details) == ("UNAUTHENTICATED", True)
    assert cluster.state(job_id) == "PENDING"
    assert cluster.run("scancel", str(job_id)).rc == 0


# ------------------------------------------------------------------ the kiosk


def test_kiosk_signs_for_the_caller_the_kernel_names(tmp_path: Path) -> None:
    key = b"k" * 64
    path = str(tmp_path / auth.SOCKET_FILE)

    async def scenario() -> tuple[str, str, object]:
        server = await authd.serve(path, key)
        try:
            token = await asyncio.to_thread(auth.KioskSigner(path), "/svc/Method")
            with pytest.raises(auth.AuthError) as refused:
                await asyncio.to_thread(auth.KioskSigner(path), "no-slash")
            second = await authd.serve_unless_served(path, key)
        finally:
            server.close()
        return token, str(refused.value), second

    token, refused, second = asyncio.run(scenario())
    who = auth.check(key, token, "/svc/Method", time.time(), auth.ReplayCache())
    assert (who.uid, who.gid) == (os.getuid(), os.getgid())
    assert "bad request" in refused
    assert second is None  # one kiosk answers already
    assert os.stat(path).st_mode & 0o777 == 0o666


@pytest.fixture
def slurm_user_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose slurm.conf names SlurmUser=nobody."""
    yield from run_cluster(tmp_path, request, conf_lines="SlurmUser=nobody\n")


def test_agents_trust_slurm_user_as_the_controller(slurm_user_cluster: TestCluster) -> None:
    """With SlurmUser=nobody (slurmctld not root), agents take its calls, and no one else's."""
    cluster = slurm_user_cluster
    with _client(cluster, auth.signer_for(cluster.local.conf_path)) as ctl:
        info = next(n for n in ctl.call("GetNodes").nodes if n.name == "n1")
    key = _key(cluster)
    with AgentClient(info.addr, info.port, timeout=10, signer=_signed(key, 65534)) as agent:
        assert agent.call("Ping").name == "n1"
    with AgentClient(info.addr, info.port, timeout=10, signer=_signed(key, 4242)) as agent:
        with pytest.raises(RpcError) as err:
            agent.call("Ping")
        assert err.value.code == "PERMISSION_DENIED"
