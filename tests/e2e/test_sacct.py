"""sacct end to end: jobs, their batch and srun steps, usage figures, filters, restarts.

A cluster of this module's own samples usage every second
(``JobAcctGatherFrequency=task=1``), so that the figures of a few seconds'
job come from sampling, not only from the processes' own rusage.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

import pytest
from conftest import TestCluster, run_cluster
from helpers import wait_until

from minislurm.local.cluster import ClusterSpec

HOLD = (
    "import time; b = bytearray(60 << 20); b[::4096] = b'x' * len(b[::4096])\n"
    "while time.process_time() < 2.5: pass\n"  # CPU time, so a loaded machine cannot shorten it
)


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestCluster]:
    """A two-node cluster sampling usage every second."""
    spec = ClusterSpec(kill_wait=2, min_job_age=600, acct_gather_frequency=1)
    yield from run_cluster(tmp_path_factory.mktemp("sacct"), request, spec)


def sacct(cluster: TestCluster, *args: str) -> list[list[str]]:
    """``sacct --parsable2 --noheader ARGS`` as rows of fields."""
    result = cluster.run("sacct", "--parsable2", "--noheader", *args)
    assert result.rc == 0, result.err
    return [line.split("|") for line in result.out.splitlines()]


def sacct_rows(
    cluster: TestCluster, count: int, *args: str, timeout: float = 10
) -> list[list[str]]:
    """Wait until ``sacct ARGS`` lists ``count`` records (steps are recorded as they end)."""
    return wait_until(
        lambda: len(rows := sacct(cluster, *args)) == count and rows,
        timeout,
        f"{count} records of sacct {' '.join(args)}",
    )


def kib(size: str) -> float:
    """A MaxRSS figure (``143688K``, ``100M``, ``1.50G``) in KiB."""
    factor = {"K": 1, "M": 1024, "G": 1024**2, "T": 1024**3}
    return float(size[:-1]) * factor[size[-1]] if size[-1] in factor else float(size) / 1024


def seconds(cpu: str) -> float:
    """A TotalCPU figure (``00:02.903``, ``01:02:03``, ``1-00:00:00``) in seconds."""
    days, _, clock = cpu.rpartition("-")
    parts = [float(p) for p in clock.split(":")]
    if len(parts) == 2:
        parts.insert(0, 0.0)
    hours, minutes, secs = parts
    return int(days or 0) * 86400 + hours * 3600 + minutes * 60 + secs


def test_batch_job_lists_its_batch_step_and_each_srun_step(cluster: TestCluster) -> None:
    script = "#!/bin/bash\nsrun -n1 true\nsrun -n1 bash -c 'exit 3'\necho done\n"
    job_id = cluster.sbatch("-J", "steps", script=script)
    cluster.wait_state(job_id, "COMPLETED")
    assert sacct_rows(cluster, 4, "-j", str(job_id), "-o", "JobID,State,ExitCode") == [
        [str(job_id), "COMPLETED", "0:0"],
        [f"{job_id}.batch", "COMPLETED", "0:0"],
        [f"{job_id}.0", "COMPLETED", "0:0"],
        [f"{job_id}.1", "FAILED", "3:0"],
    ]
    rows = sacct(cluster, "-j", str(job_id), "-o", "JobName,DerivedExitCode,NTasks,NodeList")
    assert rows[0][:2] == ["steps", "3:0"]  # the highest exit of its steps
    assert rows[1] == ["batch", "", "1", rows[0][3]]
    assert [r[0] for r in rows[2:]] == ["true", "bash"]
    assert sacct(cluster, "-j", f"{job_id}.1", "-o", "JobID,State") == [[f"{job_id}.1", "FAILED"]]


def test_cancelled_running_job_names_who_cancelled_it(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--wrap=sleep 300")
    cluster.wait_state(job_id, "RUNNING")
    running = sacct(cluster, "-j", str(job_id), "-o", "JobID,State,End,Elapsed")
    assert [r[:3] for r in running] == [
        [str(job_id), "RUNNING", "Unknown"],
        [f"{job_id}.batch", "RUNNING", "Unknown"],
    ]
    assert cluster.run("scancel", str(job_id)).rc == 0
    cluster.wait_state(job_id, "CANCELLED")
    assert sacct(cluster, "-j", str(job_id), "-o", "JobID,State,ExitCode") == [
        [str(job_id), f"CANCELLED by {os.getuid()}", "0:0"],
        [f"{job_id}.batch", "CANCELLED", "0:15"],
    ]


def test_usage_of_the_batch_step_is_sampled(cluster: TestCluster) -> None:
    """Two 60 MiB processes side by side: MaxRSS is their sum, which no single process shows."""
    holder = cluster.workdir / "hold.py"
    holder.write_text(HOLD)
    script = f"#!/bin/bash\n{sys.executable} {holder} & {sys.executable} {holder}; wait\n"
    job_id = cluster.sbatch(script=script)
    cluster.wait_state(job_id, "COMPLETED")
    job, batch = sacct(cluster, "-j", str(job_id), "-o", "JobID,MaxRSS,TotalCPU")
    assert job[1] == ""  # usage belongs to steps; the job line sums their CPU only
    assert kib(batch[1]) >= 120 * 1024, batch
    assert seconds(batch[2]) >= 2.0, batch  # two processes spinning 2.5 s of CPU each
    assert seconds(job[2]) >= seconds(batch[2])


def test_state_window_and_layout_options(cluster: TestCluster) -> None:
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 1))
    good = cluster.sbatch("--wrap=true")
    bad = cluster.sbatch("--wrap=exit 2")
    cluster.wait_state(good)
    cluster.wait_state(bad)
    ours = {str(good), str(bad)}

    def ids(*args: str) -> list[str]:
        return [r[0] for r in sacct(cluster, "-o", "JobID", *args) if r[0].split(".")[0] in ours]

    # The default window (midnight to now) holds jobs eligible before now: a second on.
    wait_until(lambda: ids() == [str(good), f"{good}.batch", str(bad), f"{bad}.batch"], 5)
    assert ids("-X") == [str(good), str(bad)]
    assert ids("-X", "-s", "F", "-S", since, "-E", "now") == [str(bad)]
    assert ids("-X", "-s", "CD,FAILED", "-S", since, "-E", "now") == [str(good), str(bad)]
    assert ids("-X", "-s", "R", "-S", since, "-E", "now") == [str(good), str(bad)]  # ran then
    assert ids("-X", "-S", "now+1hour") == []
    full = cluster.run("sacct", "-X", "-j", str(bad))
    assert full.out.splitlines()[:2] == [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
    ]
    row = [str(bad), "wrap", "gpu", "root", "1", "FAILED", "2:0"]  # root: the default account
    assert full.out.splitlines()[2].split() == row
    assert cluster.run("sacct", "-X", "-n", "-j", str(bad)).out.split() == full.out.split()[14:]


def test_records_survive_a_controller_restart(cluster: TestCluster) -> None:
    job_id = cluster.sbatch("--wrap=srun -n1 true")
    cluster.wait_state(job_id, "COMPLETED")
    fields = "JobID,JobName,State,ExitCode,Start,End,NodeList,AllocTRES,MaxRSS,TotalCPU"
    before = sacct_rows(cluster, 3, "-j", str(job_id), "-o", fields)
    cluster.kill_controller()
    cluster.start()
    assert sacct(cluster, "-j", str(job_id), "-o", fields) == before
