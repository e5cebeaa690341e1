"""GPU links inside a node on a live cluster: jobs and steps get the best-linked GPUs.

Two nodes of 8 fake GPUs whose gres.conf gives ``Links=``: n1 has two NVLink
quads (GPUs 0-3 and 4-7, four links between any two of a quad, none across),
n2 is a PCIe box with NVLink pairs (0-1, 2-3, 4-5, 6-7). slurmd reads the
links, registers them, and the scheduler chooses by them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

pytestmark = pytest.mark.timeout(120)


def _links_line(node: str, gpu: int, group: int) -> str:
    """The gres.conf line of one GPU linked by 4 NVLinks to the others of its group."""
    links = ["-1" if i == gpu else "4" if i // group == gpu // group else "0" for i in range(8)]
    return f"NodeName={node} Name=gpu Links={','.join(links)}\n"


GRES_CONF = "".join(_links_line("n1", g, 4) for g in range(8)) + "".join(
    _links_line("n2", g, 2) for g in range(8)
)


@pytest.fixture(scope="module")
def links(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    spec = ClusterSpec(kill_wait=2, min_job_age=600, gres_conf=GRES_CONF)
    yield from run_cluster(tmp_path_factory.mktemp("gpulinks"), request, spec)


class Holder:
    """Jobs that print their GPUs and hold them until released."""

    def __init__(self, cluster: TestCluster, name: str) -> None:
        self.cluster = cluster
        self.release = cluster.workdir / f"release-{name}"
        self.jobs: list[int] = []

    def submit(self, node: str, gpus: int) -> int:
        """A job holding ``gpus`` GPUs of ``node``, running."""
        script = (
            "#!/bin/sh\necho CVD=$CUDA_VISIBLE_DEVICES\n"
            f"while [ ! -e {self.release} ]; do sleep 0.1; done\n"
        )
        job_id = self.cluster.sbatch("-w", node, f"--gres=gpu:{gpus}", script=script)
        self.cluster.wait_state(job_id, "RUNNING")
        self.jobs.append(job_id)
        return job_id

    def devices(self, job_id: int) -> str:
        """The job's CUDA_VISIBLE_DEVICES."""
        out = self.cluster.workdir / f"slurm-{job_id}.out"
        line = wait_until(lambda: out.exists() and out.read_text().strip(), 10, "its output")
        return line.removeprefix("CVD=")

    def done(self) -> None:
        """Release every job and wait until they completed (their GPUs are free again)."""
        self.release.touch()
        for job_id in self.jobs:
            self.cluster.wait_state(job_id, "COMPLETED")


def test_two_four_gpu_jobs_get_one_quad_each(links: TestCluster) -> None:
    held = Holder(links, "quads")
    first, second = held.submit("n1", 4), held.submit("n1", 4)
    assert {held.devices(first), held.devices(second)} == {"0,1,2,3", "4,5,6,7"}
    shown = links.run("scontrol", "show", "job", "-d", str(second)).out
    assert "Nodes=n1 CPU_IDs=" in shown and "GRES=gpu:4(IDX:4-7)" in shown, shown
    held.done()


def test_a_four_gpu_job_beside_three_busy_gpus_takes_the_other_quad(links: TestCluster) -> None:
    held = Holder(links, "quad-after-three")
    assert held.devices(held.submit("n1", 3)) == "0,1,2"
    assert held.devices(held.submit("n1", 4)) == "4,5,6,7"  # the lowest free would be 3-6
    assert held.devices(held.submit("n1", 1)) == "3"
    held.done()


def test_a_two_gpu_job_after_a_one_gpu_job_gets_a_linked_pair(links: TestCluster) -> None:
    held = Holder(links, "pair")
    assert held.devices(held.submit("n2", 1)) == "0"
    assert held.devices(held.submit("n2", 2)) == "2,3"  # not 1-2, which no NVLink joins
    held.done()


def test_a_step_takes_a_linked_pair_of_its_jobs_gpus(links: TestCluster) -> None:
    started = links.workdir / "step-started"
    script = (
        "#!/bin/sh\n"
        "srun -n1 -c1 --exact --gpus=1 sh -c "
        f"'echo one=$CUDA_VISIBLE_DEVICES; touch {started}; "
        f"while [ ! -e {links.workdir}/release-step ]; do sleep 0.1; done' &\n"
        f"while [ ! -e {started} ]; do sleep 0.1; done\n"
        "srun -n1 -c1 --exact --gpus=2 sh -c 'echo two=$CUDA_VISIBLE_DEVICES'\n"
        f"touch {links.workdir}/release-step\n"
        "wait\n"
    )
    job_id = links.sbatch("-w", "n2", "--gres=gpu:8", "-n2", script=script)
    links.wait_state(job_id, "COMPLETED")
    out = Path(links.workdir / f"slurm-{job_id}.out").read_text()
    assert "one=0\n" in out and "two=2,3\n" in out, out
