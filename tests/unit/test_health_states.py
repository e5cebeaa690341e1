"""HealthCheckNodeState: which nodes the periodic health check runs on."""

from __future__ import annotations

import pytest

from nodeagent.health import wanted


@pytest.mark.parametrize(
    ("states", "node_state", "drained", "runs"),
    [
        (("ANY",), "ALLOCATED", True, True),
        (("CYCLE",), "MIXED", False, True),  # CYCLE alone: any node, one after the other
        (("IDLE",), "IDLE", True, True),
        (("IDLE",), "MIXED", False, False),
        (("NONDRAINED_IDLE",), "IDLE", True, False),
        (("NONDRAINED_IDLE",), "IDLE", False, True),
        (("ALLOC",), "ALLOCATED", False, True),
        (("ALLOC",), "MIXED", False, False),
        (("MIXED", "CYCLE"), "MIXED", False, True),
        (("IDLE", "ALLOC"), "ALLOCATED", False, True),
        (("START_ONLY",), "IDLE", False, False),
        (("IDLE",), "", False, False),  # not heard yet
    ],
)
def test_the_check_runs_on_the_states_named(
    states: tuple[str, ...], node_state: str, drained: bool, runs: bool
) -> None:
    assert wanted(states, node_state, drained) is runs
