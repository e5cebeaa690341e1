"""A local cluster whose nodes are separate hosts: one network namespace per slurmd.

``minislurm cluster up --netns`` and the multi-host tests use this. A bridge
in the root namespace carries the controller's address (``<subnet>.1``); each
slurmd gets a namespace with a veth on that bridge, its own address
(``<subnet>.<10+i>``), its own hostname (a UTS namespace: its first node's
name) and a hosts file naming the controller and every node (the nodes of
one slurmd share its address) (bind-mounted over ``/etc/hosts`` in a
private mount namespace, so the rest of the machine never sees it). The
filesystem stays shared, as on NFS. Agents are entered with ``nsenter
--net=`` rather than ``ip netns exec``, which would remount ``/sys`` and hide
the cgroup tree. With several controllers (``--controllers``) each is a host
of its own too (``<subnet>.2``, ``.3``...: its namespace, cable, hostname),
and the cluster's PostgreSQL server listens on the bridge.

Names of namespaces, links and the subnet are unique per launcher (they hold
its pid in hex and a counter) and are recorded in ``netns.json`` in the
cluster's directory before anything is created, so ``down`` removes exactly
what ``up`` made, even after a failed start. Needs root, ``ip``, ``nsenter``
and ``unshare``.

Imports minislurm.local.cluster; runs ``ip`` as subprocesses.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
from dataclasses import asdict, dataclass
from functools import cached_property

from minislurm import hostlist
from minislurm.local.cluster import (
    PROVISIONAL_PORT,
    ClusterSpec,
    LocalCluster,
    controller_hosts,
    render_slurm_conf,
)

CONTROLLER_NAME = "slurmctld"
MAX_HOSTS = 64  # namespaces (slurmd processes) of one cluster
TOOLS = ("ip", "nsenter", "unshare", "mount")
# 10.200.0.0/16 .. 10.239.255.0/24: one /24 per cluster, probed from a pid-derived start.
SUBNETS = [f"10.{200 + k // 256}.{k % 256}" for k in range(40 * 256)]
# In the node's mount and UTS namespaces: its hosts file, its hostname, then slurmd.
ENTER_NODE = 'mount --bind "$1" /etc/hosts && hostname "$2" && shift 2 && exec "$@"'

_instances = itertools.count()


def missing_requirements() -> str | None:
    """Why namespace clusters cannot run here, or None when they can.

    Returns:
        The reason (not root, a tool missing, namespaces refused).
    """
    if os.geteuid() != 0:
        return "network namespaces need root"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"missing {', '.join(missing)}"
    probe = subprocess.run(
        ["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return f"cannot create namespaces: {probe.stderr.strip()}"
    return None


@dataclass(frozen=True)
class Network:
    """The names and addresses of one namespace cluster."""

    tag: str  # the launcher's pid in six hex digits and a counter
    subnet: str  # the first three octets of a /24
    nodes: tuple[str, ...]
    hosts: tuple[str, ...] = ()  # each slurmd's nodes, a hostlist (none: a node each)
    controllers: tuple[str, ...] = ()  # several controllers' names, a namespace each

    @cached_property
    def groups(self) -> list[list[str]]:
        """The nodes of each namespace (each slurmd process), in order."""
        if not self.hosts:
            return [[node] for node in self.nodes]
        return [hostlist.expand(host) for host in self.hosts]

    @cached_property
    def _indices(self) -> dict[str, int]:
        return {node: i for i, group in enumerate(self.groups) for node in group}

    def _index(self, node: str) -> int:
        """The number of the namespace that holds a node."""
        return self._indices[node]

    @property
    def bridge(self) -> str:
        """The bridge in the root namespace (holds the controller's address)."""
        return f"msb{self.tag}"

    @property
    def controller_addr(self) -> str:
        """The controller's address on the bridge."""
        return f"{self.subnet}.1"

    def controller_addrs(self) -> list[tuple[str, str]]:
        """Several controllers' names and addresses (``<subnet>.2``, ``.3``...)."""
        return [(name, f"{self.subnet}.{2 + i}") for i, name in enumerate(self.controllers)]

    def controller_namespace(self, name: str) -> str:
        """A controller's network namespace."""
        return f"ms{self.tag}-{name}"

    def controller_veth(self, name: str) -> str:
        """The root-namespace end of a controller's cable."""
        return f"msv{self.tag}c{self.controllers.index(name)}"

    def addr(self, node: str) -> str:
        """A node's address (that of its slurmd's namespace)."""
        return f"{self.subnet}.{11 + self._index(node)}"

    def namespace(self, node: str) -> str:
        """A node's network namespace (``/run/netns/<name>``), named after its slurmd's first."""
        return f"ms{self.tag}-{self.groups[self._index(node)][0]}"

    def veth(self, node: str) -> str:
        """The root-namespace end of a node's cable (its ``eth0`` inside)."""
        return f"msv{self.tag}x{self._index(node)}"

    def hosts_file(self) -> str:
        """The hosts file every node sees."""
        lines = ["127.0.0.1 localhost", f"{self.controller_addr} {CONTROLLER_NAME}"]
        lines += [f"{addr} {name}" for name, addr in self.controller_addrs()]
        lines += [f"{self.addr(n)} {n}" for n in self.nodes]
        return "\n".join(lines) + "\n"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc


def _free_subnet(start: int) -> str:
    """The first /24 of SUBNETS, from ``start`` on, with no address on this host."""
    used = _ip("-o", "-4", "addr", "show").stdout + "\n" + _ip("-4", "route", "show").stdout
    for k in range(len(SUBNETS)):
        subnet = SUBNETS[(start + k) % len(SUBNETS)]
        if f" {subnet}." not in used and f"\n{subnet}." not in used:
            return subnet
    raise RuntimeError("no free /24 in 10.200.0.0-10.239.255.0")


def allocate_network(
    nodes: list[str], hosts: list[str], controllers: list[str] | None = None
) -> Network:
    """Pick names and a subnet that no other cluster on this host uses.

    Args:
        nodes: the node names.
        hosts: each slurmd's nodes (hostlists), a namespace each.
        controllers: several controllers' names, a namespace each (none: the one
            controller is on the bridge).

    Returns:
        The network (not created yet).

    Raises:
        RuntimeError: too many namespaces, or no free subnet.
    """
    if len(hosts) > MAX_HOSTS:
        raise RuntimeError(f"a namespace cluster has at most {MAX_HOSTS} slurmd processes")
    seq = next(_instances) % 100  # keeps link names within 15 characters
    tag = f"{os.getpid():06x}{seq}"  # pids stay below 2**22: six hex digits
    subnet = _free_subnet(os.getpid() + seq)
    return Network(tag, subnet, tuple(nodes), tuple(hosts), tuple(controllers or ()))


def create_network(net: Network) -> None:
    """Create the bridge, and for each slurmd its namespace, cable and address.

    Args:
        net: what to create.

    Raises:
        RuntimeError: an ``ip`` command failed.
    """
    _ip("link", "add", net.bridge, "type", "bridge")
    _ip("addr", "add", f"{net.controller_addr}/24", "dev", net.bridge)
    _ip("link", "set", net.bridge, "up")
    for node in (group[0] for group in net.groups):
        _plug_host(net, net.namespace(node), net.veth(node), net.addr(node))
    for name, addr in net.controller_addrs():
        _plug_host(net, net.controller_namespace(name), net.controller_veth(name), addr)


def _plug_host(net: Network, ns: str, veth: str, addr: str) -> None:
    """Make a host: a namespace whose eth0, at ``addr``, is cabled to the bridge."""
    peer = f"{veth}p"
    _ip("netns", "add", ns)
    _ip("link", "add", veth, "type", "veth", "peer", "name", peer)
    _ip("link", "set", veth, "master", net.bridge, "up")
    _ip("link", "set", peer, "netns", ns)
    _ip("-n", ns, "link", "set", peer, "name", "eth0")
    _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
    _ip("-n", ns, "link", "set", "eth0", "up")
    _ip("-n", ns, "link", "set", "lo", "up")


def remove_network(net: Network) -> None:
    """Kill what still runs in the namespaces, then remove everything created.

    Missing pieces are skipped, so this also cleans up after a failed start.

    Args:
        net: what to remove.
    """
    hosts = [(net.namespace(g[0]), net.veth(g[0])) for g in net.groups]
    hosts += [(net.controller_namespace(n), net.controller_veth(n)) for n in net.controllers]
    for ns, veth in hosts:
        pids = _ip("netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "del", ns, check=False)
        _ip("link", "del", veth, check=False)
    _ip("link", "del", net.bridge, check=False)


class NetnsCluster(LocalCluster):
    """A local cluster whose slurmds each run in a network namespace of their own."""

    def __init__(self, home: str) -> None:
        super().__init__(home)
        self.network_path = self.path("netns.json")
        self.hosts_path = self.path("hosts")

    def network(self) -> Network:
        """The recorded network (raises OSError when there is none)."""
        with open(self.network_path) as f:
            data = json.load(f)
        return Network(
            data["tag"],
            data["subnet"],
            tuple(data["nodes"]),
            tuple(data.get("hosts", ())),
            tuple(data.get("controllers", ())),
        )

    def write_config(self, spec: ClusterSpec) -> None:
        """Choose the network (recorded first: the configuration names its addresses), then
        write the configuration."""
        controllers = [name for name, _ in controller_hosts(spec.controllers)]
        net = allocate_network(
            spec.node_names, spec.agent_groups, controllers if spec.controllers > 1 else None
        )
        os.makedirs(self.home, exist_ok=True)
        with open(self.network_path, "w") as f:
            json.dump(asdict(net), f)
        with open(self.hosts_path, "w") as f:
            f.write(net.hosts_file())
        super().write_config(spec)

    def render_config(self, spec: ClusterSpec) -> str:
        """slurm.conf with the controller on the bridge (several: each on a host of its own)
        and each node at its address."""
        net = self.network()
        return render_slurm_conf(
            spec,
            self.home,
            PROVISIONAL_PORT,
            controller=f"{CONTROLLER_NAME}({net.controller_addr})",
            node_addrs={n: net.addr(n) for n in net.nodes},
            controller_addrs=net.controller_addrs(),
        )

    def controller_listen(self) -> str:
        """The bridge's address."""
        return self.network().controller_addr

    def database_host(self) -> str:
        """The bridge's address: the controllers' hosts reach the database there."""
        return self.network().controller_addr

    def database_clients(self) -> str:
        """The bridge's network: the controllers' hosts."""
        return f"{self.network().subnet}.0/24"

    def controller_argv(self, host: str, argv: list[str]) -> list[str]:
        """Several controllers: each in its network namespace, with its own hostname."""
        if not host:
            return argv
        ns = f"/run/netns/{self.network().controller_namespace(host)}"
        enter = ["nsenter", f"--net={ns}", "unshare", "--uts", "--mount"]
        return [*enter, "sh", "-c", ENTER_NODE, host, self.hosts_path, host, *argv]

    def agent_argv(self, nodes: str, argv: list[str]) -> list[str]:
        """slurmd inside its network namespace, and UTS and mount namespaces of its own."""
        first = hostlist.expand(nodes)[0]
        ns = f"/run/netns/{self.network().namespace(first)}"
        enter = ["nsenter", f"--net={ns}", "unshare", "--uts", "--mount"]
        return [*enter, "sh", "-c", ENTER_NODE, first, self.hosts_path, first, *argv]

    def up(self, spec: ClusterSpec) -> list[str]:
        """Create the network unless its bridge exists, then start the daemons.

        Args:
            spec: the shape, used when no configuration exists yet.

        Returns:
            The daemons started by this call.

        Raises:
            RuntimeError: the network cannot be created (then nothing of it is left).
        """
        if not os.path.exists(self.conf_path):
            self.write_config(spec)
        net = self.network()
        if _ip("link", "show", net.bridge, check=False).returncode != 0:
            remove_network(net)
            try:
                create_network(net)
            except RuntimeError:
                remove_network(net)
                raise
        return super().up(spec)

    def down(self) -> list[str]:
        """Stop the daemons and jobs, then remove the namespaces, cables and bridge."""
        try:
            return super().down()
        finally:
            remove_network(self.network())

    def unplug(self, node: str) -> None:
        """Take a node's cable down: nothing reaches it (nor its slurmd's other nodes).

        Args:
            node: the node's name.
        """
        _ip("link", "set", self.network().veth(node), "down")

    def unplug_controller(self, name: str, plugged: bool = False) -> None:
        """Take a controller's cable down (or, ``plugged``, up again).

        Args:
            name: its SlurmctldHost name.
            plugged: put the cable back.
        """
        _ip("link", "set", self.network().controller_veth(name), "up" if plugged else "down")


def open_cluster(home: str) -> LocalCluster:
    """The cluster in ``home``: a namespace cluster if it was made as one.

    Args:
        home: its directory.

    Returns:
        The launcher for it.
    """
    if os.path.exists(os.path.join(home, "netns.json")):
        return NetnsCluster(home)
    return LocalCluster(home)
