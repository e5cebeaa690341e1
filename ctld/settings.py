"""slurmctld's settings: slurm.conf, overridden by command-line flags.

One frozen dataclass, validated at start and passed down explicitly.

Imports minislurm.config, minislurm.errors and ctld.sched.knobs.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from ctld.sched.knobs import SchedConfig, sched_config
from minislurm.config import SlurmConfig
from minislurm.errors import ConfigError


@dataclass(frozen=True)
class CtldSettings:
    """Everything slurmctld needs to know to run."""

    conf: SlurmConfig
    conf_path: str
    listen_host: str
    port: int  # 0: pick a free port (see port_file)
    port_file: str | None
    db_url: str
    operators: frozenset[int]  # uids always Administrator: root, SlurmUser, the daemon's own
    cluster_key: bytes  # signs step credentials (slurm.key)
    host: str = ""  # which SlurmctldHost this controller is ("": the primary)

    @property
    def sched(self) -> SchedConfig:
        """The scheduler's type and ``bf_*`` knobs from slurm.conf."""
        return sched_config(self.conf)

    @property
    def controller_address(self) -> str:
        """``host:port`` by which nodes and jobs reach this controller."""
        addr = dict(self.conf.controllers).get(self.host, self.conf.controller_addr)
        return f"{addr or self.conf.controller_host or '127.0.0.1'}:{self.port}"


def default_db_url(conf: SlurmConfig) -> str:
    """The database StateSaveLocation names.

    A ``postgresql://`` URL names a PostgreSQL database (spoken to by psycopg
    3); a directory holds SQLite's file, ``minislurm.db``.

    Args:
        conf: the configuration.

    Returns:
        A SQLAlchemy URL.
    """
    location = conf.state_save_location
    scheme, sep, rest = location.partition("://")
    if sep:
        return f"postgresql+psycopg://{rest}" if scheme != "postgresql+psycopg" else location
    return "sqlite:///" + os.path.join(location, "minislurm.db")


def own_host(conf: SlurmConfig, named: str | None) -> str:
    """Which SlurmctldHost a controller is.

    Args:
        conf: the configuration.
        named: the one its ``--host`` flag names, if any.

    Returns:
        ``named``; else the only one; else the one named as this machine is
        (its short host name), as Slurm's controllers find theirs.

    Raises:
        ConfigError: ``named`` is none of them, or this machine is none of them.
    """
    names = [name for name, _ in conf.controllers]
    if named is not None:
        if named not in names:
            raise ConfigError(conf.path, 0, f"--host {named}: no SlurmctldHost is named so")
        return named
    if len(names) == 1:
        return names[0]
    short = socket.gethostname().split(".")[0]
    if short not in names:
        raise ConfigError(
            conf.path,
            0,
            f"this machine ({short}) is none of the SlurmctldHost lines"
            f" ({', '.join(names)}): name which with --host",
        )
    return short


def check_backups(conf: SlurmConfig, db_url: str) -> None:
    """Backup controllers share the state: it must be in PostgreSQL.

    Raises:
        ConfigError: backups are configured over SQLite.
    """
    if conf.backup_controllers and not db_url.startswith("postgresql"):
        raise ConfigError(
            conf.path,
            0,
            "backup controllers (SlurmctldHost lines after the first) share the state:"
            " StateSaveLocation must be a postgresql:// URL",
        )
