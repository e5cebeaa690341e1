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
    node = tree.run("scontrol", "show", "node", "n10").out
    assert node.rstrip().endswith("\n   Topology=default:leaf2"), node
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


BLOCKS = "".join(f"BlockName=b{k + 1} Nodes={LEAVES[k]}\n" for k in range(4)) + (
    "BlockSizes=8,16,32\n"
)


@pytest.fixture(scope="module")
def blocks(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    spec = ClusterSpec(nodes=32, nodes_per_slurmd=16, kill_wait=2, min_job_age=600, topology=BLOCKS)
    yield from run_cluster(tmp_path_factory.mktemp("blocks"), request, spec)


def test_scontrol_shows_the_blocks(blocks: TestCluster) -> None:
    lines = blocks.run("scontrol", "show", "topology").out.splitlines()
    assert lines[0] == "BlockName=b1 BlockIndex=0 Nodes=n[1-8] BlockSize=8"
    assert "AggregatedBlock=b[1-2] BlockIndex=0 Nodes=n[1-16] BlockSize=16" in lines
    assert lines[-1] == "AggregatedBlock=b[1-4] BlockIndex=0 Nodes=n[1-32] BlockSize=32"
    assert "Topology=default:b3" in blocks.run("scontrol", "-o", "show", "node", "n17").out


def test_segments_get_whole_base_blocks_and_exclusive_topo_keeps_others_off(
    blocks: TestCluster,
) -> None:
    # Two nodes of b1 taken: no segment of 8 fits there.
    first = blocks.sbatch("-N2", "--exclusive", "--wrap", "sleep 300")
    assert blocks.wait_state(first, "RUNNING")["NodeList"] == "n[1-2]"
    out = blocks.home / "seg-%j.out"
    segmented = blocks.sbatch(
        "-N16",
        "--segment=8",
        "-o",
        str(out),
        "--wrap",
        "printenv SLURM_JOB_SEGMENT_SIZE; sleep 300",
    )
    assert blocks.wait_state(segmented, "RUNNING")["NodeList"] == "n[9-24]"
    size = blocks.run("squeue", "-j", str(segmented), "-h", "-O", "SegmentSize").out.split()
    assert size == ["8"]
    wait_until(lambda: (blocks.home / f"seg-{segmented}.out").read_text() == "8\n", 30, "its env")

    # b4 is the only clean block: a topology-exclusive job takes six of its nodes...
    mine = blocks.sbatch("-N6", "--exclusive=topo", "--wrap", "sleep 300")
    assert blocks.wait_state(mine, "RUNNING")["NodeList"] == "n[25-30]"
    # ...and a one-node job, which would fill the fullest block (b4's last two), goes to b1.
    small = blocks.sbatch("-N1", "--exclusive", "--wrap", "sleep 300")
    assert blocks.wait_state(small, "RUNNING")["NodeList"] == "n3"
    blocks.run("scancel", *map(str, [first, segmented, mine, small]))


def test_a_node_count_segments_do_not_divide_is_refused(blocks: TestCluster) -> None:
    result = blocks.run("sbatch", "-N12", "--segment=8", "--wrap", "true")
    assert result.rc == 1
    assert result.err == (
        "sbatch: error: Batch job submission failed: "
        "Requested node configuration is not available\n"
    )
