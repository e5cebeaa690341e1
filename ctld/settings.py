"""slurmctld's settings: slurm.conf, overridden by command-line flags.

One frozen dataclass, validated at start and passed down explicitly.

Imports minislurm.config and ctld.sched.knobs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ctld.sched.knobs import SchedConfig, sched_config
from minislurm.config import SlurmConfig


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

    @property
    def sched(self) -> SchedConfig:
        """The scheduler's type and ``bf_*`` knobs from slurm.conf."""
        return sched_config(self.conf)

    @property
    def controller_address(self) -> str:
        """``host:port`` by which nodes and jobs reach the controller."""
        host = self.conf.controller_addr or self.conf.controller_host or "127.0.0.1"
        return f"{host}:{self.port}"


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
