"""A private PostgreSQL server: initdb and pg_ctl of this machine's PostgreSQL, in one directory.

Local clusters with backup controllers keep their state in one
(``minislurm cluster up --controllers 2``), and the tests start one on a
free port. The directory holds ``data/`` (the cluster), ``postgresql.log``
and the server's Unix socket; the server listens on 127.0.0.1 only and
trusts local connections (role ``minislurm``, database ``minislurm``).

PostgreSQL refuses to run as root: run as root, the server runs as the
``postgres`` user (Debian's package makes it), else ``nobody``, which then
owns the directory and must be able to reach it.

Imports only the standard library (psycopg, to create databases, when asked to).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
from dataclasses import dataclass

ROLE = "minislurm"
DATABASE = "minislurm"
PROGRAMS = ("initdb", "pg_ctl", "postgres")
START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections


class PgServerError(Exception):
    """PostgreSQL is missing, or its server did not start."""


def bin_dir() -> str:
    """Where this machine's PostgreSQL server programs are.

    Returns:
        The directory holding initdb and pg_ctl: PATH's, else the newest
        ``/usr/lib/postgresql/<version>/bin`` (where Debian puts them).

    Raises:
        PgServerError: PostgreSQL's server is not installed.
    """
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(path.split("/")[4]) if path.split("/")[4].isdigit() else 0,
    )
    if debian:
        return os.path.dirname(debian[-1])
    raise PgServerError(
        "PostgreSQL's server is not installed (initdb, pg_ctl): install it"
        " (Debian: apt-get install postgresql)"
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


@dataclass(frozen=True)
class PgServer:
    """A PostgreSQL server of our own, in ``directory``, listening on ``host:port``."""

    directory: str
    port: int
    host: str = "127.0.0.1"

    @property
    def data(self) -> str:
        """The server's data directory."""
        return os.path.join(self.directory, "data")

    def url(self, database: str = DATABASE) -> str:
        """The SQLAlchemy URL of one of its databases (psycopg 3)."""
        return f"postgresql+psycopg://{ROLE}@{self.host}:{self.port}/{database}"

    def initialized(self) -> bool:
        """Whether initdb has made its data directory."""
        return os.path.exists(os.path.join(self.data, "PG_VERSION"))

    def init(self, clients: str = "") -> None:
        """Make the data directory (once).

        Args:
            clients: a network (``10.200.3.0/24``) whose hosts are trusted too,
                beside this machine's loopback: a namespace cluster's bridge.

        Raises:
            PgServerError: PostgreSQL is missing or initdb failed.
        """
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        user = _server_user()
        if user is not None:
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        if not self.initialized():
            self._run(
                "initdb", "-D", self.data, "-U", ROLE, "--auth=trust", "-E", "UTF8", "--no-sync"
            )
            if clients:
                with open(os.path.join(self.data, "pg_hba.conf"), "a") as hba:
                    hba.write(f"host all {ROLE} {clients} trust\n")

    def start(self) -> None:
        """Start the server and wait until it accepts connections, then make the database.

        Raises:
            PgServerError: it did not start (the tail of its log says why).
        """
        options = (
            f"-p {self.port} -h {self.host} -k {self.directory}"
            # A controller cut off from the network holds a transaction open: notice within
            # seconds, so that the controller taking over need not wait for it.
            " -c tcp_keepalives_idle=2 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=3"
        )
        log = os.path.join(self.directory, "postgresql.log")
        try:
            self._run(
                "pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "-t",
                str(START_TIMEOUT), "start",
            )  # fmt: skip
        except PgServerError as err:
            tail = _tail(log)
            raise PgServerError(f"{err}\n{tail}") from None
        self.create_database(DATABASE)

    def running(self) -> bool:
        """Whether its server runs (``pg_ctl status``)."""
        try:
            self._run("pg_ctl", "-D", self.data, "status")
        except PgServerError:
            return False
        return True

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended), if it runs."""
        if self.initialized() and self.running():
            self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def create_database(self, name: str) -> None:
        """Create database ``name`` unless it exists.

        Args:
            name: a plain identifier.
        """
        import psycopg

        with psycopg.connect(
            host=self.host, port=self.port, user=ROLE, dbname="postgres", autocommit=True
        ) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if exists.fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')

    def _run(self, program: str, *args: str) -> None:
        user = _server_user()
        try:
            subprocess.run(
                [os.path.join(bin_dir(), program), *args],
                check=True,
                capture_output=True,
                text=True,
                user=None if user is None else user.pw_uid,
                group=None if user is None else user.pw_gid,
                extra_groups=None if user is None else [],
                cwd=self.directory,
            )
        except subprocess.CalledProcessError as err:
            said = (err.stderr or err.stdout or "").strip()
            raise PgServerError(f"{program} failed (exit {err.returncode}): {said}") from None


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server when we are root (None: ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PgServerError("running as root, and there is no postgres or nobody user to run it")


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""
