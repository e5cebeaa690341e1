"""Requeue rules and node failure: pure functions, no daemons."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctld import jobs as jobops
from ctld import nodes as nodeops
from ctld import requeue
from ctld.intents import Terminate
from minislurm.errors import InvalidTransition
from minislurm.model import HOLD_ADMIN, HOLD_USER, Allocation, Job, Node, NodeAlloc, ResourceRequest
from minislurm.states import KILL_EVENTS, JobEvent, JobState, NodeFlag, NodeState, kill_name

NOW = 1_000_000.0
ALLOC = Allocation((NodeAlloc("n1", 1, 100), NodeAlloc("n2", 1, 100)))


def job(state: JobState = JobState.RUNNING, **changes: object) -> Job:
    base = Job(
        job_id=7,
        name="train",
        uid=1000,
        gid=1000,
        user="u",
        group="u",
        partition="gpu",
        state=state,
        request=ResourceRequest(),
        submit_time=NOW - 100,
        start_time=NOW - 50,
        allocation=ALLOC,
        launched=True,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_lost_batch_job_is_requeued_with_one_more_restart_and_a_begin_time() -> None:
    new = requeue.lost(job(restarts=2, exit_code=3), NOW, 5.0)
    assert (new.state, new.reason, new.restarts) == (JobState.PENDING, "BeginTime", 3)
    assert (new.begin_time, new.eligible_time) == (NOW + 5.0, NOW + 5.0)
    assert new.allocation is None and not new.launched and new.exit_code == 0


@pytest.mark.parametrize("changes", [{"requeue": False}, {"batch": False}])
def test_a_lost_job_that_may_not_be_requeued_ends_node_fail(changes: dict[str, object]) -> None:
    new = requeue.lost(job(JobState.RUNNING, **changes), NOW, 5.0)
    assert (new.state, new.reason, new.restarts) == (JobState.NODE_FAIL, "NodeFail", 0)


@pytest.mark.parametrize(
    ("outcome", "final"), [("CANCELLED", JobState.CANCELLED), ("TIMEOUT", JobState.TIMEOUT)]
)
def test_a_job_being_killed_when_its_node_fails_ends_as_its_kill_meant(
    outcome: str, final: JobState
) -> None:
    killing = job(JobState.COMPLETING, kill_event=KILL_EVENTS[outcome])
    ended = requeue.lost(killing, NOW, 5.0)
    assert (ended.state, ended.exit_code, ended.exit_signal, ended.restarts) == (final, 0, 15, 0)


def test_scontrol_requeue_of_a_running_job_starts_its_kill() -> None:
    new, kill = requeue.requested(job(), "", NOW, 5.0)
    assert (new.state, new.kill_event) == (JobState.COMPLETING, JobEvent.REQUEUE)
    assert kill == [Terminate(7, ("n1", "n2"), "REQUEUE")]
    back = requeue.requeued(new, NOW + 1, 5.0)
    assert (back.state, back.restarts, back.reason) == (JobState.PENDING, 1, "BeginTime")


def test_requeuehold_leaves_the_job_held_by_its_user() -> None:
    new, kill = requeue.requested(job(JobState.COMPLETED), HOLD_USER, NOW, 5.0)
    assert kill == []  # nothing runs to be killed
    assert (new.state, new.reason, new.hold, new.eligible_time) == (
        JobState.PENDING,
        "job requeued in held state",  # Slurm's words (scontrol shows them with underscores)
        HOLD_USER,
        NOW + 5.0,  # what Slurm shows as its EligibleTime
    )


def test_requeuehold_of_a_running_job_says_so_from_its_kill_to_its_requeue() -> None:
    killing, _ = requeue.requested(job(), HOLD_USER, NOW, 5.0)
    assert (killing.state, killing.reason) == (JobState.COMPLETING, "job requeued in held state")
    back = requeue.requeued(killing, NOW + 1, 5.0)
    assert (back.state, back.reason, back.hold) == (
        JobState.PENDING,
        "job requeued in held state",
        HOLD_USER,
    )


def test_a_held_running_job_requeued_waits_with_its_holds_reason() -> None:
    held = replace(job(), hold=HOLD_ADMIN, reason="JobHeldAdmin")
    back = requeue.requeued(requeue.requested(held, "", NOW, 5.0)[0], NOW + 1, 5.0)
    assert (back.state, back.reason, back.eligible_time) == (JobState.PENDING, "JobHeldAdmin", 0.0)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (job(JobState.PENDING), requeue.PENDING_ALREADY),
        (job(batch=False), requeue.NOT_BATCH),
        (job(requeue=False), requeue.DISABLED),
        (job(JobState.COMPLETING, kill_event=JobEvent.CANCEL), "already completing"),
        (job(JobState.COMPLETING, kill_event=JobEvent.REQUEUE), requeue.PENDING_ALREADY),
    ],
)
def test_requeue_refuses_what_slurm_refuses(record: Job, message: str) -> None:
    with pytest.raises(InvalidTransition, match=message):
        requeue.requested(record, "", NOW, 5.0)


def node(**changes: object) -> Node:
    base = Node("n1", 8, 1000, (), ("gpu",), state=NodeState.IDLE, last_seen=NOW)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_node_silent_for_slurmd_timeout_goes_down_not_responding() -> None:
    assert nodeops.check_down(node(), NOW + 30, 30) == node()
    down = nodeops.check_down(node(), NOW + 31, 30)
    assert (down.state, down.reason) == (NodeState.DOWN, "Not responding")
    assert NodeFlag.NOT_RESPONDING in down.flags
    assert nodeops.check_down(down, NOW + 99, 30) is down


def test_slurmd_timeout_zero_never_takes_a_node_down() -> None:
    assert nodeops.check_down(node(), NOW + 86_400, 0) == node()


def test_a_controller_restart_counts_silence_from_its_start() -> None:
    heard = nodeops.unheard(node(last_seen=0.0), NOW)
    assert nodeops.check_down(heard, NOW + 10, 30) is heard


@pytest.mark.parametrize(
    ("mode", "changes", "outcome"),
    [
        ("REQUEUE", {}, "PREEMPT_REQUEUE"),
        ("REQUEUE", {"requeue": False}, "PREEMPTED"),
        ("REQUEUE", {"batch": False}, "PREEMPTED"),
        ("CANCEL", {}, "PREEMPTED"),
    ],
)
def test_a_preempted_job_is_killed_to_be_requeued_only_when_it_may_be(
    mode: str, changes: dict[str, object], outcome: str
) -> None:
    killing, kill = requeue.preempted(job(**changes), mode, NOW)
    assert (killing.state, kill_name(killing.kill_event), killing.end_time) == (
        JobState.COMPLETING,
        outcome,
        NOW,
    )
    assert requeue.requeueing(killing) == (outcome == "PREEMPT_REQUEUE")
    assert kill == [Terminate(7, ("n1", "n2"), outcome)]


def test_a_preempted_job_ends_preempted_or_back_in_the_queue() -> None:
    cancelled = jobops.ended(requeue.preempted(job(), "CANCEL", NOW)[0], 0, 15, NOW + 1)
    assert (cancelled.state, cancelled.reason, cancelled.exit_signal) == (
        JobState.PREEMPTED,
        "None",
        15,
    )
    back = requeue.requeued(requeue.preempted(job(), "REQUEUE", NOW)[0], NOW + 1, 5.0)
    assert (back.state, back.reason, back.restarts) == (JobState.PENDING, "BeginTime", 1)
    lost = requeue.lost(requeue.preempted(job(), "REQUEUE", NOW)[0], NOW + 1, 5.0)
    assert (lost.state, lost.restarts) == (JobState.PENDING, 1)


def test_a_job_whose_prolog_failed_is_requeued_held_as_slurm_shows_it() -> None:
    new = requeue.prolog_failed(job(), NOW, 5.0, hold=True)
    assert (new.state, new.reason, new.hold, new.restarts) == (
        JobState.PENDING,
        "launch failed requeued held",
        HOLD_ADMIN,
        1,
    )
    assert new.allocation is None
    free = requeue.prolog_failed(job(), NOW, 5.0, hold=False)
    assert (free.reason, free.hold, free.eligible_time) == ("BeginTime", "", NOW + 5.0)


def test_a_failed_prolog_or_epilog_drains_the_node_with_slurms_reason() -> None:
    drained = nodeops.script_failed(node(), "prolog", 0, NOW)
    assert NodeFlag.DRAIN in drained.flags
    assert (drained.reason, drained.reason_uid, drained.reason_time) == ("Prolog error", 0, NOW)
    assert nodeops.script_failed(node(), "epilog", 5, NOW).reason == "Epilog error"
    # A node drained already keeps its reason.
    assert nodeops.script_failed(drained, "epilog", 0, NOW + 9) is drained
