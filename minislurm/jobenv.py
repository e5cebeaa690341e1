"""The job environment: what a batch script sees, as real Slurm sets it.

``batch_environment`` starts from the environment the user exported and
sets Slurm's variables for the job and the node the script runs on
(``../shared/reference/outputs/env_batch_*.txt`` are the reference). Slurm's
own variables win over the user's; ``SLURM_TASK_PID`` is added by the
process that forks the script.

Imports only minislurm.arrays, minislurm.gpulinks, minislurm.hostlist, minislurm.model
and minislurm.units.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from minislurm.arrays import TaskSet
from minislurm.gpulinks import GpuLinks, split_gpus
from minislurm.hostlist import expand
from minislurm.model import Job
from minislurm.units import compress_counts

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
    topology_addr: tuple[str, str] = ("", "")  # SLURM_TOPOLOGY_ADDR and its pattern ("": flat)


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


MASTER_PORT_BASE = 15000
DEFAULT_TMPDIR = "/tmp"  # slurmstepd's, for jobs whose user exported none


def master_port(job_id: int) -> int:
    """The MASTER_PORT of a job: 15000 + the job id's last four digits.

    The rule PyTorch Lightning applies on real Slurm (``SLURMEnvironment``),
    so that a job sees the same port whether it reads ours or derives it.

    Args:
        job_id: the job (an array task's own id).

    Returns:
        The port, 15000-24999.
    """
    return MASTER_PORT_BASE + int(str(job_id)[-4:])


def rendezvous_defaults(job: Job) -> dict[str, str]:
    """``MASTER_ADDR`` and ``MASTER_PORT`` as the batch script gets them.

    The address is the job's first node by name (where the batch script runs,
    and what ``scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1``
    prints); node names resolve in every job (nodeagent.hostsfile).

    Args:
        job: the job, with its allocation.

    Returns:
        The two variables.
    """
    first = job.allocation.node_names[0] if job.allocation and job.allocation.nodes else ""
    return {"MASTER_ADDR": first, "MASTER_PORT": str(master_port(job.job_id))}


def job_node_variables(job: Job, ctx: NodeContext) -> dict[str, str]:
    """The job's variables as seen on one of its nodes (batch script and tasks alike).

    Args:
        job: the job, with its allocation.
        ctx: the node.

    Returns:
        Slurm's job variables, GPUs of the job on that node included.

    Raises:
        ValueError: the job has no allocation on ``ctx.node_name``.
    """
    alloc = job.allocation
    here = alloc.on(ctx.node_name) if alloc else None
    if alloc is None or here is None:
        raise ValueError(f"job {job.job_id} has no allocation on {ctx.node_name}")
    env = _job_variables(job)
    nodelist = alloc.nodelist
    env.update(
        {
            "SLURMD_NODENAME": ctx.node_name,
            "SLURM_CLUSTER_NAME": ctx.cluster,
            "SLURM_CONF": ctx.conf_path,
            "SLURM_CPUS_ON_NODE": str(here.cpus),
            "SLURM_JOB_CPUS_PER_NODE": compress_counts([n.cpus for n in alloc.nodes]),
            "SLURM_JOB_NODELIST": nodelist,
            "SLURM_NODELIST": nodelist,
            "SLURM_JOB_NUM_NODES": str(len(alloc.nodes)),
            "SLURM_NNODES": str(len(alloc.nodes)),
            "SLURM_TASKS_PER_NODE": compress_counts([n.ntasks for n in alloc.nodes]),
            "SLURM_TOPOLOGY_ADDR": ctx.topology_addr[0] or ctx.node_name,
            "SLURM_TOPOLOGY_ADDR_PATTERN": ctx.topology_addr[1] or "node",
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
        env.update(gpu_variables(here.gpus))
        env["SLURM_JOB_GPUS"] = ",".join(str(g) for g in here.gpus)
        env["SLURM_GPUS_ON_NODE"] = str(len(here.gpus))
    return env


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
    env = dict(base)
    env.update(job_node_variables(job, ctx))
    # Beyond Slurm: where a torch.distributed rendezvous of the job can meet
    # (the batch host), so that `srun torchrun --rdzv-endpoint=$MASTER_ADDR` works.
    for name, value in rendezvous_defaults(job).items():
        env.setdefault(name, value)
    env.setdefault("TMPDIR", DEFAULT_TMPDIR)
    env.update(
        {
            "ENVIRONMENT": "BATCH",
            "HOSTNAME": ctx.hostname,
            "SLURM_NODE_ALIASES": "(null)",
            "SLURM_GTIDS": "0",
            "SLURM_LOCALID": "0",
            "SLURM_NODEID": "0",
            "SLURM_PROCID": "0",
        }
    )
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
        "SLURM_JOB_SEGMENT_SIZE": job.options.get("segment", 0),  # set only with --segment
    }
    env.update({k: str(v) for k, v in optional.items() if v})
    if job.array_task_id is not None:
        env.update(array_variables(job.array_job_id, job.array_task_id, job.array_spec))
    return env


def array_variables(array_job_id: int, task: int, spec: str) -> dict[str, str]:
    """What an array task sees of its array.

    Args:
        array_job_id: the array's job id.
        task: this task's id.
        spec: the array as submitted (``0-15:2%4``).

    Returns:
        ``SLURM_ARRAY_JOB_ID``, ``SLURM_ARRAY_TASK_ID`` and the array's
        ``_COUNT``, ``_MIN``, ``_MAX`` and ``_STEP``.
    """
    tasks = TaskSet.parse(spec.partition("%")[0]) if spec else TaskSet.of([task])
    return {
        "SLURM_ARRAY_JOB_ID": str(array_job_id),
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": str(len(tasks)),
        "SLURM_ARRAY_TASK_MAX": str(tasks.last()),
        "SLURM_ARRAY_TASK_MIN": str(tasks.first()),
        "SLURM_ARRAY_TASK_STEP": str(tasks.step()),
    }


@dataclass(frozen=True)
class TaskPlace:
    """Where one task of a step runs and what it is bound to."""

    rank: int  # SLURM_PROCID, RANK
    local_id: int  # SLURM_LOCALID, LOCAL_RANK
    node_index: int  # SLURM_NODEID, NODE_RANK
    gpus: tuple[int, ...]  # CUDA_VISIBLE_DEVICES
    node_tasks: tuple[int, ...]  # ranks on this node (SLURM_GTIDS)


@dataclass(frozen=True)
class StepContext:
    """The step a task belongs to."""

    step_id: int
    ntasks: int
    nodelist: str  # compressed
    nnodes: int
    tasks_per_node: str  # compressed counts in node order, as SLURM_TASKS_PER_NODE ("2(x3),1")
    cpus_on_node: int
    gpus_on_node: tuple[int, ...]
    master_addr: str
    master_port: int
    launch_host: str
    gpus_per_task: int = 0
    cpus_per_task: int = 0  # 0 when -c was not given
    preserve_env: bool = False  # srun --preserve-env: the job's counts stay (PRESERVED)
    interactive: bool = False  # salloc's interactive step: a shell, as a batch script is


# What ``srun --preserve-env`` passes on from srun's environment (measured on Slurm 22.05).
PRESERVED = ("SLURM_NNODES", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_TASKS_PER_NODE")


def task_environment(
    base: dict[str, str],
    job: Job,
    ctx: NodeContext,
    step: StepContext,
    task: TaskPlace,
    umask: int,
    job_vars: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one task of an srun step (real Slurm's step variables).

    ``base`` is srun's environment (inside a batch job it holds the job's
    variables); Slurm's step variables override it, except those
    ``--preserve-env`` keeps. Beyond Slurm, the variables torch.distributed
    reads with ``init_method="env://"`` are set, ``MASTER_ADDR`` to the step's
    first node: a value the user exported for them wins, but not the values
    we gave the batch script or an outer task passed on unchanged (a step on
    other nodes than the job's first meets on its own first node; an srun
    typed in ``srun --pty bash`` ranks its own tasks). As in Slurm,
    ``SLURM_NODELIST`` stays the job's node list. salloc's interactive step
    is a shell from which sruns start ranks, as a batch script is: it gets
    the batch script's ``MASTER_ADDR``/``MASTER_PORT`` and no rank.

    Args:
        base: srun's environment.
        job: the job the step belongs to (with its allocation).
        ctx: the node.
        step: the step.
        task: the task.
        umask: the submitter's umask.
        job_vars: ``job_node_variables(job, ctx)``, when the caller made it once
            for all the node's tasks (it costs as much as the job has nodes).

    Returns:
        The task's environment.

    Raises:
        ValueError: the job has no allocation on ``ctx.node_name``.
    """
    nnodes = step.nnodes
    env = dict(base)
    env.setdefault("TMPDIR", DEFAULT_TMPDIR)
    env.update(job_node_variables(job, ctx) if job_vars is None else job_vars)
    # Slurm sets SLURM_JOB_GPUS for the batch script alone: a task has srun's, if any.
    env.pop("SLURM_JOB_GPUS", None)
    if "SLURM_JOB_GPUS" in base:
        env["SLURM_JOB_GPUS"] = base["SLURM_JOB_GPUS"]
    torch = {
        "RANK": str(task.rank),
        "LOCAL_RANK": str(task.local_id),
        "WORLD_SIZE": str(step.ntasks),
        "LOCAL_WORLD_SIZE": str(len(task.node_tasks)),
        "NODE_RANK": str(task.node_index),
        "MASTER_ADDR": step.master_addr,
        "MASTER_PORT": str(step.master_port),
    }
    if step.interactive:
        torch = rendezvous_defaults(job)
    ours = _set_by_us(base, job)
    for name, value in torch.items():
        if name not in base or base[name] in ours.get(name, ()):
            env[name] = value
    tasks_per_node = step.tasks_per_node
    env.update(
        {
            "SLURM_CPUS_ON_NODE": str(step.cpus_on_node),
            "SLURM_GTIDS": ",".join(str(t) for t in task.node_tasks),
            "SLURM_LAUNCH_NODE_IPADDR": step.launch_host,
            "SLURM_SRUN_COMM_HOST": step.launch_host,
            "SLURM_LOCALID": str(task.local_id),
            "SLURM_NODEID": str(task.node_index),
            "SLURM_PROCID": str(task.rank),
            "SLURM_NNODES": str(nnodes),
            "SLURM_NTASKS": str(step.ntasks),
            "SLURM_NPROCS": str(step.ntasks),
            "SLURM_STEPID": str(step.step_id),
            "SLURM_STEP_ID": str(step.step_id),
            "SLURM_STEP_NODELIST": step.nodelist,
            "SLURM_STEP_NUM_NODES": str(nnodes),
            "SLURM_STEP_NUM_TASKS": str(step.ntasks),
            "SLURM_STEP_TASKS_PER_NODE": tasks_per_node,
            "SLURM_TASKS_PER_NODE": tasks_per_node,
            "SLURM_UMASK": f"{umask:04o}",
        }
    )
    for name in (*gpu_variables((0,)), "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE"):
        env.pop(name, None)
    if step.gpus_on_node:
        env["SLURM_GPUS_ON_NODE"] = str(len(step.gpus_on_node))
    if task.gpus:
        env.update(gpu_variables(task.gpus))
        env["SLURM_STEP_GPUS"] = ",".join(str(g) for g in task.gpus)
    if step.gpus_per_task:
        env["SLURM_GPUS_PER_TASK"] = str(step.gpus_per_task)
    if step.cpus_per_task:
        env["SLURM_CPUS_PER_TASK"] = str(step.cpus_per_task)
    if step.preserve_env:
        env.update((name, base[name]) for name in PRESERVED if name in base)
    return env


def _set_by_us(base: dict[str, str], job: Job) -> dict[str, tuple[str, ...]]:
    """The torch variables of ``base`` that came from us, not from the user.

    srun's environment holds the values we gave the batch script, or, for an
    srun started inside a task (``srun --pty bash``, nested steps), those we
    gave that task: they say where the outer process stood, and the new
    step's own values replace them. Anything else the user exported wins.
    """
    ours: dict[str, tuple[str, ...]] = {k: (v,) for k, v in rendezvous_defaults(job).items()}
    if "SLURM_STEP_ID" not in base or "SLURM_PROCID" not in base:
        return ours
    step_nodes = expand(base.get("SLURM_STEP_NODELIST", "")) or [""]
    ours["MASTER_ADDR"] += (step_nodes[0],)
    ours.update(
        RANK=(base["SLURM_PROCID"],),
        LOCAL_RANK=(base.get("SLURM_LOCALID", ""),),
        WORLD_SIZE=(base.get("SLURM_STEP_NUM_TASKS", ""),),
        LOCAL_WORLD_SIZE=(str(len(base.get("SLURM_GTIDS", "").split(","))),),
        NODE_RANK=(base.get("SLURM_NODEID", ""),),
    )
    return ours


def bind_gpus(
    gpus: tuple[int, ...],
    local_id: int,
    gpu_bind: str,
    gpus_per_task: int,
    links: GpuLinks | None = None,
) -> tuple[int, ...]:
    """The GPUs one task sees, from the step's GPUs on its node (``--gpu-bind``).

    ``none`` (the default without ``--gpus-per-task``): every task sees all;
    ``per_task:N`` (implied by ``--gpus-per-task=N``): task *i* gets the
    *i*-th group of N; ``single:N``: each GPU is shared by N consecutive
    tasks; ``map_gpu:a,b,...``: task *i* gets entry *i* (cycling);
    ``closest``: with ``--gpus-per-task=N``, task *i* gets the *i*-th group
    of N cut by the node's GPU links (each the best-linked of the GPUs left,
    :func:`minislurm.gpulinks.split_gpus`), else every task sees all (tasks
    are not bound to CPUs here, so no GPU is closer to one than another).

    Args:
        gpus: the step's GPU indices on the node, ascending.
        local_id: the task's local id on the node.
        gpu_bind: the --gpu-bind value ("" for the default).
        gpus_per_task: --gpus-per-task (0: not given).
        links: the node's GPU links (None: none known, groups in index order).

    Returns:
        The task's GPU indices.

    Raises:
        ValueError: a malformed --gpu-bind.
    """
    kind, _, arg = gpu_bind.partition(":")
    if not kind:
        kind, arg = ("per_task", str(gpus_per_task)) if gpus_per_task else ("none", "")
    if kind == "none" or not gpus or (kind == "closest" and not gpus_per_task):
        return gpus
    if kind == "closest":
        groups = split_gpus(links, gpus, gpus_per_task)
        return groups[local_id] if local_id < len(groups) else ()
    if kind == "per_task":
        n = int(arg)
        return gpus[local_id * n : (local_id + 1) * n]
    if kind == "single":
        share = int(arg)
        return (gpus[min(local_id // share, len(gpus) - 1)],) if share > 0 else gpus
    if kind == "map_gpu":
        chosen = [int(x) for x in arg.split(",") if x]
        return (chosen[local_id % len(chosen)],)
    raise ValueError(f"invalid --gpu-bind specification: {gpu_bind}")


# SLURM_SCRIPT_CONTEXT of the programs slurmd runs around a job on a node.
PROLOG_SLURMD = "prolog_slurmd"
EPILOG_SLURMD = "epilog_slurmd"


@dataclass(frozen=True)
class ScriptJob:
    """What a Prolog or Epilog on one node sees of a job (and, for an Epilog, of its end)."""

    job_id: int
    uid: int
    gid: int
    user: str
    partition: str
    account: str
    work_dir: str
    restarts: int
    nodelist: str  # the job's nodes, compressed
    num_nodes: int
    cpus_per_node: str  # compressed counts in node order ("8(x2),4")
    gpus: tuple[int, ...] = ()  # the job's GPUs on this node
    exit_code: int = 0  # how the job ended (for an Epilog)
    signal: int = 0


def script_job(job: Job, node: str) -> ScriptJob:
    """What the programs around ``job`` on ``node`` see of it.

    Args:
        job: the job, with its allocation.
        node: the node.

    Returns:
        The job's facts, its GPUs on ``node`` and its exit code and signal.
    """
    alloc = job.allocation
    here = alloc.on(node) if alloc else None
    return ScriptJob(
        job_id=job.job_id,
        uid=job.uid,
        gid=job.gid,
        user=job.user,
        partition=job.partition,
        account=job.account,
        work_dir=job.work_dir,
        restarts=job.restarts,
        nodelist=alloc.nodelist if alloc else "",
        num_nodes=len(alloc.nodes) if alloc else 0,
        cpus_per_node=compress_counts([n.cpus for n in alloc.nodes]) if alloc else "",
        gpus=tuple(here.gpus) if here else (),
        exit_code=job.exit_code,
        signal=job.exit_signal,
    )


def node_script_environment(job: ScriptJob, ctx: NodeContext, context: str) -> dict[str, str]:
    """The environment of a Prolog or Epilog on one node of a job, as Slurm 22.05 sets it.

    It has no ``PATH``, as Slurm's has none (its programs name theirs, or set
    one); the GPUs are the job's on that node, by device index.

    Args:
        job: the job, as the node knows it.
        ctx: the node.
        context: PROLOG_SLURMD or EPILOG_SLURMD (SLURM_SCRIPT_CONTEXT).

    Returns:
        The variables; an Epilog's have the job's exit status besides.
    """
    env = {
        "SLURMD_NODENAME": ctx.node_name,
        "SLURM_CLUSTER_NAME": ctx.cluster,
        "SLURM_CONF": ctx.conf_path,
        "SLURM_JOB_ID": str(job.job_id),
        "SLURM_JOBID": str(job.job_id),
        "SLURM_JOB_UID": str(job.uid),
        "SLURM_UID": str(job.uid),
        "SLURM_JOB_GID": str(job.gid),
        "SLURM_JOB_USER": job.user,
        "SLURM_JOB_PARTITION": job.partition,
        "SLURM_JOB_RESTART_COUNT": str(job.restarts),
        "SLURM_JOB_WORK_DIR": job.work_dir,
        "SLURM_JOB_NODELIST": job.nodelist,
        "SLURM_NODELIST": job.nodelist,
        "SLURM_JOB_NUM_NODES": str(job.num_nodes),
        "SLURM_JOB_CPUS_PER_NODE": job.cpus_per_node,
        "SLURM_SCRIPT_CONTEXT": context,
    }
    if job.account:
        env["SLURM_JOB_ACCOUNT"] = job.account
    if job.gpus:
        env.update(gpu_variables(job.gpus))
        env["SLURM_JOB_GPUS"] = ",".join(str(g) for g in job.gpus)
    if context == EPILOG_SLURMD:
        status = (job.exit_code & 0xFF) << 8 | (job.signal & 0x7F)  # as wait(2) gives it
        env["SLURM_JOB_EXIT_CODE"] = str(status)
        env["SLURM_JOB_EXIT_CODE2"] = f"{job.exit_code}:{job.signal}"
        env["SLURM_JOB_DERIVED_EC"] = str(job.exit_code)
    return env


PROLOG_SLURMCTLD = "prolog_slurmctld"
EPILOG_SLURMCTLD = "epilog_slurmctld"


def controller_script_environment(job: Job, cluster: str, context: str) -> dict[str, str]:
    """The environment of PrologSlurmctld or EpilogSlurmctld, as Slurm's slurmctld sets it.

    Args:
        job: the job, with its allocation.
        cluster: ClusterName.
        context: PROLOG_SLURMCTLD or EPILOG_SLURMCTLD (SLURM_SCRIPT_CONTEXT).

    Returns:
        A node script's variables for the job as a whole (no node, no GPUs),
        with its name, group and array (an EpilogSlurmctld's exit status too).
    """
    ctx = NodeContext("", "", cluster, "", "", 0)
    kind = EPILOG_SLURMD if context == EPILOG_SLURMCTLD else PROLOG_SLURMD
    env = node_script_environment(replace(script_job(job, ""), gpus=()), ctx, kind)
    for name in ("SLURMD_NODENAME", "SLURM_CONF"):
        del env[name]
    env.update(
        {
            "SLURM_SCRIPT_CONTEXT": context,
            "SLURM_JOB_NAME": job.name,
            "SLURM_JOB_GROUP": job.group,
        }
    )
    if job.array_task_id is not None:
        env.update(array_variables(job.array_job_id, job.array_task_id, job.array_spec))
    return env
