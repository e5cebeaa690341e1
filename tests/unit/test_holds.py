"""Tests of ctld.holds: scontrol hold, uhold and release of one job record."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_build_job import NOW, begin_kill, build, ended, pending_job, start

from ctld.holds import hold, hold_action, release
from minislurm.errors import InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_NONE, HOLD_USER, Allocation, NodeAlloc
from minislurm.requests import HoldAction
from minislurm.states import JobEvent, JobState


@pytest.mark.parametrize(
    ("kind", "reason"), [(HOLD_USER, "JobHeldUser"), (HOLD_ADMIN, "JobHeldAdmin")]
)
def test_hold_makes_a_pending_job_ineligible_with_the_holders_reason(
    kind: str, reason: str
) -> None:
    job = hold(pending_job(), kind, NOW)
    assert (job.hold, job.reason, job.eligible_time, job.held) == (kind, reason, 0.0, True)
    assert job.state is JobState.PENDING


def test_release_makes_a_held_job_eligible_again() -> None:
    job = release(hold(pending_job(), HOLD_ADMIN, NOW), NOW + 100)
    assert (job.hold, job.reason, job.eligible_time, job.held) == (
        HOLD_NONE,
        "None",
        NOW + 100,
        False,
    )


HOLD, USER_HOLD, RELEASE = HoldAction.HOLD, HoldAction.USER_HOLD, HoldAction.RELEASE


@pytest.mark.parametrize(
    ("action", "operator", "hold", "reason"),
    [
        (HOLD, True, HOLD_ADMIN, "JobHeldAdmin"),
        (HOLD, False, HOLD_USER, "JobHeldUser"),
        (USER_HOLD, True, HOLD_USER, "JobHeldUser"),
    ],
)
def test_hold_action_picks_admin_or_user_hold(
    action: int, operator: bool, hold: str, reason: str
) -> None:
    job = hold_action(build(), action, operator, NOW)
    assert (job.hold, job.reason, job.eligible_time) == (hold, reason, 0.0)


def test_only_operators_release_admin_holds() -> None:
    held = hold_action(build(), HOLD, True, NOW)
    with pytest.raises(PermissionDenied):
        hold_action(held, RELEASE, False, NOW)
    released = hold_action(held, RELEASE, True, NOW + 1)
    assert (released.hold, released.reason, released.eligible_time) == (HOLD_NONE, "None", NOW + 1)


def test_a_running_job_may_be_held_and_released_and_keeps_running() -> None:
    running, _ = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    held = hold_action(running, HOLD, True, NOW + 1)
    assert (held.state, held.hold, held.reason) == (JobState.RUNNING, HOLD_ADMIN, "JobHeldAdmin")
    released = hold_action(held, RELEASE, True, NOW + 2)
    assert (released.state, released.hold, released.reason) == (JobState.RUNNING, HOLD_NONE, "None")


def test_a_held_job_that_completes_keeps_its_hold_reason() -> None:
    running, _ = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    done = ended(hold_action(running, HOLD, True, NOW + 1), 0, 0, NOW + 2)
    assert (done.state, done.reason) == (JobState.COMPLETED, "JobHeldAdmin")
    failed = ended(hold_action(running, HOLD, True, NOW + 1), 3, 0, NOW + 2)
    assert (failed.state, failed.reason) == (JobState.FAILED, "NonZeroExitCode")


@pytest.mark.parametrize("action", [HOLD, USER_HOLD, RELEASE])
def test_finished_and_completing_jobs_cannot_be_held(action: int) -> None:
    running, _ = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    for job in (ended(running, 0, 0, NOW), begin_kill(running, JobEvent.CANCEL, NOW)[0]):
        with pytest.raises(InvalidTransition, match="Job has already finished"):
            hold_action(job, action, True, NOW)


def test_a_user_cannot_change_an_administrators_hold() -> None:
    held = hold_action(build(), HOLD, True, NOW)
    assert hold_action(held, USER_HOLD, False, NOW) is held
    assert hold_action(held, HOLD, False, NOW) is held


def test_an_operator_turns_one_kind_of_hold_into_the_other() -> None:
    admin = hold_action(build(), HOLD, True, NOW)
    user = hold_action(admin, USER_HOLD, True, NOW)
    assert (user.hold, user.reason) == (HOLD_USER, "JobHeldUser")
    again = hold_action(user, HOLD, True, NOW)
    assert (again.hold, again.reason) == (HOLD_ADMIN, "JobHeldAdmin")


def test_releasing_a_job_that_is_not_held_only_resets_a_pending_ones_reason() -> None:
    # Slurm 22.05: a job waiting for its begin time shows Reason=None right after a release.
    job = replace(build(begin_time=int(NOW) + 3600), reason="BeginTime")
    released = hold_action(job, RELEASE, False, NOW)
    assert released == replace(job, reason="None")
    running, _ = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    assert hold_action(running, RELEASE, False, NOW) is running


def test_a_future_begin_time_survives_hold_and_release() -> None:
    job = build(begin_time=int(NOW) + 3600)
    held = hold_action(job, USER_HOLD, False, NOW + 1)
    assert (held.reason, held.eligible_time) == ("JobHeldUser", NOW + 3600)
    released = hold_action(held, RELEASE, False, NOW + 2)
    assert (released.reason, released.eligible_time) == ("None", NOW + 3600)


def test_a_released_job_waiting_on_a_dependency_is_not_eligible_yet() -> None:
    job = replace(build(hold=True), dependency="afterok:4")
    assert hold_action(job, RELEASE, False, NOW).eligible_time == 0.0
