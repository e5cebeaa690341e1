"""Tests of ctld.holds: scontrol hold, uhold and release of one job record."""

from __future__ import annotations

import pytest
from test_build_job import NOW, build, ended, pending_job, start

from ctld.holds import hold, hold_action, release
from minislurm.errors import InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_NONE, HOLD_USER, Allocation, NodeAlloc
from minislurm.rpc import minislurm_pb2 as pb
from minislurm.states import JobState


@pytest.mark.parametrize(
    ("kind", "reason"), [(HOLD_USER, "JobHeldUser"), (HOLD_ADMIN, "JobHeldAdmin")]
)
def test_hold_makes_a_pending_job_ineligible_with_the_holders_reason(
    kind: str, reason: str
) -> None:
    job = hold(pending_job(), kind)
    assert (job.hold, job.reason, job.eligible_time, job.held) == (kind, reason, 0.0, True)
    assert job.state is JobState.PENDING


def test_release_makes_a_held_job_eligible_again() -> None:
    job = release(hold(pending_job(), HOLD_ADMIN), NOW + 100)
    assert (job.hold, job.reason, job.eligible_time, job.held) == (
        HOLD_NONE,
        "None",
        NOW + 100,
        False,
    )


HOLD, USER_HOLD, RELEASE = (
    pb.HoldJobsRequest.HOLD,
    pb.HoldJobsRequest.USER_HOLD,
    pb.HoldJobsRequest.RELEASE,
)


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


def test_hold_needs_a_pending_job() -> None:
    running = start(build(), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    with pytest.raises(InvalidTransition, match="no longer pending"):
        hold_action(running, HOLD, True, NOW)
    done = ended(running, 0, 0, NOW)
    with pytest.raises(InvalidTransition, match="already finished"):
        hold_action(done, RELEASE, True, NOW)
