"""Tests of ctld.jobupdate: scontrol update of a job, with Slurm 22.05's rules and words.

The cases are what real Slurm answered on the reference cluster (as root
and as the job's owner), on a held pending job and on a running one.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from test_build_job import NOW, build, cluster, ended, start

from ctld.jobupdate import ALL_NODES, PRIORITY_INFINITE, updated
from minislurm.errors import InvalidRequest, InvalidTransition, PermissionDenied
from minislurm.model import HOLD_ADMIN, HOLD_USER, Allocation, Job, NodeAlloc
from minislurm.requests import JobUpdate
from minislurm.states import JobState
from minislurm.units import INFINITE
from minislurm.wire import convert
from minislurm.wire.rpc import minislurm_pb2 as pb


def update(job: Job, operator: bool = True, shown: int = 100, **fields: object) -> Job:
    """The job after an update by an operator (or its owner); ``shown``: its priority now."""
    message = pb.UpdateJobRequest(job_id=job.job_id, **fields)  # type: ignore[arg-type]
    request = convert.record(JobUpdate, message)
    return updated(job, request, operator, cluster(), NOW + 10, shown)


def running(**fields: object) -> Job:
    job, _ = start(build(**fields), Allocation((NodeAlloc("n1", 1, 0),)), NOW)
    return job


def test_update_changes_only_the_fields_present() -> None:
    job = build(time_limit=30)
    new = update(job, False, name="renamed")
    assert (new.name, new.time_limit, new.partition) == ("renamed", 30, "gpu")
    new = update(job, False, time_limit=10, partition="debug")
    assert (new.time_limit, new.partition) == (10, "debug")


def test_a_job_without_a_limit_of_its_own_takes_its_new_partitions_max_time() -> None:
    moved = update(build(), partition="debug")  # MaxTime=60
    assert (moved.time_limit, moved.partition_time_limit) == (60, True)
    assert update(moved, partition="gpu").time_limit == INFINITE
    assert update(build(time_limit=30), partition="gpu").time_limit == 30  # its own
    assert update(build(partition="short"), partition="debug").time_limit == 10  # DefaultTime's
    limited = update(moved, time_limit=20)
    assert update(limited, partition="gpu").time_limit == 20  # given since


def test_gres_of_a_pending_job_sets_its_gpus_per_node_as_slurms() -> None:
    job = update(build(hold=True), gres="gpu:2")
    assert (job.gres, job.request.gpus_per_node, job.request.gpu_type) == ("gpu:2", 2, "")
    assert update(job, gres="gpu:99").request.gpus_per_node == 99  # no node is tried
    assert update(job, gres="").request.gpus_per_node == 0


@pytest.mark.parametrize(
    ("gres", "message"),
    [
        ("tpu:1", "Invalid generic resource (gres) specification"),
        ("gpu:a100:1", "Invalid GRES specification (with and without type identification)"),
    ],
)
def test_gres_naming_what_the_cluster_lacks_is_refused(gres: str, message: str) -> None:
    with pytest.raises(InvalidRequest, match=re.escape(message)):
        update(build(hold=True), gres=gres)


def test_gres_of_a_running_job_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="Job is no longer pending execution"):
        update(running(), gres="gpu:1")


def test_a_job_moved_to_another_partition_reckons_its_memory_there() -> None:
    job = build()
    assert job.request.part_mem == 8000
    assert update(job, partition="cpu").request.part_mem == 4000


@pytest.mark.parametrize(
    ("fields", "operator", "error", "message"),
    [
        ({"nice": -1}, False, PermissionDenied, "Access/permission denied"),
        ({"partition": "nosuch"}, True, InvalidRequest, "Invalid partition name specified"),
        ({"name": ""}, True, InvalidRequest, "Invalid job name"),
        ({"dependency": "foo:1"}, True, InvalidRequest, "Job dependency problem"),
        ({"exc_nodes": "nosuch"}, True, InvalidRequest, "Invalid node name specified"),
        ({"req_nodes": "n[1-"}, True, InvalidRequest, "Invalid node name specified"),
        ({"reservation": "nosuch"}, True, InvalidRequest, "Requested reservation is invalid"),
        ({"min_nodes": 0}, True, InvalidRequest, "Node count specification invalid"),
        ({"min_nodes": 2, "max_nodes": 1}, True, InvalidRequest, "Node count specification"),
        ({"num_tasks": 0}, True, InvalidRequest, "Task count specification invalid"),
        ({"deadline": int(NOW) - 5}, True, InvalidRequest, "Invalid time specified"),
        ({"deadline": int(NOW) + 3600}, False, PermissionDenied, "Access/permission denied"),
        ({"work_dir": "relative"}, True, InvalidRequest, "Working directory must be absolute"),
        ({"mail_type": "bogus"}, True, InvalidRequest, "Invalid mail type specification"),
        ({"priority": 5}, False, PermissionDenied, "Access/permission denied"),
        ({"priority": 50}, False, PermissionDenied, "Access/permission denied"),
        ({"time_limit": 90}, False, PermissionDenied, "Access/permission denied"),
    ],
)
def test_bad_updates_are_refused_with_slurms_words(
    fields: dict[str, object], operator: bool, error: type[Exception], message: str
) -> None:
    job = build(time_limit=30, partition="debug")
    with pytest.raises(error, match=message.split(" must")[0]):
        update(job, operator, shown=1, **fields)


def test_a_user_lowering_a_priority_is_told_to_change_nice_instead() -> None:
    with pytest.raises(InvalidRequest, match="change nice instead"):
        update(build(), False, shown=100, priority=5)


def test_a_user_may_raise_a_pending_limit_up_to_the_partitions_max_time() -> None:
    job = build(time_limit=30, partition="debug")  # MaxTime=60
    assert update(job, False, time_limit=60).time_limit == 60
    with pytest.raises(PermissionDenied):
        update(job, False, time_limit=61)
    assert update(job, True, time_limit=120).time_limit == 120


def test_only_an_operator_raises_a_running_jobs_limit() -> None:
    job = running(time_limit=30)
    assert update(job, False, time_limit=20).time_limit == 20
    with pytest.raises(PermissionDenied, match="Access/permission denied"):
        update(job, False, time_limit=40)
    assert update(job, True, time_limit=40).time_limit == 40
    assert update(job, True, time_limit=0).time_limit == INFINITE


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"partition": "debug"}, InvalidTransition, "Job is no longer pending execution"),
        ({"account": "other"}, InvalidTransition, "Job is no longer pending execution"),
        ({"dependency": "afterok:1"}, InvalidTransition, "Job is no longer pending execution"),
        ({"begin_time": int(NOW) + 60}, InvalidTransition, "no longer pending"),
        ({"exc_nodes": "n2"}, InvalidTransition, "Job is no longer pending execution"),
        ({"min_nodes": 2}, InvalidTransition, "Requested operation not supported on this system"),
        ({"num_tasks": 2}, InvalidTransition, "Job is no longer pending execution"),
        ({"work_dir": "/elsewhere"}, InvalidTransition, "Job is no longer pending execution"),
    ],
)
def test_a_running_job_keeps_what_only_a_pending_job_may_change(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        update(running(), **fields)


def test_a_running_job_takes_name_comment_nice_and_same_values() -> None:
    job = running()
    new = update(job, name="runname", comment="x", nice=5, work_dir=job.work_dir, qos="normal")
    assert (new.name, new.comment, new.nice, new.state) == ("runname", "x", 5, JobState.RUNNING)
    assert update(job, deadline=int(NOW) + 3600).deadline == job.deadline  # ignored, as Slurm


@pytest.mark.parametrize("fields", [{"name": "x"}, {"comment": "x"}, {"time_limit": 5}])
def test_a_finished_job_has_already_finished(fields: dict[str, object]) -> None:
    done = ended(running(), 0, 0, NOW + 1)
    with pytest.raises(InvalidTransition, match="Job has already finished"):
        update(done, **fields)


def test_node_count_sets_tasks_of_a_job_that_did_not_ask_for_them() -> None:
    two = update(build(), min_nodes=2)
    assert (two.request.min_nodes, two.request.max_nodes, two.request.ntasks) == (2, 2, 2)
    assert not two.request.nodes_set  # scontrol shows NumNodes=2, as Slurm does
    ranged = update(build(), min_nodes=1, max_nodes=2)
    assert (ranged.request.min_nodes, ranged.request.max_nodes, ranged.request.ntasks) == (1, 2, 1)
    everything = update(build(), min_nodes=ALL_NODES)
    assert everything.request.min_nodes == 2  # the gpu partition's nodes
    assert update(build(ntasks=4), min_nodes=2).request.ntasks == 4


def test_node_lists_and_task_count_change_the_request() -> None:
    new = update(build(), exc_nodes="n2", num_tasks=3)
    assert (new.request.exc_nodes, new.request.ntasks, new.request.ntasks_set) == (("n2",), 3, True)
    required = update(new, req_nodes="n1", exc_nodes="")
    assert (required.request.req_nodes, required.request.exc_nodes) == (("n1",), ())


def test_start_time_makes_a_pending_job_wait_and_a_past_one_means_now() -> None:
    later = update(build(), begin_time=int(NOW) + 3600)
    assert (later.begin_time, later.eligible_time) == (NOW + 3600, NOW + 3600)
    now = update(later, begin_time=int(NOW) - 50)
    assert (now.begin_time, now.eligible_time) == (0.0, NOW + 10)
    held = update(build(hold=True), begin_time=int(NOW) + 60)
    assert (held.begin_time, held.eligible_time, held.held) == (NOW + 60, NOW + 60, True)


def test_an_operators_priority_is_kept_and_resets_nice() -> None:
    new = update(replace(build(), nice=5), priority=7)
    assert (new.priority_set, new.nice) == (7, 0)
    assert update(new, priority=PRIORITY_INFINITE).priority_set == 0


def test_priority_zero_holds_and_a_held_jobs_priority_cannot_be_set() -> None:
    held = update(build(), priority=0)
    assert (held.hold, held.reason) == (HOLD_ADMIN, "JobHeldAdmin")
    assert update(build(), False, priority=0).hold == HOLD_USER
    with pytest.raises(InvalidRequest, match="Job is in held state, pending scheduler release"):
        update(held, priority=5)
    assert not update(held, priority=PRIORITY_INFINITE).held


def test_mail_and_requeue_are_kept_as_scontrol_shows_them() -> None:
    new = update(build(), mail_type="end,fail", requeue=False)
    assert (new.mail_type, new.mail_user, new.requeue) == ("END,FAIL", "root", False)
    assert update(new, mail_user="bob").mail_user == "bob"


def test_array_throttle_of_a_job_that_is_no_array_is_ignored() -> None:
    job = build()
    assert update(job, array_throttle="2") == job


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"comment": "a\0b"}, "Invalid NUL character in job description"),
        ({"mail_user": "\0"}, "Invalid NUL character in job description"),
        ({"begin_time": -1}, "Invalid time specified"),
        ({"deadline": 1 << 40}, "Invalid time specified"),
    ],
)
def test_values_no_client_would_send_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        update(build(), **fields)
