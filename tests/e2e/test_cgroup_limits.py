"""TaskPlugin=task/cgroup: --mem is the kernel's limit (cgroup v1 or v2) and GPUs not
allocated cannot be opened (ConstrainDevices: v1's devices hierarchy, v2's BPF program);
where the node's cgroups cannot do it, memory is enforced by sampling.

The confined clusters need root and a cgroup tree slurmd may write: where its slurmd says
it has none, those tests are skipped with what it said. The devices are tried both in the
tree at /sys/fs/cgroup (v1 or v2, memory confined too) and in a cgroup v2 mounted elsewhere
(a hybrid host's /sys/fs/cgroup/unified, devices alone), where there is one.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import HOLD, TestCluster, run_cluster, wait_out_of_memory
from conftest import sacct_states as sacct
from helpers import cgroup2_mount, wait_until

from minislurm.local.cluster import ClusterSpec

# Opens the two GPUs' device files: no driver behind them says ENXIO, a denial EPERM.
PROBE = (
    "import os\n"
    "for i in (0, 1):\n"
    "    try:\n"
    "        os.open(os.path.join({devices!r}, f'nvidia{{i}}'), os.O_RDWR)\n"
    "    except OSError as error:\n"
    "        print('gpu', i, error.strerror)\n"
)


def _device_files(directory: Path) -> bool:
    """Two GPU device files (major 195, no driver behind them); False when mknod is refused."""
    directory.mkdir()
    try:
        for i in (0, 1):
            os.mknod(directory / f"nvidia{i}", 0o666 | 0o020000, os.makedev(195, i))
            os.chmod(directory / f"nvidia{i}", 0o666)
    except PermissionError:
        return False
    return True


def _gpu_spec(home: Path, *cgroup_lines: str) -> ClusterSpec:
    """Two nodes with two GPUs each (device files, where they can be made), task/cgroup."""
    devices = home / "dev"
    gres = (
        f"NodeName=n[1-2] Name=gpu File={devices}/nvidia[0-1]\n" if _device_files(devices) else ""
    )
    return ClusterSpec(
        gpus_per_node=2,
        kill_wait=2,
        min_job_age=600,
        gres_conf=gres,
        conf_lines=("TaskPlugin=task/cgroup",),
        cgroup_lines=cgroup_lines,
    )


@pytest.fixture(scope="module")
def confined(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Memory and devices confined in the tree at /sys/fs/cgroup."""
    home = tmp_path_factory.mktemp("confined")
    spec = _gpu_spec(home, "ConstrainRAMSpace=yes", "ConstrainDevices=yes")
    for cluster in run_cluster(home, request, spec):
        said = _slurmd_said(cluster, "task/cgroup")
        if "memory limits: enforced by the kernel" not in _slurmd_said(cluster, "memory limits"):
            pytest.skip(f"no cgroups to confine jobs in: {said}")
        yield cluster


@pytest.fixture(scope="module")
def v2_devices(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """Devices alone confined, by BPF programs in this machine's cgroup v2."""
    mount = cgroup2_mount()
    if mount is None:
        pytest.skip("no cgroup v2 mounted here")
    home = tmp_path_factory.mktemp("v2devices")
    spec = _gpu_spec(home, "ConstrainDevices=yes", f"CgroupMountpoint={mount}")
    yield from run_cluster(home, request, spec)


def _slurmd_said(cluster: TestCluster, what: str) -> str:
    log = (cluster.home / "log" / "slurmd-n1.log").read_text()
    return "\n".join(line for line in log.splitlines() if what in line)


def _memory_dir(cluster: TestCluster) -> Path:
    """The memory cgroup directory of node n1, as its slurmd says it."""
    found = re.search(r"memory in (\S+?);", _slurmd_said(cluster, "task/cgroup"))
    assert found, _slurmd_said(cluster, "task/cgroup")
    return Path(found.group(1))


@pytest.mark.timeout(90)
def test_a_job_over_its_memory_is_oom_killed_by_the_kernel_and_its_neighbour_runs_on(
    confined: TestCluster,
) -> None:
    cluster = confined
    neighbour = cluster.sbatch("-w", "n1", "--mem=64M", "--wrap", HOLD.format(mib=16, seconds=4))
    # Three times its memory: the kernel kills the process; the script goes on, as in Slurm.
    script = f"{HOLD.format(mib=192, seconds=60)}\necho after $?\n"
    hog = cluster.sbatch("-w", "n1", "--mem=64M", "-o", "hog-%j.out", "--wrap", script)
    wait_out_of_memory(cluster, hog)
    said = (cluster.workdir / f"hog-{hog}.out").read_text()
    assert (
        f"slurmstepd-n1: error: Detected 1 oom_kill event in StepId={hog}.batch. "
        "Some of the step tasks have been OOM Killed." in said
    )
    assert "after 137" in said  # SIGKILLed at once, not after a sample
    rows = sacct(cluster, hog)
    assert rows[f"{hog}.batch"] == ("OUT_OF_MEMORY", "0:125")
    assert cluster.wait_state(neighbour)["JobState"] == "COMPLETED"
    assert sacct(cluster, neighbour)[str(neighbour)] == ("COMPLETED", "0:0")
    # Nothing of either job is left in the node's cgroups.
    node = _memory_dir(cluster)
    wait_until(lambda: not list(node.glob(f"uid_*/job_{hog}")), what="the job's cgroup removed")
    wait_until(lambda: not list(node.glob(f"uid_*/job_{neighbour}")), what="its neighbour's")


@pytest.mark.timeout(90)
def test_the_kernel_limits_a_step_to_its_own_memory(confined: TestCluster) -> None:
    cluster = confined
    node = _memory_dir(cluster)
    job_dir = f"{node}/uid_$(id -u)/job_$SLURM_JOB_ID {node}/job_$SLURM_JOB_ID"
    script = (
        f"cat {node}/uid_$(id -u)/job_$SLURM_JOB_ID/memory.limit_in_bytes "
        f"{node}/job_$SLURM_JOB_ID/memory.max 2>/dev/null\n"
        f"srun --mem=32M {HOLD.format(mib=96, seconds=60)}\necho srun said $?\n"
        f"echo steps left: $(ls -d $(for d in {job_dir}; do echo $d/step_*; done) 2>/dev/null)\n"
    )
    job = cluster.sbatch("-w", "n1", "--mem=128M", "-o", "step-%j.out", "--wrap", script)
    assert cluster.wait_state(job, timeout=30)["JobState"] == "COMPLETED"
    out = (cluster.workdir / f"step-{job}.out").read_text()
    assert out.splitlines()[0] == str(128 << 20)  # the job's limit: its --mem
    assert (
        f"error: Detected 1 oom_kill event in StepId={job}.0. "
        "Some of the step tasks have been OOM Killed." in out
    )
    assert "srun: error: n1: task 0: Out Of Memory" in out
    assert "srun said 1" in out  # srun's exit for an OOM step, as Slurm's
    assert "Force Terminated" not in out
    # srun returned once its step's cgroup was gone; the batch script's is still there.
    assert re.search(r"^steps left: \S+/job_\d+/step_batch$", out, re.M), out
    rows = sacct(cluster, job)
    assert rows[f"{job}.0"] == ("OUT_OF_MEMORY", "0:125")
    assert rows[str(job)] == ("COMPLETED", "0:0")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tree", ["confined", "v2_devices"])
def test_a_job_cannot_open_the_gpus_it_was_not_given(
    tree: str, request: pytest.FixtureRequest
) -> None:
    cluster: TestCluster = request.getfixturevalue(tree)
    if not cluster.spec.gres_conf:
        pytest.skip("device files cannot be made here (mknod refused)")
    said = _slurmd_said(cluster, "task/cgroup")
    if "GPUs not allocated denied" not in said:
        pytest.skip(f"devices are not confined here: {said}")  # no bpf(2) in a container...
    devices = str(cluster.home / "dev")
    (cluster.workdir / "probe.py").write_text(PROBE.format(devices=devices))
    python = sys.executable
    script = f"{python} probe.py\necho step\nsrun --gpus=1 {python} probe.py\n"
    one = cluster.sbatch("-w", "n1", "--gpus=1", "-o", "one-%j.out", "--wrap", script)
    both = cluster.sbatch("-w", "n2", "--gpus=2", "-o", "both-%j.out", "--wrap", script)
    for job in (one, both):
        assert cluster.wait_state(job)["JobState"] == "COMPLETED"
    # GPU 0 has no driver (ENXIO) but is not denied; GPU 1 is the job's only with --gpus=2.
    job_one, step_one = (cluster.workdir / f"one-{one}.out").read_text().split("step\n")
    assert job_one == step_one == "gpu 0 No such device or address\ngpu 1 Operation not permitted\n"
    job_both, step_both = (cluster.workdir / f"both-{both}.out").read_text().split("step\n")
    assert job_both == "gpu 0 No such device or address\ngpu 1 No such device or address\n"
    assert step_both == "gpu 0 No such device or address\ngpu 1 Operation not permitted\n"


@pytest.fixture(scope="module")
def uncontained(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """task/cgroup asked for, with a mount point that holds no cgroups."""
    home = tmp_path_factory.mktemp("uncontained")
    (home / "nocgroups").mkdir()
    spec = ClusterSpec(
        nodes=1,
        kill_wait=2,
        min_job_age=600,
        conf_lines=("TaskPlugin=task/cgroup",),
        cgroup_lines=("ConstrainRAMSpace=yes", f"CgroupMountpoint={home}/nocgroups"),
    )
    yield from run_cluster(home, request, spec)


@pytest.mark.timeout(60)
def test_memory_is_sampled_where_the_node_has_no_cgroups(uncontained: TestCluster) -> None:
    cluster = uncontained
    said = _slurmd_said(cluster, "node=n1")
    assert f"task/cgroup: {cluster.home}/nocgroups holds no cgroup v1 or v2 tree" in said
    assert "memory limits: enforced by sampling each step's processes every 1 s" in said
    assert "(cgroups cannot)" in said
    hog = cluster.sbatch(
        "--mem=64M", "-o", "hog-%j.out", "--wrap", HOLD.format(mib=192, seconds=60)
    )
    assert cluster.wait_state(hog, timeout=30)["ExitCode"] == "0:125"
    assert sacct(cluster, hog)[str(hog)] == ("OUT_OF_MEMORY", "0:125")
    assert "exceeded memory limit (" in (cluster.workdir / f"hog-{hog}.out").read_text()
