"""The network's shape from topology.conf: switches (topology/tree) or blocks (topology/block).

``load_topology`` reads the file beside slurm.conf, in Slurm's syntax
(``topology.conf.5``), and checks it against the nodes slurm.conf defines:

- tree: ``SwitchName=s0 Nodes=n[1-8] [LinkSpeed=N]`` for a leaf switch,
  ``SwitchName=top Switches=s[0-3]`` above; levels count up from the leaves
  (0) to each switch's highest child plus one. A node under no switch is
  never given to a job, as in Slurm (jobs span only nodes joined by a switch).
- block: ``BlockName=b1 Nodes=n[1-8]`` base blocks, in order, and
  ``BlockSizes=8,16,32``: the base block size and the sizes of the aggregated
  blocks enforced above it (each a power of two times the one before). By
  default the base size is the smallest block's node count, and every power
  of two of it up to all the blocks is a level.

Errors name the file and line. ``Topology.address`` gives a node's
``SLURM_TOPOLOGY_ADDR`` and its pattern.

Imports only minislurm.conffile, minislurm.errors and minislurm.hostlist.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from minislurm import hostlist
from minislurm.conffile import ConfRecord, parse_file, parse_text
from minislurm.errors import ConfigError

TREE = "topology/tree"
BLOCK = "topology/block"
FLAT_PLUGINS = ("topology/flat", "topology/default", "topology/none")
PLUGINS = (TREE, BLOCK, *FLAT_PLUGINS)
TOPO_OPTIONAL = "TopoOptional"  # TopologyParam: only jobs that ask (--switches) are placed by it
DRAGONFLY = "Dragonfly"  # TopologyParam: a job no leaf holds is spread over the leaves

_KEYS = ("SwitchName", "Switches", "Nodes", "LinkSpeed", "BlockName", "BlockSizes")
_MAX_NAME = 64  # characters in a switch name, as Slurm allows


@dataclass(frozen=True)
class Switch:
    """One switch: the nodes beneath it (in configuration order) and its child switches."""

    name: str
    level: int  # 0: a leaf switch, whose children are nodes
    nodes: tuple[str, ...]
    switches: tuple[str, ...] = ()
    link_speed: int = 1


@dataclass(frozen=True)
class Block:
    """One base block of nodes (``BlockName=``), in configuration order."""

    name: str
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Topology:
    """The cluster's network: a tree of switches or a row of blocks.

    ``optional`` is ``TopologyParam=TopoOptional``: only the jobs that ask
    for switches are placed by the tree; the others as on a flat network.
    ``dragonfly`` is ``TopologyParam=Dragonfly``: a job that no leaf switch
    can hold is spread over the leaves, rather than put on as few as it needs.
    """

    plugin: str
    switches: tuple[Switch, ...] = ()
    blocks: tuple[Block, ...] = ()
    block_sizes: tuple[int, ...] = ()
    optional: bool = False
    dragonfly: bool = False
    _addresses: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)
    _units: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def tree(self) -> bool:
        """Whether jobs are placed by switches."""
        return self.plugin == TREE

    @property
    def block(self) -> bool:
        """Whether jobs are placed by blocks."""
        return self.plugin == BLOCK

    def block_groups(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """The blocks of each level of ``block_sizes``: base blocks by their index, in order.

        Level 0 is each base block alone; level k joins runs of
        ``block_sizes[k] // block_sizes[0]`` consecutive base blocks (the last
        run may be short).
        """
        count = len(self.blocks)
        levels = []
        for size in self.block_sizes:
            width = size // self.block_sizes[0]
            levels.append(
                tuple(tuple(range(i, min(i + width, count))) for i in range(0, count, width))
            )
        return tuple(levels)

    def unit_of(self, node: str) -> str:
        """The node's leaf switch (the first it is under) or block, as ``default:leaf1``.

        Args:
            node: a node name.

        Returns:
            Slurm's ``Topology=`` of a node (the topology.conf one is named
            ``default``), or "" for a node under no switch or in no block.
        """
        if not self._units:
            units: list[Block | Switch] = [*self.blocks, *(s for s in self.switches if not s.level)]
            for unit in reversed(units):  # a node under two leaves: the first
                self._units.update(dict.fromkeys(unit.nodes, f"default:{unit.name}"))
        return self._units.get(node, "")

    def leaf_of(self, node: str) -> Switch | None:
        """The first leaf switch the node is under, or None."""
        return next((s for s in self.switches if s.level == 0 and node in s.nodes), None)

    def address(self, node: str) -> tuple[str, str]:
        """``SLURM_TOPOLOGY_ADDR`` and ``SLURM_TOPOLOGY_ADDR_PATTERN`` of a node.

        Under a tree, the switches from the top one down to the node's leaf,
        then the node, joined by periods (``spine.leaf1.n1``, pattern
        ``switch.switch.node``); otherwise the node alone.

        Args:
            node: a node name.

        Returns:
            (address, pattern).
        """
        kept = self._addresses.get(node)
        if kept is not None:
            return kept
        path = [node]
        if self.tree:
            parent = {child: s for s in reversed(self.switches) for child in s.switches}
            switch = self.leaf_of(node)
            while switch is not None:
                path.append(switch.name)
                switch = parent.get(switch.name)
        names = ".".join(reversed(path))
        found = names, ".".join(["switch"] * (len(path) - 1) + ["node"])
        self._addresses[node] = found
        return found


def plugin_of(text: str) -> str:
    """The ``TopologyPlugin`` a topology.conf's text is for: blocks or switches.

    Args:
        text: the file's contents.

    Returns:
        ``topology/block`` when it has ``BlockName`` lines, else ``topology/tree``.
    """
    records = parse_text(text, "topology.conf", _KEYS)
    return BLOCK if any(r.key == "BlockName" for r in records) else TREE


def node_address(topology: Topology | None, node: str) -> tuple[str, str]:
    """A node's ``SLURM_TOPOLOGY_ADDR`` and pattern (:meth:`Topology.address`; flat: the node).

    Args:
        topology: the cluster's, if any.
        node: a node name.

    Returns:
        (address, pattern).
    """
    return (node, "node") if topology is None else topology.address(node)


def topology_conf_path(slurm_conf: str) -> str:
    """Where topology.conf is: beside slurm.conf, as Slurm looks for it."""
    return os.path.join(os.path.dirname(slurm_conf), "topology.conf")


def load_topology(
    path: str, plugin: str, params: Sequence[str], nodes: Sequence[str]
) -> Topology | None:
    """Read topology.conf for ``TopologyPlugin``; None for a flat network.

    Args:
        path: the topology.conf.
        plugin: ``TopologyPlugin`` (``topology/tree``, ``topology/block``, or flat).
        params: ``TopologyParam`` words.
        nodes: every node slurm.conf defines, in configuration order.

    Returns:
        The topology; None when the plugin is flat.

    Raises:
        ConfigError: the file is missing or malformed, names an unknown node
            or switch, or describes the other plugin's layout.
    """
    if plugin not in (TREE, BLOCK):
        return None
    if not os.path.exists(path):
        raise ConfigError(path, 0, f"TopologyPlugin={plugin} needs this file; it does not exist")
    records = parse_file(path, _KEYS)
    order = {name: i for i, name in enumerate(nodes)}
    words = {p.lower() for p in params}
    optional = TOPO_OPTIONAL.lower() in words
    if plugin == TREE:
        switches = _switches(records, order)
        return Topology(
            plugin, switches=switches, optional=optional, dragonfly=DRAGONFLY.lower() in words
        )
    blocks, sizes = _blocks(records, order)
    return Topology(plugin, blocks=blocks, block_sizes=sizes, optional=optional)


def _known_keys(record: ConfRecord, allowed: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for key, value in record.pairs:
        if key not in allowed:
            raise record.error(f"unknown key {key} on a {record.key} line")
        if key in pairs:
            raise record.error(f"{key} given twice")
        pairs[key] = value
    return pairs


def _node_list(record: ConfRecord, text: str, order: dict[str, int]) -> tuple[str, ...]:
    try:
        names = hostlist.expand(text)
    except ValueError as exc:
        raise record.error(f"invalid value for Nodes: {text!r} ({exc})") from None
    unknown = [n for n in names if n not in order]
    if unknown:
        raise record.error(f"Nodes={text}: {hostlist.compress(unknown)} not in slurm.conf")
    return tuple(sorted(set(names), key=order.__getitem__))


def _switches(records: list[ConfRecord], order: dict[str, int]) -> tuple[Switch, ...]:
    """The switches of a tree, in file order, with their levels and every node beneath."""
    lines: dict[str, tuple[ConfRecord, dict[str, str]]] = {}
    for record in records:
        if record.key != "SwitchName":
            raise record.error(f"{record.key} lines need another TopologyPlugin than {TREE}")
        pairs = _known_keys(record, ("SwitchName", "Switches", "Nodes", "LinkSpeed"))
        name = pairs["SwitchName"]
        if not name or len(name) > _MAX_NAME:
            raise record.error(f"switch name must be 1 to {_MAX_NAME} characters")
        if name in lines:
            raise record.error(f"switch {name} defined twice")
        if ("Nodes" in pairs) == ("Switches" in pairs):
            raise record.error(f"switch {name} needs either Nodes= or Switches=")
        if not pairs.get("LinkSpeed", "1").isdigit():
            raise record.error(f"invalid value for LinkSpeed: {pairs['LinkSpeed']!r}")
        lines[name] = (record, pairs)
    if not lines:
        raise ConfigError(records[0].path if records else "topology.conf", 0, "no switches")
    built: dict[str, Switch] = {}

    def build(name: str, path: tuple[str, ...]) -> Switch:
        if name in built:
            return built[name]
        record, pairs = lines[name]
        speed = int(pairs.get("LinkSpeed", "1"))
        if "Nodes" in pairs:
            switch = Switch(name, 0, _node_list(record, pairs["Nodes"], order), (), speed)
        else:
            children = []
            for child in dict.fromkeys(hostlist.expand(pairs["Switches"])):
                if child not in lines:
                    raise record.error(f"switch {name}: child switch {child} is not defined")
                if child in path:
                    raise record.error(f"switch {name}: switch {child} is its own ancestor")
                children.append(build(child, (*path, child)))
            below = {n for c in children for n in c.nodes}
            switch = Switch(
                name,
                1 + max(c.level for c in children),
                tuple(sorted(below, key=order.__getitem__)),
                tuple(c.name for c in children),
                speed,
            )
        built[name] = switch
        return switch

    return tuple(build(name, (name,)) for name in lines)


def _blocks(
    records: list[ConfRecord], order: dict[str, int]
) -> tuple[tuple[Block, ...], tuple[int, ...]]:
    """The base blocks in file order, and the block sizes enforced."""
    blocks: list[Block] = []
    sizes_record: ConfRecord | None = None
    owner: dict[str, str] = {}
    for record in records:
        if record.key == "BlockSizes":
            _known_keys(record, ("BlockSizes",))
            sizes_record = record
            continue
        if record.key != "BlockName":
            raise record.error(f"{record.key} lines need another TopologyPlugin than {BLOCK}")
        pairs = _known_keys(record, ("BlockName", "Nodes"))
        name = pairs["BlockName"]
        if not name or any(b.name == name for b in blocks):
            raise record.error(f"block {name!r} defined twice or unnamed")
        if "Nodes" not in pairs:
            raise record.error(f"block {name} needs Nodes=")
        members = _node_list(record, pairs["Nodes"], order)
        for node in members:
            if node in owner:
                raise record.error(f"node {node} is in blocks {owner[node]} and {name}")
            owner[node] = name
        blocks.append(Block(name, members))
    if not blocks:
        path = records[0].path if records else "topology.conf"
        raise ConfigError(path, 0, "no blocks")
    smallest = min(len(b.nodes) for b in blocks)
    if sizes_record is None:
        sizes = [smallest]
        while sizes[-1] * 2 <= smallest * len(blocks):
            sizes.append(sizes[-1] * 2)
        return tuple(blocks), tuple(sizes)
    text = sizes_record.value
    words = text.split(",")
    if not all(w.isdigit() and int(w) > 0 for w in words):
        raise sizes_record.error(f"invalid value for BlockSizes: {text!r}")
    sizes = [int(w) for w in words]
    if sizes[0] > smallest:
        raise sizes_record.error(
            f"BlockSizes={text}: a block has {smallest} nodes, fewer than the base size {sizes[0]}"
        )
    for low, high in itertools.pairwise(sizes):
        ratio = high // low
        if high % low or ratio < 2 or ratio & (ratio - 1):
            raise sizes_record.error(f"BlockSizes={text}: {high} is not a power of two times {low}")
    return tuple(blocks), tuple(sizes)
