"""salloc's interactive step: its placement, id, accounting and environment (pure parts).

As measured on Slurm 22.05 (``salloc -N2 -n3`` under
``LaunchParameters=use_interactive_step``): the step ``J.interactive``
(id 0xFFFFFFFA) is one task on the job's first node with the job's CPUs
and GPUs there, named ``interactive``; sruns run beside it; its shell keeps
the job's ``SLURM_NNODES``/``SLURM_NTASKS``... (``--preserve-env``).
"""

from __future__ import annotations

import dataclasses

from ctld import steps as stepops
from ctld.accounting.records import job_records
from ctld.state import ClusterState
from minislurm.jobenv import NodeContext, StepContext, TaskPlace, task_environment
from minislurm.model import Allocation, Job, NodeAlloc, ResourceRequest
from minislurm.requests import StepRequest
from minislurm.states import JobState
from minislurm.stepids import INTERACTIVE_STEP, step_id_text

NOW = 2000.0


def salloc_job() -> Job:
    """salloc -N2 -n3 --gres=gpu:2: two CPUs and GPUs 2,3 on n1, one CPU on n2."""
    nodes = (NodeAlloc("n1", 2, 0, (2, 3), 2), NodeAlloc("n2", 1, 0, (2, 3), 1))
    return Job(
        job_id=39,
        name="interactive",
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="gpu",
        state=JobState.RUNNING,
        request=ResourceRequest(min_nodes=2, max_nodes=2, ntasks=3, gpus_per_node=2),
        submit_time=1000.0,
        batch=False,
        allocation=Allocation(nodes),
    )


def interactive_step(job: Job) -> StepRequest:
    """What salloc's srun asks: the job's geometry from its environment, and --interactive."""
    spec = StepRequest(job_id=job.job_id, name="sh", argv=("/bin/sh",), interactive=True)
    spec = dataclasses.replace(spec, min_nodes=2, ntasks=3, cpus_per_task=1)
    return stepops.interactive_spec(spec, job)


def test_the_interactive_step_is_one_task_with_the_first_nodes_resources() -> None:
    job = salloc_job()
    busy = stepops.place_step(StepRequest(job_id=39, ntasks=3, name="train"), job, [], 0, NOW)
    step = stepops.place_step(interactive_step(job), job, [busy], INTERACTIVE_STEP, NOW)
    assert (step.name, step.ntasks, step.overlap) == ("interactive", 1, True)
    (node,) = step.nodes
    assert (node.node, node.cpus, node.gpus, node.task_ids) == ("n1", 2, (2, 3), (0,))


def test_steps_run_beside_the_interactive_step() -> None:
    job = salloc_job()
    shell = stepops.place_step(interactive_step(job), job, [], INTERACTIVE_STEP, NOW)
    every_cpu = StepRequest(job_id=39, ntasks=3, name="hostname")
    step = stepops.place_step(every_cpu, job, [shell], 0, NOW)
    assert [(n.node, n.task_ids) for n in step.nodes] == [("n1", (0, 1)), ("n2", (2,))]


def test_numbered_steps_count_on_past_the_interactive_one() -> None:
    job = salloc_job()
    state = ClusterState([], [])
    state.put_step(stepops.place_step(interactive_step(job), job, [], INTERACTIVE_STEP, NOW))
    assert state.next_step_id(39) == 0
    state.put_step(stepops.place_step(StepRequest(job_id=39), job, [], 0, NOW))
    assert state.next_step_id(39) == 1


def test_sacct_lists_the_interactive_step_first_by_its_name() -> None:
    job = salloc_job()
    shell = stepops.place_step(interactive_step(job), job, [], INTERACTIVE_STEP, NOW)
    numbered = stepops.place_step(StepRequest(job_id=39, name="hostname"), job, [shell], 0, NOW)
    records = job_records(job, [numbered, shell], NOW + 5, "anchor")
    assert [(r.job_id, r.step, r.name) for r in records[1:]] == [
        ("39.interactive", "interactive", "interactive"),
        ("39.0", "0", "hostname"),
    ]
    assert step_id_text(INTERACTIVE_STEP) == "interactive" and step_id_text(7) == "7"


def _environment(step: StepContext, base: dict[str, str]) -> dict[str, str]:
    ctx = NodeContext("n1", "n1", "anchor", "/etc/slurm/slurm.conf", "ctl", 6817)
    place = TaskPlace(0, 0, 0, (2, 3), (0,))
    return task_environment(base, salloc_job(), ctx, step, place, 0o022)


def test_the_interactive_shell_keeps_the_jobs_counts_and_gets_no_rank() -> None:
    base = {
        "SLURM_NNODES": "2",
        "SLURM_NTASKS": "3",
        "SLURM_NPROCS": "3",
        "SLURM_TASKS_PER_NODE": "2,1",
        "MASTER_PORT": "29500",  # the user's own: it stays
    }
    step = StepContext(
        step_id=INTERACTIVE_STEP,
        ntasks=1,
        nodelist="n1",
        nnodes=1,
        tasks_per_node="1",
        cpus_on_node=2,
        gpus_on_node=(2, 3),
        master_addr="n1",
        master_port=15039,
        launch_host="vm",
        preserve_env=True,
        interactive=True,
    )
    env = _environment(step, base)
    assert {k: env[k] for k in base} == base
    assert (env["SLURM_STEP_ID"], env["SLURM_STEP_NUM_TASKS"]) == ("4294967290", "1")
    assert not {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK"} & set(env)
    assert env["MASTER_ADDR"] == "n1"  # where the job's ranks meet, as in a batch script
    plain = _environment(dataclasses.replace(step, preserve_env=False, interactive=False), base)
    assert (plain["SLURM_NNODES"], plain["SLURM_NTASKS"], plain["RANK"]) == ("1", "1", "0")
