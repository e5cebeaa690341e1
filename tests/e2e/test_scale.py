"""A 256-node cluster in two slurmd processes: registration, wide steps, an array, a lost process.

One slurmd serves 128 nodes (``slurmd -N 'n[1-128]'``): each node registers
on its own, runs its own tasks through its own stepds, and all of them fail
together when that process is killed.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm import hostlist
from minislurm.local.cluster import ClusterSpec

NODES = 256
PER_PROCESS = 128
FIRST = "n[1-128]"  # the first slurmd's nodes
SECOND = "n[129-256]"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def wide(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """256 nodes of 8 CPUs and 8 fake GPUs, 128 per slurmd; SlurmdTimeout=6."""
    spec = ClusterSpec(
        nodes=NODES,
        nodes_per_slurmd=PER_PROCESS,
        kill_wait=2,
        min_job_age=600,
        slurmd_timeout=6,
    )
    yield from run_cluster(tmp_path_factory.mktemp("wide"), request, spec)


def node_states(cluster: TestCluster) -> dict[str, str]:
    """Each node's state as ``sinfo -N`` prints it (``idle``, ``down*``...)."""
    result = cluster.run("sinfo", "-N", "-h", "-p", "gpu", "-o", "%N %t")
    assert result.rc == 0, result.err
    return dict(line.split() for line in result.out.splitlines())


def test_every_node_registers_through_two_processes(wide: TestCluster) -> None:
    assert wide.local.daemons() == ["slurmctld", f"slurmd-{FIRST}", f"slurmd-{SECOND}"]
    status = wide.run("minislurm", "cluster", "status", "--home", str(wide.home))
    assert status.rc == 0 and status.out.count("running pid") == 3, status.out
    states = node_states(wide)
    assert sorted(states) == sorted(f"n{i}" for i in range(1, NODES + 1))
    assert set(states.values()) == {"idle"}
    shown = wide.run("scontrol", "-o", "show", "node", "n200")
    assert "Gres=gpu:8" in shown.out and "State=IDLE" in shown.out, shown.out


def test_a_step_across_all_256_nodes(wide: TestCluster) -> None:
    result = wide.run("srun", "-N256", "-n256", "-l", "printenv", "SLURMD_NODENAME", "SLURM_PROCID")
    assert result.rc == 0, result.err
    assert len(result.out.splitlines()) == 2 * NODES
    by_task: dict[str, list[str]] = {}
    for line in result.out.splitlines():
        task, _, value = line.partition(": ")
        by_task.setdefault(task, []).append(value)
    assert len(by_task) == NODES
    assert {values[0] for values in by_task.values()} == {f"n{i}" for i in range(1, NODES + 1)}
    assert all(values[1] == task for task, values in by_task.items())


def test_a_thousand_job_array(wide: TestCluster) -> None:
    # A node each: four waves over the 256 nodes, on both processes.
    job = wide.sbatch("--array=0-999", "--exclusive", "-o", "/dev/null", "--wrap", "true")

    def states() -> list[str]:
        out = wide.run("sacct", "-j", str(job), "-X", "-n", "-P", "-o", "State").out
        return out.split()

    wait_until(
        lambda: (s := states()) and len(s) == 1000 and all(x == "COMPLETED" for x in s),
        180,
        "1,000 array tasks to complete",
    )
    hosts = wide.run("sacct", "-j", str(job), "-X", "-n", "-P", "-o", "NodeList").out.split()
    assert len(set(hosts)) > PER_PROCESS  # nodes of both processes took tasks


def test_the_loss_of_one_process_is_the_failure_of_its_nodes_alone(wide: TestCluster) -> None:
    # Jobs on both processes' nodes: the first fills n1-n8, the others are kept off them.
    lost = [wide.sbatch("--exclusive", "--requeue", "--wrap", "sleep 600") for _ in range(8)]
    kept = [wide.sbatch("--exclusive", "-x", FIRST, "--wrap", "sleep 600") for _ in range(8)]
    for job in lost + kept:
        wide.wait_state(job, "RUNNING")
    assert {wide.job(j)["BatchHost"] for j in lost} <= set(hostlist.expand(FIRST))
    kept_before = {j: (wide.job(j)["BatchHost"], wide.job(j)["StartTime"]) for j in kept}

    pid = wide.local.pid(f"slurmd-{FIRST}")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    first, second = set(hostlist.expand(FIRST)), set(hostlist.expand(SECOND))
    wait_until(
        lambda: all(s.startswith("down") for n, s in node_states(wide).items() if n in first),
        60,
        "the first process's 128 nodes to go down",
    )
    states = node_states(wide)
    assert all(not states[n].startswith("down") for n in second), states
    for job in lost:  # requeued, and started again on the nodes still up
        again = wide.wait_state(job, "RUNNING", timeout=60)
        assert again["Restarts"] == "1" and again["BatchHost"] in second, again
    for job in kept:
        now = wide.job(job)
        assert now["JobState"] == "RUNNING" and now["Restarts"] == "0", now
        assert (now["BatchHost"], now["StartTime"]) == kept_before[job]
    wide.run("scancel", *map(str, lost + kept))
