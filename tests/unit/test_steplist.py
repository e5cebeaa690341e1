"""Slurm's list of running steps, in the controller (pure parts).

ctld.steplist builds what squeue -s, scontrol show step and sstat see.
"""

from __future__ import annotations

import pytest
from test_accounting import N1_N2, T0, ran, step

from ctld import steplist
from ctld.state import ClusterState
from minislurm.arrays import BATCH_STEP_ID
from minislurm.errors import JobNotFound
from minislurm.model import Job, Step
from minislurm.states import JobState
from minislurm.units import INFINITE

RUNNING = JobState.RUNNING


def cluster(jobs: list[Job], steps: list[Step]) -> ClusterState:
    state = ClusterState([], [])
    for one in jobs:
        state.put_job(one)
    for one in steps:
        state.put_step(one)
    return state


def running(job_id: int, **fields: object) -> Job:
    return ran(job_id, "job", RUNNING, allocation=N1_N2, end_time=0.0, **fields)


def srun_step(job_id: int, step_id: int, **fields: object) -> Step:
    parts = (("n1", 3, 0),) if step_id else (("n1", 4, 2), ("n2", 4, 2))
    fields.setdefault("state", RUNNING)
    return step(job_id, parts, step_id=step_id, end_time=0.0, srun_host="n1", **fields)


def test_each_running_job_lists_its_batch_step_then_its_running_steps() -> None:
    state = cluster(
        [running(1), running(2, batch=False), ran(3, "done")],
        [srun_step(1, 1), srun_step(1, 0), srun_step(1, 2, state=JobState.COMPLETED),
         srun_step(2, 0), srun_step(3, 0, state=JobState.COMPLETED)],
    )  # fmt: skip
    listed = [(s.job_id, s.step_id, s.name) for s in steplist.running_steps(state, 0)]
    assert listed == [(1, BATCH_STEP_ID, "batch"), (1, 0, "bash"), (1, 1, "bash"), (2, 0, "bash")]


def test_the_batch_step_is_one_task_on_the_batch_host_without_cpus_or_tres() -> None:
    (batch,) = steplist.running_steps(cluster([running(1)], []), 1)
    assert (batch.nodelist, batch.ntasks, batch.num_cpus, batch.tres) == ("n1", 1, 0, "")
    assert (batch.state, batch.partition, batch.time_limit) == ("RUNNING", "gpu", INFINITE)
    assert (batch.start_time, batch.srun_host, batch.distribution) == (T0 + 3, "", "")


def test_a_step_shows_its_cpus_tres_and_srun() -> None:
    state = cluster([running(1)], [srun_step(1, 0, ntasks=4, srun_pid=77)])
    (_, shown) = steplist.running_steps(state, 1)
    assert (shown.num_cpus, shown.tres, shown.nodelist) == (
        8,
        "cpu=8,gres/gpu=4,mem=0,node=2",
        "n[1-2]",
    )
    assert (shown.srun_host, shown.srun_pid, shown.distribution) == ("n1", 77, "block")
    assert not shown.nodes  # the layout stays with srun's own replies


def test_one_task_per_node_is_dealt_cyclically_as_slurm_shows_it() -> None:
    state = cluster([running(1)], [srun_step(1, 1, ntasks=1)])
    assert steplist.running_steps(state, 1)[1].distribution == "cyclic"


def test_array_tasks_steps_carry_their_task_and_come_in_task_order() -> None:
    tasks = [
        running(26, array_job_id=24, array_task_id=1),
        running(24, array_job_id=24, array_task_id=2),
    ]
    state = cluster(tasks, [])
    listed = [(s.job_id, s.array_job_id, s.array_task_id) for s in steplist.running_steps(state, 0)]
    assert listed == [(26, 24, 1), (24, 24, 2)]
    assert [s.job_id for s in steplist.running_steps(state, 24)] == [26, 24]  # the array's id


def test_an_unknown_job_is_not_found_and_a_finished_one_has_no_steps() -> None:
    state = cluster([ran(3, "done")], [])
    with pytest.raises(JobNotFound):
        steplist.running_steps(state, 99)
    assert steplist.running_steps(state, 3) == []
