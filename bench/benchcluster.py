"""What the benchmarks share: a fresh local cluster with our commands ready to time,
and the machine's calibration figure.

Imports minislurm.local.cluster and .pgserver; the benchmarks import it as a sibling module
(``python bench/bench_x.py`` puts ``bench/`` first on the path).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from minislurm.local.cluster import ClusterSpec, LocalCluster
from minislurm.local.pgserver import PgServer, free_port

BIN = Path(sys.executable).parent
ROOT = Path(__file__).parents[1]


@dataclass(frozen=True)
class BenchCluster:
    """A running local cluster, a working directory and the environment of its commands."""

    cluster: LocalCluster
    work: str
    env: dict[str, str]


@contextmanager
def bench_cluster(nodes: int = 2, tls: bool = False, db: str = "sqlite") -> Iterator[BenchCluster]:
    """Start a two-node local cluster in a temporary directory; stop it at the end.

    The commands' bytecode is compiled first and PYTHONDONTWRITEBYTECODE is
    dropped, so that start-up is measured as users get it.

    Args:
        nodes: how many nodes.
        tls: TLSType=tls/openssl, with a CA and certificate made for it.
        db: where the state lives: "sqlite" (the default) or "postgresql" (a private
            server in a directory of its own, started and stopped with the cluster).

    Yields:
        The cluster, its work directory and the commands' environment
        (our commands first on PATH, SLURM_CONF set, no inherited SLURM_*).
    """
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "minislurm", "cli", "nodeagent"],
        cwd=ROOT,
        check=True,
    )
    with tempfile.TemporaryDirectory(prefix="minislurm-bench-") as home, state_db(db) as url:
        cluster = LocalCluster(home)
        cluster.up(ClusterSpec(nodes=nodes, tls=tls, state_db=url))
        try:
            cluster.wait_ready()
            work = os.path.join(home, "work")
            os.makedirs(work)
            env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
            env.update(SLURM_CONF=cluster.conf_path, PATH=f"{BIN}:{env.get('PATH', '')}")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            yield BenchCluster(cluster, work, env)
        finally:
            cluster.down()


@contextmanager
def state_db(kind: str) -> Iterator[str]:
    """The StateSaveLocation of a bench cluster: "" (SQLite's), or a private PostgreSQL's URL.

    The server's directory is a temporary one of its own (run as root, the
    server runs as another user, who must reach it).
    """
    if kind == "sqlite":
        yield ""
        return
    with tempfile.TemporaryDirectory(prefix="minislurm-bench-pg-") as directory:
        server = PgServer(directory, free_port())
        server.init()
        server.start()
        try:
            yield server.url()
        finally:
            server.stop()


def calibration() -> float:
    """Seconds for a fixed pure-Python loop of 5,000,000 additions, the best of three."""
    best = float("inf")
    for _ in range(3):
        began, total = time.perf_counter(), 0
        for i in range(5_000_000):
            total += i
        best = min(best, time.perf_counter() - began)
    return best
