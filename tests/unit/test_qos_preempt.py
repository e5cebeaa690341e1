"""The controller's side of preemption: QOS settings, the relation, modes, exempt time.

Imports ctld.accounting.qos, ctld.preemption, ctld.store and minislurm; no daemons.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from ctld import preemption
from ctld.accounting import qos as qosops
from ctld.accounting.assoc import AcctError
from ctld.sched.knobs import SchedConfig
from ctld.sched.plan import plan
from ctld.sched.priority import PriorityWeights
from ctld.sched.snapshot import build_snapshot
from ctld.state import ClusterState
from ctld.store import assocrepo, schema
from minislurm.accounts import Qos, initial_book, initial_qos
from minislurm.config import PartitionConfig, SlurmConfig
from minislurm.model import Allocation, Job, Node, NodeAlloc, PendingJob, ResourceRequest
from minislurm.states import JobEvent, JobState, NodeState


def test_add_and_modify_qos_preempt_list_and_mode() -> None:
    table, lines = qosops.add(initial_qos(), ["low", "Urgent"], {"Preempt": "low,Normal"})
    assert table["urgent"].preempt == ("low", "normal") and table["low"].preempt_mode == ""
    assert lines[-1] == "  Preempt                  = low,normal"
    table, _ = qosops.modify(table, {"low"}, {"PreemptMode": "cancel"})
    assert table["low"].preempt_mode == "CANCEL"
    table, _ = qosops.modify(table, {"low"}, {"PreemptMode": "Cluster", "Preempt": ""})
    assert (table["low"].preempt_mode, table["low"].preempt) == ("", ())


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"Preempt": "nosuch"}, "Invalid qos specification"),
        ({"PreemptMode": "gang"}, "Invalid value"),
    ],
)
def test_bad_preempt_settings_change_nothing(settings: dict[str, str], message: str) -> None:
    table = initial_qos()
    with pytest.raises(AcctError, match=message):
        qosops.modify(table, {"normal"}, settings)
    assert table == initial_qos()


def _job(job_id: int, partition: str, qos: str, state: JobState = JobState.RUNNING) -> Job:
    return Job(job_id, "j", 0, 0, "u", "u", partition, state, ResourceRequest(), 0.0, qos=qos)


def _relation(conf: SlurmConfig, qos: dict[str, Qos]) -> tuple[bool, bool]:
    """Whether job 2 (hi, urgent) may preempt job 1 (lo, low), and job 1 job 2."""
    state = ClusterState([], conf.partitions)
    one, two = _job(1, "lo", "low"), _job(2, "hi", "urgent", JobState.PENDING)
    state.put_job(one)
    state.put_job(two)
    may = preemption.relation(state, conf, qos)
    pending = {
        j.job_id: PendingJob(j.job_id, j.partition, 1, 0.0, ResourceRequest()) for j in (one, two)
    }
    return (
        preemption.group_of(one, conf) in may(pending[2]),
        preemption.group_of(two, conf) in may(pending[1]),
    )


PARTS = (PartitionConfig("lo", priority_tier=1), PartitionConfig("hi", priority_tier=2))


def test_relation_by_partition_tier_and_by_qos_list() -> None:
    tiers = SlurmConfig(preempt_type="preempt/partition_prio", partitions=PARTS)
    table, _ = qosops.add(initial_qos(), ["low", "urgent"], {})
    assert _relation(tiers, table) == (True, False)
    by_qos = replace(tiers, preempt_type="preempt/qos")
    assert _relation(by_qos, table) == (False, False)
    table, _ = qosops.modify(table, {"urgent"}, {"Preempt": "low"})
    assert _relation(by_qos, table) == (True, False)


def test_mode_is_the_qos_then_the_partition_then_the_cluster() -> None:
    parts = (replace(PARTS[0], preempt_mode="CANCEL"), PARTS[1])
    conf = SlurmConfig(preempt_type="preempt/qos", preempt_mode="REQUEUE", partitions=parts)
    table, _ = qosops.add(initial_qos(), ["low"], {"PreemptMode": "off"})
    assert preemption.mode_of(_job(1, "lo", "low"), conf, table) == "OFF"
    assert preemption.mode_of(_job(1, "lo", "normal"), conf, table) == "CANCEL"
    assert preemption.mode_of(_job(1, "hi", "normal"), conf, table) == "REQUEUE"
    tiers = replace(conf, preempt_type="preempt/partition_prio")  # QOS modes are for preempt/qos
    assert preemption.mode_of(_job(1, "lo", "low"), tiers, table) == "CANCEL"


def test_preempt_settings_are_stored(tmp_path: Path) -> None:
    table, _ = qosops.add(initial_qos(), ["low", "urgent"], {"PreemptMode": "cancel"})
    table, _ = qosops.modify(table, {"urgent"}, {"Preempt": "low,normal"})
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    schema.upgrade(engine)
    with Session(engine) as s, s.begin():
        assocrepo.save_book(s, replace(initial_book(), qos=table), {}, 0.0)
    with Session(engine) as s:
        loaded = assocrepo.load_book(s)
    assert loaded is not None and loaded[0].qos == table


def _cluster(conf: SlurmConfig, ran_for: float) -> tuple[ClusterState, float]:
    """One 8-GPU node: job 1 (lo) holds every GPU since ``ran_for`` seconds; job 2 (hi) waits."""
    state = ClusterState(
        [Node("n1", 8, 8000, tuple(range(8)), ("lo", "hi"), NodeState.IDLE)], conf.partitions
    )
    alloc = Allocation((NodeAlloc("n1", 1, 0, tuple(range(8))),))
    now = 10_000.0
    running = _job(1, "lo", "normal")
    state.put_job(replace(running, allocation=alloc, start_time=now - ran_for))
    waiting = replace(
        _job(2, "hi", "normal", JobState.PENDING), request=ResourceRequest(gpus_per_node=8)
    )
    state.put_job(waiting)
    return state, now


@pytest.mark.parametrize(("ran_for", "preempted"), [(59.0, []), (60.0, [1])])
def test_jobs_younger_than_preempt_exempt_time_are_not_preempted(
    ran_for: float, preempted: list[int]
) -> None:
    conf = SlurmConfig(
        preempt_type="preempt/partition_prio",
        preempt_mode="CANCEL",
        preempt_exempt_time=1,
        partitions=(
            PartitionConfig("lo", ("n1",)),
            PartitionConfig("hi", ("n1",), priority_tier=2),
        ),
    )
    state, now = _cluster(conf, ran_for)
    snapshot = build_snapshot(state, now, PriorityWeights())
    decided = plan(snapshot, now, SchedConfig())
    out, kills = preemption.victims(
        state, conf, initial_qos(), snapshot, decided, now, lambda j, t: 1
    )
    assert [j.job_id for j in out] == preempted
    assert all(j.kill_event is JobEvent.PREEMPT for j in out)
    assert [kill.job_id for kill in kills] == preempted
