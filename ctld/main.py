"""slurmctld: the controller daemon's entry point.

``build_server`` binds and wires everything without starting it; ``serve``
runs until SIGTERM/SIGINT: health goes NOT_SERVING, loops stop, in-flight
RPCs get a grace period, the database is closed. A second signal exits at
once.

With the state in PostgreSQL a controller first waits as a standby until it
holds the controller's role (ctld.leadership): it answers Ping and Takeover
only. Then it upgrades the database, loads it and serves, until it stops or
loses the role to another controller, when it shuts down, as Slurm's
primary does after a takeover.

Imports ctld and minislurm.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import grpc
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import sessionmaker

from ctld.controller import Controller
from ctld.diag import RpcStats
from ctld.leadership import Lease, Role, connect_args
from ctld.servicer import DAEMON_ONLY, CallTimer, SlurmControllerServicer, StandbyGate
from ctld.settings import CtldSettings, check_backups, default_db_url, own_host
from ctld.store import repo, schema
from ctld.store.schema import SchemaTooNew
from minislurm.conffile import find_config
from minislurm.config import load_slurm_conf
from minislurm.daemon import (
    SERVER_OPTIONS,
    Fatal,
    add_common_flags,
    run_daemon,
    stop_requested,
    write_port_file,
    write_text_file,
)
from minislurm.errors import ConfigError
from minislurm.security import auth, authd, cred
from minislurm.security.authgrpc import Authenticator, privileged_uids, verifier_for
from minislurm.wire import tls
from minislurm.wire.rpc import minislurm_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from ctld.metrics import MetricsServer

log = logging.getLogger("ctld")

GRACE_SECONDS = 2.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    """slurmctld's flags (Slurm's, plus --port/--port-file/--listen/--db-url).

    Args:
        argv: the arguments after the program name.

    Returns:
        The parsed flags.
    """
    p = argparse.ArgumentParser(prog="slurmctld", description="minislurm controller daemon")
    add_common_flags(p)
    p.add_argument("--port", type=int, help="port (overrides SlurmctldPort; 0 = any free)")
    p.add_argument("--db-url", help="SQLAlchemy URL (default: the one StateSaveLocation names)")
    p.add_argument(
        "--host",
        help="which SlurmctldHost this controller is (default: this machine's name, or the only)",
    )
    p.add_argument(
        "--metrics-url-file", help="write the metrics endpoints' base URL here once serving"
    )
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> CtldSettings:
    """Read slurm.conf and apply the flags.

    Args:
        args: parsed flags.

    Returns:
        The settings.

    Raises:
        ConfigError: slurm.conf is missing or malformed.
        ClusterKeyError: slurm.key is missing or unsafe.
    """
    path = args.conf or find_config(os.environ)
    if not path:
        raise ConfigError("slurm.conf", 0, "no slurm.conf found (use -f or SLURM_CONF)")
    conf = load_slurm_conf(path)
    for warning in conf.warnings:
        log.warning("%s", warning)
    db_url = args.db_url or default_db_url(conf)
    check_backups(conf, db_url)
    if db_url.startswith("sqlite:"):
        os.makedirs(conf.state_save_location, exist_ok=True)
    return CtldSettings(
        conf=conf,
        conf_path=os.path.abspath(path),
        listen_host=args.listen,
        port=conf.controller_port if args.port is None else args.port,
        port_file=args.port_file,
        db_url=db_url,
        operators=privileged_uids(conf.slurm_user),
        cluster_key=cred.load_key(cred.key_path(path)),
        host=own_host(conf, args.host),
    )


@dataclass
class CtldServer:
    """A bound, not yet started controller."""

    server: grpc.aio.Server
    controller: Controller
    servicer: SlurmControllerServicer
    port: int
    engine: Engine
    gate: StandbyGate
    role: Role | None  # None: the only controller, over SQLite


def build_server(settings: CtldSettings) -> CtldServer:
    """Create the controller and gRPC server, bound but not started (nor loaded).

    Args:
        settings: the daemon's settings.

    Returns:
        The parts, with the port actually bound.

    Raises:
        Fatal: the port could not be bound.
    """
    verify = verifier_for(settings.conf.auth_type, settings.cluster_key)
    guard = Authenticator(verify, daemon_only=DAEMON_ONLY, privileged=settings.operators)
    rpc_stats = RpcStats()
    gate = StandbyGate()
    server = grpc.aio.server(
        options=SERVER_OPTIONS, interceptors=[CallTimer(rpc_stats), gate, guard]
    )
    try:
        port = tls.add_port(
            server, f"{settings.listen_host}:{settings.port}", settings.conf.tls_files()
        )
    except OSError as err:
        raise Fatal(f"TLSType={settings.conf.tls_type}: {err}") from None
    if port == 0:
        raise Fatal(f"cannot listen on {settings.listen_host}:{settings.port}")
    settings = replace(settings, port=port)
    timeout = settings.conf.slurmctld_timeout
    if settings.db_url.startswith("sqlite:"):
        engine = create_engine(settings.db_url)
        repo.enable_sqlite_pragmas(engine)
        role = None
    else:
        # A controller cut off inside a transaction must not hold the lease's row for
        # long: the server ends a transaction left idle for SlurmctldTimeout.
        idle = f"-c idle_in_transaction_session_timeout={timeout * 1000}"
        engine = create_engine(settings.db_url, connect_args=connect_args(timeout, idle))
        role = Role(Lease(settings.db_url, settings.host, timeout))
    controller = Controller(settings, engine, None if role is None else role.fence)
    servicer = SlurmControllerServicer(
        controller, sessionmaker(engine, expire_on_commit=False), rpc_stats, gate, role
    )
    pb_grpc.add_SlurmControllerServicer_to_server(servicer, server)
    return CtldServer(server, controller, servicer, port, engine, gate, role)


async def take_control(built: CtldServer) -> None:
    """Become the controller in control: take the role, upgrade and load the database.

    Raises:
        Fatal: the database is of a newer release.
    """
    if built.role is not None:
        log.info(
            "slurmctld (%s) in standby: waiting for the controller's role", built.role.lease.name
        )
        await built.role.acquire()
        log.info("slurmctld (%s) holds the controller's role", built.role.lease.name)
    try:
        schema.upgrade(built.engine)
    except SchemaTooNew as err:
        raise Fatal(str(err)) from None
    built.controller.load()


async def serve(args: argparse.Namespace) -> None:
    """Run the controller until asked to stop, or until another controller takes over.

    Args:
        args: the daemon's flags.

    Raises:
        Fatal: it cannot listen, or the database is of a newer release.
        ConfigError: slurm.conf is missing or malformed.
    """
    settings = settings_from(args)
    built = build_server(settings)
    await built.server.start()
    # Controllers sharing a host (and slurm.conf) share the kiosk: one serves it; the one
    # taking control serves it when nobody answers there any more.
    kiosk_path = auth.socket_path(settings.conf_path)
    kiosk = await authd.serve_unless_served(kiosk_path, settings.cluster_key)
    if settings.port_file:  # a standby listens too: it answers Ping and Takeover
        write_port_file(settings.port_file, built.port)
    log.info("slurmctld listening on %s:%d", settings.listen_host, built.port)
    stopping = asyncio.ensure_future(stop_requested())
    metrics = None
    try:
        if await _first(stopping, take_control(built)):
            kiosk = kiosk or await authd.serve_unless_served(kiosk_path, settings.cluster_key)
            await built.controller.start()
            built.gate.serving = True
            metrics = await _serve_metrics(built, settings, args.metrics_url_file)
            log.info("slurmctld in control")
            if await _first(stopping, _lost(built.role)) and built.role is not None:
                log.warning("lost the controller's role (%s): shutting down", built.role.why)
    finally:
        stopping.cancel()
        log.info("slurmctld shutting down")
        built.gate.serving = False
        built.servicer.serving = False
        if metrics is not None:
            await metrics.close()
        await built.controller.stop()
        await built.server.stop(GRACE_SECONDS)
        if kiosk is not None:
            kiosk.close()
        if built.role is not None:
            built.role.close()
        built.controller.close()


async def _first(stopping: asyncio.Future[None], work: Awaitable[None]) -> bool:
    """Run ``work`` until it ends (True) or a stop is asked for first (False, work cancelled)."""
    task = asyncio.ensure_future(work)
    await asyncio.wait({stopping, task}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # its exception, if any
        return True
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task
    return False


async def _lost(role: Role | None) -> None:
    """Return when the role is lost (never, for the only controller)."""
    if role is None:
        await asyncio.Event().wait()
    else:
        await role.lost.wait()


async def _serve_metrics(
    built: CtldServer, settings: CtldSettings, url_file: str | None
) -> MetricsServer | None:
    """Start the OpenMetrics endpoints when ``MetricsType`` asks for them.

    Raises:
        Fatal: their port cannot be bound.
    """
    conf = settings.conf
    if not conf.metrics_type:
        return None
    from ctld.metrics import Metrics, MetricsServer  # prometheus-client, only when asked for

    server = MetricsServer(Metrics(built.controller), lambda: built.controller.metrics_access)
    try:
        port = await server.start(settings.listen_host, conf.metrics_port)
    except OSError as err:
        raise Fatal(f"MetricsPort={conf.metrics_port}: cannot listen: {err.strerror}") from None
    built.controller.metrics_port = port
    url = f"http://{settings.listen_host}:{port}/metrics"
    if url_file:
        write_text_file(url_file, url + "\n")
    log.info("metrics at %s", url)
    return server


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``slurmctld`` command.

    Args:
        argv: arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_daemon("slurmctld", args, lambda: serve(args))


if __name__ == "__main__":
    sys.exit(main())
