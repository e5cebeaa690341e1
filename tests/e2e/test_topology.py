"""A tree of switches on a live cluster: 32 nodes under 4 leaf switches of 8 and one spine.

Two slurmd processes of 16 nodes each; ``cluster up --topology`` installed
the topology.conf and set ``TopologyPlugin=topology/tree``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm import hostlist
from minislurm.local.cluster import ClusterSpec

TOPOLOGY = """\
SwitchName=leaf1 Nodes=n[1-8] LinkSpeed=100
SwitchName=leaf2 Nodes=n[9-16]
SwitchName=leaf3 Nodes=n[17-24]
SwitchName=leaf4 Nodes=n[25-32]
SwitchName=spine Switches=leaf[1-4]
"""
LEAVES = [f"n[{8 * k + 1}-{8 * k + 8}]" for k in range(4)]

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def tree(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    spec = ClusterSpec(
        nodes=32, nodes_per_slurmd=16, kill_wait=2, min_job_age=600, topology=TOPOLOGY
    )
    yield from run_cluster(tmp_path_factory.mktemp("tree"), request, spec)


def test_scontrol_shows_the_switches(tree: TestCluster) -> None:
    shown = tree.run("scontrol", "show", "topology")
    assert shown.rc == 0, shown.err
    assert shown.out.splitlines() == [
        "SwitchName=leaf1 Level=0 LinkSpeed=100 Nodes=n[1-8]",
        "SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=n[9-16]",
        "SwitchName=leaf3 Level=0 LinkSpeed=1 Nodes=n[17-24]",
        "SwitchName=leaf4 Level=0 LinkSpeed=1 Nodes=n[25-32]",
        "SwitchName=spine Level=1 LinkSpeed=1 Nodes=n[1-32] Switches=leaf[1-4]",
    ]
    # A node: the switches above it; nodes of two leaves: the switch that joins them.
    assert (
        tree.run("scontrol", "show", "topology", "n10")
        .out.split("\n")[0]
        .startswith("SwitchName=leaf2 ")
    )
    joined = tree.run("scontrol", "show", "topology", "n[7-9]")
    assert joined.out.startswith("SwitchName=spine ") and joined.out.count("\n") == 1
    missing = tree.run("scontrol", "show", "topology", "nosuch")
    assert missing.rc == 0 and missing.out == ""
    assert missing.err == (
        "scontrol: error: Topology information contains no switch or node named nosuch\n"
    )


def test_whole_leaf_jobs_get_a_leaf_each_and_see_their_address(tree: TestCluster) -> None:
    go = tree.home / "go"  # the jobs hold their leaves until all four have one
    script = (
        f"#!/bin/sh\nwhile [ ! -e {go} ]; do sleep 0.1; done\n"
        "env | grep ^SLURM_TOPOLOGY\nsrun -l printenv SLURM_TOPOLOGY_ADDR\n"
    )
    out = tree.home / "leaf-%j.out"
    jobs = [tree.sbatch("-N8", "--exclusive", "-o", str(out), script=script) for _ in range(4)]
    nodes = {tree.wait_state(job, "RUNNING")["NodeList"] for job in jobs}
    assert nodes == set(LEAVES)
    go.touch()
    for job in jobs:
        tree.wait_state(job, "COMPLETED")
    first = next(j for j in jobs if tree.job(j)["NodeList"] == "n[1-8]")
    text = (tree.home / f"leaf-{first}.out").read_text()
    assert "SLURM_TOPOLOGY_ADDR=spine.leaf1.n1\n" in text, text
    assert "SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node\n" in text, text
    tasks = {line for line in text.splitlines() if line[:1].isdigit()}
    assert tasks == {f"{i}: spine.leaf1.n{i + 1}" for i in range(8)}, text


def test_a_job_waits_for_one_leaf_and_starts_whole_on_the_first_freed(
    tree: TestCluster,
) -> None:
    # Six nodes of each leaf busy: eight free in all, two per leaf.
    fillers = [tree.sbatch("-N6", "--exclusive", "--wrap", "sleep 300") for _ in range(4)]
    for job in fillers:
        tree.wait_state(job, "RUNNING")
    assert {hostlist.expand(tree.job(j)["NodeList"])[0] for j in fillers} == {
        "n1",
        "n9",
        "n17",
        "n25",
    }
    waiting = tree.sbatch("-N8", "--exclusive", "--switches=1@1:00", "--wrap", "sleep 300")
    wait_until(lambda: tree.job(waiting)["Reason"] == "Resources", 30, "a pass to consider it")
    assert tree.job(waiting)["JobState"] == "PENDING"
    fields = tree.run("squeue", "-j", str(waiting), "-h", "-O", "ReqSwitch,Wait4Switch")
    assert fields.out.split() == ["1", "1:00"], fields.out
    assert "Switches=1@00:01:00" in tree.run("scontrol", "show", "job", str(waiting)).out

    second_leaf = next(j for j in fillers if tree.job(j)["NodeList"].startswith("n[9-"))
    tree.run("scancel", str(second_leaf))
    started = tree.wait_state(waiting, "RUNNING", timeout=60)
    assert started["NodeList"] == "n[9-16]", started
    tree.run("scancel", *map(str, [*fillers, waiting]))


def test_cluster_up_refuses_a_bad_topology(tree: TestCluster, tmp_path: Path) -> None:
    bad = tmp_path / "topology.conf"
    bad.write_text("SwitchName=leaf1 Nodes=n[1-8]\nSwitchName=top Switches=leaf[1-2]\n")
    home = tmp_path / "home"
    result = tree.run(
        "minislurm", "cluster", "up", "--home", str(home), "--nodes", "8", "--topology", str(bad)
    )
    assert result.rc == 1
    assert "topology.conf:2: switch top: child switch leaf2 is not defined" in result.err
    assert not (home / "slurm.conf").exists()
