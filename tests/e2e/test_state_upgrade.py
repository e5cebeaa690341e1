"""A state database of the release before versioned schemas loads, upgraded in place.

tests/data/state/minislurm-791521b.sql is the database a local cluster of
commit 791521b left (``sqlite3 .dump``): an account, a two-node job with a
step, an array, a failed job, a cancelled one and a held one.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from sqlalchemy import create_engine, text

from ctld.store import schema
from minislurm.local.cluster import ClusterSpec, LocalCluster

DUMP = Path(__file__).parent.parent / "data" / "state" / "minislurm-791521b.sql"


@pytest.fixture
def upgraded(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    (tmp_path / "state").mkdir()
    db = sqlite3.connect(tmp_path / "state" / "minislurm.db")
    db.executescript(DUMP.read_text())
    db.close()
    yield from run_cluster(tmp_path, request)


def test_the_previous_release_s_state_loads_and_is_upgraded(upgraded: TestCluster) -> None:
    cluster = upgraded
    db = sqlite3.connect(cluster.home / "state" / "minislurm.db")
    (version,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
    db.close()
    assert version == schema.HEAD

    held = cluster.job(2)
    assert (held["JobName"], held["JobState"], held["Reason"]) == (
        "held-job",
        "PENDING",
        "JobHeldUser",
    )
    result = cluster.run(
        "sacct", "-a", "-S", "2026-01-01", "--parsable2", "--noheader", "-o", "JobID,State,ExitCode"
    )
    assert result.rc == 0, result.err
    rows = {tuple(line.split("|")) for line in result.out.splitlines()}
    assert {
        ("1", "COMPLETED", "0:0"),
        ("1.0", "COMPLETED", "0:0"),
        ("3_2", "COMPLETED", "0:0"),
        ("7", "FAILED", "3:0"),
    } <= rows
    assocs = cluster.run("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user")
    assert "physics|root" in assocs.out.splitlines()

    job_id = cluster.sbatch("--wrap=echo after")
    assert job_id == 8  # the ids go on after the old ones
    assert cluster.wait_state(job_id)["JobState"] == "COMPLETED"


def test_a_database_of_a_newer_release_stops_the_controller(tmp_path: Path) -> None:
    local = LocalCluster(str(tmp_path))
    local.write_config(ClusterSpec())
    engine = create_engine(f"sqlite:///{tmp_path / 'state' / 'minislurm.db'}")
    schema.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()

    ctld = subprocess.run(
        [sys.executable, "-m", "ctld.main", "-D", "-f", local.conf_path, "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert ctld.returncode == 1
    assert "slurmctld: fatal: the state database is at schema version 9999" in ctld.stderr
    assert "upgraded by a newer release" in ctld.stderr
