"""What a re-read slurm.conf changes in a running slurmctld, and what waits for a restart."""

from __future__ import annotations

from dataclasses import replace

from ctld.reconfig import live_part
from minislurm.config import NodeConfig, PartitionConfig, SlurmConfig

OLD = SlurmConfig(
    controller_port=6817,
    nodes=(NodeConfig("n1", "n1", "n1"), NodeConfig("n2", "n2", "n2")),
    partitions=(PartitionConfig("gpu", ("n1", "n2"), default=True),),
)


def test_live_settings_apply_and_nothing_waits() -> None:
    new = replace(OLD, kill_wait=5, prolog=("/p",), priority_weight_age=1000)
    new = replace(new, partitions=(replace(OLD.partitions[0], max_time=60),))
    live, waiting = live_part(OLD, new, 6817)
    assert live == new and waiting == []


def test_what_needs_a_restart_is_kept_and_named() -> None:
    nodes = (*OLD.nodes, NodeConfig("n3", "n3", "n3"))
    new = replace(OLD, nodes=nodes, cluster_name="other", kill_wait=9)
    live, waiting = live_part(OLD, new, 6817)
    assert (live.nodes, live.cluster_name, live.kill_wait) == (OLD.nodes, OLD.cluster_name, 9)
    assert waiting == ["ClusterName", "NodeName"]


def test_a_partitions_nodes_wait_but_its_settings_do_not() -> None:
    moved = replace(OLD.partitions[0], nodes=("n1",), max_time=30)
    live, waiting = live_part(OLD, replace(OLD, partitions=(moved,)), 6817)
    assert live.partitions == (replace(moved, nodes=("n1", "n2")),)
    assert waiting == ["PartitionName=gpu Nodes"]
    added = (*OLD.partitions, PartitionConfig("cpu", ("n1",)))
    live, waiting = live_part(OLD, replace(OLD, partitions=added), 6817)
    assert live.partitions == OLD.partitions
    assert waiting == ["PartitionName (added or removed)"]


def test_the_port_it_listens_on_is_no_change() -> None:
    written = replace(OLD, controller_port=40123)  # a local cluster writes the bound port
    assert live_part(replace(OLD, controller_port=0), written, 40123)[1] == []
    assert live_part(OLD, written, 6817)[1] == ["SlurmctldPort"]
