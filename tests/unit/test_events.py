"""Tests of ctld.events: the structured lines of node and requeue events."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from test_accounting import N1_N2, ran

from ctld.events import line, node_event, requeue_event
from ctld.state import ClusterState
from minislurm.model import EarlierRun, Node
from minislurm.states import JobState, NodeFlag, NodeState

IDLE = Node("n3", 8, 8000, (), ("gpu",), state=NodeState.IDLE)
DRAIN = frozenset({NodeFlag.DRAIN})


def test_a_line_is_key_value_pairs_quoted_only_where_needed() -> None:
    assert line("x", node="n1", reason="Kill task failed", uid=0, empty="") == (
        'event=x node=n1 reason="Kill task failed" uid=0'
    )
    assert line("x", reason='say "no"=1') == r'event=x reason="say \"no\"=1"'


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (IDLE, replace(IDLE, flags=DRAIN, reason="Prolog error", reason_uid=1000),
         'event=node_drain node=n3 reason="Prolog error" uid=1000'),
        (IDLE, replace(IDLE, state=NodeState.DOWN, reason="Not responding"),
         'event=node_down node=n3 reason="Not responding" uid=0'),
        (replace(IDLE, flags=DRAIN, reason="x"), IDLE, "event=node_resume node=n3"),
        (replace(IDLE, state=NodeState.DOWN), IDLE, "event=node_resume node=n3"),
        (IDLE, replace(IDLE, cpu_load=3.0), None),
        (None, IDLE, None),
    ],
)  # fmt: skip
def test_node_changes_that_operators_act_on_are_said(
    old: Node | None, new: Node, said: str | None
) -> None:
    assert node_event(old, new) == said


def test_a_requeue_says_which_run_ended_how_and_where() -> None:
    job = ran(12, "train", JobState.RUNNING, allocation=N1_N2, restarts=1)
    run = EarlierRun(job, "NODE_FAIL", 0.0, ())
    assert requeue_event(run) == "event=job_requeue job=12 run=1 ended=NODE_FAIL nodes=n[1-2]"


def test_putting_a_drained_node_logs_its_line(caplog: pytest.LogCaptureFixture) -> None:
    state = ClusterState([IDLE], [])
    with caplog.at_level(logging.INFO, logger="ctld.events"):
        state.put_node(replace(IDLE, flags=DRAIN, reason="bad gpu"))
        state.put_node(replace(IDLE, flags=DRAIN, reason="bad gpu", cpu_load=1.0))
    assert [r.getMessage() for r in caplog.records] == [
        'event=node_drain node=n3 reason="bad gpu" uid=0'
    ]
