"""Tests of minislurm.depend (parsing) and ctld.depend (whether a dependency holds)."""

from __future__ import annotations

import pytest

from ctld.depend import REASON_DEPENDENCY, REASON_NEVER, resolve, wait_reason
from ctld.state import ClusterState
from minislurm.depend import Dependency, DepItem, parse_dependency
from minislurm.model import Job, ResourceRequest
from minislurm.states import JobState

NOW = 1000.0


@pytest.mark.parametrize(
    ("text", "items", "any_of"),
    [
        ("afterok:12", [DepItem("afterok", 12)], False),
        ("afterok:12:13", [DepItem("afterok", 12), DepItem("afterok", 13)], False),
        ("after:5+10", [DepItem("after", 5, minutes=10)], False),
        ("afterany:14_2", [DepItem("afterany", 14, task=2)], False),
        ("afterok:1?afternotok:2", [DepItem("afterok", 1), DepItem("afternotok", 2)], True),
        ("singleton", [DepItem("singleton")], False),
        ("afterok:1(failed)", [DepItem("afterok", 1, failed=True)], False),
        ("", [], False),
    ],
)
def test_parse_dependency(text: str, items: list[DepItem], any_of: bool) -> None:
    dep = parse_dependency(text)
    assert dep == Dependency(tuple(items), any_of)
    assert parse_dependency(str(dep)) == dep


@pytest.mark.parametrize(
    "text", ["foo:1", "afterok", "afterok:", "afterok:x", "singleton:3", "afterok:1+5", "after:0"]
)
def test_malformed_dependencies_are_a_dependency_problem(text: str) -> None:
    with pytest.raises(ValueError, match="Job dependency problem"):
        parse_dependency(text)


def test_shown_as_scontrol_prints_it() -> None:
    assert parse_dependency("afterok:14").shown() == "afterok:14(unfulfilled)"
    assert parse_dependency("afterok:14(failed)").shown() == "afterok:14(failed)"
    assert Dependency().shown() == "(null)"


def job(job_id: int, state: JobState = JobState.PENDING, **fields: object) -> Job:
    values: dict[str, object] = {
        "job_id": job_id,
        "name": "j",
        "uid": 1000,
        "gid": 1000,
        "user": "u",
        "group": "u",
        "partition": "gpu",
        "state": state,
        "request": ResourceRequest(),
        "submit_time": 1.0,
        "start_time": 0.0 if state is JobState.PENDING else 10.0,
    }
    values.update(fields)
    return Job(**values)  # type: ignore[arg-type]


def cluster(*jobs: Job) -> ClusterState:
    state = ClusterState([], [])
    for j in jobs:
        state.put_job(j)
    return state


@pytest.mark.parametrize(
    ("kind", "target", "reason"),
    [
        ("afterok", JobState.COMPLETED, ""),
        ("afterok", JobState.FAILED, REASON_NEVER),
        ("afterok", JobState.RUNNING, REASON_DEPENDENCY),
        ("afternotok", JobState.FAILED, ""),
        ("afternotok", JobState.CANCELLED, ""),
        ("afternotok", JobState.COMPLETED, REASON_NEVER),
        ("afterany", JobState.CANCELLED, ""),
        ("afterany", JobState.RUNNING, REASON_DEPENDENCY),
        ("after", JobState.RUNNING, ""),
        ("after", JobState.PENDING, REASON_DEPENDENCY),
    ],
)
def test_each_kind_against_the_other_jobs_state(kind: str, target: JobState, reason: str) -> None:
    waiting = job(2, dependency=f"{kind}:1")
    state = cluster(job(1, target), waiting)
    dep = parse_dependency(waiting.dependency)
    assert wait_reason(dep, waiting, None, state, NOW) == reason
    resolved = resolve(dep, waiting, state, NOW)
    assert resolved.never_satisfied() == (reason == REASON_NEVER)
    assert (not resolved.items) == (reason == "")


def test_an_unknown_job_counts_as_done_as_in_slurm() -> None:
    waiting = job(2, dependency="afterok:999999")
    dep = resolve(parse_dependency(waiting.dependency), waiting, cluster(waiting), NOW)
    assert dep == Dependency()


def test_after_with_minutes_waits_that_long_after_the_start() -> None:
    waiting = job(2)
    state = cluster(job(1, JobState.RUNNING, start_time=NOW - 100), waiting)
    dep = parse_dependency("after:1+2")
    assert wait_reason(dep, waiting, None, state, NOW) == REASON_DEPENDENCY
    assert wait_reason(dep, waiting, None, state, NOW + 30) == ""


def test_any_of_needs_one_item_and_fails_only_when_all_do() -> None:
    waiting = job(3)
    state = cluster(job(1, JobState.FAILED), job(2, JobState.RUNNING), waiting)
    dep = parse_dependency("afterok:1?afterok:2")
    assert wait_reason(dep, waiting, None, state, NOW) == REASON_DEPENDENCY
    state.put_job(job(2, JobState.COMPLETED))
    assert resolve(dep, waiting, state, NOW) == Dependency()


def test_a_whole_array_is_done_when_every_task_is() -> None:
    meta = job(8, array_job_id=8, array_tasks="3")
    done = job(9, JobState.COMPLETED, array_job_id=8, array_task_id=0)
    waiting = job(20)
    state = cluster(meta, done, waiting)
    dep = parse_dependency("afterok:8")
    assert wait_reason(dep, waiting, None, state, NOW) == REASON_DEPENDENCY
    assert wait_reason(parse_dependency("afterok:8_0"), waiting, None, state, NOW) == ""
    state.put_job(job(8, JobState.COMPLETED, array_job_id=8, array_task_id=3))
    assert wait_reason(dep, waiting, None, state, NOW) == ""


def test_aftercorr_waits_on_the_task_with_the_same_id() -> None:
    other = job(8, JobState.COMPLETED, array_job_id=8, array_task_id=1)
    failed = job(9, JobState.FAILED, array_job_id=8, array_task_id=2)
    mine = job(20, array_job_id=20, array_tasks="1-2", dependency="aftercorr:8")
    state = cluster(other, failed, mine)
    dep = parse_dependency(mine.dependency)
    assert resolve(dep, mine, state, NOW) == dep  # each pending task decides for itself
    assert wait_reason(dep, mine, 1, state, NOW) == ""
    assert wait_reason(dep, mine, 2, state, NOW) == REASON_NEVER


def test_singleton_waits_for_running_and_older_pending_jobs_of_the_same_name() -> None:
    older = job(1, name="solo")
    mine = job(2, name="solo")
    other_user = job(3, JobState.RUNNING, name="solo", uid=5)
    state = cluster(older, mine, other_user)
    dep = parse_dependency("singleton")
    assert wait_reason(dep, older, None, state, NOW) == ""
    assert wait_reason(dep, mine, None, state, NOW) == REASON_DEPENDENCY
    state.put_job(job(1, JobState.RUNNING, name="solo"))
    assert wait_reason(dep, mine, None, state, NOW) == REASON_DEPENDENCY
    state.put_job(job(1, JobState.COMPLETED, name="solo"))
    assert wait_reason(dep, mine, None, state, NOW) == ""
