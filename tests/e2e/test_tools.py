"""Job-submission tools from PyPI drive a live cluster unmodified: submitit, dask-jobqueue,
parsl and snakemake's slurm executor.

Each tool runs in a subprocess with the cluster's environment, whose PATH
finds our commands first: the tools submit, poll and cancel through sbatch,
squeue, sacct and scancel as they would on a Slurm cluster. Jobs run this
interpreter (``sys.executable``, the venv's). The client prints what it saw
as JSON on its last line; the test checks that, and the cluster with our
own commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import TestCluster
from helpers import wait_until

SUBMITIT = """
import json, sys, time
import submitit

def add(a, b):
    return a + b

def square(x):
    return x * x

def fail():
    raise ValueError("no luck")

def sleep_long():
    time.sleep(300)

executor = submitit.AutoExecutor(folder=sys.argv[1] + "/%j")
executor.update_parameters(
    timeout_min=5, slurm_partition="gpu", cpus_per_task=1, mem_gb=1, gpus_per_node=1,
    slurm_array_parallelism=2,
)
job = executor.submit(add, 2, 3)
seen = {"cluster": executor.cluster, "job_id": job.job_id, "result": job.result()}
jobs = executor.map_array(square, [1, 2, 3])  # one job array: --array=0-2%2
seen["array_ids"] = [j.job_id for j in jobs]
seen["array_results"] = [j.result() for j in jobs]
try:
    executor.submit(fail).result()
except Exception as err:
    seen["failure"] = str(err)
long = executor.submit(sleep_long)
while long.state != "RUNNING":  # submitit's own polling: sacct
    time.sleep(0.2)
long.cancel()
while not long.done():
    time.sleep(0.2)
seen.update(long_id=long.job_id, long_state=long.state)
print(json.dumps(seen))
"""

DASK = """
import json, sys
from dask_jobqueue import SLURMCluster
from distributed import Client

cluster = SLURMCluster(
    cores=1, memory="1GB", processes=1, queue="gpu", walltime="00:05:00",
    python=sys.executable, scheduler_options={"host": "127.0.0.1"}, log_directory=sys.argv[1],
)
cluster.scale(jobs=1)
client = Client(cluster)
seen = {"result": client.submit(lambda x: x + 1, 41).result(timeout=60)}
seen["job_ids"] = [worker.job_id for worker in cluster.workers.values()]
client.close()
cluster.close()
print(json.dumps(seen))
"""

PARSL = """
import json, sys
import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SrunLauncher
from parsl.providers import SlurmProvider

provider = SlurmProvider(
    partition="gpu", nodes_per_block=1, init_blocks=1, min_blocks=0, max_blocks=1,
    walltime="00:05:00", launcher=SrunLauncher(),
    worker_init=f"export PATH={sys.prefix}/bin:$PATH", cmd_timeout=30,
)
executor = HighThroughputExecutor(
    label="slurm", address="127.0.0.1", max_workers_per_node=1, cores_per_worker=1,
    provider=provider,
)

@parsl.python_app
def multiply(a, b):
    return a * b

with parsl.load(Config(executors=[executor], run_dir=sys.argv[1], strategy="none")):
    seen = {"result": multiply(6, 7).result(timeout=60), "job_ids": list(provider.resources)}
    # provider.status polls: sacct -X --noheader --format=jobid,state%20 --job 'ID'
    seen["states"] = [status.state.name for status in provider.status(seen["job_ids"])]
print(json.dumps(seen))  # leaving the block cancelled the blocks (scancel)
"""

SNAKEFILE = """
rule all:
    input: "b.txt"

rule first:
    output: "a.txt"
    shell: "echo first > {output}"

rule second:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}; echo second >> {output}"
"""


def run_client(
    cluster: TestCluster, code: str, where: Path, timeout: float = 90
) -> dict[str, object]:
    """Run a tool's client code against the cluster and return what it printed last.

    Args:
        cluster: the cluster (its environment finds our commands first).
        code: Python source that prints one JSON object last; ``sys.argv[1]`` is ``where``.
        where: a directory of the client's own, for its files and logs.
        timeout: seconds.

    Returns:
        The JSON object.
    """
    where.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", code, str(where)],
        env=cluster.env,
        cwd=where,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"client failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    seen: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return seen


def gone_from_squeue(cluster: TestCluster, job_id: str) -> bool:
    """Whether squeue (active jobs) no longer lists the job."""
    return cluster.run("squeue", "-h", "-j", job_id, "-o", "%i").out.strip() == ""


def test_submitit_runs_functions_arrays_failures_and_cancels(
    cluster: TestCluster, tmp_path: Path
) -> None:
    seen = run_client(cluster, SUBMITIT, tmp_path / "submitit")
    assert (seen["cluster"], seen["result"]) == ("slurm", 5)
    info = cluster.job(int(str(seen["job_id"])))
    assert (info["TimeLimit"], info["TresPerNode"]) == ("00:05:00", "gres:gpu:1")
    array_ids = [str(i) for i in seen["array_ids"]]  # type: ignore[attr-defined]
    array_job = array_ids[0].split("_")[0]
    assert array_ids == [f"{array_job}_{task}" for task in range(3)]
    assert seen["array_results"] == [1, 4, 9]
    assert "ValueError: no luck" in str(seen["failure"])
    assert str(seen["long_state"]).startswith("CANCELLED")
    assert cluster.job(int(str(seen["long_id"])))["JobState"] == "CANCELLED"


def test_dask_jobqueue_scales_computes_and_cancels_on_close(
    cluster: TestCluster, tmp_path: Path
) -> None:
    seen = run_client(cluster, DASK, tmp_path / "dask")
    assert seen["result"] == 42
    (job_id,) = seen["job_ids"]  # type: ignore[misc]
    wait_until(lambda: gone_from_squeue(cluster, job_id), 20, f"job {job_id} to leave squeue")
    assert cluster.state(int(job_id)) == "CANCELLED"


def test_parsl_slurm_provider_runs_an_app_and_cancels_its_block(
    cluster: TestCluster, tmp_path: Path
) -> None:
    seen = run_client(cluster, PARSL, tmp_path / "parsl")
    assert (seen["result"], seen["states"]) == (42, ["RUNNING"])
    (job_id,) = seen["job_ids"]  # type: ignore[misc]
    wait_until(lambda: gone_from_squeue(cluster, job_id), 20, f"job {job_id} to leave squeue")
    assert cluster.state(int(job_id)) == "CANCELLED"


def test_snakemake_slurm_executor_runs_dependent_rules(
    cluster: TestCluster, tmp_path: Path
) -> None:
    work = tmp_path / "snakemake"
    work.mkdir()
    (work / "Snakefile").write_text(SNAKEFILE)
    # The plugin's job step strips every SLURM_* variable, SLURM_CONF included,
    # before its srun: that srun finds the cluster as any command outside a job
    # does, here through MINISLURM_HOME (on a real cluster, /etc/slurm/slurm.conf).
    env = {**cluster.env, "MINISLURM_HOME": str(cluster.home)}
    argv = [sys.executable, "-m", "snakemake", "--executor", "slurm", "-j", "2"]
    argv += ["--default-resources", "slurm_partition=gpu", "runtime=5", "mem_mb=100"]
    # The first status check 6 s after a submission, when the job is usually done
    # (the plugin waits 40 s by default, then 10 s longer at each check).
    argv += ["--slurm-init-seconds-before-status-checks", "6", "--latency-wait", "5"]
    proc = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert (work / "b.txt").read_text() == "first\nsecond\n"
    shown = cluster.run("squeue", "-h", "-t", "all", "-o", "%k %T").out.splitlines()
    assert {"rule_first COMPLETED", "rule_second COMPLETED"} <= set(shown)
