"""scontrol reboot's node states: requested, issued, back; cancelled; timed out; kept."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctld import nodes as nodeops
from minislurm.config import SlurmConfig
from minislurm.errors import InvalidRequest
from minislurm.model import Node
from minislurm.requests import NodeUpdate, Registration
from minislurm.states import (
    NodeFlag,
    NodeState,
    node_state_compact,
    node_state_scontrol,
)

NOW = 1_000_000.0
DRAIN, ASKED, ISSUED = NodeFlag.DRAIN, NodeFlag.REBOOT_REQUESTED, NodeFlag.REBOOT_ISSUED


def node(**changes: object) -> Node:
    base = Node("n1", 8, 1000, (), ("gpu",), state=NodeState.IDLE, last_seen=NOW)
    return replace(base, **changes)  # type: ignore[arg-type]


def reboot(**options: object) -> NodeUpdate:
    return replace(NodeUpdate(names="n1", state="REBOOT", requester_uid=7), **options)  # type: ignore[arg-type]


def test_asap_drains_with_slurms_reason_and_resumes_after() -> None:
    asked = nodeops.reboot_requested(node(), reboot(asap=True), NOW)
    assert asked.flags == {DRAIN, ASKED}
    assert (asked.reason, asked.reason_uid, asked.reboot_next) == ("Reboot ASAP", 7, "UNDRAIN")
    own = nodeops.reboot_requested(node(), reboot(asap=True, reason="bios", next_state="down"), NOW)
    assert (own.reason, own.reboot_next) == ("bios", "DOWN")


def test_a_plain_reboot_keeps_the_node_in_service_and_its_reason() -> None:
    asked = nodeops.reboot_requested(node(), reboot(), NOW)
    assert (asked.flags, asked.reason) == ({ASKED}, "reboot requested")
    drained = node(flags=frozenset({DRAIN}), reason="bad dimm", reason_uid=3)
    kept = nodeops.reboot_requested(drained, reboot(), NOW)
    assert (kept.reason, kept.reason_uid) == ("bad dimm", 3)
    assert nodeops.reboot_requested(asked, reboot(asap=True), NOW) is asked  # pending already
    with pytest.raises(InvalidRequest):
        nodeops.reboot_requested(node(), reboot(next_state="sideways"), NOW)


def test_issued_the_node_is_down_until_its_agent_starts_again() -> None:
    asked = nodeops.reboot_requested(node(), reboot(asap=True, next_state="resume"), NOW)
    issued = nodeops.reboot_issued(asked, NOW + 1)
    assert (issued.state, issued.flags) == (NodeState.DOWN, {DRAIN, ISSUED})
    assert issued.reason == "Reboot ASAP : reboot issued"
    stale = Registration(name="n1", cpus=8, real_memory=1000, slurmd_start_time=int(NOW) - 5)
    conf_like = SlurmConfig()
    assert nodeops.registered(issued, stale, NOW + 2, conf_like).state is NodeState.DOWN
    fresh = replace(stale, slurmd_start_time=int(NOW) + 2)
    back = nodeops.registered(issued, fresh, NOW + 3, conf_like)
    assert (back.state, back.flags, back.reason) == (NodeState.IDLE, frozenset(), "")


def test_nextstate_down_leaves_it_down_and_says_the_reboot_completed() -> None:
    asked = nodeops.reboot_requested(node(), reboot(next_state="DOWN", reason="fw"), NOW)
    back = nodeops.rebooted(nodeops.reboot_issued(asked, NOW))
    assert (back.state, back.flags, back.reason) == (
        NodeState.DOWN,
        frozenset(),
        "fw : reboot issued : reboot complete",
    )


def test_a_reboot_that_never_comes_back_times_out_down() -> None:
    issued = nodeops.reboot_issued(nodeops.reboot_requested(node(), reboot(), NOW), NOW)
    assert nodeops.reboot_timed_out(issued, NOW + 60, 60) is issued
    late = nodeops.reboot_timed_out(issued, NOW + 61, 60)
    assert (late.state, late.flags) == (NodeState.DOWN, frozenset())
    assert late.reason == "reboot requested : reboot issued : reboot timed out"


def test_cancel_forgets_the_reboot_and_an_asap_drain() -> None:
    with pytest.raises(InvalidRequest, match="Invalid node state specified"):
        nodeops.reboot_cancelled(node())
    asap = nodeops.reboot_requested(node(), reboot(asap=True), NOW)
    assert nodeops.reboot_cancelled(asap) == replace(node(), reason_time=0.0)
    drained = node(flags=frozenset({DRAIN}), reason="bad dimm")
    plain = nodeops.reboot_cancelled(nodeops.reboot_requested(drained, reboot(), NOW))
    assert (plain.flags, plain.reason) == ({DRAIN}, "bad dimm")


def test_the_reboot_survives_a_controller_restart() -> None:
    asked = nodeops.reboot_requested(node(), reboot(asap=True), NOW)
    fields = nodeops.persisted_fields(asked)
    assert fields[5:] == ("REBOOT_REQUESTED", "UNDRAIN")
    saved = (*fields[1:5], asked.reason_time, *fields[5:])
    assert nodeops.restored(node(), saved, NOW + 9) == asked
    issued = nodeops.reboot_issued(asked, NOW)
    fields = nodeops.persisted_fields(issued)
    back = nodeops.restored(node(), (*fields[1:5], 0.0, *fields[5:]), NOW + 9)
    assert (back.flags, back.reboot_issued) == ({DRAIN, ISSUED}, NOW + 9)


@pytest.mark.parametrize(
    ("state", "flags", "alloc", "compact", "scontrol"),
    [
        (NodeState.IDLE, {DRAIN, ASKED}, 0, "boot", "IDLE+DRAIN+REBOOT_REQUESTED"),
        (NodeState.IDLE, {DRAIN, ASKED}, 2, "drng@", "MIXED+DRAIN+REBOOT_REQUESTED"),
        (NodeState.IDLE, {ASKED}, 8, "alloc@", "ALLOCATED+REBOOT_REQUESTED"),
        (NodeState.DOWN, {DRAIN, ISSUED}, 0, "boot^", "DOWN+DRAIN+REBOOT_ISSUED"),
    ],
)
def test_states_are_shown_as_slurm_2205_shows_them(
    state: NodeState, flags: set[NodeFlag], alloc: int, compact: str, scontrol: str
) -> None:
    assert node_state_compact(state, frozenset(flags), alloc, 8) == compact
    assert node_state_scontrol(state, frozenset(flags), alloc, 8) == scontrol
