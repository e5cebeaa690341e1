"""The job environment: what a batch script sees, as real Slurm sets it.

``batch_environment`` starts from the environment the user exported and
sets Slurm's variables for the job and the node the script runs on
(``../shared/reference/outputs/env_batch_*.txt`` are the reference). Slurm's
own variables win over the user's; ``SLURM_TASK_PID`` is added by the
process that forks the script.

Imports only minislurm.hostlist and minislurm.model.
"""

from __future__ import annotations

from dataclasses import dataclass

from minislurm.hostlist import compress
from minislurm.model import Job

SLURM_PROTOCOL_VERSION = "9728"  # 22.05's, as SLURM_WORKING_CLUSTER carries it
SELECT_PLUGIN_ID = "109"  # select/cons_tres


@dataclass(frozen=True)
class NodeContext:
    """Where a job's script runs: facts of the node and cluster, not of the job."""

    node_name: str
    hostname: str
    cluster: str
    conf_path: str
    controller_host: str
    controller_port: int


def compress_counts(counts: list[int]) -> str:
    """Slurm's compact form of per-node counts: ``[4, 4]`` -> ``4(x2)``, ``[8, 4]`` -> ``8,4``.

    Args:
        counts: one count per node, in node order.

    Returns:
        The compact text.
    """
    groups: list[list[int]] = []
    for c in counts:
        if groups and groups[-1][0] == c:
            groups[-1][1] += 1
        else:
            groups.append([c, 1])
    return ",".join(str(c) if n == 1 else f"{c}(x{n})" for c, n in groups)


def gpu_variables(gpus: tuple[int, ...]) -> dict[str, str]:
    """The variables that bind a process to GPU device indices.

    Args:
        gpus: device indices; empty gives no variables at all, as in Slurm.

    Returns:
        ``CUDA_VISIBLE_DEVICES`` and its siblings for other vendors.
    """
    if not gpus:
        return {}
    text = ",".join(str(g) for g in gpus)
    return {
        "CUDA_VISIBLE_DEVICES": text,
        "GPU_DEVICE_ORDINAL": text,
        "ROCR_VISIBLE_DEVICES": text,
        "ZE_AFFINITY_MASK": text,
    }


def batch_environment(base: dict[str, str], job: Job, ctx: NodeContext) -> dict[str, str]:
    """The environment of a job's batch script on its first node.

    Args:
        base: the environment the user exported with the job.
        job: the job, with its allocation.
        ctx: the node the script runs on.

    Returns:
        ``base`` overlaid with Slurm's variables.

    Raises:
        ValueError: the job has no allocation on ``ctx.node_name``.
    """
    alloc = job.allocation
    here = alloc.on(ctx.node_name) if alloc else None
    if alloc is None or here is None:
        raise ValueError(f"job {job.job_id} has no allocation on {ctx.node_name}")
    env = dict(base)
    env.update(_job_variables(job))
    nodelist = compress(list(alloc.node_names))
    env.update(
        {
            "ENVIRONMENT": "BATCH",
            "HOSTNAME": ctx.hostname,
            "SLURMD_NODENAME": ctx.node_name,
            "SLURM_CLUSTER_NAME": ctx.cluster,
            "SLURM_CONF": ctx.conf_path,
            "SLURM_CPUS_ON_NODE": str(here.cpus),
            "SLURM_GTIDS": "0",
            "SLURM_JOB_CPUS_PER_NODE": compress_counts([n.cpus for n in alloc.nodes]),
            "SLURM_JOB_NODELIST": nodelist,
            "SLURM_NODELIST": nodelist,
            "SLURM_JOB_NUM_NODES": str(len(alloc.nodes)),
            "SLURM_NNODES": str(len(alloc.nodes)),
            "SLURM_LOCALID": "0",
            "SLURM_NODEID": "0",
            "SLURM_PROCID": "0",
            "SLURM_NODE_ALIASES": "(null)",
            "SLURM_TASKS_PER_NODE": compress_counts([n.ntasks for n in alloc.nodes]),
            "SLURM_TOPOLOGY_ADDR": ctx.node_name,
            "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
            "SLURM_WORKING_CLUSTER": ":".join(
                (
                    ctx.cluster,
                    ctx.controller_host,
                    str(ctx.controller_port),
                    SLURM_PROTOCOL_VERSION,
                    SELECT_PLUGIN_ID,
                )
            ),
        }
    )
    if here.gpus:
        text = ",".join(str(g) for g in here.gpus)
        env.update(gpu_variables(here.gpus))
        env["SLURM_JOB_GPUS"] = text
        env["SLURM_GPUS_ON_NODE"] = str(len(here.gpus))
    return env


def _job_variables(job: Job) -> dict[str, str]:
    """Variables that depend only on the job, not on where it runs."""
    req = job.request
    env = {
        "SLURM_JOB_ID": str(job.job_id),
        "SLURM_JOBID": str(job.job_id),
        "SLURM_JOB_NAME": job.name,
        "SLURM_JOB_PARTITION": job.partition,
        "SLURM_JOB_QOS": job.qos,
        "SLURM_JOB_UID": str(job.uid),
        "SLURM_JOB_GID": str(job.gid),
        "SLURM_JOB_USER": job.user,
        "SLURM_PRIO_PROCESS": str(job.prio_process),
        "SLURM_SUBMIT_DIR": job.submit_dir,
        "SLURM_SUBMIT_HOST": job.submit_host,
    }
    if job.account:
        env["SLURM_JOB_ACCOUNT"] = job.account
    if req.ntasks_set:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(req.ntasks)
    optional = {
        "SLURM_NTASKS_PER_NODE": req.ntasks_per_node,
        "SLURM_CPUS_PER_TASK": req.cpus_per_task if req.cpus_per_task_set else 0,
        "SLURM_GPUS_PER_TASK": req.gpus_per_task,
        "SLURM_GPUS_PER_NODE": req.gpus_per_node if not job.gres else 0,
        "SLURM_GPUS": req.gpus,
        "SLURM_MEM_PER_NODE": req.mem_per_node,
        "SLURM_MEM_PER_CPU": req.mem_per_cpu,
        "SLURM_RESTART_COUNT": job.restarts,
    }
    env.update({k: str(v) for k, v in optional.items() if v})
    return env
