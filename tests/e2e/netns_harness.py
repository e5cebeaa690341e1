"""The multi-host harness: a real cluster whose nodes live in network namespaces of their own.

Each slurmd has its own address on a bridge, its own hostname and a hosts
file naming every node; the controller listens on the bridge; the
filesystem is shared, as on NFS. Tests skip, saying why, where root or
namespaces are missing. Whatever happens, the namespaces, cables, bridge
and processes are removed at the end.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster
from helpers import BIN, Result

from minislurm.local.cluster import ClusterSpec
from minislurm.local.netns import NetnsCluster, Network, missing_requirements


class NetnsTestCluster(TestCluster):
    """A running namespace cluster and the commands to drive it, from outside or from a node."""

    __test__ = False

    def __init__(self, home: Path, spec: ClusterSpec) -> None:
        super().__init__(home, spec)
        self.local: NetnsCluster = NetnsCluster(str(home))

    @property
    def network(self) -> Network:
        """Its names and addresses."""
        return self.local.network()

    def run_on(self, node: str, *argv: str, timeout: float = 60.0) -> Result:
        """Run one of our commands on a node: in its slurmd's network, UTS and mount namespaces.

        Args:
            node: the node's name.
            argv: the command and its arguments (looked up in the venv's bin).
            timeout: seconds.

        Returns:
            What it did.
        """
        pid = self.local.pid(f"slurmd-{node}")
        assert pid is not None, f"slurmd of {node} is not running"
        enter = ["nsenter", "-t", str(pid), "--net", "--uts", "--mount", f"--wd={self.workdir}"]
        proc = subprocess.run(
            [*enter, str(BIN / argv[0]), *argv[1:]],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(proc.stdout, proc.stderr, proc.returncode)


def run_netns_cluster(
    home: Path, request: pytest.FixtureRequest, spec: ClusterSpec | None = None
) -> Iterator[NetnsTestCluster]:
    """Start a namespace cluster in ``home``, yield it, remove it (logs printed on failure).

    Args:
        home: its directory.
        request: the fixture's request (to tell whether a test failed).
        spec: its shape (default: two nodes with 8 CPUs and 8 fake GPUs each).

    Yields:
        The running cluster.
    """
    reason = missing_requirements()
    if reason:
        pytest.skip(f"namespace cluster unavailable: {reason}")
    cluster = NetnsTestCluster(home, spec or ClusterSpec(kill_wait=2, min_job_age=600))
    failed_before = request.session.testsfailed
    try:
        cluster.start()
        yield cluster
    finally:
        if request.session.testsfailed > failed_before:
            print(cluster.logs())
        cluster.stop()
