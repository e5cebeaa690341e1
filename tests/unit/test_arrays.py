"""Tests of minislurm.arrays and ctld.arrays: task id sets, --array, splitting tasks off."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctld.arrays import pending_tasks, select_tasks, split_task
from minislurm.arrays import TaskSet, array_label, parse_array, parse_job_ref
from minislurm.model import Job, ResourceRequest
from minislurm.states import JobState


@pytest.mark.parametrize(
    ("text", "ids", "shown"),
    [
        ("0-15", list(range(16)), "0-15"),
        ("1,3,5-9:2", [1, 3, 5, 7, 9], "1-9:2"),
        ("0-10:3", [0, 3, 6, 9], "0-9:3"),
        ("7", [7], "7"),
        ("3,1,2", [1, 2, 3], "1-3"),
        ("1,3", [1, 3], "1,3"),
        ("0-2,5,7,9", [0, 1, 2, 5, 7, 9], "0-2,5-9:2"),
        ("", [], ""),
    ],
)
def test_task_sets_read_and_print_as_slurm(text: str, ids: list[int], shown: str) -> None:
    tasks = TaskSet.parse(text)
    assert list(tasks) == ids
    assert len(tasks) == len(ids)
    assert str(tasks) == shown
    assert TaskSet.parse(str(tasks)) == tasks


@given(st.sets(st.integers(min_value=0, max_value=200), max_size=40))
def test_task_set_text_round_trips_any_set(ids: set[int]) -> None:
    tasks = TaskSet.of(list(ids))
    assert list(TaskSet.parse(str(tasks))) == sorted(ids)
    assert all(i in tasks for i in ids)
    assert -1 not in tasks and 201 not in tasks


@given(st.sets(st.integers(min_value=0, max_value=100), min_size=1), st.data())
def test_without_removes_exactly_the_given_ids(ids: set[int], data: st.DataObject) -> None:
    tasks = TaskSet.of(list(ids))
    drop = data.draw(st.lists(st.sampled_from(sorted(ids)), max_size=5))
    assert list(tasks.without(drop)) == sorted(ids - set(drop))
    assert list(tasks.without([tasks.first()])) == sorted(ids)[1:]


def test_a_huge_array_costs_a_few_integers() -> None:
    tasks = TaskSet.parse("0-9999")
    assert tasks.ranges == ((0, 9999, 1),)
    assert tasks.without([0]).ranges == ((1, 9999, 1),)
    assert tasks.take(3) == [0, 1, 2]
    assert (tasks.first(), tasks.last(), tasks.step(), len(tasks)) == (0, 9999, 1, 10000)


@pytest.mark.parametrize(
    ("text", "ids", "throttle"),
    [("0-15", "0-15", 0), ("0-99%4", "0-99", 4), ("1,3,5-9:2", "1-9:2", 0), (" 2 ", "2", 0)],
)
def test_parse_array_reads_ids_and_throttle(text: str, ids: str, throttle: int) -> None:
    tasks, limit = parse_array(text)
    assert (str(tasks), limit) == (ids, throttle)


@pytest.mark.parametrize("text", ["abc", "", "5-1", "1-", "0-1001", "1:2", "0-3%x", "0-3:0"])
def test_parse_array_rejects_with_slurms_words(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid job array specification"):
        parse_array(text)


def test_parse_array_honours_max_array_size() -> None:
    assert len(parse_array("0-10000", 10001)[0]) == 10001
    with pytest.raises(ValueError):
        parse_array("0-10001", 10001)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123", (123, None, "")),
        ("123_4", (123, TaskSet.parse("4"), "")),
        ("123_[1-3]", (123, TaskSet.parse("1-3"), "")),
        ("123_[0-7%2]", (123, TaskSet.parse("0-7"), "")),
        ("123.0", (123, None, "0")),
        ("123_4.batch", (123, TaskSet.parse("4"), "batch")),
    ],
)
def test_job_references(text: str, expected: tuple[int, TaskSet | None, str]) -> None:
    assert parse_job_ref(text) == expected


@pytest.mark.parametrize("text", ["", "x", "12_", "12.", "_3", "12_[a]"])
def test_bad_job_references(text: str) -> None:
    with pytest.raises(ValueError):
        parse_job_ref(text)


def test_array_label_shows_the_throttle() -> None:
    assert array_label("0-3", 2) == "0-3%2"
    assert array_label("0-3", 0) == "0-3"


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        # What Slurm 22.05's squeue and scontrol show for a held array's pending tasks.
        ("1-9:2%2", "1,3,5,7,9%2"),
        ("1,3,5-9:2%2", "1,3,5,7,9%2"),
        ("0-15:4", "0,4,8,12"),
        ("0-3,7", "0-3,7"),
        ("1-100:10%3", "1-91:10%3"),
        ("5", "5"),
        ("0,1-9:2", "0-1,3,5,7,9"),
        ("0-9999", "0-9999"),
    ],
)
def test_array_label_writes_the_tasks_as_slurm_does(spec: str, label: str) -> None:
    tasks, throttle = parse_array(spec, 10_001)
    assert array_label(str(tasks), throttle) == label


def test_a_long_array_label_is_cut_short_as_slurms() -> None:
    label = array_label(str(TaskSet.of([*range(0, 200, 2), 201])), 0)
    assert label == "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42..."
    assert len(label) == 63


def array_record(tasks: str = "0-3", job_id: int = 8) -> Job:
    return Job(
        job_id=job_id,
        name="arr",
        uid=0,
        gid=0,
        user="root",
        group="root",
        partition="gpu",
        state=JobState.PENDING,
        request=ResourceRequest(),
        submit_time=1.0,
        array_job_id=8,
        array_tasks=tasks,
        array_spec="0-3",
    )


def test_a_started_task_gets_a_new_id_and_the_last_one_keeps_the_arrays() -> None:
    record = array_record()
    first, rest = split_task(record, 0, 9)
    assert (first.job_id, first.array_task_id, first.array_tasks) == (9, 0, "")
    assert rest is not None and (rest.job_id, rest.array_tasks) == (8, "1-3")
    last, none = split_task(array_record("3"), 3, 12)
    assert none is None
    assert (last.job_id, last.array_task_id) == (8, 3)


def test_select_tasks_names_records_and_pending_tasks() -> None:
    pending = array_record("2-3")
    running = Job(**{**array_record().__dict__, "job_id": 9, "array_task_id": 0, "array_tasks": ""})
    named, waiting = select_tasks([pending, running], TaskSet.parse("0,3"))
    assert named == [running] and waiting == [3]
    assert select_tasks([pending, running], None) == ([pending, running], [])
    assert list(pending_tasks(pending)) == [2, 3] and not pending_tasks(running)
