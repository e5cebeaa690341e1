"""What both daemons do the same way: logging set-up and the port file.

Imports only the standard library.
"""

from __future__ import annotations

import logging
import os
import sys
import time


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
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Options of every gRPC server and channel of the daemons: messages carry batch
# scripts (Slurm allows 4 MB) and whole queues, beyond grpc's 4 MB default.
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
]
