"""scontrol reboot: ASAP drains the node, reboots it once its jobs are done, and resumes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, parse_oneliner, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

CHECK = """#!/bin/sh
echo "$SLURMD_NODENAME" >> "{log}"
"""


@pytest.fixture
def rebootable(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """Two nodes whose health checks say when they ran."""
    check = tmp_path / "check.sh"
    check.write_text(CHECK.format(log=tmp_path / "checks"))
    check.chmod(0o755)
    spec = ClusterSpec(kill_wait=2, min_job_age=600, conf_lines=(f"HealthCheckProgram={check}",))
    (tmp_path / "cluster").mkdir()
    yield from run_cluster(tmp_path / "cluster", request, spec)


def node(cluster: TestCluster, name: str) -> dict[str, str]:
    result = cluster.run("scontrol", "-o", "show", "node", name)
    assert result.rc == 0, result.err
    return parse_oneliner(result.out.strip())


def compact(cluster: TestCluster, name: str) -> str:
    result = cluster.run("sinfo", "-h", "-N", "-n", name, "-o", "%t")
    assert result.rc == 0, result.err
    states = set(result.out.split())
    assert len(states) == 1, states
    return states.pop()


@pytest.mark.timeout(120)
def test_reboot_asap_drains_reboots_and_resumes_the_node(
    rebootable: TestCluster, tmp_path: Path
) -> None:
    checks = tmp_path / "checks"
    assert sorted(checks.read_text().split()) == ["n1", "n2"]  # at the start, before registering
    gate = rebootable.workdir / "go"
    busy = rebootable.sbatch("-w", "n1", "--wrap", f"while [ ! -e {gate} ]; do sleep 0.1; done")
    rebootable.wait_state(busy, "RUNNING")
    before = node(rebootable, "n1")

    result = rebootable.run(
        "scontrol", "reboot", "ASAP", "nextstate=resume", "reason=new driver", "n1"
    )
    assert (result.rc, result.out, result.err) == (0, "", "")
    asked = node(rebootable, "n1")
    assert asked["State"] == "MIXED+DRAIN+REBOOT_REQUESTED"
    assert asked["Reason"].startswith("new driver [")
    assert compact(rebootable, "n1") == "drng@"
    # Drained: a new job goes elsewhere while the running one finishes.
    other = rebootable.sbatch("--wrap", "true")
    assert rebootable.wait_state(other)["NodeList"] == "n2"

    gate.touch()
    assert rebootable.wait_state(busy)["JobState"] == "COMPLETED"
    back = wait_until(
        lambda: (n := node(rebootable, "n1"))["State"] == "IDLE" and n,
        30,
        "n1 rebooted and resumed",
    )
    assert back.get("Reason", "") == ""
    assert back["SlurmdStartTime"] >= before["SlurmdStartTime"]  # (to the second)
    assert "node=n1 rebooting" in (rebootable.home / "log" / "slurmd-n1.log").read_text()
    assert checks.read_text().split().count("n1") == 2  # its health check ran once more
    after = rebootable.sbatch("-w", "n1", "--wrap", "true")
    assert rebootable.wait_state(after)["JobState"] == "COMPLETED"


@pytest.mark.timeout(60)
def test_a_pending_reboot_can_be_cancelled_and_only_a_pending_one(
    rebootable: TestCluster,
) -> None:
    refused = rebootable.run("scontrol", "cancel_reboot", "n2")
    assert (refused.rc, refused.err) == (1, "slurm_update error: Invalid node state specified\n")
    gate = rebootable.workdir / "go2"
    busy = rebootable.sbatch("-w", "n2", "--wrap", f"while [ ! -e {gate} ]; do sleep 0.1; done")
    rebootable.wait_state(busy, "RUNNING")
    assert rebootable.run("scontrol", "reboot", "n2").rc == 0  # not ASAP: no drain
    asked = node(rebootable, "n2")
    assert asked["State"] == "MIXED+REBOOT_REQUESTED"
    assert asked["Reason"].startswith("reboot requested [")
    assert rebootable.run("scontrol", "cancel_reboot", "n2").rc == 0
    assert node(rebootable, "n2")["State"] == "MIXED"
    gate.touch()
    assert rebootable.wait_state(busy)["JobState"] == "COMPLETED"
    assert node(rebootable, "n2")["State"] == "IDLE"  # and no reboot followed
    bad = rebootable.run("scontrol", "reboot", "nextstate=sideways", "n2")
    assert bad.rc == 1 and "Invalid nextstate" in bad.err
    missing = rebootable.run("scontrol", "reboot", "ASAP")
    assert missing.rc == 1 and "Missing node list" in missing.err
