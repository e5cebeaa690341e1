"""scontrol reconfigure: the controller and every slurmd re-read slurm.conf while jobs run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TestCluster

EPILOG = """#!/bin/sh
echo "$SLURM_JOB_ID" >> "{log}"
"""


def config(cluster: TestCluster) -> dict[str, str]:
    result = cluster.run("scontrol", "show", "config")
    assert result.rc == 0, result.err
    pairs = (line.split("=", 1) for line in result.out.splitlines() if " = " in line)
    return {key.strip(): value.strip() for key, value in pairs}


@pytest.mark.timeout(120)
def test_reconfigure_applies_what_it_can_and_says_what_waits(
    fresh_cluster: TestCluster, tmp_path: Path
) -> None:
    cluster = fresh_cluster
    conf = Path(cluster.local.conf_path)
    original = conf.read_text()
    running = cluster.sbatch("--wrap", "sleep 30")
    cluster.wait_state(running, "RUNNING")
    epilog = tmp_path / "epilog.sh"
    log = tmp_path / "epilogs"
    epilog.write_text(EPILOG.format(log=log))
    epilog.chmod(0o755)
    debug = "PartitionName=debug Nodes=n[1-2] Default=NO MaxTime=60 State=UP"
    assert debug in original
    conf.write_text(
        original.replace(debug, debug.replace("MaxTime=60", "MaxTime=90"))
        + f"Epilog={epilog}\nPrologEpilogTimeout=20\n"
    )
    result = cluster.run("scontrol", "reconfigure")
    assert (result.rc, result.out, result.err) == (0, "", "")
    shown = config(cluster)
    assert (shown["Epilog"], shown["PrologEpilogTimeout"]) == (str(epilog), "20")
    part = cluster.run("scontrol", "-o", "show", "partition", "debug").out
    assert "MaxTime=01:30:00" in part
    assert cluster.state(running) == "RUNNING"  # jobs run on through it
    job = cluster.sbatch("-w", "n2", "--wrap", "true")
    assert cluster.wait_state(job)["JobState"] == "COMPLETED"
    assert str(job) in log.read_text().split()  # n2's slurmd took the new Epilog

    # What only a restart applies is said, and left as it was.
    text = conf.read_text()
    assert "NodeName=n[1-2] " in text
    conf.write_text(text.replace("NodeName=n[1-2] ", "NodeName=n[1-2] Weight=5 ", 1))
    said = cluster.run("scontrol", "reconfigure")
    assert said.rc == 0
    assert "scontrol: NodeName changed: it applies once slurmctld restarts" in said.err
    assert "Weight=1 " in cluster.run("scontrol", "-o", "show", "node", "n2").out
    # A file that does not read changes nothing.
    good = conf.read_text()
    conf.write_text(good + "KillWait=soon\n")
    try:
        bad = cluster.run("scontrol", "reconfigure")
    finally:
        conf.write_text(good)
    assert bad.rc == 1
    assert bad.err.startswith("slurm_reconfigure error: ") and "KillWait" in bad.err
    assert config(cluster)["Epilog"] == str(epilog)
    assert cluster.state(running) == "RUNNING"
    cluster.run("scancel", str(running))
