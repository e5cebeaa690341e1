"""Tests of minislurm.jobenv against real Slurm's batch environments.

The references are ``env | sort`` of batch scripts under Slurm 22.05
(../shared/reference/outputs/env_batch_*.txt). Every SLURM_* variable there
that the site does not decide must come out of batch_environment with the
same name and value.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from minislurm import jobenv
from minislurm.jobenv import (
    NodeContext,
    StepContext,
    TaskPlace,
    batch_environment,
    compress_counts,
    gpu_variables,
    task_environment,
)
from minislurm.model import Allocation, Job, NodeAlloc, ResourceRequest
from minislurm.states import JobState

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"

# Set by the process that forks the script, or exported by the capture harness.
NOT_OURS = {"SLURM_TASK_PID", "SLURM_ANCHOR_INSTANCE"}
GPU_NAMES = {
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
    "SLURM_JOB_GPUS",
    "SLURM_GPUS_ON_NODE",
}
# What the reference cluster decides: node n1 of cluster "anchor", controller 10.233.2.1:7017.
CTX = NodeContext(
    node_name="n1",
    hostname="n1",
    cluster="anchor",
    conf_path="/cluster/etc/slurm.conf",
    controller_host="10.233.2.1",
    controller_port=7017,
)


def reference_env(name: str) -> dict[str, str]:
    """The reference file's variables."""
    env = {}
    for line in (REFERENCE / name).read_text().splitlines():
        key, eq, value = line.partition("=")
        if eq:
            env[key] = value
    return env


def ours(env: dict[str, str]) -> dict[str, str]:
    """The variables batch_environment is responsible for."""
    return {
        k: v
        for k, v in env.items()
        if (k.startswith("SLURM") or k in GPU_NAMES or k in ("ENVIRONMENT", "HOSTNAME"))
        and k not in NOT_OURS
    }


def make_job(
    job_id: int,
    name: str,
    request: ResourceRequest,
    nodes: tuple[NodeAlloc, ...],
    gres: str = "",
    account: str = "root",
    restarts: int = 0,
) -> Job:
    return Job(
        job_id=job_id,
        name=name,
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="gpu",
        state=JobState.RUNNING,
        request=request,
        submit_time=1000.0,
        account=account,
        gres=gres,
        submit_dir="/cluster/work",
        work_dir="/cluster/work",
        submit_host="vm",
        allocation=Allocation(nodes),
        restarts=restarts,
    )


def n2_tpn4_gres4_job(account: str = "root") -> Job:
    """sbatch -N2 --ntasks-per-node=4 --gres=gpu:4 -t 10 env_job.sh (job 5, "envjob")."""
    request = ResourceRequest(
        min_nodes=2,
        max_nodes=2,
        ntasks=8,
        ntasks_per_node=4,
        gpus_per_node=4,
        nodes_set=True,
        ntasks_set=True,
    )
    nodes = (NodeAlloc("n1", 4, 0, (0, 1, 2, 3), 4), NodeAlloc("n2", 4, 0, (0, 1, 2, 3), 4))
    return make_job(5, "envjob", request, nodes, gres="gpu:4", account=account)


def n4_gpus_per_task_job() -> Job:
    """sbatch -N1 -n4 --gpus-per-task=1 -t 10 env_job.sh (job 7, "gpt")."""
    request = ResourceRequest(
        min_nodes=1, max_nodes=1, ntasks=4, gpus_per_task=1, nodes_set=True, ntasks_set=True
    )
    return make_job(7, "gpt", request, (NodeAlloc("n1", 4, 0, (0, 1, 2, 3), 4),))


# ---------------------------------------------------------------- compress_counts


@pytest.mark.parametrize(
    ("counts", "text"),
    [
        ([4, 4], "4(x2)"),
        ([8, 4], "8,4"),
        ([2, 2, 2, 1], "2(x3),1"),
        ([1], "1"),
        ([3, 1, 1, 3], "3,1(x2),3"),
        ([5, 5, 5, 5, 5], "5(x5)"),
        ([], ""),
    ],
)
def test_compress_counts_is_slurms_compact_form(counts: list[int], text: str) -> None:
    assert compress_counts(counts) == text


# ---------------------------------------------------------------- against the references


@pytest.mark.parametrize(
    ("make", "reference"),
    [
        (n2_tpn4_gres4_job, "env_batch_N2_tpn4_gres4.txt"),
        (n4_gpus_per_task_job, "env_batch_n4_gpus_per_task1.txt"),
    ],
)
def test_batch_environment_matches_real_slurm(make: object, reference: str) -> None:
    job = make()  # type: ignore[operator]
    expected = ours(reference_env(reference))
    got = ours(batch_environment({}, job, CTX))
    assert sorted(got) == sorted(expected)
    assert got == expected


def test_batch_environment_without_an_account_sets_no_job_account() -> None:
    env = batch_environment({}, n2_tpn4_gres4_job(account=""), CTX)
    assert "SLURM_JOB_ACCOUNT" not in env


def test_batch_environment_of_a_job_without_gpus_has_no_gpu_variables() -> None:
    request = ResourceRequest(ntasks=2, max_nodes=2, ntasks_set=True)
    job = make_job(9, "cpu", request, (NodeAlloc("n1", 2, 0, (), 2),))
    env = batch_environment({}, job, CTX)
    assert not GPU_NAMES & env.keys()
    assert not any(k.startswith("SLURM_GPUS") for k in env)


def test_batch_environment_describes_the_node_the_script_runs_on() -> None:
    request = ResourceRequest(min_nodes=2, max_nodes=2, ntasks=12, nodes_set=True)
    nodes = (NodeAlloc("n1", 8, 0, (0, 1), 8), NodeAlloc("n2", 4, 0, (5,), 4))
    ctx = NodeContext("n2", "host-n2", "anchor", "/etc/slurm.conf", "ctl", 6817)
    env = batch_environment({}, make_job(3, "x", request, nodes), ctx)
    assert env["SLURMD_NODENAME"] == "n2"
    assert env["HOSTNAME"] == "host-n2"
    assert env["SLURM_CPUS_ON_NODE"] == "4"
    assert env["CUDA_VISIBLE_DEVICES"] == "5"
    assert env["SLURM_GPUS_ON_NODE"] == "1"
    assert env["SLURM_JOB_CPUS_PER_NODE"] == "8,4"
    assert env["SLURM_TASKS_PER_NODE"] == "8,4"
    assert env["SLURM_JOB_NODELIST"] == "n[1-2]"
    assert env["SLURM_WORKING_CLUSTER"] == "anchor:ctl:6817:9728:109"


@pytest.mark.parametrize(
    ("request_fields", "present", "absent"),
    [
        ({}, {}, {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_CPUS_PER_TASK"}),
        ({"ntasks": 1, "ntasks_set": True}, {"SLURM_NTASKS": "1", "SLURM_NPROCS": "1"}, set()),
        (
            {"cpus_per_task": 1, "cpus_per_task_set": True},
            {"SLURM_CPUS_PER_TASK": "1"},
            {"SLURM_NTASKS"},
        ),
        ({"mem_per_node": 4096}, {"SLURM_MEM_PER_NODE": "4096"}, {"SLURM_MEM_PER_CPU"}),
        ({"mem_per_cpu": 512}, {"SLURM_MEM_PER_CPU": "512"}, {"SLURM_MEM_PER_NODE"}),
        ({"gpus": 1}, {"SLURM_GPUS": "1"}, {"SLURM_GPUS_PER_NODE"}),
        ({"gpus_per_node": 1}, {"SLURM_GPUS_PER_NODE": "1"}, {"SLURM_GPUS"}),
    ],
)
def test_batch_environment_sets_request_variables_only_when_requested(
    request_fields: dict[str, object], present: dict[str, str], absent: set[str]
) -> None:
    request = ResourceRequest(**request_fields)  # type: ignore[arg-type]
    job = make_job(11, "x", request, (NodeAlloc("n1", 1, 0, (0,), 1),))
    env = batch_environment({}, job, CTX)
    assert {k: env.get(k) for k in present} == present
    assert not absent & env.keys()


@pytest.mark.parametrize(("restarts", "expected"), [(0, None), (2, "2")])
def test_batch_environment_restart_count_appears_after_a_requeue(
    restarts: int, expected: str | None
) -> None:
    job = make_job(4, "x", ResourceRequest(), (NodeAlloc("n1", 1, 0, (), 1),), restarts=restarts)
    assert batch_environment({}, job, CTX).get("SLURM_RESTART_COUNT") == expected


def test_batch_environment_keeps_user_variables_but_slurms_win() -> None:
    base = {
        "HOME": "/root",
        "MY_SETTING": "1",
        "SLURM_JOB_ID": "999",
        "CUDA_VISIBLE_DEVICES": "7",
        "SLURM_SOMETHING_ELSE": "kept",
    }
    env = batch_environment(base, n2_tpn4_gres4_job(), CTX)
    assert env["HOME"] == "/root"
    assert env["MY_SETTING"] == "1"
    assert env["SLURM_SOMETHING_ELSE"] == "kept"
    assert env["SLURM_JOB_ID"] == "5"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert base["SLURM_JOB_ID"] == "999"  # the caller's dict is not changed


def test_batch_environment_refuses_a_node_outside_the_allocation() -> None:
    ctx = NodeContext("n9", "n9", "anchor", "/c", "ctl", 6817)
    with pytest.raises(ValueError, match="no allocation on n9"):
        batch_environment({}, n2_tpn4_gres4_job(), ctx)


@pytest.mark.parametrize(
    ("gpus", "expected"),
    [
        ((), {}),
        (
            (0, 2),
            {
                "CUDA_VISIBLE_DEVICES": "0,2",
                "GPU_DEVICE_ORDINAL": "0,2",
                "ROCR_VISIBLE_DEVICES": "0,2",
                "ZE_AFFINITY_MASK": "0,2",
            },
        ),
    ],
)
def test_gpu_variables_bind_every_vendors_variable_or_none(
    gpus: tuple[int, ...], expected: dict[str, str]
) -> None:
    assert gpu_variables(gpus) == expected


# ---------------------------------------------------------------- --gpu-bind


@pytest.mark.parametrize(
    ("bind", "per_task", "expected"),
    [
        ("", 0, [(0, 1, 2, 3)] * 4),
        ("", 1, [(0,), (1,), (2,), (3,)]),
        ("", 2, [(0, 1), (2, 3), (), ()]),
        ("none", 1, [(0, 1, 2, 3)] * 4),
        ("single:2", 0, [(0,), (0,), (1,), (1,)]),
        ("per_task:2", 0, [(0, 1), (2, 3), (), ()]),
        ("map_gpu:3,1", 0, [(3,), (1,), (3,), (1,)]),
    ],
)
def test_gpu_bind_gives_each_task_its_devices(
    bind: str, per_task: int, expected: list[tuple[int, ...]]
) -> None:
    from minislurm.jobenv import bind_gpus

    assert [bind_gpus((0, 1, 2, 3), i, bind, per_task) for i in range(4)] == expected


def test_gpu_bind_closest_gives_each_task_a_linked_group() -> None:
    from minislurm.gpulinks import GpuLinks
    from minislurm.jobenv import bind_gpus

    # GPUs 0-1, 2-3, 4-5 and 6-7 are NVLink pairs; the step has 1-4.
    pairs = GpuLinks(
        tuple(range(8)),
        tuple(
            tuple(-1 if a == b else 4 if a // 2 == b // 2 else 0 for b in range(8))
            for a in range(8)
        ),
    )
    step = (1, 2, 3, 4)
    assert [bind_gpus(step, i, "closest", 2, pairs) for i in range(3)] == [(2, 3), (1, 4), ()]
    assert [bind_gpus(step, i, "closest", 2) for i in range(2)] == [(1, 2), (3, 4)]
    assert bind_gpus(step, 1, "closest", 0, pairs) == step


def test_bad_gpu_bind_is_an_error() -> None:
    from minislurm.jobenv import bind_gpus

    with pytest.raises(ValueError):
        bind_gpus((0, 1), 0, "nearest", 0)


@pytest.mark.parametrize(
    ("job_id", "port"),
    [(7, 15007), (1234, 16234), (12345, 17345), (4560000, 15000), (99999, 24999)],
)
def test_master_port_is_lightnings_15000_plus_the_job_ids_last_four_digits(
    job_id: int, port: int
) -> None:
    from minislurm.jobenv import master_port

    assert master_port(job_id) == port


# ---------------------------------------------------------------- MASTER_ADDR / MASTER_PORT


def _step_on(node: str, node_index: int) -> tuple[StepContext, TaskPlace]:
    step = StepContext(
        step_id=0,
        ntasks=1,
        nodelist=node,
        nnodes=1,
        tasks_per_node="1",
        cpus_on_node=4,
        gpus_on_node=(),
        master_addr=node,
        master_port=15005,
        launch_host="n1",
    )
    return step, TaskPlace(rank=0, local_id=0, node_index=node_index, gpus=(), node_tasks=(0,))


def test_the_batch_script_meets_on_the_jobs_first_node_by_name() -> None:
    env = batch_environment({}, n2_tpn4_gres4_job(), CTX)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("n1", "15005")


def test_the_users_own_rendezvous_wins_in_the_batch_script() -> None:
    env = batch_environment(
        {"MASTER_ADDR": "head", "MASTER_PORT": "1234"}, n2_tpn4_gres4_job(), CTX
    )
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("head", "1234")


def test_a_step_on_other_nodes_meets_on_its_own_first_node() -> None:
    job = n2_tpn4_gres4_job()
    inherited = batch_environment({}, job, CTX)  # srun's environment in the batch script
    step, task = _step_on("n2", 1)
    ctx = NodeContext("n2", "n2", "anchor", "/c", "ctl", 6817)
    env = task_environment(inherited, job, ctx, step, task, 0o022)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("n2", "15005")


def test_a_step_keeps_the_jobs_node_list_in_slurm_nodelist_as_slurm_does() -> None:
    job = n2_tpn4_gres4_job()
    step, task = _step_on("n2", 0)
    ctx = NodeContext("n2", "n2", "anchor", "/c", "ctl", 6817)
    env = task_environment({}, job, ctx, step, task, 0o022)
    assert (env["SLURM_NODELIST"], env["SLURM_STEP_NODELIST"]) == ("n[1-2]", "n2")


def test_an_srun_inside_a_task_ranks_its_own_tasks() -> None:
    job = n2_tpn4_gres4_job()
    outer_step = replace(_step_on("n2", 1)[0], ntasks=8, nodelist="n[1-2]", master_addr="n1")
    outer_task = TaskPlace(rank=5, local_id=1, node_index=1, gpus=(), node_tasks=(4, 5, 6, 7))
    ctx = NodeContext("n2", "n2", "anchor", "/c", "ctl", 6817)
    outer = task_environment({}, job, ctx, outer_step, outer_task, 0o022)
    step, task = _step_on("n2", 0)
    env = task_environment(outer, job, ctx, step, task, 0o022)
    names = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "MASTER_ADDR")
    assert [env[name] for name in names] == ["0", "0", "1", "1", "0", "n2"]


def test_a_users_export_wins_in_a_step() -> None:
    job = n2_tpn4_gres4_job()
    base = {**batch_environment({}, job, CTX), "MASTER_ADDR": "head", "MASTER_PORT": "29500"}
    step, task = _step_on("n2", 1)
    ctx = NodeContext("n2", "n2", "anchor", "/c", "ctl", 6817)
    env = task_environment(base, job, ctx, step, task, 0o022)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("head", "29500")


def test_a_step_has_slurm_job_gpus_only_from_sruns_environment() -> None:
    # Slurm sets it for the batch script alone: under salloc or a bare srun a task has
    # none; in a batch job it has the batch script's value, even on another node.
    job = n2_tpn4_gres4_job()
    nodes = (NodeAlloc("n1", 4, 0, (0, 1, 2, 3), 4), NodeAlloc("n2", 4, 0, (4, 5, 6, 7), 4))
    job = replace(job, allocation=Allocation(nodes))
    step, task = _step_on("n2", 1)
    step = replace(step, gpus_on_node=(4, 5, 6, 7))
    task = replace(task, gpus=(4, 5, 6, 7))
    ctx = NodeContext("n2", "n2", "anchor", "/c", "ctl", 6817)
    alone = task_environment({}, job, ctx, step, task, 0o022)
    assert "SLURM_JOB_GPUS" not in alone and alone["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"
    batch = batch_environment({}, job, CTX)
    inside = task_environment(batch, job, ctx, step, task, 0o022)
    assert inside["SLURM_JOB_GPUS"] == batch["SLURM_JOB_GPUS"] == "0,1,2,3"


def test_prolog_and_epilog_environments_are_slurm_2205s() -> None:
    alloc = Allocation((NodeAlloc("n1", 8, 100, gpus=(2, 3)), NodeAlloc("n2", 8, 100)))
    job = Job(
        job_id=12,
        name="train",
        uid=1000,
        gid=100,
        user="alice",
        group="users",
        partition="gpu",
        account="ml",
        work_dir="/home/alice",
        restarts=1,
        exit_code=3,
        allocation=alloc,
        state=JobState.COMPLETED,
        request=ResourceRequest(),
        submit_time=1.0,
    )
    ctx = jobenv.NodeContext("n1", "host1", "c1", "/etc/slurm/slurm.conf", "ctl", 6817)
    prolog = jobenv.node_script_environment(jobenv.script_job(job, "n1"), ctx, jobenv.PROLOG_SLURMD)
    assert prolog == {
        "SLURMD_NODENAME": "n1",
        "SLURM_CLUSTER_NAME": "c1",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "SLURM_JOB_ID": "12",
        "SLURM_JOBID": "12",
        "SLURM_JOB_UID": "1000",
        "SLURM_UID": "1000",
        "SLURM_JOB_GID": "100",
        "SLURM_JOB_USER": "alice",
        "SLURM_JOB_PARTITION": "gpu",
        "SLURM_JOB_RESTART_COUNT": "1",
        "SLURM_JOB_WORK_DIR": "/home/alice",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "SLURM_NODELIST": "n[1-2]",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_JOB_CPUS_PER_NODE": "8(x2)",
        "SLURM_SCRIPT_CONTEXT": "prolog_slurmd",
        "SLURM_JOB_ACCOUNT": "ml",
        "CUDA_VISIBLE_DEVICES": "2,3",
        "GPU_DEVICE_ORDINAL": "2,3",
        "ROCR_VISIBLE_DEVICES": "2,3",
        "ZE_AFFINITY_MASK": "2,3",
        "SLURM_JOB_GPUS": "2,3",
    }
    epilog = jobenv.node_script_environment(
        jobenv.script_job(job, "n2"), replace(ctx, node_name="n2"), jobenv.EPILOG_SLURMD
    )
    assert "CUDA_VISIBLE_DEVICES" not in epilog
    assert (epilog["SLURM_JOB_EXIT_CODE"], epilog["SLURM_JOB_EXIT_CODE2"]) == ("768", "3:0")
    assert epilog["SLURM_JOB_DERIVED_EC"] == "3"
