"""Two nodes as two hosts (network namespaces): batch jobs, srun -N2, a gloo all-reduce.

Each node has its own address, hostname and loopback, so anything that
only works on one machine (a controller on 127.0.0.1, MASTER_ADDR=localhost,
an unresolvable hostname) fails here.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import base_env, run_command
from netns_harness import NetnsTestCluster, run_netns_cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WHOAMI = "import socket; h = socket.gethostname(); print(h, socket.gethostbyname(h))"


@pytest.fixture(scope="module")
def netns_cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[NetnsTestCluster]:
    """Two namespace nodes (8 CPUs, 8 fake GPUs each) shared by the module's tests."""
    yield from run_netns_cluster(tmp_path_factory.mktemp("netns"), request)


def test_nodes_have_their_own_address_and_hostname(netns_cluster: NetnsTestCluster) -> None:
    net = netns_cluster.network
    out = netns_cluster.run("sinfo", "-N", "-h", "-p", "gpu", "-o", "%N %o %n").out
    assert out.split("\n")[:2] == [f"n1 {net.addr('n1')} n1", f"n2 {net.addr('n2')} n2"]
    assert net.addr("n1") != net.addr("n2")
    ping = netns_cluster.run_on("n2", "scontrol", "ping")
    assert ping.rc == 0 and "UP" in ping.out, ping.err


def test_batch_job_runs_on_its_host(netns_cluster: NetnsTestCluster) -> None:
    net = netns_cluster.network
    for node in ("n1", "n2"):
        script = f"#!/bin/bash\npython -c '{WHOAMI}'\n"
        job_id = netns_cluster.sbatch("-w", node, "-o", "who-%j.out", script=script)
        info = netns_cluster.wait_state(job_id, timeout=60)
        out = (netns_cluster.workdir / f"who-{job_id}.out").read_text()
        assert info["JobState"] == "COMPLETED", out
        assert out.split() == [node, net.addr(node)]


def test_srun_from_one_node_reaches_agents_on_both(netns_cluster: NetnsTestCluster) -> None:
    net = netns_cluster.network
    result = netns_cluster.run_on("n1", "srun", "-N2", "-l", "python", "-c", WHOAMI)
    assert result.rc == 0, result.err
    assert sorted(result.out.splitlines()) == [
        f"0: n1 {net.addr('n1')}",
        f"1: n2 {net.addr('n2')}",
    ]


def test_gloo_allreduce_across_two_hosts(netns_cluster: NetnsTestCluster) -> None:
    pytest.importorskip("torch")
    from test_ddp import ALLREDUCE, results

    script = f"""#!/bin/bash
echo "master=$MASTER_ADDR"
srun python {ALLREDUCE}
"""
    job_id = netns_cluster.sbatch(
        "-N2", "--ntasks-per-node=2", "--gres=gpu:2", "-o", "ddp-%j.out", script=script
    )
    info = netns_cluster.wait_state(job_id, timeout=240)
    out = netns_cluster.workdir / f"ddp-{job_id}.out"
    assert info["JobState"] == "COMPLETED", out.read_text()
    assert "master=n1\n" in out.read_text()
    ranks = results(out)
    assert [r["rank"] for r in ranks] == ["0", "1", "2", "3"]
    assert all(r["world"] == "4" and r["sum"] == "6" for r in ranks)
    assert [r["node"] for r in ranks] == ["n1", "n1", "n2", "n2"]


def _links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


def test_cluster_up_netns_beside_another_and_down_removes_it(
    netns_cluster: NetnsTestCluster, tmp_path: Path
) -> None:
    home = tmp_path / "second"
    env = base_env(home / "slurm.conf")
    args = ["--home", str(home)]
    up = run_command(["minislurm", "cluster", "up", "--netns", "--nodes", "2", *args], env)
    assert up.rc == 0, up.err
    second = NetnsTestCluster(home, netns_cluster.spec)
    try:
        net = second.network
        assert net.subnet != netns_cluster.network.subnet
        assert up.out.startswith(f"slurmctld at {net.controller_addr}:")
        result = second.run_on("n2", "srun", "-N2", "-l", "hostname")
        assert result.rc == 0, result.err
        assert sorted(result.out.split()) == ["0:", "1:", "n1", "n2"]
    finally:
        down = run_command(["minislurm", "cluster", "down", *args], env)
    assert down.rc == 0, down.err
    links = _links()
    assert net.bridge not in links and f"msv{net.tag}x" not in links
    assert not any(Path("/run/netns", net.namespace(n)).exists() for n in net.nodes)
    assert netns_cluster.run("srun", "-N2", "true").rc == 0  # the first cluster is untouched


def test_cluster_up_netns_refuses_a_plain_cluster(tmp_path: Path) -> None:
    home = tmp_path / "plain"
    home.mkdir()
    (home / "slurm.conf").write_text("ClusterName=x\n")
    result = run_command(
        ["minislurm", "cluster", "up", "--netns", "--home", str(home)],
        base_env(home / "slurm.conf"),
    )
    assert result.rc == 1
    assert "was made without --netns" in result.err
    assert sorted(p.name for p in home.iterdir()) == ["slurm.conf"]
