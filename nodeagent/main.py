"""slurmd: the node agent daemon's entry point.

Flags as Slurm's slurmd (``-D -f -N -L -v -V``) plus ``--port``,
``--port-file``, ``--listen``, ``--addr``, ``--spool-dir`` and
``--fake-gpus`` for local clusters and tests. ``-N`` takes a hostlist: one
process then serves every node in it, on one port (see
:mod:`nodeagent.slurmd`). Stops on SIGTERM/SIGINT without touching running
jobs (their stepds keep them running).

Imports nodeagent and minislurm.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from dataclasses import dataclass, replace

import grpc

from minislurm import hostlist
from minislurm.cgroupconf import CgroupConfig, load_cgroup_conf
from minislurm.conffile import find_config
from minislurm.config import SlurmConfig, load_slurm_conf
from minislurm.daemon import (
    SERVER_OPTIONS,
    Fatal,
    add_common_flags,
    run_daemon,
    stop_requested,
    write_port_file,
)
from minislurm.errors import ConfigError
from minislurm.gresconf import load_gres_conf
from minislurm.security import auth, authd, cred
from minislurm.security.authgrpc import Authenticator, privileged_uids, verifier_for
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc
from nodeagent import cgroups
from nodeagent.agent import AgentSettings
from nodeagent.gpus import GpuDiscoveryError, gpu_discovery
from nodeagent.resources import NodeResources, discover
from nodeagent.service import CONTROLLER_METHODS, STEP_METHODS, NodeAgentServicer
from nodeagent.slurmd import Slurmd
from nodeagent.usage import MEM_CHECK_SECONDS

log = logging.getLogger("slurmd")

GRACE_SECONDS = 1.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    """slurmd's flags.

    Args:
        argv: the arguments after the program name.

    Returns:
        The parsed flags.
    """
    p = argparse.ArgumentParser(prog="slurmd", description="minislurm node agent daemon")
    add_common_flags(p)
    p.add_argument(
        "-N",
        dest="node",
        help="the NodeName this slurmd serves, or a hostlist of several (default: the short "
        "hostname)",
    )
    p.add_argument("--port", type=int, help="port (overrides the nodes' Port; 0 = any free)")
    p.add_argument("--addr", help="address the controller reaches these nodes at")
    p.add_argument("--spool-dir", help="overrides SlurmdSpoolDir (%%n: the node's name)")
    p.add_argument("--fake-gpus", type=int, help="pretend each node has this many GPUs")
    return p.parse_args(argv)


@dataclass(frozen=True)
class Served:
    """What one slurmd process serves, and where it listens."""

    conf: SlurmConfig
    conf_path: str
    controller: str  # host:port
    key: bytes
    listen_host: str
    port: int  # 0: any free port
    nodes: tuple[AgentSettings, ...]


def settings_from(args: argparse.Namespace) -> Served:
    """Read slurm.conf and apply the flags.

    Args:
        args: parsed flags.

    Returns:
        The process's settings, and each node's.

    Raises:
        ConfigError: slurm.conf is missing or malformed, a node is not in it,
            or the nodes of one process cannot share its port or spool.
    """
    path = args.conf or find_config(os.environ)
    if not path:
        raise ConfigError("slurm.conf", 0, "no slurm.conf found (use -f or SLURM_CONF)")
    conf = load_slurm_conf(path)
    try:
        names = hostlist.expand(args.node or socket.gethostname().split(".")[0])
    except ValueError as err:
        raise ConfigError(path, 0, f"-N {args.node}: {err}") from None
    missing = [name for name in names if conf.node(name) is None]
    if missing:
        raise ConfigError(path, 0, f"node {hostlist.compress(missing)} is not defined (NodeName=)")
    ports = {conf.slurmd_address(name)[1] for name in names}
    if args.port is None and len(ports) > 1:
        raise ConfigError(path, 0, "the nodes of one slurmd share its port: give --port")
    spools = {_spool_dir(conf, args.spool_dir, name) for name in names}
    if len(spools) < len(names):
        raise ConfigError(path, 0, "the nodes of one slurmd need spools of their own: use %n")
    controller = f"{conf.controller_addr}:{conf.controller_port}"
    key = cred.load_key(cred.key_path(path))
    nodes = tuple(
        AgentSettings(
            conf=conf,
            conf_path=os.path.abspath(path),
            node_name=name,
            advertise_addr=args.addr or conf.slurmd_address(name)[0],
            spool_dir=_spool_dir(conf, args.spool_dir, name),
            controller=controller,
            cluster_key=key,
        )
        for name in names
    )
    return Served(
        conf=conf,
        conf_path=os.path.abspath(path),
        controller=controller,
        key=key,
        listen_host=args.listen,
        port=ports.pop() if args.port is None else args.port,
        nodes=nodes,
    )


def _spool_dir(conf: SlurmConfig, flag: str | None, name: str) -> str:
    if flag is None:
        return conf.slurmd_spool_dir_for(name)
    return flag.replace("%n", name)


def _resources(served: Served, fake_gpus: int | None) -> list[tuple[AgentSettings, NodeResources]]:
    """What each node has.

    Raises:
        Fatal: configured GPUs cannot be found.
    """
    conf = served.conf
    overrides = "config_overrides" in conf.slurmd_parameters
    cgroup_conf = load_cgroup_conf(conf.cgroup_conf_path) if conf.task_cgroup else CgroupConfig()
    nodes = []
    for settings in served.nodes:
        gres = load_gres_conf(conf.gres_conf_path, settings.node_name)
        try:
            discovery = gpu_discovery(gres, fake_gpus)
            resources = discover(conf.node(settings.node_name), discovery, overrides)
        except GpuDiscoveryError as err:
            raise Fatal(f"{settings.node_name}: {err}") from None
        nodes.append((_confined(settings, cgroup_conf, resources), resources))
    return nodes


def _confined(
    settings: AgentSettings, conf: CgroupConfig, resources: NodeResources
) -> AgentSettings:
    """A node's settings with its cgroups (TaskPlugin=task/cgroup), said in the log.

    Memory that cgroup.conf constrains but the node's cgroups cannot is
    enforced by sampling, as ``JobAcctGatherParams=OverMemoryKill`` would.
    """
    name = settings.node_name
    tree, said = None, ""
    if settings.conf.task_cgroup:
        tree, said = cgroups.prepare(conf, name, resources.gpu_files)
        log.info("node=%s task/cgroup: %s", name, said)
    kernel = tree is not None and bool(tree.memory)
    missed = conf.constrains_memory and not kernel
    if tree is not None and kernel:
        log.info("node=%s memory limits: enforced by the kernel (cgroup/v%d)", name, tree.version)
    if settings.conf.enforce_memory or missed:
        why = "cgroups cannot" if missed else "JobAcctGatherParams=OverMemoryKill"
        log.info(
            "node=%s memory limits: enforced by sampling each step's processes every %.0f s (%s)",
            name,
            MEM_CHECK_SECONDS,
            why,
        )
    elif not kernel:
        log.info("node=%s memory limits: not enforced (see cgroup.conf, JobAcctGatherParams)", name)
    return replace(settings, cgroups=tree, cgroup_memory_missed=missed)


async def serve(args: argparse.Namespace) -> None:
    """Run the agents until asked to stop.

    Args:
        args: the daemon's flags.

    Raises:
        Fatal: it cannot listen or find its GPUs.
        ConfigError: slurm.conf is missing or malformed.
    """
    served = settings_from(args)
    conf = served.conf
    slurmd = Slurmd(_resources(served, args.fake_gpus), conf, served.controller, served.key)
    guard = Authenticator(
        verifier_for(conf.auth_type, served.key),
        daemon_only=CONTROLLER_METHODS,
        exempt=STEP_METHODS,
        privileged=privileged_uids(conf.slurm_user),
    )
    server = grpc.aio.server(options=SERVER_OPTIONS, interceptors=[guard])
    try:
        address = f"{served.listen_host}:{served.port}"
        port = tls.add_port(server, address, conf.tls_files("slurmd"))
    except OSError as err:
        raise Fatal(f"TLSType={conf.tls_type}: {err}") from None
    if port == 0:
        raise Fatal(f"cannot listen on {served.listen_host}:{served.port}")
    pb_grpc.add_NodeAgentServicer_to_server(NodeAgentServicer(slurmd), server)
    await slurmd.adopt()
    await server.start()
    kiosk = await authd.serve_unless_served(auth.socket_path(served.conf_path), served.key)
    await slurmd.start(port)
    if args.port_file:
        write_port_file(args.port_file, port)
    names = hostlist.compress([n.node_name for n in served.nodes])
    log.info("slurmd %s listening on %s:%d", names, served.listen_host, port)
    await stop_requested()
    log.info("slurmd shutting down (running jobs keep running)")
    await slurmd.stop()
    await server.stop(GRACE_SECONDS)
    if kiosk is not None:
        kiosk.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``slurmd`` command.

    Args:
        argv: arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_daemon("slurmd", args, lambda: serve(args))


if __name__ == "__main__":
    sys.exit(main())
