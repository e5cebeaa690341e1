"""Fixtures of the conformance suite: a minislurm cluster shaped like the reference Slurm one,
the live oracle when one is named, and the tally printed at the end of the session.

``CONFORMANCE_ORACLE=1`` runs every case against real Slurm too (its slurm.conf
in ``CONFORMANCE_ORACLE_CONF``, default /etc/slurm/slurm.conf; its commands in
``CONFORMANCE_ORACLE_BIN``, default /usr/bin). Imports the e2e cluster fixtures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from e2e.conftest import run_cluster
from helpers import BIN

from minislurm.local.cluster import ClusterSpec

from .harness import Runner, Target

# The reference cluster's shape (../shared/reference/real-slurm/up.sh): nodes n1 and n2 with
# 8 CPUs, 8 GPUs and RealMemory=8000 each, partitions gpu (default) and debug (MaxTime=60).
ORACLE_SHAPE = ClusterSpec(
    nodes=2,
    cpus_per_node=8,
    gpus_per_node=8,
    memory_per_node=8000,
    cluster_name="conform",
    kill_wait=5,
    min_job_age=300,
)


@dataclass
class Tally:
    """How many cases matched, against the recording and against the live oracle."""

    total: int = 0
    recorded: list[str] = field(default_factory=list)  # matched the recorded results
    live: list[str] = field(default_factory=list)  # matched the live oracle
    live_total: int = 0
    drifted: list[str] = field(default_factory=list)  # live oracle differs from the recording
    failed: dict[str, str] = field(default_factory=dict)  # case id -> first line of why


TALLY = Tally()


@pytest.fixture(scope="module")
def minislurm(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Runner]:
    """Cases run against a fresh minislurm cluster shaped like the oracle."""
    home = tmp_path_factory.mktemp("conformance-cluster")
    clusters = run_cluster(home, request, ORACLE_SHAPE)
    cluster = next(clusters)
    try:
        runner = Runner(Target("minislurm", BIN, Path(cluster.local.conf_path), home / "cases"))
        runner.start()
        yield runner
    finally:
        clusters.close()  # stops the daemons (and prints their logs when a case failed)


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Runner | None:
    """Cases run against real Slurm too, when ``CONFORMANCE_ORACLE=1`` names one."""
    if os.environ.get("CONFORMANCE_ORACLE") != "1":
        return None
    conf = Path(os.environ.get("CONFORMANCE_ORACLE_CONF", "/etc/slurm/slurm.conf"))
    bin_dir = Path(os.environ.get("CONFORMANCE_ORACLE_BIN", "/usr/bin"))
    runner = Runner(Target("slurm", bin_dir, conf, tmp_path_factory.mktemp("conformance-oracle")))
    runner.start()
    return runner


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many cases matched real Slurm, and which did not."""
    if not TALLY.total:
        return
    write = terminalreporter.write_line
    terminalreporter.section("conformance with Slurm 22.05")
    write(f"{len(TALLY.recorded)}/{TALLY.total} case(s) matched the recorded oracle results")
    if TALLY.live_total:
        write(f"{len(TALLY.live)}/{TALLY.live_total} case(s) matched the live oracle")
        if TALLY.drifted:
            write(f"live oracle differs from the recording: {' '.join(TALLY.drifted)}")
    for case_id, why in sorted(TALLY.failed.items()):
        write(f"  differs: {case_id}: {why}")
