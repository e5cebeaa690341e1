"""Tests of minislurm.topology: topology.conf read as Slurm reads it, with errors at file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from minislurm.config import load_slurm_conf
from minislurm.errors import ConfigError
from minislurm.topology import BLOCK, TREE, Topology, load_topology, node_address, plugin_of

NODES = [f"n{i}" for i in range(1, 33)]
TREE_TEXT = """\
# four leaves of eight nodes under one spine
SwitchName=leaf1 Nodes=n[1-8] LinkSpeed=100
SwitchName=leaf2 Nodes=n[9-16]
SwitchName=leaf3 Nodes=n[17-24]
SwitchName=leaf4 Nodes=n[25-32]
SwitchName=spine Switches=leaf[1-4]
"""


def load(tmp_path: Path, text: str, plugin: str = TREE, params: tuple[str, ...] = ()) -> Topology:
    path = tmp_path / "topology.conf"
    path.write_text(text)
    topo = load_topology(str(path), plugin, params, NODES)
    assert topo is not None
    return topo


def error(tmp_path: Path, text: str, plugin: str = TREE) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text, plugin)
    return caught.value


def test_a_tree_has_levels_and_every_node_beneath_each_switch(tmp_path: Path) -> None:
    topo = load(tmp_path, TREE_TEXT)
    assert topo.tree and not topo.block and not topo.optional
    leaf1, _, _, leaf4, spine = topo.switches
    assert (leaf1.name, leaf1.level, leaf1.link_speed) == ("leaf1", 0, 100)
    assert leaf4.nodes == tuple(NODES[24:])
    assert (spine.level, spine.switches, spine.nodes) == (
        1,
        ("leaf1", "leaf2", "leaf3", "leaf4"),
        tuple(NODES),
    )
    assert spine.link_speed == 1


def test_a_node_address_runs_from_the_top_switch_to_the_node(tmp_path: Path) -> None:
    topo = load(tmp_path, TREE_TEXT)
    assert topo.address("n10") == ("spine.leaf2.n10", "switch.switch.node")
    assert node_address(topo, "n1") == ("spine.leaf1.n1", "switch.switch.node")
    assert node_address(None, "n1") == ("n1", "node")


def test_a_node_under_no_switch_is_addressed_alone(tmp_path: Path) -> None:
    topo = load(tmp_path, "SwitchName=s0 Nodes=n[1-2]\n")
    assert topo.address("n3") == ("n3", "node")
    assert topo.address("n2") == ("s0.n2", "switch.node")


def test_levels_count_from_the_deepest_child(tmp_path: Path) -> None:
    text = """\
SwitchName=a Nodes=n[1-2]
SwitchName=b Nodes=n[3-4]
SwitchName=ab Switches=a,b
SwitchName=top Switches=ab,c
SwitchName=c Nodes=n5
"""
    levels = {s.name: s.level for s in load(tmp_path, text).switches}
    assert levels == {"a": 0, "b": 0, "ab": 1, "top": 2, "c": 0}


def test_topo_optional(tmp_path: Path) -> None:
    assert load(tmp_path, TREE_TEXT, params=("TopoOptional",)).optional


def test_dragonfly_is_read_from_topology_param_in_any_case(tmp_path: Path) -> None:
    assert not load(tmp_path, TREE_TEXT).dragonfly
    topo = load(tmp_path, TREE_TEXT, params=("topooptional", "DRAGONFLY"))
    assert topo.dragonfly and topo.optional
    assert not load(tmp_path, TREE_TEXT, params=("TopoOptional",)).dragonfly


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s0 Nodes=n3\n", 2, "defined twice"),
        ("SwitchName=s0 Nodes=n1 Switches=s1\n", 1, "either Nodes= or Switches="),
        ("SwitchName=s0\n", 1, "either Nodes= or Switches="),
        ("SwitchName=s0 Nodes=n[1-2,99]\n", 1, "n99 not in slurm.conf"),
        ("SwitchName=top Switches=s[0-1]\nSwitchName=s0 Nodes=n1\n", 1, "s1 is not defined"),
        ("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", 2, "its own ancestor"),
        ("SwitchName=s0 Nodes=n1 Foo=bar\n", 1, "unknown key Foo"),
        ("SwitchName=s0 Nodes=n1 LinkSpeed=fast\n", 1, "LinkSpeed"),
        ("BlockName=b1 Nodes=n[1-8]\n", 1, "topology/tree"),
        (f"SwitchName={'s' * 65} Nodes=n1\n", 1, "1 to 64 characters"),
    ],
)
def test_a_bad_tree_is_an_error_at_its_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    err = error(tmp_path, text)
    assert err.path.endswith("topology.conf") and err.line == line, err
    assert words in err.message, err


def test_blocks_and_their_sizes(tmp_path: Path) -> None:
    text = "".join(f"BlockName=b{k + 1} Nodes=n[{8 * k + 1}-{8 * k + 8}]\n" for k in range(4))
    topo = load(tmp_path, text + "BlockSizes=8,16,32\n", BLOCK)
    assert topo.block and [b.name for b in topo.blocks] == ["b1", "b2", "b3", "b4"]
    assert topo.block_sizes == (8, 16, 32)
    assert topo.block_groups() == (((0,), (1,), (2,), (3,)), ((0, 1), (2, 3)), ((0, 1, 2, 3),))
    # Without BlockSizes: the smallest block, then each power of two up to all of them.
    assert load(tmp_path, text, BLOCK).block_sizes == (8, 16, 32)
    assert topo.address("n1") == ("n1", "node")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("BlockName=b1 Nodes=n[1-8]\nBlockSizes=8,24\n", 2, "not a power of two times 8"),
        ("BlockName=b1 Nodes=n[1-8]\nBlockSizes=16\n", 2, "fewer than the base size 16"),
        ("BlockName=b1 Nodes=n[1-8]\nBlockSizes=8,x\n", 2, "invalid value for BlockSizes"),
        ("BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[8-9]\n", 2, "n8 is in blocks b1 and b2"),
        ("BlockName=b1 Nodes=n[1-8]\nBlockName=b1 Nodes=n9\n", 2, "defined twice"),
        ("BlockName=b1\n", 1, "needs Nodes="),
        ("SwitchName=s0 Nodes=n1\n", 1, "topology/block"),
    ],
)
def test_bad_blocks_are_an_error_at_their_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    err = error(tmp_path, text, BLOCK)
    assert err.line == line and words in err.message, err


def test_the_plugin_a_file_is_for() -> None:
    assert plugin_of(TREE_TEXT) == TREE
    assert plugin_of("BlockName=b1 Nodes=n[1-8]\n") == BLOCK


def test_slurm_conf_reads_topology_conf_beside_it(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "NodeName=n[1-32] CPUs=8\nPartitionName=p Nodes=ALL Default=YES\n"
        "TopologyPlugin=topology/tree\nTopologyParam=TopoOptional\n"
    )
    with pytest.raises(ConfigError, match=r"topology\.conf:0: TopologyPlugin=topology/tree needs"):
        load_slurm_conf(str(conf))
    (tmp_path / "topology.conf").write_text(TREE_TEXT)
    loaded = load_slurm_conf(str(conf))
    assert loaded.topology is not None and loaded.topology.optional
    assert [s.name for s in loaded.topology.switches][-1] == "spine"
    conf.write_text("NodeName=n1 CPUs=8\nTopologyPlugin=topology/flat\n")
    assert load_slurm_conf(str(conf)).topology is None
    conf.write_text("NodeName=n1 CPUs=8\nTopologyPlugin=topology/torus\n")
    with pytest.raises(ConfigError, match="TopologyPlugin"):
        load_slurm_conf(str(conf))
