"""Slurm's list of running steps and a step's cancel, in the controller (pure parts).

ctld.steplist builds what squeue -s, scontrol show step and sstat see;
ctld.jobrequests and ctld.steps decide what ``scancel J.S`` does to a step.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_accounting import CANCELLED, N1_N2, T0, ran, records_of, render, step

from ctld import jobrequests, steplist
from ctld import steps as stepops
from ctld.intents import SignalStep
from ctld.state import ClusterState
from minislurm.errors import InvalidRequest, JobNotFound
from minislurm.model import Job, Step
from minislurm.requests import CancelRequest, StepRequest
from minislurm.states import JobState
from minislurm.stepids import BATCH_STEP
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
    assert listed == [(1, BATCH_STEP, "batch"), (1, 0, "bash"), (1, 1, "bash"), (2, 0, "bash")]


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


def test_stat_nodes_are_the_steps_or_the_batch_hosts() -> None:
    state = cluster([running(1)], [srun_step(1, 0), srun_step(1, 1, state=JobState.COMPLETED)])
    assert steplist.stat_nodes(state, 1, 0)[1] == ("n1", "n2")
    assert steplist.stat_nodes(state, 1, BATCH_STEP)[1] == ("n1",)
    for job_id, step_id in ((1, 1), (1, 5), (99, 0)):
        with pytest.raises(JobNotFound):
            steplist.stat_nodes(state, job_id, step_id)


def cancel(state: ClusterState, job_id: int, step_id: int, signal: int = 0, uid: int = 0):
    request = CancelRequest(
        job_ids=(job_id,), step_id=step_id, has_step=True, signal=signal, requester_uid=uid
    )
    return jobrequests.cancel(state, request, frozenset(), T0 + 20)


def test_scancel_of_a_step_records_who_killed_it_and_kills_its_tasks() -> None:
    state = cluster([running(1, uid=1000)], [srun_step(1, 0, uid=1000)])
    out = cancel(state, 1, 0, uid=1000)
    assert out.results == [(1, "1.0", "")]
    assert [s.cancelled_by for s in out.steps] == [1000]
    assert out.intents == [SignalStep(1, 0, ("n1", "n2"), 9)]
    assert not out.changed  # the job goes on


def test_a_signal_to_a_step_changes_nothing_but_its_tasks() -> None:
    state = cluster([running(1)], [srun_step(1, 0)])
    out = cancel(state, 1, 0, signal=10)
    assert (out.results, out.steps, out.intents) == (
        [(1, "1.0", "")],
        [],
        [SignalStep(1, 0, ("n1", "n2"), 10)],
    )


def test_steps_that_do_not_run_and_other_users_get_slurms_errors() -> None:
    ended = JobState.COMPLETED
    steps = [srun_step(1, 0, uid=1000), srun_step(1, 1, state=ended), srun_step(3, 0, state=ended)]
    state = cluster([running(1, uid=1000), ran(3, "done")], steps)
    assert cancel(state, 1, 1, uid=1000).results == [(1, "1.1", "Invalid job id specified")]
    assert cancel(state, 3, 0).results == [(3, "3.0", "Invalid job id specified")]
    assert cancel(state, 99, 0).results == [(0, "99.0", "Invalid job id specified")]
    denied = cancel(state, 1, 0, uid=2000)
    assert (denied.results, denied.intents) == ([(1, "1.0", "Invalid user id")], [])


def test_a_killed_step_ends_cancelled_whatever_its_tasks_exit_with() -> None:
    killed = replace(srun_step(1, 0), cancelled_by=0)
    after_n1 = stepops.node_reported(killed, "n1", [(0, 9)], T0 + 21)
    done = stepops.node_reported(after_n1, "n2", [(0, 9)], T0 + 22)
    assert (done.state, done.signal, done.end_time) == (CANCELLED, 9, T0 + 22)
    plain = stepops.node_reported(srun_step(1, 1), "n1", [(0, 9)], T0 + 22)
    assert plain.state is JobState.FAILED


def test_sacct_shows_the_step_cancelled_by_its_requester_while_the_job_completed() -> None:
    """Real sacct after scancel 31.0 of a job whose script went on and ended well."""
    done = ran(31, "stepsoracle")
    victim = step(31, (("n1", 1, 0),), name="victim", state=CANCELLED, cancelled_by=0, signal=9)
    keeper = step(31, (("n1", 1, 0),), step_id=1, name="keeper")
    text = render(records_of([(done, [victim, keeper])]), "JobID,JobName,State,ExitCode", True)
    assert text == (
        "JobID|JobName|State|ExitCode\n"
        "31|stepsoracle|COMPLETED|0:0\n"
        "31.batch|batch|COMPLETED|0:0\n"
        "31.0|victim|CANCELLED by 0|0:9\n"
        "31.1|keeper|COMPLETED|0:0\n"
    )
    job_cancelled = ran(30, "j", CANCELLED, cancelled_by=0, exit_signal=15)
    left = step(30, (("n1", 1, 0),), state=CANCELLED, signal=15)
    assert render(records_of([(job_cancelled, [left])]), "JobID,State", True).splitlines()[-1] == (
        "30.0|CANCELLED"  # ended with its job: no requester of its own
    )


@pytest.mark.parametrize("host", ["n1 n2", "-n1", "x" * 300, "n1\n"])
def test_a_step_whose_srun_host_is_no_host_name_is_refused(host: str) -> None:
    spec = StepRequest(job_id=1, ntasks=1, srun_host=host, srun_pid=7)
    with pytest.raises(InvalidRequest, match="Invalid srun host name"):
        stepops.place_step(spec, running(1), [], 0, T0 + 20)
    spec = replace(spec, srun_host="n1.cluster")
    good = stepops.place_step(spec, running(1), [], 0, T0 + 20)
    assert (good.srun_host, good.srun_pid) == ("n1.cluster", 7)
