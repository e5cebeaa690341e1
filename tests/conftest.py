"""Test-wide fixtures: the tests' own directory is importable; the caller's
settings of the commands (``SQUEUE_FORMAT``, ``SLURM_TIME_FORMAT``...) do
not reach the tests; one private PostgreSQL server serves the tests that
keep state in PostgreSQL, each in a database of its own."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from minislurm.local.pgserver import PgServer, PgServerError, bin_dir, free_port

sys.path.insert(0, str(Path(__file__).parent))

# The input variables of the commands, and Slurm's (a test sets what it needs).
COMMAND_VARIABLES = ("SQUEUE_", "SINFO_", "SACCT_", "SCANCEL_", "SPRIO_", "SCONTROL_")
SLURM_VARIABLES = ("SLURM_TIME_FORMAT", "SLURM_CLUSTERS")


@pytest.fixture(autouse=True)
def _no_command_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith(COMMAND_VARIABLES) or name in SLURM_VARIABLES:
            monkeypatch.delenv(name)
    yield


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server of the session's own (skips when PostgreSQL is not installed).

    Its directory is one of its own under the system's temp directory: run as
    root, the server runs as another user, who must reach it.
    """
    try:
        bin_dir()
    except PgServerError as err:
        pytest.skip(str(err))
    directory = tempfile.mkdtemp(prefix="minislurm-pg-")
    server = PgServer(directory, free_port())
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The SQLAlchemy URL of a new, empty database on the session's PostgreSQL server."""
    name = f"test_{os.urandom(6).hex()}"
    pg_server.create_database(name)
    return pg_server.url(name)
