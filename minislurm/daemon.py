"""What both daemons do the same way: flags, logging, signals, the port file.

Imports only the standard library (and minislurm's version and errors).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any


class _SlurmFormatter(logging.Formatter):
    """``[2026-11-30T04:26:06.123] message``, as Slurm's daemons log."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}"


def setup_logging(name: str, logfile: str | None, verbose: int) -> None:
    """Configure the root logger of a daemon.

    Args:
        name: the daemon's name, prefixed to each line on stderr.
        logfile: a file to append to, or None for stderr.
        verbose: 0 INFO, 1 or more DEBUG.
    """
    handler: logging.Handler
    if logfile:
        handler = logging.FileHandler(logfile)
        fmt = "[%(asctime)s] %(levelname)s %(name)s: %(message)s"
    else:
        handler = logging.StreamHandler(sys.stderr)
        fmt = f"{name}: [%(asctime)s] %(levelname)s %(name)s: %(message)s"
    handler.setFormatter(_SlurmFormatter(fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


def write_port_file(path: str, port: int) -> None:
    """Write the port a daemon listens on, atomically (readers never see half a file).

    Args:
        path: the file.
        port: the bound port.
    """
    write_text_file(path, f"{port}\n")


def write_text_file(path: str, text: str) -> None:
    """Write a file atomically (readers never see half of it).

    Args:
        path: the file.
        text: its content.
    """
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Options of every gRPC server and channel of the daemons: messages carry batch
# scripts (Slurm allows 4 MB) and whole queues, beyond grpc's 4 MB default.
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
]
# How often slurmd's channels to the controllers ping them (nodeagent/slurmd.py).
KEEPALIVE_MS = 2000
# Options of the daemons' servers (with GRPC_OPTIONS). gRPC cancels a call that
# waits more than 30 s (its default) for the server's event loop to take it: a
# slurmd of 128 nodes that is asked to launch a 1,024-node step on a loaded
# machine takes its last nodes' calls later than that, and those nodes' tasks
# were lost. A call is now kept as long as its client waits. Clients that ping
# every KEEPALIVE_MS are let do so, without calls under way too.
SERVER_OPTIONS = [
    *GRPC_OPTIONS,
    ("grpc.so_reuseport", 0),
    ("grpc.server_max_unrequested_time_in_server", 3600),
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
    ("grpc.keepalive_permit_without_calls", 1),
]


class Fatal(Exception):
    """A daemon cannot start: printed as ``<daemon>: fatal: <message>``, exit status 1."""


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    """The flags slurmctld and slurmd share (Slurm's, plus ours for local clusters).

    Args:
        parser: the daemon's parser.
    """
    parser.add_argument("-D", action="store_true", help="run in the foreground (always so)")
    parser.add_argument("-f", dest="conf", help="slurm.conf to read (default: $SLURM_CONF)")
    parser.add_argument("-L", dest="logfile", help="log to this file instead of stderr")
    parser.add_argument("-v", dest="verbose", action="count", default=0, help="more logging")
    parser.add_argument("-V", dest="version", action="store_true", help="print the version")
    parser.add_argument("--listen", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--pid-file", help="write the daemon's pid here")


async def stop_requested() -> None:
    """Return on SIGTERM or SIGINT; a second signal exits at once (a cold stop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if stop.is_set():
            os._exit(1)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    await stop.wait()


def run_daemon(
    name: str, args: argparse.Namespace, body: Callable[[], Coroutine[Any, Any, None]]
) -> int:
    """A daemon's main: version, logging, pid file, then ``body`` until it returns.

    Args:
        name: the daemon's name.
        args: its parsed flags (see :func:`add_common_flags`).
        body: reads the configuration and serves; raises :class:`Fatal` (or a
            ConfigError) when it cannot start.

    Returns:
        The exit status.
    """
    from minislurm import VERSION_LINE
    from minislurm.errors import ClusterKeyError, ConfigError

    if args.version:
        print(VERSION_LINE)
        return 0
    setup_logging(name, args.logfile, args.verbose)
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    try:
        asyncio.run(body())
    except (Fatal, ConfigError, ClusterKeyError) as err:
        print(f"{name}: fatal: {err}", file=sys.stderr)
        return 1
    return 0
