"""Tests of ctld.nodes.admin_update: scontrol update NodeName=... State=..., as Slurm 22.05."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctld.nodes import admin_update
from ctld.state import ClusterState
from minislurm.config import PartitionConfig
from minislurm.errors import InvalidRequest
from minislurm.model import Node
from minislurm.requests import NodeUpdate
from minislurm.states import NodeFlag, NodeState

NOW = 1_800_000_000.0


def cluster(**n2: object) -> ClusterState:
    nodes = [Node(n, 8, 8000, (), ("gpu",), state=NodeState.IDLE) for n in ("n1", "n2")]
    nodes[1] = replace(nodes[1], **n2)  # type: ignore[arg-type]
    return ClusterState(nodes, [PartitionConfig("gpu", ("n1", "n2"), default=True)])


def update(state: ClusterState, names: str, to: str, reason: str = "") -> list[Node]:
    request = NodeUpdate(names=names, state=to, reason=reason, requester_uid=0)
    return admin_update(state, request, NOW)


@pytest.mark.parametrize(
    "n2",
    [
        {"flags": frozenset({NodeFlag.DRAIN}), "reason": "maintenance"},
        {"state": NodeState.DOWN, "reason": "gone"},
        {"state": NodeState.MIXED, "flags": frozenset({NodeFlag.DRAIN}), "reason": "x"},
    ],
)
def test_resume_brings_back_a_drained_or_down_node(n2: dict[str, object]) -> None:
    (node,) = update(cluster(**n2), "n2", "RESUME")
    assert NodeFlag.DRAIN not in node.flags and node.state is not NodeState.DOWN
    assert node.reason == ""


@pytest.mark.parametrize(
    ("names", "n2"),
    [
        ("n2", {}),  # Slurm: slurm_update error: Invalid node state specified, exit 1
        ("n2", {"state": NodeState.MIXED}),
        ("n1,n2", {"flags": frozenset({NodeFlag.DRAIN}), "reason": "x"}),  # n1 is not drained
    ],
)
def test_resume_of_a_node_neither_down_nor_drained_is_refused(
    names: str, n2: dict[str, object]
) -> None:
    with pytest.raises(InvalidRequest, match=r"^Invalid node state specified$"):
        update(cluster(**n2), names, "RESUME")


def test_idle_takes_only_an_idle_or_down_node_and_undrain_any() -> None:
    (node,) = update(cluster(state=NodeState.DOWN, reason="gone"), "n2", "IDLE")
    assert node.state is NodeState.IDLE
    with pytest.raises(InvalidRequest, match="Invalid node state specified"):
        update(cluster(state=NodeState.MIXED), "n2", "IDLE")
    assert update(cluster(), "n2", "UNDRAIN")[0].flags == frozenset()
