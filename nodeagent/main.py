"""slurmd: the node agent daemon's entry point.

Flags as Slurm's slurmd (``-D -f -N -L -v -V``) plus ``--port``,
``--port-file``, ``--listen``, ``--addr``, ``--spool-dir`` and
``--fake-gpus`` for local clusters and tests. Stops on SIGTERM/SIGINT
without touching running jobs (their stepds keep them running).

Imports nodeagent and minislurm.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys

import grpc

from minislurm.conffile import find_config
from minislurm.config import load_gres_conf, load_slurm_conf
from minislurm.daemon import (
    GRPC_OPTIONS,
    Fatal,
    add_common_flags,
    run_daemon,
    stop_requested,
    write_port_file,
)
from minislurm.errors import ConfigError
from minislurm.security import auth, authd, cred
from minislurm.security.authgrpc import Authenticator, privileged_uids, verifier_for
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc
from nodeagent.agent import Agent, AgentSettings
from nodeagent.gpus import GpuDiscoveryError, gpu_discovery
from nodeagent.resources import discover
from nodeagent.service import CONTROLLER_METHODS, STEP_METHODS, NodeAgentServicer

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
    p.add_argument("-N", dest="node", help="this node's NodeName (default: the short hostname)")
    p.add_argument("--port", type=int, help="port (overrides the node's Port; 0 = any free)")
    p.add_argument("--addr", help="address the controller reaches this node at")
    p.add_argument("--spool-dir", help="overrides SlurmdSpoolDir")
    p.add_argument("--fake-gpus", type=int, help="pretend to have this many GPUs")
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> AgentSettings:
    """Read slurm.conf and apply the flags.

    Args:
        args: parsed flags.

    Returns:
        The settings.

    Raises:
        ConfigError: slurm.conf is missing or malformed, or the node is not in it.
    """
    path = args.conf or find_config(os.environ)
    if not path:
        raise ConfigError("slurm.conf", 0, "no slurm.conf found (use -f or SLURM_CONF)")
    conf = load_slurm_conf(path)
    name = args.node or socket.gethostname().split(".")[0]
    node = conf.node(name)
    if node is None:
        raise ConfigError(path, 0, f"node {name} is not defined (NodeName=)")
    addr, port = conf.slurmd_address(name)
    return AgentSettings(
        conf=conf,
        conf_path=os.path.abspath(path),
        node_name=name,
        listen_host=args.listen,
        port=port if args.port is None else args.port,
        port_file=args.port_file,
        advertise_addr=args.addr or addr,
        spool_dir=args.spool_dir or conf.slurmd_spool_dir_for(name),
        controller=f"{conf.controller_addr}:{conf.controller_port}",
        cluster_key=cred.load_key(cred.key_path(path)),
    )


async def serve(args: argparse.Namespace) -> None:
    """Run the agent until asked to stop.

    Args:
        args: the daemon's flags.

    Raises:
        Fatal: it cannot listen or find its GPUs.
        ConfigError: slurm.conf is missing or malformed.
    """
    settings = settings_from(args)
    conf = settings.conf
    gres = load_gres_conf(conf.gres_conf_path, settings.node_name)
    try:
        resources = discover(
            conf.node(settings.node_name),
            gpu_discovery(gres, args.fake_gpus),
            "config_overrides" in conf.slurmd_parameters,
        )
    except GpuDiscoveryError as err:
        raise Fatal(str(err)) from None
    agent = Agent(settings, resources)
    guard = Authenticator(
        verifier_for(settings.conf.auth_type, settings.cluster_key),
        daemon_only=CONTROLLER_METHODS,
        exempt=STEP_METHODS,
        privileged=privileged_uids(settings.conf.slurm_user),
    )
    server = grpc.aio.server(
        options=[*GRPC_OPTIONS, ("grpc.so_reuseport", 0)], interceptors=[guard]
    )
    try:
        address = f"{settings.listen_host}:{settings.port}"
        port = tls.add_port(server, address, conf.tls_files("slurmd"))
    except OSError as err:
        raise Fatal(f"TLSType={conf.tls_type}: {err}") from None
    if port == 0:
        raise Fatal(f"cannot listen on {settings.listen_host}:{settings.port}")
    pb_grpc.add_NodeAgentServicer_to_server(NodeAgentServicer(agent), server)
    await agent.adopt()
    await server.start()
    kiosk = await authd.serve_unless_served(
        auth.socket_path(settings.conf_path), settings.cluster_key
    )
    await agent.start(port)
    if settings.port_file:
        write_port_file(settings.port_file, port)
    log.info("slurmd %s listening on %s:%d", settings.node_name, settings.listen_host, port)
    await stop_requested()
    log.info("slurmd shutting down (running jobs keep running)")
    await agent.stop()
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
