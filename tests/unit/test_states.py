"""Tests of minislurm.states: transition tables and how Slurm prints job and node states.

Printed forms are compared with ../shared/reference/outputs (sinfo_default.txt,
sinfo_N_l.txt, scontrol_show_node.txt) and with Slurm 22.05's
``node_state_string``/``node_state_string_compact``, where a DRAIN flag wins
over every base state.
"""

from __future__ import annotations

import itertools

import pytest

from minislurm.errors import InvalidTransition
from minislurm.states import (
    ACTIVE_JOB_STATES,
    KILL_EVENTS,
    KILL_NAMES,
    TERMINAL_JOB_STATES,
    JobEvent,
    JobState,
    NodeEvent,
    NodeFlag,
    NodeState,
    kill_end,
    kill_ends_in,
    kill_name,
    next_job_state,
    next_node_state,
    node_base_shown,
    node_state_compact,
    node_state_long,
    node_state_scontrol,
    parse_job_state,
)

J = JobState
E = JobEvent

LEGAL_JOB_TRANSITIONS = {
    (J.PENDING, E.START): J.RUNNING,
    (J.PENDING, E.CANCEL): J.CANCELLED,
    (J.PENDING, E.DEADLINE): J.DEADLINE,
    (J.RUNNING, E.EXIT_OK): J.COMPLETED,
    (J.RUNNING, E.EXIT_FAIL): J.FAILED,
    (J.RUNNING, E.OUT_OF_MEMORY): J.OUT_OF_MEMORY,
    (J.RUNNING, E.CANCEL): J.COMPLETING,
    (J.RUNNING, E.TIME_LIMIT): J.COMPLETING,
    (J.RUNNING, E.NODE_FAIL): J.NODE_FAIL,
    (J.COMPLETING, E.KILLED): J.CANCELLED,
    (J.COMPLETING, E.TIMED_OUT): J.TIMEOUT,
    (J.COMPLETING, E.NODE_FAIL): J.NODE_FAIL,
    (J.RUNNING, E.REQUEUE): J.COMPLETING,
    (J.RUNNING, E.PREEMPT): J.COMPLETING,
    (J.RUNNING, E.PREEMPT_REQUEUE): J.COMPLETING,
    (J.COMPLETING, E.PREEMPTED): J.PREEMPTED,
    (J.RUNNING, E.REQUEUED): J.PENDING,
    (J.COMPLETING, E.REQUEUED): J.PENDING,
    (J.COMPLETED, E.REQUEUE): J.PENDING,
    (J.CANCELLED, E.REQUEUE): J.PENDING,
    (J.FAILED, E.REQUEUE): J.PENDING,
    (J.TIMEOUT, E.REQUEUE): J.PENDING,
    (J.NODE_FAIL, E.REQUEUE): J.PENDING,
    (J.PREEMPTED, E.REQUEUE): J.PENDING,
    (J.OUT_OF_MEMORY, E.REQUEUE): J.PENDING,
}
ILLEGAL_JOB_TRANSITIONS = [
    pair for pair in itertools.product(JobState, JobEvent) if pair not in LEGAL_JOB_TRANSITIONS
]

N = NodeState
NE = NodeEvent
LEGAL_NODE_TRANSITIONS = {
    (N.UNKNOWN, NE.REGISTER): N.IDLE,
    (N.IDLE, NE.REGISTER): N.IDLE,
    (N.DOWN, NE.REGISTER): N.IDLE,
    (N.UNKNOWN, NE.FAIL): N.DOWN,
    (N.IDLE, NE.FAIL): N.DOWN,
    (N.UNKNOWN, NE.ADMIN_DOWN): N.DOWN,
    (N.IDLE, NE.ADMIN_DOWN): N.DOWN,
    (N.DOWN, NE.ADMIN_DOWN): N.DOWN,
    (N.DOWN, NE.ADMIN_RESUME): N.IDLE,
    (N.IDLE, NE.REBOOT): N.DOWN,
}
ILLEGAL_NODE_TRANSITIONS = [
    pair for pair in itertools.product(NodeState, NodeEvent) if pair not in LEGAL_NODE_TRANSITIONS
]

NR = frozenset({NodeFlag.NOT_RESPONDING})
DRAIN = frozenset({NodeFlag.DRAIN})
BOTH = frozenset({NodeFlag.DRAIN, NodeFlag.NOT_RESPONDING})
NONE: frozenset[NodeFlag] = frozenset()


# ---------------------------------------------------------------- job transitions


@pytest.mark.parametrize(("pair", "new"), LEGAL_JOB_TRANSITIONS.items(), ids=str)
def test_next_job_state_follows_the_table(pair: tuple[JobState, JobEvent], new: JobState) -> None:
    state, event = pair
    assert next_job_state(42, state, event) is new


@pytest.mark.parametrize(("state", "event"), ILLEGAL_JOB_TRANSITIONS, ids=str)
def test_next_job_state_raises_on_every_event_not_in_the_table(
    state: JobState, event: JobEvent
) -> None:
    with pytest.raises(InvalidTransition, match=f"job=42 {state.value} cannot take {event.value}"):
        next_job_state(42, state, event)


def test_legal_transitions_lead_from_pending_only_to_active_or_terminal_states() -> None:
    for (_, event), new in LEGAL_JOB_TRANSITIONS.items():
        if event in (E.REQUEUE, E.REQUEUED):  # a requeued job, and only it, is pending again
            assert new in {J.PENDING, J.COMPLETING}
        else:
            assert new in ACTIVE_JOB_STATES | TERMINAL_JOB_STATES
    assert not ACTIVE_JOB_STATES & TERMINAL_JOB_STATES
    assert J.PENDING not in ACTIVE_JOB_STATES | TERMINAL_JOB_STATES


@pytest.mark.parametrize(
    ("begun", "end", "final"),
    [
        (E.CANCEL, E.KILLED, J.CANCELLED),
        (E.TIME_LIMIT, E.TIMED_OUT, J.TIMEOUT),
        (E.PREEMPT, E.PREEMPTED, J.PREEMPTED),
        (E.PREEMPT_REQUEUE, E.REQUEUED, J.PENDING),
        (E.REQUEUE, E.REQUEUED, J.PENDING),
    ],
)
def test_the_event_that_began_a_kill_decides_how_it_ends(
    begun: JobEvent, end: JobEvent, final: JobState
) -> None:
    assert next_job_state(42, J.RUNNING, begun) is J.COMPLETING
    assert kill_end(begun) is end
    assert kill_ends_in(begun) is final is next_job_state(42, J.COMPLETING, end)


def test_every_event_that_begins_a_kill_has_an_end_and_a_name() -> None:
    begins = {event for (state, event), new in LEGAL_JOB_TRANSITIONS.items() if new is J.COMPLETING}
    assert begins == set(KILL_NAMES)
    assert {KILL_EVENTS[kill_name(event)] for event in begins} == begins
    assert kill_name(None) == ""
    with pytest.raises(InvalidTransition, match="EXIT_OK does not begin a kill"):
        kill_end(E.EXIT_OK)


def test_every_job_state_but_suspended_and_boot_fail_is_reached_from_pending() -> None:
    reached, frontier = {J.PENDING}, [J.PENDING]
    while frontier:
        state = frontier.pop()
        for event in JobEvent:
            try:
                new = next_job_state(42, state, event)
            except InvalidTransition:
                continue
            if new not in reached:
                reached.add(new)
                frontier.append(new)
    assert set(JobState) - reached == {J.SUSPENDED, J.BOOT_FAIL}  # parsed, never produced


def test_next_job_state_logs_the_change_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="minislurm.states"):
        next_job_state(7, J.RUNNING, E.EXIT_FAIL, "NonZeroExitCode")
    assert "job=7 RUNNING -> FAILED reason=NonZeroExitCode" in caplog.text


# ---------------------------------------------------------------- node transitions


@pytest.mark.parametrize(("pair", "new"), LEGAL_NODE_TRANSITIONS.items(), ids=str)
def test_next_node_state_follows_the_table(
    pair: tuple[NodeState, NodeEvent], new: NodeState
) -> None:
    state, event = pair
    assert next_node_state("n1", state, event) is new


@pytest.mark.parametrize(("state", "event"), ILLEGAL_NODE_TRANSITIONS, ids=str)
def test_next_node_state_raises_on_every_event_not_in_the_table(
    state: NodeState, event: NodeEvent
) -> None:
    with pytest.raises(InvalidTransition, match=f"node=n1 {state.value} cannot take"):
        next_node_state("n1", state, event)


# ---------------------------------------------------------------- parse_job_state


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("PENDING", J.PENDING),
        ("pending", J.PENDING),
        ("PD", J.PENDING),
        ("pd", J.PENDING),
        (" R ", J.RUNNING),
        ("running", J.RUNNING),
        ("CG", J.COMPLETING),
        ("CD", J.COMPLETED),
        ("completed", J.COMPLETED),
        ("CA", J.CANCELLED),
        ("F", J.FAILED),
        ("TO", J.TIMEOUT),
        ("timeout", J.TIMEOUT),
        ("NF", J.NODE_FAIL),
        ("node_fail", J.NODE_FAIL),
        ("PR", J.PREEMPTED),
        ("S", J.SUSPENDED),
        ("BF", J.BOOT_FAIL),
        ("DL", J.DEADLINE),
        ("OOM", J.OUT_OF_MEMORY),
        ("out_of_memory", J.OUT_OF_MEMORY),
    ],
)
def test_parse_job_state_reads_names_and_compact_codes(text: str, state: JobState) -> None:
    assert parse_job_state(text) is state


@pytest.mark.parametrize("text", ["", "RUN", "PEND", "X", "COMPLETE", "P D"])
def test_parse_job_state_rejects_what_is_not_a_state(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid job state specified"):
        parse_job_state(text)


@pytest.mark.parametrize("state", list(JobState))
def test_every_job_state_round_trips_through_its_code_and_its_name(state: JobState) -> None:
    assert parse_job_state(state.short) is state
    assert parse_job_state(state.value) is state


@pytest.mark.parametrize(
    ("state", "code"),
    [(J.PENDING, "PD"), (J.RUNNING, "R"), (J.COMPLETING, "CG"), (J.COMPLETED, "CD")],
)
def test_job_state_short_is_squeues_st_column(state: JobState, code: str) -> None:
    assert state.short == code


# ---------------------------------------------------------------- node display


@pytest.mark.parametrize(
    ("base", "alloc", "total", "shown"),
    [
        (N.IDLE, 0, 8, N.IDLE),
        (N.IDLE, 3, 8, N.MIXED),  # scontrol_show_node.txt: n1 CPUAlloc=3 State=MIXED
        (N.IDLE, 8, 8, N.ALLOCATED),
        (N.DOWN, 0, 8, N.DOWN),
        (N.UNKNOWN, 0, 8, N.UNKNOWN),
    ],
)
def test_node_base_shown_refines_idle_by_allocated_cpus(
    base: NodeState, alloc: int, total: int, shown: NodeState
) -> None:
    assert node_base_shown(base, alloc, total) is shown


# (base, flags, alloc_cpus) -> (sinfo, sinfo -l, scontrol State=)
NODE_DISPLAY = [
    # sinfo_default.txt / sinfo_N_l.txt / scontrol_show_node.txt: n2 idle, n1 mix (3 of 8 CPUs)
    (N.IDLE, NONE, 0, "idle", "idle", "IDLE"),
    (N.IDLE, NONE, 3, "mix", "mixed", "MIXED"),
    (N.IDLE, NONE, 8, "alloc", "allocated", "ALLOCATED"),
    (N.DOWN, NONE, 0, "down", "down", "DOWN"),
    (N.UNKNOWN, NONE, 0, "unk", "unknown", "UNKNOWN"),
    (N.IDLE, DRAIN, 0, "drain", "drained", "IDLE+DRAIN"),
    (N.IDLE, DRAIN, 3, "drng", "draining", "MIXED+DRAIN"),
    (N.IDLE, DRAIN, 8, "drng", "draining", "ALLOCATED+DRAIN"),
    (N.IDLE, NR, 0, "idle*", "idle*", "IDLE*"),
    (N.IDLE, NR, 3, "mix*", "mixed*", "MIXED*"),
    (N.DOWN, NR, 0, "down*", "down*", "DOWN*"),
    (N.UNKNOWN, NR, 0, "unk*", "unknown*", "UNKNOWN*"),
    (N.IDLE, BOTH, 0, "drain*", "drained*", "IDLE*+DRAIN"),
    (N.IDLE, BOTH, 3, "drng*", "draining*", "MIXED*+DRAIN"),
]


@pytest.mark.parametrize(("base", "flags", "alloc", "compact", "long", "full"), NODE_DISPLAY)
def test_node_state_words_match_slurm(
    base: NodeState,
    flags: frozenset[NodeFlag],
    alloc: int,
    compact: str,
    long: str,
    full: str,
) -> None:
    assert node_state_compact(base, flags, alloc, 8) == compact
    assert node_state_long(base, flags, alloc, 8) == long
    assert node_state_scontrol(base, flags, alloc, 8) == full


def test_reference_sinfo_states_are_among_the_words_we_print() -> None:
    # sinfo_default.txt shows "mix" and "idle"; sinfo_N_l.txt "mixed" and "idle"
    assert node_state_compact(N.IDLE, NONE, 3, 8) == "mix"
    assert node_state_long(N.IDLE, NONE, 3, 8) == "mixed"
    assert node_state_compact(N.IDLE, NONE, 0, 8) == "idle"
    assert node_state_long(N.IDLE, NONE, 0, 8) == "idle"


@pytest.mark.parametrize(
    ("flags", "compact", "long"),
    [(DRAIN, "drain", "drained"), (BOTH, "drain*", "drained*")],
)
def test_drained_down_node_shows_as_drained_like_slurm(
    flags: frozenset[NodeFlag], compact: str, long: str
) -> None:
    assert node_state_compact(N.DOWN, flags, 0, 8) == compact
    assert node_state_long(N.DOWN, flags, 0, 8) == long


@pytest.mark.parametrize(("flags", "full"), [(DRAIN, "DOWN+DRAIN"), (BOTH, "DOWN*+DRAIN")])
def test_scontrol_shows_a_drained_down_node_as_down_plus_drain(
    flags: frozenset[NodeFlag], full: str
) -> None:
    assert node_state_scontrol(N.DOWN, flags, 0, 8) == full
